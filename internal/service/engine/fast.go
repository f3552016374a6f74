package engine

import (
	"database/sql/driver"
	"fmt"
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

// A result step of the form SELECT json_object('k', <term>, ...) — what
// most tools end with — and a row step of the form SELECT <term> AS a, ...
// are run in Go when every term is one of: a parameter, json(:p), a text
// or integer literal, CASE WHEN :p THEN 1 END, CAST(:p AS TEXT), a nested
// json_object of terms, or any other expression Go evaluates (expr.go:
// the engine's Go SQL functions among them). The JSON parameters are
// spliced as they are instead of being parsed again (a page of results is
// most of a call's bytes). Any value a term cannot take as SQLite would
// sends the step to SQLite. fast_test.go holds both to SQLite's answers.

// term is one expression of such a step.
type term struct {
	kind  byte    // 'p' :p, 'j' json(:p), 'l' literal, 'c' CASE WHEN :p THEN 1 END, 'k' CASE WHEN cond THEN json(:p) END, 't' CAST(:p AS TEXT), 'o' json_object, 'f' function, 'x' another expression
	x     sqlExpr // 'x'
	param string
	lit   any // string or int64 for 'l'
	args  []term
	keys  []string // 'o': JSON-quoted keys of args
}

var (
	reParam      = regexp.MustCompile(`^:([a-z_][a-z0-9_]*)$`)
	reJSONParam  = regexp.MustCompile(`^json\(:([a-z_][a-z0-9_]*)\)$`)
	reCaseParam  = regexp.MustCompile(`^CASE WHEN :([a-z_][a-z0-9_]*) THEN 1 END$`)
	reCaseJSON   = regexp.MustCompile(`(?s)^CASE WHEN (.+) THEN json\(:([a-z_][a-z0-9_]*)\) END$`)
	reCastText   = regexp.MustCompile(`^CAST\(:([a-z_][a-z0-9_]*) AS TEXT\)$`)
	reIntLiteral = regexp.MustCompile(`^-?[0-9]{1,15}$`)
	reText       = regexp.MustCompile(`^'([^']*)'$`)
	reKey        = regexp.MustCompile(`^'([a-z_][a-z0-9_]*)'$`)
	reCall       = regexp.MustCompile(`(?s)^([a-z_][a-z0-9_]*)\((.*)\)$`)
	reAlias      = regexp.MustCompile(`(?s)^(.*\S)\s+AS\s+([a-z_][a-z0-9_]*)$`)
)

// parseTerm parses e, or returns false: one of the forms above, else any
// expression Go evaluates (expr.go).
func parseTerm(e string) (term, bool) {
	if t, ok := parseBasicTerm(e); ok {
		return t, true
	}
	if x, ok := parseExpr(e); ok {
		return term{kind: 'x', x: x}, true
	}
	return term{}, false
}

func parseBasicTerm(e string) (term, bool) {
	e = strings.TrimSpace(e)
	switch {
	case reParam.MatchString(e):
		return term{kind: 'p', param: e[1:]}, true
	case reJSONParam.MatchString(e):
		return term{kind: 'j', param: reJSONParam.FindStringSubmatch(e)[1]}, true
	case reCaseParam.MatchString(e):
		return term{kind: 'c', param: reCaseParam.FindStringSubmatch(e)[1]}, true
	case reCaseJSON.MatchString(e):
		// CASE WHEN cond THEN json(:p) END: p's JSON where cond holds, else
		// null; cond in Go.
		m := reCaseJSON.FindStringSubmatch(e)
		if x, ok := parseExpr(m[1]); ok && !strings.Contains(strings.ToUpper(m[1]), " WHEN ") {
			return term{kind: 'k', x: x, param: m[2]}, true
		}
		return term{}, false
	case reCastText.MatchString(e):
		return term{kind: 't', param: reCastText.FindStringSubmatch(e)[1]}, true
	case reIntLiteral.MatchString(e):
		n, err := strconv.ParseInt(e, 10, 64)
		return term{kind: 'l', lit: n}, err == nil
	case reText.MatchString(e):
		return term{kind: 'l', lit: reText.FindStringSubmatch(e)[1]}, true
	}
	// A json_object of terms; any other call is an expression (expr.go).
	m := reCall.FindStringSubmatch(e)
	if m == nil || m[1] != "json_object" {
		return term{}, false
	}
	var args []term
	if strings.TrimSpace(m[2]) != "" {
		for _, a := range splitTop(m[2], ',') {
			t, ok := parseTerm(a)
			if !ok {
				return term{}, false
			}
			args = append(args, t)
		}
	}
	if len(args)%2 != 0 {
		return term{}, false
	}
	o := term{kind: 'o'}
	parts := splitTop(m[2], ',')
	for i := 0; i < len(args); i += 2 {
		k := reKey.FindStringSubmatch(strings.TrimSpace(parts[i]))
		if k == nil {
			return term{}, false
		}
		o.keys = append(o.keys, `"`+k[1]+`"`)
		o.args = append(o.args, args[i+1])
	}
	return o, true
}

// eval returns the term's SQL value (nil, int64 or string), or false.
func (t *term) eval(p map[string]any) (any, bool) {
	switch t.kind {
	case 'x':
		return t.x.eval(p)
	case 'p':
		return param(t.param).eval(p)
	case 'l':
		return t.lit, true
	case 't':
		// Text as it is, a BLOB's bytes as text (a NUL included: this
		// form is only written as JSON, never handed to a function).
		switch v := p[t.param].(type) {
		case nil, string:
			return v, true
		case []byte:
			return string(v), true
		}
		return nil, false
	case 'c':
		switch v := p[t.param].(type) {
		case nil:
			return nil, true
		case int64:
			if v != 0 {
				return int64(1), true
			}
			return nil, true
		}
		return nil, false
	}
	return nil, false // 'j' and 'o' are JSON, not SQL values
}

// appendJSON writes the term as json_object writes its value; false when
// SQLite must.
func (t *term) appendJSON(out []byte, p map[string]any) ([]byte, bool) {
	switch t.kind {
	case 'k':
		v, ok := t.x.eval(p)
		if !ok {
			return nil, false
		}
		yes, ok := truth(v)
		if !ok {
			return nil, false
		}
		if !yes {
			return append(out, "null"...), true
		}
		return (&term{kind: 'j', param: t.param}).appendJSON(out, p)
	case 'j':
		switch x := p[t.param].(type) {
		case nil:
			return append(out, "null"...), true
		case string:
			if !startsJSON(x) {
				return nil, false
			}
			return append(out, x...), true
		}
		return nil, false
	case 'o':
		out = append(out, '{')
		for i := range t.args {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, t.keys[i]...)
			out = append(out, ':')
			var ok bool
			if out, ok = t.args[i].appendJSON(out, p); !ok {
				return nil, false
			}
		}
		return append(out, '}'), true
	}
	v, ok := t.eval(p)
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return append(out, "null"...), true
	case int64:
		return strconv.AppendInt(out, x, 10), true
	case string:
		return appendSQLiteString(out, x), true
	}
	return nil, false
}

