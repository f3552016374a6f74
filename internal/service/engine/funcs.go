package engine

import (
	"crypto/sha256"
	"database/sql/driver"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"modernc.org/sqlite"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Func is an SQL function in Go: deterministic, of Args arguments (-1:
// any number). Arguments arrive as int64, float64, string, []byte or nil.
type Func struct {
	Args int
	Fn   func(args []driver.Value) (driver.Value, error)
}

// Builtins are the SQL functions every definition may use, besides
// SQLite's own (with JSON1): the text rules the services share.
var Builtins = map[string]Func{
	// format(fmt, args...) is Go's fmt.Sprintf: %q quotes as a model
	// reads it ("a \"b\""), %d takes integers (and whole reals), %s and
	// %q anything, numbers included (sqlNumber).
	"format": {-1, func(a []driver.Value) (driver.Value, error) {
		if len(a) == 0 {
			return nil, fmt.Errorf("format needs a format")
		}
		return fmt.Sprintf(text(a[0]), goArgs(a[1:])...), nil
	}},
	// clip(s, n): the first n characters of s, with "…" when cut.
	"clip": {2, func(a []driver.Value) (driver.Value, error) {
		return Clip(text(a[0]), int(integer(a[1]))), nil
	}},
	// one_line(s): s's words joined by single spaces.
	"one_line": {1, func(a []driver.Value) (driver.Value, error) { return OneLine(text(a[0])), nil }},
	// preview(s, n): the first n characters of s on one line, "…" when cut.
	"preview": {2, func(a []driver.Value) (driver.Value, error) {
		return Preview(text(a[0]), int(integer(a[1]))), nil
	}},
	// snippet(s, query, n): the text around the first case-insensitive
	// match of query with n characters either side, on one line.
	"snippet": {3, func(a []driver.Value) (driver.Value, error) {
		return Snippet(text(a[0]), text(a[1]), int(integer(a[2]))), nil
	}},
	// trim_space(s): s without leading and trailing Unicode white space
	// (SQLite's trim removes spaces only); NULL stays NULL.
	"trim_space": {1, func(a []driver.Value) (driver.Value, error) {
		if a[0] == nil {
			return nil, nil
		}
		return strings.TrimSpace(text(a[0])), nil
	}},
	// char_count(s): the number of Unicode characters of s.
	"char_count": {1, func(a []driver.Value) (driver.Value, error) { return int64(utf8.RuneCountInString(text(a[0]))), nil }},
	// has_control(s): 1 if s has a control character (a line break too).
	"has_control": {1, func(a []driver.Value) (driver.Value, error) {
		return boolInt(strings.ContainsFunc(text(a[0]), unicode.IsControl)), nil
	}},
	// has_control_text(s): 1 if s has a control character other than a
	// line break or a tab.
	"has_control_text": {1, func(a []driver.Value) (driver.Value, error) {
		return boolInt(strings.ContainsFunc(text(a[0]), func(r rune) bool {
			return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r'
		})), nil
	}},
	// slug(s, n): ASCII letters and digits of s lower-cased, every other
	// run one "-", at most n bytes; a short hash when nothing is left.
	"slug": {2, func(a []driver.Value) (driver.Value, error) { return Slug(text(a[0]), int(integer(a[1]))), nil }},
	// check_line(field, s, n, example): NULL when s, trimmed, is 1 to n
	// characters on one line; else the error that says so, naming field
	// and giving example.
	"check_line": {4, func(a []driver.Value) (driver.Value, error) {
		msg := CheckLine(text(a[0]), text(a[1]), int(integer(a[2])), text(a[3]))
		if msg == "" {
			return nil, nil
		}
		return msg, nil
	}},
	// cursor_encode(prefix, fields...): an opaque page cursor.
	"cursor_encode": {-1, func(a []driver.Value) (driver.Value, error) {
		if len(a) < 2 {
			return nil, fmt.Errorf("cursor_encode needs a prefix and a field")
		}
		fields := make([]string, len(a)-1)
		for i, v := range a[1:] {
			fields[i] = text(v)
		}
		return dbtool.EncodeCursor(text(a[0]), fields...), nil
	}},
	// cursor_field(cursor, prefix, n, i): field i (from 1) of a cursor of
	// n fields that cursor_encode made with prefix; NULL when it is not
	// one.
	"cursor_field": {4, func(a []driver.Value) (driver.Value, error) {
		f, ok := dbtool.DecodeCursor(text(a[0]), text(a[1]), int(integer(a[2])))
		i := int(integer(a[3]))
		if !ok || i < 1 || i > len(f) {
			return nil, nil
		}
		return f[i-1], nil
	}},
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// Text is an SQL function's argument as SQLite's text of it ("" for
// NULL): for the Go hooks of a definition.
func Text(v driver.Value) string { return text(v) }

// text is v as SQLite's text of it.
func text(v driver.Value) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	case []byte:
		return string(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		if x {
			return "1"
		}
		return "0"
	}
	return fmt.Sprint(v)
}

func integer(v driver.Value) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	case string:
		n, _ := strconv.ParseInt(strings.TrimSpace(x), 10, 64)
		return n
	}
	return 0
}

