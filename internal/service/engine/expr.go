package engine

import (
	"database/sql/driver"
	"encoding/json"
	"io"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// SQL that reads no table — a check over a call's arguments (SELECT 'msg'
// WHERE ..., SELECT CASE WHEN ... END), a row of values computed from
// them, an if: condition, a value of a result — is evaluated in Go, as
// SQLite would evaluate it, instead of being run as a statement: a
// statement costs a round trip through the driver, and each Go SQL
// function it calls a trampoline from transpiled C to Go and back.
//
// The subset: parameters (:name), integer and text literals, NULL, TRUE
// and FALSE; || + - *; the comparisons, IS [NOT], [NOT] IN (list),
// [NOT] BETWEEN, ISNULL, NOTNULL, NOT NULL; NOT, AND, OR; CASE in both
// forms; CAST(x AS TEXT|INTEGER), and CAST(x AS BLOB) of NULL; a scalar subquery (SELECT x [WHERE c])
// with no FROM; the engine's Go SQL functions (built-ins and hooks); and
// of SQLite's own functions coalesce, ifnull, nullif, iif, lower, upper,
// length, instr, substr, trim, ltrim, rtrim, replace, char and typeof.
// Values are NULL, integers and text. Anything else — a real, a BLOB,
// text where a number is wanted, a comparison across types (SQLite's
// affinities), an integer overflow, a function that fails — makes the
// evaluation give up, and the statement runs in SQLite as written, which
// then answers (or fails) as it always did. So Go only ever answers what
// SQLite would: expr_test.go holds it to SQLite's answers over generated
// expressions and values.

// sqlExpr is a compiled expression.
type sqlExpr interface {
	// eval returns the expression's value (nil, int64 or string); ok is
	// false when SQLite must evaluate it.
	eval(p map[string]any) (v any, ok bool)
}

// selectPlan is a SELECT with no FROM: its columns, their names (AS),
// and its WHERE (nil: none).
type selectPlan struct {
	cols  []sqlExpr
	names []string // "" for a column without AS
	where sqlExpr
}

// row evaluates the plan: the row's values, or found false when WHERE
// is not true; ok false when SQLite must.
func (s *selectPlan) row(p map[string]any) (vals []any, found, ok bool) {
	if s.where != nil {
		w, ok := s.where.eval(p)
		if !ok {
			return nil, false, false
		}
		yes, ok := truth(w)
		if !ok {
			return nil, false, false
		}
		if !yes {
			return nil, false, true
		}
	}
	vals = make([]any, len(s.cols))
	for i, c := range s.cols {
		v, ok := c.eval(p)
		if !ok {
			return nil, false, false
		}
		vals[i] = v
	}
	return vals, true, true
}

var (
	selectPlans sync.Map // SQL -> *selectPlan (nil: SQLite runs it)
	condPlans   sync.Map // if: expression -> sqlExpr (nil: SQLite)
)

// selectPlanOf returns the Go plan of a SELECT with no FROM, or nil.
func selectPlanOf(q string) *selectPlan {
	if v, ok := selectPlans.Load(q); ok {
		s, _ := v.(*selectPlan)
		return s
	}
	s, _ := parseSelectPlan(q)
	selectPlans.Store(q, s)
	return s
}

// condOf returns the Go form of an if: expression, or nil.
func condOf(e string) sqlExpr {
	if v, ok := condPlans.Load(e); ok {
		x, _ := v.(sqlExpr)
		return x
	}
	x, _ := parseExpr(e)
	if x == nil {
		condPlans.Store(e, nil)
		return nil
	}
	condPlans.Store(e, x)
	return x
}

// parseSelectPlan parses "SELECT cols [WHERE cond]", or returns false.
func parseSelectPlan(q string) (*selectPlan, bool) {
	ps := &exprParser{toks: tokenize(q)}
	if ps.toks == nil || !ps.keyword("SELECT") {
		return nil, false
	}
	s, ok := ps.selectBody()
	if !ok || !ps.done() {
		return nil, false
	}
	return s, true
}

// parseExpr parses a whole expression, or returns false.
func parseExpr(e string) (sqlExpr, bool) {
	ps := &exprParser{toks: tokenize(e)}
	if ps.toks == nil {
		return nil, false
	}
	x, ok := ps.expr()
	if !ok || !ps.done() {
		return nil, false
	}
	return x, true
}

// Tokens.

type tokKind byte

const (
	tEOF tokKind = iota
	tWord
	tParam
	tInt
	tText
	tOp
)

type token struct {
	kind tokKind
	s    string // the word (upper case), parameter name, operator or text
	raw  string // the word as written
	n    int64
}

// tokenize splits q into tokens; nil when q has something the subset
// does not know (a comment, a quoted identifier, a real, a blob).
func tokenize(q string) []token {
	var out []token
	for i := 0; i < len(q); {
		c := q[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '\'':
			var b strings.Builder
			j := i + 1
			for {
				k := strings.IndexByte(q[j:], '\'')
				if k < 0 {
					return nil
				}
				b.WriteString(q[j : j+k])
				j += k + 1
				if j < len(q) && q[j] == '\'' {
					b.WriteByte('\'')
					j++
					continue
				}
				break
			}
			if strings.IndexByte(b.String(), 0) >= 0 {
				return nil // SQLite's text functions stop at a NUL
			}
			out = append(out, token{kind: tText, s: b.String()})
			i = j
		case c >= '0' && c <= '9':
			j := i
			for j < len(q) && q[j] >= '0' && q[j] <= '9' {
				j++
			}
			if j < len(q) && (q[j] == '.' || q[j] == 'e' || q[j] == 'E' || q[j] == 'x' || q[j] == 'X' || isWordByte(q[j])) {
				return nil // a real, hex, or 1abc
			}
			n, err := strconv.ParseInt(q[i:j], 10, 64)
			if err != nil {
				return nil // SQLite reads it as a real
			}
			out = append(out, token{kind: tInt, n: n})
			i = j
		case c == ':':
			j := i + 1
			for j < len(q) && (q[j] == '_' || q[j] >= 'a' && q[j] <= 'z' || q[j] >= '0' && q[j] <= '9' && j > i+1) {
				j++
			}
			if j == i+1 || j < len(q) && isWordByte(q[j]) {
				return nil
			}
			out = append(out, token{kind: tParam, s: q[i+1 : j]})
			i = j
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(q) && isWordByte(q[j]) {
				j++
			}
			out = append(out, token{kind: tWord, s: strings.ToUpper(q[i:j]), raw: q[i:j]})
			i = j
		case strings.HasPrefix(q[i:], "--") || strings.HasPrefix(q[i:], "/*"):
			return nil // a comment
		default:
			op := ""
			for _, o := range []string{"->>", "->", "||", "<=", ">=", "<>", "!=", "==", "(", ")", ",", "=", "<", ">", "+", "-", "*", "/"} {
				if strings.HasPrefix(q[i:], o) {
					op = o
					break
				}
			}
			if op == "" {
				return nil // ; -- /* % & | ~ " ` [ ? @ $ .
			}
			out = append(out, token{kind: tOp, s: op})
			i += len(op)
		}
	}
	return append(out, token{kind: tEOF})
}

func isWordByte(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c >= 0x80
}

// The parser: SQLite's precedence, from the loosest: OR; AND; NOT; = ==
// != <> IS IN BETWEEN ISNULL NOTNULL; < <= > >=; + -; * /; ||; unary - +.

type exprParser struct {
	toks []token
	i    int
}

func (ps *exprParser) peek() token { return ps.toks[ps.i] }

func (ps *exprParser) done() bool { return ps.peek().kind == tEOF }

// keyword consumes the word w if it is next.
func (ps *exprParser) keyword(w string) bool {
	if t := ps.peek(); t.kind == tWord && t.s == w {
		ps.i++
		return true
	}
	return false
}

// op consumes the operator o if it is next.
func (ps *exprParser) op(o string) bool {
	if t := ps.peek(); t.kind == tOp && t.s == o {
		ps.i++
		return true
	}
	return false
}

// reserved are the words that end an expression or are not in the subset.
var reserved = map[string]bool{
	"SELECT": true, "FROM": true, "WHERE": true, "AS": true, "AND": true, "OR": true, "NOT": true,
	"IS": true, "IN": true, "BETWEEN": true, "LIKE": true, "GLOB": true, "MATCH": true, "REGEXP": true,
	"ESCAPE": true, "COLLATE": true, "CASE": true, "WHEN": true, "THEN": true, "ELSE": true, "END": true,
	"EXISTS": true, "ISNULL": true, "NOTNULL": true, "ORDER": true, "GROUP": true, "LIMIT": true,
	"UNION": true, "HAVING": true, "WINDOW": true, "OVER": true, "FILTER": true, "DISTINCT": true,
	"ALL": true, "CAST": true, "RAISE": true,
}

// sqlKeywords are SQLite's keywords (and TRUE and FALSE): none is taken
// as an alias in Go, since SQLite refuses most of them there.
var sqlKeywords = map[string]bool{
	"ABORT": true, "ACTION": true, "ADD": true, "AFTER": true, "ALL": true, "ALTER": true,
	"ALWAYS": true, "ANALYZE": true, "AND": true, "AS": true, "ASC": true, "ATTACH": true,
	"AUTOINCREMENT": true, "BEFORE": true, "BEGIN": true, "BETWEEN": true, "BY": true,
	"CASCADE": true, "CASE": true, "CAST": true, "CHECK": true, "COLLATE": true, "COLUMN": true,
	"COMMIT": true, "CONFLICT": true, "CONSTRAINT": true, "CREATE": true, "CROSS": true,
	"CURRENT": true, "CURRENT_DATE": true, "CURRENT_TIME": true, "CURRENT_TIMESTAMP": true,
	"DATABASE": true, "DEFAULT": true, "DEFERRABLE": true, "DEFERRED": true, "DELETE": true,
	"DESC": true, "DETACH": true, "DISTINCT": true, "DO": true, "DROP": true, "EACH": true,
	"ELSE": true, "END": true, "ESCAPE": true, "EXCEPT": true, "EXCLUDE": true, "EXCLUSIVE": true,
	"EXISTS": true, "EXPLAIN": true, "FAIL": true, "FALSE": true, "FILTER": true, "FIRST": true,
	"FOLLOWING": true, "FOR": true, "FOREIGN": true, "FROM": true, "FULL": true, "GENERATED": true,
	"GLOB": true, "GROUP": true, "GROUPS": true, "HAVING": true, "IF": true, "IGNORE": true,
	"IMMEDIATE": true, "IN": true, "INDEX": true, "INDEXED": true, "INITIALLY": true, "INNER": true,
	"INSERT": true, "INSTEAD": true, "INTERSECT": true, "INTO": true, "IS": true, "ISNULL": true,
	"JOIN": true, "KEY": true, "LAST": true, "LEFT": true, "LIKE": true, "LIMIT": true, "MATCH": true,
	"MATERIALIZED": true, "NATURAL": true, "NO": true, "NOT": true, "NOTHING": true, "NOTNULL": true,
	"NULL": true, "NULLS": true, "OF": true, "OFFSET": true, "ON": true, "OR": true, "ORDER": true,
	"OTHERS": true, "OUTER": true, "OVER": true, "PARTITION": true, "PLAN": true, "PRAGMA": true,
	"PRECEDING": true, "PRIMARY": true, "QUERY": true, "RAISE": true, "RANGE": true,
	"RECURSIVE": true, "REFERENCES": true, "REGEXP": true, "REINDEX": true, "RELEASE": true,
	"RENAME": true, "REPLACE": true, "RESTRICT": true, "RETURNING": true, "RIGHT": true,
	"ROLLBACK": true, "ROW": true, "ROWS": true, "SAVEPOINT": true, "SELECT": true, "SET": true,
	"TABLE": true, "TEMP": true, "TEMPORARY": true, "THEN": true, "TIES": true, "TO": true,
	"TRANSACTION": true, "TRIGGER": true, "TRUE": true, "UNBOUNDED": true, "UNION": true,
	"UNIQUE": true, "UPDATE": true, "USING": true, "VACUUM": true, "VALUES": true, "VIEW": true,
	"VIRTUAL": true, "WHEN": true, "WHERE": true, "WINDOW": true, "WITH": true, "WITHOUT": true,
}

// alias reports whether a word written after AS is a column name Go can
// bind as SQLite would: one the definitions' parameters use
// ([a-z_][a-z0-9_]*, sqlParams) and not a keyword.
func aliasName(w string) bool {
	if w == "" || sqlKeywords[strings.ToUpper(w)] || w[0] >= '0' && w[0] <= '9' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; !(c == '_' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// selectBody parses what follows SELECT: columns and an optional WHERE.
func (ps *exprParser) selectBody() (*selectPlan, bool) {
	s := &selectPlan{}
	for {
		x, ok := ps.expr()
		if !ok {
			return nil, false
		}
		name := ""
		if ps.keyword("AS") {
			t := ps.peek()
			if t.kind != tWord || !aliasName(t.raw) {
				return nil, false
			}
			// The alias as written: the column's name, which binds a
			// parameter, is case-sensitive.
			name = ps.rawWord()
			ps.i++
		}
		s.cols, s.names = append(s.cols, x), append(s.names, name)
		if !ps.op(",") {
			break
		}
	}
	if ps.keyword("WHERE") {
		w, ok := ps.expr()
		if !ok {
			return nil, false
		}
		s.where = w
	}
	return s, true
}

// rawWord returns the current word token as written.
func (ps *exprParser) rawWord() string { return ps.peek().raw }

func (ps *exprParser) expr() (sqlExpr, bool) { return ps.or() }

func (ps *exprParser) or() (sqlExpr, bool) {
	l, ok := ps.and()
	for ok && ps.keyword("OR") {
		var r sqlExpr
		if r, ok = ps.and(); ok {
			l = &logicExpr{and: false, l: l, r: r}
		}
	}
	return l, ok
}

func (ps *exprParser) and() (sqlExpr, bool) {
	l, ok := ps.not()
	for ok && ps.keyword("AND") {
		var r sqlExpr
		if r, ok = ps.not(); ok {
			l = &logicExpr{and: true, l: l, r: r}
		}
	}
	return l, ok
}

func (ps *exprParser) not() (sqlExpr, bool) {
	if ps.keyword("NOT") {
		x, ok := ps.not()
		if !ok {
			return nil, false
		}
		return &notExpr{x: x}, true
	}
	return ps.equality()
}

func (ps *exprParser) equality() (sqlExpr, bool) {
	l, ok := ps.relational()
	for ok {
		t := ps.peek()
		switch {
		case t.kind == tOp && (t.s == "=" || t.s == "==" || t.s == "!=" || t.s == "<>"):
			ps.i++
			var r sqlExpr
			if r, ok = ps.relational(); ok {
				l = &cmpExpr{op: map[string]string{"=": "=", "==": "=", "!=": "<>", "<>": "<>"}[t.s], l: l, r: r}
			}
		case t.kind == tWord && t.s == "IS":
			ps.i++
			not := ps.keyword("NOT")
			if ps.keyword("DISTINCT") {
				return nil, false
			}
			// IS TRUE and IS FALSE are truth tests, which SQLite also
			// makes of a right side it folds to TRUE or FALSE: a right
			// side with either word in it goes to SQLite.
			from := ps.i
			var r sqlExpr
			if r, ok = ps.relational(); ok {
				for _, t := range ps.toks[from:ps.i] {
					if t.kind == tWord && (t.s == "TRUE" || t.s == "FALSE") {
						return nil, false
					}
				}
				l = &isExpr{not: not, l: l, r: r}
			}
		case t.kind == tWord && (t.s == "ISNULL" || t.s == "NOTNULL"):
			ps.i++
			l = &isExpr{not: t.s == "NOTNULL", l: l, r: literal{}}
		case t.kind == tWord && t.s == "NOT":
			ps.i++
			switch {
			case ps.keyword("NULL"):
				l = &isExpr{not: true, l: l, r: literal{}}
			case ps.keyword("IN"):
				l, ok = ps.in(l, true)
			case ps.keyword("BETWEEN"):
				l, ok = ps.between(l, true)
			case ps.keyword("GLOB"):
				var r sqlExpr
				if r, ok = ps.relational(); ok {
					l = &globExpr{l: l, r: r, not: true}
				}
			default:
				return nil, false // NOT LIKE, NOT MATCH ...
			}
		case t.kind == tWord && t.s == "IN":
			ps.i++
			l, ok = ps.in(l, false)
		case t.kind == tWord && t.s == "BETWEEN":
			ps.i++
			l, ok = ps.between(l, false)
		case t.kind == tWord && t.s == "GLOB":
			ps.i++
			var r sqlExpr
			if r, ok = ps.relational(); ok {
				l = &globExpr{l: l, r: r}
			}
		case t.kind == tWord && (t.s == "LIKE" || t.s == "MATCH" || t.s == "REGEXP" || t.s == "COLLATE"):
			return nil, false
		default:
			return l, true
		}
	}
	return nil, false
}

func (ps *exprParser) in(x sqlExpr, not bool) (sqlExpr, bool) {
	if !ps.op("(") {
		return nil, false // IN table
	}
	e := &inExpr{not: not, x: x}
	if ps.op(")") {
		return nil, false // IN (): SQLite folds it to a constant
	}
	if t := ps.peek(); t.kind == tWord && t.s == "SELECT" {
		return nil, false // IN (SELECT ...)
	}
	for {
		v, ok := ps.expr()
		if !ok {
			return nil, false
		}
		e.list = append(e.list, v)
		if ps.op(")") {
			if _, sub := v.(*subqueryExpr); sub && len(e.list) == 1 {
				return nil, false // IN ((SELECT ...)) is IN (SELECT ...)
			}
			return e, true
		}
		if !ps.op(",") {
			return nil, false
		}
	}
}

func (ps *exprParser) between(x sqlExpr, not bool) (sqlExpr, bool) {
	lo, ok := ps.relational()
	if !ok || !ps.keyword("AND") {
		return nil, false
	}
	hi, ok := ps.relational()
	if !ok {
		return nil, false
	}
	return &betweenExpr{not: not, x: x, lo: lo, hi: hi}, true
}

func (ps *exprParser) relational() (sqlExpr, bool) {
	l, ok := ps.additive()
	for ok {
		t := ps.peek()
		if t.kind != tOp || t.s != "<" && t.s != "<=" && t.s != ">" && t.s != ">=" {
			return l, true
		}
		ps.i++
		var r sqlExpr
		if r, ok = ps.additive(); ok {
			l = &cmpExpr{op: t.s, l: l, r: r}
		}
	}
	return nil, false
}

func (ps *exprParser) additive() (sqlExpr, bool) {
	l, ok := ps.multiplicative()
	for ok {
		t := ps.peek()
		if t.kind != tOp || t.s != "+" && t.s != "-" {
			return l, true
		}
		ps.i++
		var r sqlExpr
		if r, ok = ps.multiplicative(); ok {
			l = &arithExpr{op: t.s[0], l: l, r: r}
		}
	}
	return nil, false
}

func (ps *exprParser) multiplicative() (sqlExpr, bool) {
	l, ok := ps.concat()
	for ok {
		var op byte
		switch {
		case ps.op("*"):
			op = '*'
		case ps.op("/"):
			op = '/'
		default:
			return l, true
		}
		var r sqlExpr
		if r, ok = ps.concat(); ok {
			l = &arithExpr{op: op, l: l, r: r}
		}
	}
	return l, ok
}

func (ps *exprParser) concat() (sqlExpr, bool) {
	l, ok := ps.unary()
	for ok {
		switch {
		case ps.op("||"):
			var r sqlExpr
			if r, ok = ps.unary(); ok {
				l = &concatExpr{l: l, r: r}
			}
		case ps.op("->>"):
			var r sqlExpr
			if r, ok = ps.unary(); ok {
				l = &extractExpr{l: l, r: r}
			}
		default:
			return l, true // -> (JSON, not a value) is not parsed: SQLite
		}
	}
	return l, ok
}

func (ps *exprParser) unary() (sqlExpr, bool) {
	switch {
	case ps.op("-"):
		x, ok := ps.unary()
		if !ok {
			return nil, false
		}
		return &negExpr{x: x}, true
	case ps.op("+"):
		// Unary plus is a no-op, but it takes away a column's affinity,
		// which there is none of here.
		return ps.unary()
	}
	x, ok := ps.primary()
	if ok {
		if t := ps.peek(); t.kind == tWord && t.s == "COLLATE" {
			return nil, false
		}
	}
	return x, ok
}

func (ps *exprParser) primary() (sqlExpr, bool) {
	t := ps.peek()
	switch t.kind {
	case tParam:
		ps.i++
		return param(t.s), true
	case tInt:
		ps.i++
		return literal{v: t.n}, true
	case tText:
		ps.i++
		return literal{v: t.s}, true
	case tOp:
		if t.s != "(" {
			return nil, false
		}
		ps.i++
		if ps.keyword("SELECT") {
			s, ok := ps.selectBody()
			if !ok || len(s.cols) != 1 || !ps.op(")") {
				return nil, false
			}
			return &subqueryExpr{s: s}, true
		}
		x, ok := ps.expr()
		if !ok || !ps.op(")") {
			return nil, false // a row value (a, b) too
		}
		return x, true
	case tWord:
		switch t.s {
		case "NULL":
			ps.i++
			return literal{}, true
		case "TRUE":
			ps.i++
			return literal{v: int64(1)}, true
		case "FALSE":
			ps.i++
			return literal{v: int64(0)}, true
		case "CASE":
			ps.i++
			return ps.caseExpr()
		case "CAST":
			ps.i++
			return ps.cast()
		}
		if reserved[t.s] {
			return nil, false
		}
		ps.i++
		if !ps.op("(") {
			return nil, false // a column, which there is none of without FROM
		}
		name := strings.ToLower(t.s)
		var args []sqlExpr
		if !ps.op(")") {
			if ps.keyword("DISTINCT") || ps.op("*") {
				return nil, false
			}
			for {
				a, ok := ps.expr()
				if !ok {
					return nil, false
				}
				args = append(args, a)
				if ps.op(")") {
					break
				}
				if !ps.op(",") {
					return nil, false
				}
			}
		}
		if t := ps.peek(); t.kind == tWord && (t.s == "FILTER" || t.s == "OVER") {
			return nil, false
		}
		return newCall(name, args)
	}
	return nil, false
}

func (ps *exprParser) caseExpr() (sqlExpr, bool) {
	c := &caseExpr{}
	if t := ps.peek(); !(t.kind == tWord && t.s == "WHEN") {
		base, ok := ps.expr()
		if !ok {
			return nil, false
		}
		c.base = base
	}
	for ps.keyword("WHEN") {
		w, ok := ps.expr()
		if !ok || !ps.keyword("THEN") {
			return nil, false
		}
		th, ok := ps.expr()
		if !ok {
			return nil, false
		}
		c.whens, c.thens = append(c.whens, w), append(c.thens, th)
	}
	if len(c.whens) == 0 {
		return nil, false
	}
	if ps.keyword("ELSE") {
		e, ok := ps.expr()
		if !ok {
			return nil, false
		}
		c.els = e
	}
	if !ps.keyword("END") {
		return nil, false
	}
	return c, true
}

func (ps *exprParser) cast() (sqlExpr, bool) {
	if !ps.op("(") {
		return nil, false
	}
	x, ok := ps.expr()
	if !ok || !ps.keyword("AS") {
		return nil, false
	}
	t := ps.peek()
	if t.kind != tWord || t.s != "TEXT" && t.s != "INTEGER" && t.s != "BLOB" {
		return nil, false // REAL, NUMERIC, VARCHAR(10) ...
	}
	ps.i++
	if !ps.op(")") {
		return nil, false
	}
	return &castExpr{toInt: t.s == "INTEGER", toBlob: t.s == "BLOB", x: x}, true
}

// Nodes.

type literal struct{ v any }

func (l literal) eval(map[string]any) (any, bool) { return l.v, true }

type param string

func (n param) eval(p map[string]any) (any, bool) {
	switch v := p[string(n)].(type) {
	case nil, int64:
		return v, true
	case string:
		// SQLite's text functions stop at a NUL; Go's would not.
		return v, strings.IndexByte(v, 0) < 0
	}
	return nil, false // a real or a BLOB
}

// truth is a value as a condition: NULL is not true, an integer is true
// when not 0; text needs SQLite's numeric conversion.
func truth(v any) (yes, ok bool) {
	switch x := v.(type) {
	case nil:
		return false, true
	case int64:
		return x != 0, true
	}
	return false, false
}

func boolVal(b bool) any {
	if b {
		return int64(1)
	}
	return int64(0)
}

type logicExpr struct {
	and  bool
	l, r sqlExpr
}

// eval evaluates both sides (SQLite may too): three-valued AND and OR.
func (e *logicExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	lt, ok1 := truth(l)
	rt, ok2 := truth(r)
	if !ok1 || !ok2 {
		return nil, false
	}
	ln, rn := l == nil, r == nil
	if e.and {
		switch {
		case !ln && !lt || !rn && !rt:
			return int64(0), true
		case ln || rn:
			return nil, true
		}
		return int64(1), true
	}
	switch {
	case lt || rt:
		return int64(1), true
	case ln || rn:
		return nil, true
	}
	return int64(0), true
}

type notExpr struct{ x sqlExpr }

func (e *notExpr) eval(p map[string]any) (any, bool) {
	v, ok := e.x.eval(p)
	if !ok {
		return nil, false
	}
	if v == nil {
		return nil, true
	}
	yes, ok := truth(v)
	if !ok {
		return nil, false
	}
	return boolVal(!yes), true
}

// evalPair evaluates both operands of a binary operator.
func evalPair(a, b sqlExpr, p map[string]any) (l, r any, ok bool) {
	if l, ok = a.eval(p); !ok {
		return nil, nil, false
	}
	if r, ok = b.eval(p); !ok {
		return nil, nil, false
	}
	return l, r, true
}

// compare orders two values that are not NULL; ok is false across types
// (SQLite's affinities decide those).
func compare(a, b any) (int, bool) {
	switch x := a.(type) {
	case int64:
		if y, ok := b.(int64); ok {
			switch {
			case x < y:
				return -1, true
			case x > y:
				return 1, true
			}
			return 0, true
		}
	case string:
		if y, ok := b.(string); ok {
			return strings.Compare(x, y), true // BINARY collation
		}
	}
	return 0, false
}

// orderOf compares two values that are each an int64 or a string in
// SQLite's order: every integer before every text.
func orderOf(a, b any) int {
	if c, ok := compare(a, b); ok {
		return c
	}
	if _, ok := a.(int64); ok {
		return -1
	}
	return 1
}

type cmpExpr struct {
	op   string // = <> < <= > >=
	l, r sqlExpr
}

func (e *cmpExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	if l == nil || r == nil {
		return nil, true
	}
	c, ok := compare(l, r)
	if !ok {
		return nil, false
	}
	switch e.op {
	case "=":
		return boolVal(c == 0), true
	case "<>":
		return boolVal(c != 0), true
	case "<":
		return boolVal(c < 0), true
	case "<=":
		return boolVal(c <= 0), true
	case ">":
		return boolVal(c > 0), true
	}
	return boolVal(c >= 0), true
}

type isExpr struct {
	not  bool
	l, r sqlExpr
}

func (e *isExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	var same bool
	switch {
	case l == nil || r == nil:
		same = l == nil && r == nil
	default:
		c, ok := compare(l, r)
		if !ok {
			return nil, false
		}
		same = c == 0
	}
	return boolVal(same != e.not), true
}

type inExpr struct {
	not  bool
	x    sqlExpr
	list []sqlExpr
}

func (e *inExpr) eval(p map[string]any) (any, bool) {
	x, ok := e.x.eval(p)
	if !ok {
		return nil, false
	}
	vals := make([]any, len(e.list))
	for i, it := range e.list {
		if vals[i], ok = it.eval(p); !ok {
			return nil, false
		}
	}
	if len(vals) == 0 {
		return boolVal(e.not), true
	}
	if x == nil {
		return nil, true
	}
	found, sawNull := false, false
	for _, v := range vals {
		if v == nil {
			sawNull = true
			continue
		}
		c, ok := compare(x, v)
		if !ok {
			return nil, false
		}
		if c == 0 {
			found = true
		}
	}
	switch {
	case found:
		return boolVal(!e.not), true
	case sawNull:
		return nil, true
	}
	return boolVal(e.not), true
}

type betweenExpr struct {
	not       bool
	x, lo, hi sqlExpr
}

func (e *betweenExpr) eval(p map[string]any) (any, bool) {
	// x BETWEEN lo AND hi is x >= lo AND x <= hi, x evaluated once.
	x, ok := e.x.eval(p)
	if !ok {
		return nil, false
	}
	lo, ok := e.lo.eval(p)
	if !ok {
		return nil, false
	}
	hi, ok := e.hi.eval(p)
	if !ok {
		return nil, false
	}
	ge := &cmpExpr{op: ">=", l: literal{x}, r: literal{lo}}
	le := &cmpExpr{op: "<=", l: literal{x}, r: literal{hi}}
	v, ok := (&logicExpr{and: true, l: ge, r: le}).eval(p)
	if !ok || !e.not {
		return v, ok
	}
	return (&notExpr{x: literal{v}}).eval(p)
}

type arithExpr struct {
	op   byte // + - * /
	l, r sqlExpr
}

func (e *arithExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	if l == nil || r == nil {
		return nil, true
	}
	a, ok1 := l.(int64)
	b, ok2 := r.(int64)
	if !ok1 || !ok2 {
		return nil, false // text's numeric conversion
	}
	var out int64
	switch e.op {
	case '+':
		out = a + b
		if (out > a) != (b > 0) {
			return nil, false // SQLite goes to a real
		}
	case '-':
		out = a - b
		if (out < a) != (b > 0) {
			return nil, false
		}
	case '/':
		switch {
		case b == 0:
			return nil, true // SQLite's NULL
		case a == math.MinInt64 && b == -1:
			return nil, false // SQLite goes to a real
		}
		out = a / b // toward zero, as SQLite's
	default:
		if a != 0 && b != 0 {
			out = a * b
			if out/b != a || a == -1 && b == math.MinInt64 || b == -1 && a == math.MinInt64 {
				return nil, false
			}
		}
	}
	return out, true
}

type negExpr struct{ x sqlExpr }

func (e *negExpr) eval(p map[string]any) (any, bool) {
	v, ok := e.x.eval(p)
	if !ok {
		return nil, false
	}
	switch x := v.(type) {
	case nil:
		return nil, true
	case int64:
		if x != math.MinInt64 {
			return -x, true
		}
	}
	return nil, false
}

type concatExpr struct{ l, r sqlExpr }

func (e *concatExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	if l == nil || r == nil {
		return nil, true
	}
	return asText(l) + asText(r), true
}

// extractExpr is X ->> N for the plain case: X text that is a JSON array
// and N a non-negative integer, the element an integer, a string, true,
// false or null (what SQLite gives: NULL past the end). Anything else
// (a path or a key, a real, a nested value, JSON5) goes to SQLite.
type extractExpr struct{ l, r sqlExpr }

func (e *extractExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	if l == nil {
		return nil, true
	}
	x, isText := l.(string)
	if !isText {
		return nil, false
	}
	if n, isInt := r.(int64); isInt && n >= 0 {
		if v, found, ok := intElement(x, n); ok {
			if !found {
				return nil, true
			}
			return v, true
		}
	}
	// SQLite reads X first: malformed JSON is an error whatever N is.
	dec := json.NewDecoder(strings.NewReader(x))
	dec.UseNumber()
	var arr []any
	if err := dec.Decode(&arr); err != nil || arr == nil {
		return nil, false
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, false
	}
	if r == nil {
		return nil, true
	}
	n, isInt := r.(int64)
	if !isInt || n < 0 {
		return nil, false
	}
	if n >= int64(len(arr)) {
		return nil, true
	}
	switch v := arr[n].(type) {
	case nil:
		return nil, true
	case bool:
		return boolInt(v), true
	case string:
		if strings.IndexByte(v, 0) >= 0 || !utf8.ValidString(v) {
			return nil, false
		}
		return v, true
	case json.Number:
		i, err := strconv.ParseInt(string(v), 10, 64)
		if err != nil {
			return nil, false // a real, or beyond 64 bits
		}
		return i, true
	}
	return nil, false
}

// intElement is the element n of x when x is a JSON array of integers
// written plainly (`[540,1020]`: no spaces, each -?(0|[1-9][0-9]*) within
// 64 bits), as extractExpr's decoding would read it; found is false past
// the end. ok is false for any other text, which the decoder then reads:
// the form calendar_between and the like write, read without a decoder.
func intElement(x string, n int64) (v int64, found, ok bool) {
	if len(x) < 2 || x[0] != '[' || x[len(x)-1] != ']' {
		return 0, false, false
	}
	body := x[1 : len(x)-1]
	if body == "" {
		return 0, false, true
	}
	for i := int64(0); ; i++ {
		num, rest, more := strings.Cut(body, ",")
		digits := strings.TrimPrefix(num, "-")
		if digits == "" || digits[0] == '0' && len(digits) > 1 {
			return 0, false, false
		}
		for j := 0; j < len(digits); j++ {
			if digits[j] < '0' || digits[j] > '9' {
				return 0, false, false
			}
		}
		k, err := strconv.ParseInt(num, 10, 64)
		if err != nil {
			return 0, false, false
		}
		if i == n {
			v, found = k, true
		}
		if !more {
			return v, found, true
		}
		body = rest
	}
}

// asText is an integer or text value as SQLite's text of it.
func asText(v any) string {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10)
	case string:
		return x
	}
	return ""
}

type caseExpr struct {
	base         sqlExpr // nil: CASE WHEN cond ...
	whens, thens []sqlExpr
	els          sqlExpr // nil: ELSE NULL
}

// eval evaluates lazily, as SQLite does: the branches not taken are not
// evaluated.
func (e *caseExpr) eval(p map[string]any) (any, bool) {
	var base any
	if e.base != nil {
		var ok bool
		if base, ok = e.base.eval(p); !ok {
			return nil, false
		}
	}
	for i, w := range e.whens {
		v, ok := w.eval(p)
		if !ok {
			return nil, false
		}
		var yes bool
		if e.base != nil {
			if base != nil && v != nil {
				c, ok := compare(base, v)
				if !ok {
					return nil, false
				}
				yes = c == 0
			}
		} else if yes, ok = truth(v); !ok {
			return nil, false
		}
		if yes {
			return e.thens[i].eval(p)
		}
	}
	if e.els == nil {
		return nil, true
	}
	return e.els.eval(p)
}

// castExpr is CAST(x AS TEXT|INTEGER|BLOB). A BLOB is no value of the
// subset: CAST(x AS BLOB) is only NULL in Go, so that a CASE whose branch
// writes an argument as a BLOB (format('%q', CAST(:x AS BLOB))) is
// evaluated in Go until that branch is taken.
type castExpr struct {
	toInt, toBlob bool
	x             sqlExpr
}

func (e *castExpr) eval(p map[string]any) (any, bool) {
	v, ok := e.x.eval(p)
	if !ok {
		return nil, false
	}
	if v == nil {
		return nil, true
	}
	if e.toBlob {
		return nil, false
	}
	switch x := v.(type) {
	case int64:
		if e.toInt {
			return x, true
		}
		return strconv.FormatInt(x, 10), true
	case string:
		if !e.toInt {
			return x, true
		}
		// Only plain decimal text: SQLite reads a prefix of anything
		// else, through a real.
		s := strings.Trim(x, " \t\n\r\f")
		digits := strings.TrimLeft(s, "+-")
		if len(s)-len(digits) > 1 || digits == "" || strings.Trim(digits, "0123456789") != "" || len(digits) > 18 {
			return nil, false
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, false
		}
		return n, true
	}
	return nil, false
}

type subqueryExpr struct{ s *selectPlan }

func (e *subqueryExpr) eval(p map[string]any) (any, bool) {
	vals, found, ok := e.s.row(p)
	if !ok {
		return nil, false
	}
	if !found {
		return nil, true
	}
	return vals[0], true
}

// Functions.

// goCall is a call of one of the engine's Go SQL functions, looked up
// when first called (a definition's hooks register when it compiles).
type goCall struct {
	name string
	args []sqlExpr
	fn   atomic.Pointer[Func]
}

func (e *goCall) eval(p map[string]any) (any, bool) {
	f := e.fn.Load()
	if f == nil {
		g, ok := registeredFunc(e.name)
		if !ok || g.Args >= 0 && g.Args != len(e.args) {
			return nil, false // SQLite says what is wrong
		}
		f = &g
		e.fn.Store(f)
	}
	vals := make([]driver.Value, len(e.args))
	for i, a := range e.args {
		v, ok := a.eval(p)
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	out, err := f.Fn(vals)
	if err != nil {
		return nil, false // SQLite reports it, as it would have
	}
	switch o := out.(type) {
	case nil, int64:
		return o, true
	case string:
		if strings.IndexByte(o, 0) >= 0 {
			return nil, false // SQLite would cut it at the NUL
		}
		return o, true
	}
	return nil, false
}

// coreCall is one of SQLite's own functions, written in Go.
type coreCall struct {
	name string
	args []sqlExpr
}

// coreArity is the number of arguments each of SQLite's functions that Go
// writes takes: exact, or (negative) at least that many.
var coreArity = map[string][2]int{
	"coalesce": {2, -1}, "ifnull": {2, 2}, "nullif": {2, 2}, "iif": {3, 3},
	"lower": {1, 1}, "upper": {1, 1}, "length": {1, 1}, "typeof": {1, 1},
	"instr": {2, 2}, "substr": {2, 3}, "trim": {1, 2}, "ltrim": {1, 2}, "rtrim": {1, 2},
	"replace": {3, 3}, "char": {0, -1}, "date": {1, -1}, "datetime": {1, -1}, "unixepoch": {1, -1},
	// With one argument max and min are aggregates, which SQLite runs.
	"max": {2, -1}, "min": {2, -1}, "abs": {1, 1},
	// Parsed so that a statement using it can run in Go where it does not
	// reach it (a CASE's error branch); evaluated by SQLite (a real).
	"julianday": {1, -1},
}

func newCall(name string, args []sqlExpr) (sqlExpr, bool) {
	if _, builtin := Builtins[name]; builtin || strings.Contains(name, "_") && !strings.HasPrefix(name, "json") && !strings.HasPrefix(name, "sqlite") {
		return &goCall{name: name, args: args}, true
	}
	a, ok := coreArity[name]
	if !ok || len(args) < a[0] || a[1] >= 0 && len(args) > a[1] {
		return nil, false
	}
	return &coreCall{name: name, args: args}, true
}

func (e *coreCall) eval(p map[string]any) (any, bool) {
	switch e.name {
	case "coalesce", "ifnull":
		// Lazy, as SQLite's: the first value that is not NULL.
		for _, a := range e.args {
			v, ok := a.eval(p)
			if !ok || v != nil {
				return v, ok
			}
		}
		return nil, true
	case "iif":
		c, ok := e.args[0].eval(p)
		if !ok {
			return nil, false
		}
		yes, ok := truth(c)
		if !ok {
			return nil, false
		}
		if yes {
			return e.args[1].eval(p)
		}
		return e.args[2].eval(p)
	}
	vals := make([]any, len(e.args))
	for i, a := range e.args {
		v, ok := a.eval(p)
		if !ok {
			return nil, false
		}
		vals[i] = v
	}
	switch e.name {
	case "max", "min":
		// The greatest or least argument by SQLite's order (integers
		// before text, text by bytes), NULL if any is NULL.
		var best any
		for i, a := range e.args {
			v, ok := a.eval(p)
			if !ok {
				return nil, false
			}
			switch v.(type) {
			case nil:
				return nil, true
			case int64, string:
			default:
				return nil, false
			}
			if i == 0 {
				best = v
				continue
			}
			c := orderOf(v, best)
			if e.name == "max" && c > 0 || e.name == "min" && c < 0 {
				best = v
			}
		}
		return best, true
	case "abs":
		v, ok := e.args[0].eval(p)
		if !ok {
			return nil, false
		}
		switch x := v.(type) {
		case nil:
			return nil, true
		case int64:
			if x == math.MinInt64 {
				return nil, false // SQLite's integer overflow error
			}
			if x < 0 {
				x = -x
			}
			return x, true
		}
		return nil, false // text is converted to a number: SQLite
	case "nullif":
		a, b := vals[0], vals[1]
		if a == nil || b == nil {
			return a, true
		}
		c, ok := compare(a, b)
		if !ok {
			return nil, false
		}
		if c == 0 {
			return nil, true
		}
		return a, true
	case "typeof":
		switch vals[0].(type) {
		case nil:
			return "null", true
		case int64:
			return "integer", true
		}
		return "text", true
	case "char":
		var b strings.Builder
		for _, v := range vals {
			n, ok := v.(int64)
			if !ok || n <= 0 || n > utf8.MaxRune || n >= 0xD800 && n <= 0xDFFF {
				return nil, false
			}
			b.WriteRune(rune(n))
		}
		return b.String(), true
	}
	if e.name == "replace" {
		// NULL when X or Y is; X when Y is empty, whatever Z is.
		switch {
		case vals[0] == nil || vals[1] == nil:
			return nil, true
		case asText(vals[1]) == "":
			return asText(vals[0]), true
		case vals[2] == nil:
			return nil, true
		}
		return strings.ReplaceAll(asText(vals[0]), asText(vals[1]), asText(vals[2])), true
	}
	// The rest are NULL when an argument is.
	for _, v := range vals {
		if v == nil {
			return nil, true
		}
	}
	switch e.name {
	case "lower", "upper":
		s := asText(vals[0])
		if e.name == "lower" {
			return asciiLower(s), true
		}
		return asciiUpper(s), true
	case "length":
		if n, ok := vals[0].(int64); ok {
			return int64(len(strconv.FormatInt(n, 10))), true
		}
		if !utf8.ValidString(vals[0].(string)) {
			return nil, false
		}
		return int64(utf8.RuneCountInString(vals[0].(string))), true
	case "instr":
		h, n := asText(vals[0]), asText(vals[1])
		if !utf8.ValidString(h) || !utf8.ValidString(n) {
			return nil, false
		}
		i := strings.Index(h, n)
		if i < 0 {
			return int64(0), true
		}
		return int64(utf8.RuneCountInString(h[:i]) + 1), true
	case "substr":
		return substr(vals)
	case "date", "datetime", "unixepoch":
		return dateOf(e.name, vals)
	case "julianday":
		return nil, false
	case "trim", "ltrim", "rtrim":
		s, set := asText(vals[0]), " "
		if len(vals) == 2 {
			set = asText(vals[1])
		}
		if !utf8.ValidString(s) || !utf8.ValidString(set) {
			return nil, false
		}
		switch e.name {
		case "ltrim":
			return strings.TrimLeft(s, set), true
		case "rtrim":
			return strings.TrimRight(s, set), true
		}
		return strings.Trim(s, set), true
	}
	return nil, false
}

// substr is SQLite's substr(X, Y[, Z]) of text, in characters.
func substr(vals []any) (any, bool) {
	p1, ok := vals[1].(int64)
	if !ok {
		return nil, false
	}
	s := asText(vals[0])
	if !utf8.ValidString(s) {
		return nil, false
	}
	p2 := int64(math.MaxInt32) // beyond any text's length
	neg := false
	if len(vals) == 3 {
		if p2, ok = vals[2].(int64); !ok {
			return nil, false
		}
		if p2 < 0 {
			neg, p2 = true, -p2
		}
	}
	if p1 < -math.MaxInt32 || p1 > math.MaxInt32 || p2 > math.MaxInt32 {
		return nil, false
	}
	n := int64(utf8.RuneCountInString(s))
	switch {
	case p1 < 0:
		p1 += n
		if p1 < 0 {
			p2 += p1
			if p2 < 0 {
				p2 = 0
			}
			p1 = 0
		}
	case p1 > 0:
		p1--
	case p2 > 0:
		p2--
	}
	if neg {
		p1 -= p2
		if p1 < 0 {
			p2 += p1
			p1 = 0
		}
	}
	runes := []rune(s)
	if p1 > n {
		p1 = n
	}
	end := p1 + p2
	if end > n {
		end = n
	}
	return string(runes[p1:end]), true
}

func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'A' && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

func asciiUpper(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'a' && c <= 'z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if b[j] >= 'a' && b[j] <= 'z' {
					b[j] -= 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// dateOf is SQLite's date(X, modifiers...) or datetime(X, modifiers...)
// for the plain case: X a valid date YYYY-MM-DD or time YYYY-MM-DD
// HH:MM:SS and each modifier "+N days", "-N months", "+N minutes" and so
// on (seconds, minutes, hours, days, months, years; singular too); also
// unixepoch(X, modifiers...). Anything else (another form of time,
// another modifier) goes to SQLite.
func dateOf(name string, vals []any) (any, bool) {
	x, ok := vals[0].(string)
	if !ok {
		return nil, false
	}
	layout := "2006-01-02"
	if len(x) == 19 {
		layout = "2006-01-02 15:04:05"
	} else if len(x) != 10 {
		return nil, false
	}
	t, err := time.Parse(layout, x)
	if err != nil || t.Format(layout) != x {
		return nil, false // time.Parse takes a few forms SQLite reads otherwise
	}
	for _, v := range vals[1:] {
		m, ok := v.(string)
		if !ok {
			return nil, false
		}
		n, unit, ok := dateModifier(m)
		if !ok {
			return nil, false
		}
		switch unit {
		case 's':
			t = t.Add(time.Duration(n) * time.Second)
		case 'M':
			t = t.Add(time.Duration(n) * time.Minute)
		case 'h':
			t = t.Add(time.Duration(n) * time.Hour)
		case 'd':
			t = t.AddDate(0, 0, n)
		case 'm':
			t = t.AddDate(0, n, 0) // a day past the month's end carries over, as in SQLite
		default:
			t = t.AddDate(n, 0, 0)
		}
	}
	if t.Year() < 0 || t.Year() > 9999 {
		return nil, false
	}
	switch name {
	case "date":
		return t.Format("2006-01-02"), true
	case "unixepoch":
		return t.Unix(), true
	}
	return t.Format("2006-01-02 15:04:05"), true
}

// dateModifier reads "+N days", "-N months", "+N minute" and so on (N of
// 1 to 6 digits, the unit singular or plural); unit is 's', 'M', 'h',
// 'd', 'm' or 'y'.
func dateModifier(m string) (n int, unit byte, ok bool) {
	num, u, ok := strings.Cut(m, " ")
	switch strings.TrimSuffix(u, "s") {
	case "second":
		unit = 's'
	case "minute":
		unit = 'M'
	case "hour":
		unit = 'h'
	case "day":
		unit = 'd'
	case "month":
		unit = 'm'
	case "year":
		unit = 'y'
	default:
		return 0, 0, false
	}
	if !ok || len(num) < 2 || len(num) > 7 || num[0] != '+' && num[0] != '-' {
		return 0, 0, false
	}
	for _, c := range num[1:] {
		if c < '0' || c > '9' {
			return 0, 0, false
		}
		n = n*10 + int(c-'0')
	}
	if num[0] == '-' {
		n = -n
	}
	return n, unit, true
}

// globExpr is X GLOB Y (Y the pattern) over ASCII text without NUL;
// anything else goes to SQLite.
type globExpr struct {
	l, r sqlExpr
	not  bool // X NOT GLOB Y
}

func (e *globExpr) eval(p map[string]any) (any, bool) {
	l, r, ok := evalPair(e.l, e.r, p)
	if !ok {
		return nil, false
	}
	if l == nil || r == nil {
		return nil, true
	}
	for _, v := range []any{l, r} {
		switch v.(type) {
		case int64, string:
		default:
			return nil, false
		}
	}
	str, pat := asText(l), asText(r)
	for _, s := range []string{str, pat} {
		for i := 0; i < len(s); i++ {
			if s[i] == 0 || s[i] >= 0x80 {
				return nil, false
			}
		}
	}
	return boolInt(globMatch(pat, str) != e.not), true
}

// globMatch is SQLite's patternCompare for GLOB on ASCII: * any run, ?
// one character, [...] a set (^ first inverts it, ] first is itself, a-z
// a range); a set without its ] matches nothing.
func globMatch(pat, s string) bool {
	for len(pat) > 0 {
		switch c := pat[0]; c {
		case '*':
			for len(pat) > 0 && pat[0] == '*' {
				pat = pat[1:]
			}
			if pat == "" {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(pat, s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if s == "" {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			if s == "" {
				return false
			}
			ch := s[0]
			i := 1
			invert, seen := false, false
			if i < len(pat) && pat[i] == '^' {
				invert = true
				i++
			}
			if i < len(pat) && pat[i] == ']' {
				seen = ch == ']'
				i++
			}
			var prior byte
			for i < len(pat) && pat[i] != ']' {
				c2 := pat[i]
				if c2 == '-' && i+1 < len(pat) && pat[i+1] != ']' && prior > 0 {
					hi := pat[i+1]
					if ch >= prior && ch <= hi {
						seen = true
					}
					prior = 0
					i += 2
					continue
				}
				if ch == c2 {
					seen = true
				}
				prior = c2
				i++
			}
			if i >= len(pat) || seen == invert {
				return false
			}
			pat, s = pat[i+1:], s[1:]
		default:
			if s == "" || s[0] != c {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}