// compiled steps, by SQL text (nil: SQLite runs it).
var (
	resultTerms sync.Map // result SQL -> *term ('o')
	rowTerms    sync.Map // row SQL -> *rowTerm
)

// resultTermOf returns the Go form of a result statement, or nil.
func resultTermOf(q string) *term {
	if v, ok := resultTerms.Load(q); ok {
		t, _ := v.(*term)
		return t
	}
	var out *term
	if inner, ok := strings.CutPrefix(strings.TrimSpace(q), "SELECT "); ok {
		if t, ok := parseTerm(inner); ok && t.kind == 'o' {
			out = &t
		}
	}
	resultTerms.Store(q, out)
	return out
}

// build writes the result; ok is false when SQLite must.
func (t *term) build(p map[string]any) ([]byte, bool) {
	n := 64
	for _, v := range p {
		if s, ok := v.(string); ok {
			n += len(s)
		}
	}
	return t.appendJSON(make([]byte, 0, n), p)
}

// rowTerm is a row step of terms: SELECT t1 AS a, t2 AS b.
type rowTerm struct {
	names []string
	terms []term
}

// rowTermOf returns the Go form of a row statement, or nil.
func rowTermOf(q string) *rowTerm {
	if v, ok := rowTerms.Load(q); ok {
		r, _ := v.(*rowTerm)
		return r
	}
	var out *rowTerm
	if list, ok := strings.CutPrefix(strings.TrimSpace(q), "SELECT "); ok {
		r := &rowTerm{}
		for _, item := range splitTop(list, ',') {
			m := reAlias.FindStringSubmatch(strings.TrimSpace(item))
			if m == nil {
				r = nil
				break
			}
			t, ok := parseTerm(m[1])
			if !ok || !aliasName(m[2]) || t.kind == 'j' || t.kind == 'o' || t.kind == 't' {
				r = nil
				break
			}
			r.names, r.terms = append(r.names, m[2]), append(r.terms, t)
		}
		out = r
	}
	rowTerms.Store(q, out)
	return out
}

