package engine

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// The engine runs a definition's steps as written, except for two
// rewrites that change how many statements a call takes, never what it
// answers (fast_test.go holds them to SQLite's answers):
//   - a step's if: of a common simple form (":x IS NULL", "NOT :x",
//     "coalesce(:x, '') <> ''", ...) is decided in Go instead of by a
//     SELECT;
//   - consecutive check steps with no if: or db: run as one statement, the
//     first message of them all (what running them in turn gives).

// optimize returns steps with consecutive plain checks merged.
func optimize(steps []Step) []Step {
	var out []Step
	for _, st := range steps {
		if n := len(out); n > 0 && mergeable(st) && mergeable(out[n-1]) {
			prev := out[n-1]
			out[n-1].Check = "SELECT coalesce(" + subquery(prev.Check) + ", " + subquery(st.Check) + ")"
			continue
		}
		out = append(out, st)
	}
	return out
}

// mergeable reports whether st is a check that can run inside another
// statement: no condition, on the service's own database, one column, one
// statement.
func mergeable(st Step) bool {
	if st.Check == "" || st.If != "" || st.DB != "" || strings.Contains(st.Check, ";") || strings.Contains(st.Check, "--") {
		return false
	}
	if strings.HasPrefix(st.Check, "SELECT coalesce(") && strings.HasSuffix(st.Check, ")") {
		return true // merged already
	}
	list, ok := topLevelSelectList(strings.TrimSpace(st.Check))
	return ok && len(splitTop(list, ',')) == 1 && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st.Check)), "SELECT")
}

func subquery(q string) string {
	if strings.HasPrefix(q, "SELECT coalesce(") && strings.HasSuffix(q, ")") {
		return strings.TrimSuffix(strings.TrimPrefix(q, "SELECT coalesce("), ")")
	}
	return "(" + strings.TrimSpace(q) + ")"
}

// predicate decides an if: in Go; ok is false when it cannot (the value's
// type needs SQLite's conversions), and the caller asks SQLite.
type predicate func(p map[string]any) (yes, ok bool)

var predicates sync.Map // expression -> predicate (nil: none)

var (
	reIsNull    = regexp.MustCompile(`^:([a-z_][a-z0-9_]*) IS (NOT )?NULL$`)
	reTruthy    = regexp.MustCompile(`^(NOT )?(?:coalesce\(:([a-z_][a-z0-9_]*), 0\)|:([a-z_][a-z0-9_]*))$`)
	reEmptyText = regexp.MustCompile(`^(?:coalesce\(:([a-z_][a-z0-9_]*), ''\)|:([a-z_][a-z0-9_]*)) (<>|=|!=) ''$`)
)

// predicateOf returns the Go predicate of expr, or nil.
func predicateOf(expr string) predicate {
	if v, ok := predicates.Load(expr); ok {
		p, _ := v.(predicate)
		return p
	}
	p := compilePredicate(strings.TrimSpace(expr))
	predicates.Store(expr, p)
	return p
}

func compilePredicate(e string) predicate {
	if m := reIsNull.FindStringSubmatch(e); m != nil {
		name, not := m[1], m[2] != ""
		return func(p map[string]any) (bool, bool) { return (p[name] == nil) != not, true }
	}
	if m := reTruthy.FindStringSubmatch(e); m != nil {
		not, coalesce, name := m[1] != "", m[2] != "", m[2]+m[3]
		return func(p map[string]any) (bool, bool) {
			var yes bool
			switch v := p[name].(type) {
			case nil:
				if !coalesce {
					return false, true // NULL is neither true nor, under NOT, true
				}
			case int64:
				yes = v != 0
			case float64:
				yes = v != 0
			default:
				return false, false // text: SQLite's numeric conversion
			}
			return yes != not, true
		}
	}
	if m := reEmptyText.FindStringSubmatch(e); m != nil {
		coalesce, name, eq := m[1] != "", m[1]+m[2], m[3] == "="
		return func(p map[string]any) (bool, bool) {
			switch v := p[name].(type) {
			case nil:
				if !coalesce {
					return false, true // NULL compared is NULL: not true
				}
				return eq, true
			case string:
				return (v == "") == eq, true
			case int64, float64:
				return !eq, true // a number never equals text
			}
			return false, false
		}
	}
	return nil
}

// A result step of the form SELECT json_object('k', json(:a), 'k2', :b,
// 'k3', 1, 'k4', CASE WHEN :c THEN 1 END) — what most tools end with — is
// built in Go, splicing the JSON parameters as they are instead of having
// SQLite parse them again (a page of results is most of a call's bytes).
// Any value it cannot write as SQLite would (a real, a BLOB, text where a
// condition wants a number) sends the step to SQLite.

