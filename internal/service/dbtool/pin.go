package dbtool

import "strings"

// pinEquals returns query with a unary plus before every parameter that is
// the right side of an equality (`col = :p` becomes `col = +:p`), outside
// string literals, quoted names and comments.
//
// SQLite (as built by modernc, 3.50) marks such a parameter as one whose
// value may change the plan when it is 0 or 1, and re-prepares the
// statement on the next step whenever a binding moves between {0, 1} and
// any other value. A list of folder 1 after one of folder 2 then costs a
// full re-preparation (140 µs of list_mails' 490 µs over stdio). The unary
// plus leaves the value, its affinity and the plan as they were (the
// index is still searched, TestPinEqualsKeepsPlans) but hides the
// parameter from that check.
func pinEquals(query string) string {
	if !strings.Contains(query, "=") {
		return query
	}
	var b strings.Builder
	n := len(query)
	last := 0
	for i := 0; i < n; i++ {
		switch c := query[i]; c {
		case '\'', '"', '`':
			j := i + 1
			for j < n && query[j] != c {
				j++
			}
			i = j
		case '[':
			j := i + 1
			for j < n && query[j] != ']' {
				j++
			}
			i = j
		case '-':
			if i+1 < n && query[i+1] == '-' {
				j := i
				for j < n && query[j] != '\n' {
					j++
				}
				i = j
			}
		case '/':
			if i+1 < n && query[i+1] == '*' {
				j := strings.Index(query[i+2:], "*/")
				if j < 0 {
					return query
				}
				i += j + 3
			}
		case '=':
			if i > 0 && strings.IndexByte("<>!", query[i-1]) >= 0 {
				continue
			}
			j := i + 1
			if j < n && query[j] == '=' {
				j++
			}
			for j < n && (query[j] == ' ' || query[j] == '\n' || query[j] == '\t' || query[j] == '\r') {
				j++
			}
			if j < n && (query[j] == ':' || query[j] == '@' || query[j] == '$' || query[j] == '?') {
				b.WriteString(query[last:j])
				b.WriteByte('+')
				last = j
				i = j
			}
		}
	}
	if last == 0 {
		return query
	}
	b.WriteString(query[last:])
	return b.String()
}