// eval returns the row's values; false when SQLite must.
func (r *rowTerm) eval(p map[string]any) ([]any, bool) {
	vals := make([]any, len(r.terms))
	for i := range r.terms {
		v, ok := r.terms[i].eval(p)
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	return vals, true
}

// appendSQLiteString writes s as a JSON string the way SQLite's
// json_quote does: quotes and backslashes escaped, control characters as
// \b \f \n \r \t or \u00XX, everything else as it is. Runs of bytes that
// need no escape are copied whole (message bodies are most of a result).
func appendSQLiteString(out []byte, s string) []byte {
	out = append(out, '"')
	for i := 0; i < len(s); {
		j := i
		for j < len(s) && !needsEscape[s[j]] {
			j++
		}
		out = append(out, s[i:j]...)
		if j == len(s) {
			break
		}
		switch c := s[j]; c {
		case '"', '\\':
			out = append(out, '\\', c)
		case '\b':
			out = append(out, `\b`...)
		case '\f':
			out = append(out, `\f`...)
		case '\n':
			out = append(out, `\n`...)
		case '\r':
			out = append(out, `\r`...)
		case '\t':
			out = append(out, `\t`...)
		default:
			out = append(out, `\u00`...)
			out = append(out, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&0xf])
		}
		i = j + 1
	}
	return append(out, '"')
}

// needsEscape marks the bytes appendSQLiteString escapes.
var needsEscape = func() (t [256]bool) {
	for c := range 0x20 {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// A rows or page step whose first column is json_object('k', expr, ...)
// is run with the objects' values as columns of their own, and the
// objects written in Go: SQLite's JSON functions run as transpiled C and
// cost more per row than the query itself. Values are written as
// json_object writes them (appendSQLiteString; a json(X) value spliced
// as it is). When a value has a type Go does not write as SQLite does (a
// real, a BLOB), the step runs again as written. A value whose expression
// mentions JSON otherwise (json_group_array, ->, a json_object not in
// json()) keeps the whole step in SQLite, since SQLite embeds JSON-typed
// text where Go would quote it.

type objectRows struct {
	query string   // the rewritten statement
	name  string   // the first column's name (its alias, else its text)
	keys  []string // JSON-quoted keys
	raw   []bool   // the value is json(X): spliced
	// fns[i], when set, is the Go SQL function of key i's value f(a, b,
	// ...), called in Go on the columns of its arguments (nargs[i] of
	// them) rather than by SQLite once a row through the driver.
	fns   []*Func
	nargs []int
	width int // the columns of the values: len(keys) plus the functions' extra arguments
}

var objectPlans sync.Map // SQL -> *objectRows (nil: none)

// objectRowsOf returns the Go plan of a rows or page statement, or nil.
func objectRowsOf(q string) *objectRows {
	if v, ok := objectPlans.Load(q); ok {
		p, _ := v.(*objectRows)
		return p
	}
	p := compileObjectRows(q)
	objectPlans.Store(q, p)
	return p
}

func compileObjectRows(q string) *objectRows {
	start, end, ok := selectListBounds(q)
	if !ok {
		return nil
	}
	items := splitTop(q[start:end], ',')
	first := strings.TrimSpace(items[0])
	name := first
	if m := reAlias.FindStringSubmatch(first); m != nil {
		first, name = m[1], m[2]
	}
	inner, ok := strings.CutPrefix(first, "json_object(")
	if !ok || !strings.HasSuffix(inner, ")") || !balanced(inner[:len(inner)-1]) {
		return nil
	}
	args := splitTop(inner[:len(inner)-1], ',')
	if len(args) == 0 || len(args)%2 != 0 {
		return nil
	}
	p := &objectRows{name: name}
	var cols []string
	for i := 0; i < len(args); i += 2 {
		k := reKey.FindStringSubmatch(strings.TrimSpace(args[i]))
		if k == nil {
			return nil
		}
		v := strings.TrimSpace(args[i+1])
		raw := false
		if x, ok := strings.CutPrefix(v, "json("); ok && strings.HasSuffix(x, ")") && balanced(x[:len(x)-1]) {
			v, raw = x[:len(x)-1], true
		} else if u := strings.ToLower(v); strings.Contains(u, "json") || strings.Contains(u, "->") {
			return nil
		}
		p.keys, p.raw = append(p.keys, `"`+k[1]+`"`), append(p.raw, raw)
		var fn *Func
		args := []string{v}
		if c := reCall.FindStringSubmatch(v); c != nil && balanced(c[2]) {
			if f, ok := registeredFunc(c[1]); ok {
				if a := splitTop(c[2], ','); strings.TrimSpace(c[2]) != "" && (f.Args < 0 || f.Args == len(a)) {
					fn, args = &f, a
				}
			}
		}
		p.fns, p.nargs = append(p.fns, fn), append(p.nargs, len(args))
		for _, a := range args {
			cols = append(cols, fmt.Sprintf("%s AS __v%d", strings.TrimSpace(a), len(cols)))
		}
	}
	p.width = len(cols)
	p.query = q[:start] + " " + strings.Join(append(cols, items[1:]...), ", ") + " " + q[end:]
	return p
}

// balanced reports whether s's parentheses balance outside quotes.
func balanced(s string) bool {
	depth := 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '"':
			j := strings.IndexByte(s[i+1:], c)
			if j < 0 {
				return false
			}
			i += j + 1
		case '(':
			depth++
		case ')':
			depth--
			if depth < 0 {
				return false
			}
		}
	}
	return depth == 0
}