// resultPart is one key and value of such a json_object.
type resultPart struct {
	key   string // JSON-quoted
	kind  byte   // 'j' json(:p), 'p' :p, 'l' a literal, 'c' CASE WHEN :p THEN 1 END
	param string
	lit   string
}

type resultBuilder []resultPart

var (
	resultBuilders sync.Map // SQL -> resultBuilder (nil: none)
	reParam        = regexp.MustCompile(`^:([a-z_][a-z0-9_]*)$`)
	reJSONParam    = regexp.MustCompile(`^json\(:([a-z_][a-z0-9_]*)\)$`)
	reCaseParam    = regexp.MustCompile(`^CASE WHEN :([a-z_][a-z0-9_]*) THEN 1 END$`)
	reIntLiteral   = regexp.MustCompile(`^-?[0-9]{1,15}$`)
	reKey          = regexp.MustCompile(`^'([a-z_][a-z0-9_]*)'$`)
)

// resultBuilderOf returns the Go builder of a result statement, or nil.
func resultBuilderOf(q string) resultBuilder {
	if v, ok := resultBuilders.Load(q); ok {
		b, _ := v.(resultBuilder)
		return b
	}
	b := compileResult(strings.TrimSpace(q))
	resultBuilders.Store(q, b)
	return b
}

func compileResult(q string) resultBuilder {
	inner, ok := strings.CutPrefix(q, "SELECT json_object(")
	if !ok || !strings.HasSuffix(inner, ")") {
		return nil
	}
	args := splitTop(strings.TrimSuffix(inner, ")"), ',')
	if len(args)%2 != 0 || len(args) == 0 {
		return nil
	}
	var b resultBuilder
	for i := 0; i < len(args); i += 2 {
		k := reKey.FindStringSubmatch(strings.TrimSpace(args[i]))
		if k == nil {
			return nil
		}
		v := strings.TrimSpace(args[i+1])
		part := resultPart{key: `"` + k[1] + `"`}
		switch {
		case reJSONParam.MatchString(v):
			part.kind, part.param = 'j', reJSONParam.FindStringSubmatch(v)[1]
		case reParam.MatchString(v):
			part.kind, part.param = 'p', v[1:]
		case reCaseParam.MatchString(v):
			part.kind, part.param = 'c', reCaseParam.FindStringSubmatch(v)[1]
		case reIntLiteral.MatchString(v):
			part.kind, part.lit = 'l', v
		default:
			return nil
		}
		b = append(b, part)
	}
	return b
}

// build writes the object; ok is false when SQLite must.
func (b resultBuilder) build(p map[string]any) (out []byte, ok bool) {
	n := 2
	for _, part := range b {
		if s, isText := p[part.param].(string); isText {
			n += len(s) + 8
		}
		n += len(part.key) + 8
	}
	out = make([]byte, 0, n)
	out = append(out, '{')
	for i, part := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, part.key...)
		out = append(out, ':')
		v := p[part.param]
		switch part.kind {
		case 'l':
			out = append(out, part.lit...)
		case 'j':
			switch x := v.(type) {
			case nil:
				out = append(out, "null"...)
			case string:
				if !startsJSON(x) {
					return nil, false
				}
				out = append(out, x...)
			default:
				return nil, false
			}
		case 'p':
			switch x := v.(type) {
			case nil:
				out = append(out, "null"...)
			case int64:
				out = strconv.AppendInt(out, x, 10)
			case string:
				out = appendSQLiteString(out, x)
			default:
				return nil, false // a real or a BLOB: SQLite's own text of it
			}
		case 'c':
			switch x := v.(type) {
			case nil:
				out = append(out, "null"...)
			case int64:
				if x != 0 {
					out = append(out, '1')
				} else {
					out = append(out, "null"...)
				}
			default:
				return nil, false
			}
		}
	}
	return append(out, '}'), true
}

// appendSQLiteString writes s as a JSON string the way SQLite's
// json_quote does: quotes and backslashes escaped, control characters as
// \b \f \n \r \t or \u00XX, everything else as it is.
func appendSQLiteString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\':
			out = append(out, '\\', c)
		case c == '\b':
			out = append(out, `\b`...)
		case c == '\f':
			out = append(out, `\f`...)
		case c == '\n':
			out = append(out, `\n`...)
		case c == '\r':
			out = append(out, `\r`...)
		case c == '\t':
			out = append(out, `\t`...)
		case c < 0x20:
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		default:
			out = append(out, c)
		}
	}
	return append(out, '"')
}