// goArgs turns SQL values into fmt arguments: text as strings, NULL as "",
// numbers as sqlNumber.
func goArgs(vs []driver.Value) []any {
	out := make([]any, len(vs))
	for i, v := range vs {
		switch x := v.(type) {
		case nil:
			out[i] = ""
		case []byte:
			out[i] = string(x)
		case int64, float64:
			out[i] = sqlNumber{x}
		default:
			out[i] = x
		}
	}
	return out
}

// sqlNumber is an SQL number (int64 or float64) as a format argument. A
// definition cannot know whether SQLite hands it an integer, a real or
// text, so every verb must print something a model can read: %s and %v
// give SQLite's text of the number, %q that text quoted (Go would print an
// integer as a rune literal, 'A'), and the numeric verbs the number, a
// whole real under %d as an integer.
type sqlNumber struct{ v any }

func (n sqlNumber) Format(f fmt.State, verb rune) {
	switch verb {
	case 's', 'v', 'q':
		if verb == 'v' {
			verb = 's'
		}
		fmt.Fprintf(f, fmt.FormatString(f, verb), text(n.v))
		return
	case 'd', 'x', 'X', 'o', 'b', 'c':
		if x, ok := n.v.(float64); ok && x == math.Trunc(x) && math.Abs(x) < 1<<53 {
			fmt.Fprintf(f, fmt.FormatString(f, verb), int64(x))
			return
		}
	}
	fmt.Fprintf(f, fmt.FormatString(f, verb), n.v)
}

// CheckLine returns "" when v, trimmed, is 1 to limit characters on one
// line, else the error that says what is wrong with field.
func CheckLine(field, v string, limit int, example string) string {
	v = strings.TrimSpace(v)
	switch n := utf8.RuneCountInString(v); {
	case v == "":
		return fmt.Sprintf("%s is empty; pass one, e.g. %q", field, example)
	case n > limit:
		return fmt.Sprintf("%s is %d characters; use at most %d", field, n, limit)
	case strings.ContainsFunc(v, unicode.IsControl):
		return fmt.Sprintf("%s has a line break or control character; pass it on one line", field)
	}
	return ""
}

// Clip returns the first n characters of s, with "…" when cut.
func Clip(s string, n int) string {
	n = max(n, 0) // a negative length is none
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// OneLine returns s's words joined by single spaces.
func OneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// Preview returns the first n characters of s on one line, with "…" when
// cut.
func Preview(s string, n int) string {
	n = max(n, 0)
	r := []rune(OneLine(s))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimRight(string(r[:n]), " ") + "…"
}

// Snippet returns the part of s around the first case-insensitive match of
// query, with up to n characters either side, on one line; the start of s
// when there is no match.
func Snippet(s, query string, n int) string {
	n = max(n, 0)
	b := []rune(OneLine(s))
	q := []rune(OneLine(query))
	at := indexFold(b, q)
	if at < 0 {
		return Preview(s, 2*n)
	}
	from, to := max(at-n, 0), min(at+len(q)+n, len(b))
	out := strings.TrimSpace(string(b[from:to]))
	if from > 0 {
		out = "…" + out
	}
	if to < len(b) {
		out += "…"
	}
	return out
}

func indexFold(b, q []rune) int {
	if len(q) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(q) <= len(b); i++ {
		for j, r := range q {
			if unicode.ToLower(b[i+j]) != unicode.ToLower(r) {
				continue outer
			}
		}
		return i
	}
	return -1
}

// Slug returns s's ASCII letters and digits lower-cased, every other run
// of characters one '-', at most n bytes; a short hash of s when that
// leaves nothing.
func Slug(s string, n int) string {
	var b strings.Builder
	dash := false
	for _, r := range s {
		r = unicode.ToLower(r)
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	out := b.String()
	if n > 0 && len(out) > n {
		out = strings.TrimRight(out[:n], "-")
	}
	if out == "" {
		sum := sha256.Sum256([]byte(s))
		out = hex.EncodeToString(sum[:4])
	}
	return out
}

// registered holds the SQL functions registered with the driver, which
// keeps them for the life of the process and for every connection opened
// after; a name is registered once.
var registered struct {
	sync.Mutex
	names map[string]string // name -> who registered it
	funcs map[string]Func   // name -> the function, for the steps run in Go (fast.go)
}

// register registers fns with the SQLite driver under their names, once
// per name; owner names who asks ("builtin", a service). A name another
// owner registered is an error: the driver's functions are global.
func register(owner string, fns map[string]Func) error {
	registered.Lock()
	defer registered.Unlock()
	if registered.names == nil {
		registered.names = map[string]string{}
	}
	for name, f := range fns {
		if who, ok := registered.names[name]; ok {
			if who != owner {
				return fmt.Errorf("SQL function %s of %s is already registered by %s; prefix hook functions with the service's name", name, owner, who)
			}
			continue
		}
		fn := f.Fn
		err := sqlite.RegisterDeterministicScalarFunction(name, int32(f.Args), func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
			return fn(args)
		})
		if err != nil {
			return fmt.Errorf("SQL function %s: %w", name, err)
		}
		registered.names[name] = owner
		if registered.funcs == nil {
			registered.funcs = map[string]Func{}
		}
		registered.funcs[name] = f
	}
	return nil
}

// registeredFunc returns the Go SQL function registered under name.
func registeredFunc(name string) (Func, bool) {
	registered.Lock()
	defer registered.Unlock()
	f, ok := registered.funcs[name]
	return f, ok
}