// selectListBounds returns where the select list of q's top-level SELECT
// starts and ends.
func selectListBounds(q string) (start, end int, ok bool) {
	list, ok := topLevelSelectList(q)
	if !ok {
		return 0, 0, false
	}
	start = strings.Index(q, list)
	if start < 0 || strings.Count(q, list) != 1 {
		return 0, 0, false
	}
	return start, start + len(list), true
}

// appendObject writes one row's object; false when a value needs SQLite.
func (p *objectRows) appendObject(b []byte, vals []any) ([]byte, bool) {
	b = append(b, '{')
	col := 0
	for i, k := range p.keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, ':')
		v := vals[col]
		if f := p.fns[i]; f != nil {
			args := make([]driver.Value, p.nargs[i])
			for j := range args {
				args[j] = vals[col+j]
			}
			out, err := f.Fn(args)
			if err != nil {
				return nil, false // SQLite reports it, as it would have
			}
			if s, ok := out.(string); ok && strings.IndexByte(s, 0) >= 0 {
				return nil, false // SQLite would cut it at the NUL
			}
			v = out
		}
		col += p.nargs[i]
		switch v := v.(type) {
		case nil:
			b = append(b, "null"...)
		case int64:
			b = strconv.AppendInt(b, v, 10)
		case string:
			if p.raw[i] {
				if !startsJSON(v) {
					return nil, false
				}
				b = append(b, v...)
			} else {
				b = appendSQLiteString(b, v)
			}
		default:
			return nil, false
		}
	}
	return append(b, '}'), true
}

var nextTerms sync.Map // next expression -> *term (nil: none)

// nextTermOf returns the Go form of a page's next: expression (a cursor
// built from the last row's columns), or nil.
func nextTermOf(expr string) *term {
	if v, ok := nextTerms.Load(expr); ok {
		t, _ := v.(*term)
		return t
	}
	var out *term
	if t, ok := parseTerm(expr); ok && t.kind != 'j' && t.kind != 'o' {
		out = &t
	}
	nextTerms.Store(expr, out)
	return out
}

// AppendJSONText appends s as a JSON string, as SQLite's json_quote (and
// so json_object) writes text: for Go hooks that build JSON a definition's
// SQL would otherwise build.
func AppendJSONText(out []byte, s string) []byte { return appendSQLiteString(out, s) }
