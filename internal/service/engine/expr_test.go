package engine

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// exprGen writes random expressions of (and beyond) the subset Go
// evaluates, over the parameters x, y and z.
type exprGen struct{ r *rand.Rand }

var (
	genTexts = []string{"", " ", "a", "A", "abc", "Ab C", "0", "12", " 12 ", "-3", "héllo wörld", "x'y", "%d", "a_b", "ÅB", "a\x00bc",
		"2026-03-01", "2024-02-29", "2026-02-29", "2026-12-31 23:59:59", "0000-01-01", "9999-12-31", "2026-3-1", "2026-03-01T10:00:00",
		"+7 days", "-1 day", "+366 days", "+1 month", "7 days", "+3 DAYS", "+90 minutes", "-2 hours", "+30 seconds", "+1 minute",
		"[540,1020]", ` ["a", null, true, false, 1.5, -3] `, "[1,[2],{}]", `{"a":1}`, "[1,]", "[9223372036854775808]", "[]", `["x\u0000y", "\ud800"]`, "*[^0-9]*", "a*", "?b*", "[a-c]*", "[]a]*", "[^]]", "[a-]", "1[2"}
	genInts = []int64{0, 1, -1, 2, 3, 42, -7, 1 << 40, 9223372036854775807}
)

func (g *exprGen) lit() string {
	switch g.r.IntN(6) {
	case 0:
		return "NULL"
	case 1, 2:
		return fmt.Sprint(genInts[g.r.IntN(len(genInts)-1)])
	case 3:
		return []string{"TRUE", "FALSE", "1.5", "x'00'"}[g.r.IntN(4)]
	}
	return "'" + strings.ReplaceAll(genTexts[g.r.IntN(len(genTexts))], "'", "''") + "'"
}

func (g *exprGen) expr(depth int) string {
	if depth <= 0 || g.r.IntN(4) == 0 {
		if g.r.IntN(2) == 0 {
			return []string{":x", ":y", ":z"}[g.r.IntN(3)]
		}
		return g.lit()
	}
	e := func() string {
		s := g.expr(depth - 1)
		if g.r.IntN(2) == 0 {
			return "(" + s + ")"
		}
		return s
	}
	switch g.r.IntN(12) {
	case 0:
		return []string{"-", "NOT ", "+"}[g.r.IntN(3)] + e()
	case 1, 2, 3:
		ops := []string{"=", "==", "<>", "!=", "<", "<=", ">", ">=", "||", "+", "-", "*", "AND", "OR", "IS", "IS NOT", "/", "LIKE", "GLOB", "GLOB", "->>", "->>", "->", "NOT GLOB"}
		return e() + " " + ops[g.r.IntN(len(ops))] + " " + e()
	case 4:
		post := []string{" IS NULL", " IS NOT NULL", " ISNULL", " NOTNULL", " NOT NULL"}
		return e() + post[g.r.IntN(len(post))]
	case 5:
		n := g.r.IntN(3)
		items := make([]string, n)
		for i := range items {
			items[i] = e()
		}
		return e() + []string{" IN (", " NOT IN ("}[g.r.IntN(2)] + strings.Join(items, ", ") + ")"
	case 6:
		return e() + []string{" BETWEEN ", " NOT BETWEEN "}[g.r.IntN(2)] + e() + " AND " + e()
	case 7:
		s := "CASE "
		if g.r.IntN(2) == 0 {
			s += e() + " "
		}
		for range 1 + g.r.IntN(2) {
			s += "WHEN " + e() + " THEN " + e() + " "
		}
		if g.r.IntN(2) == 0 {
			s += "ELSE " + e() + " "
		}
		return s + "END"
	case 8:
		return "CAST(" + e() + " AS " + []string{"TEXT", "INTEGER", "BLOB", "REAL"}[g.r.IntN(4)] + ")"
	case 9:
		return "(SELECT " + e() + " WHERE " + e() + ")"
	}
	fns := []struct {
		name string
		args int
	}{
		{"coalesce", 2}, {"coalesce", 3}, {"ifnull", 2}, {"nullif", 2}, {"iif", 3}, {"lower", 1}, {"upper", 1},
		{"length", 1}, {"typeof", 1}, {"instr", 2}, {"substr", 2}, {"substr", 3}, {"trim", 1}, {"trim", 2},
		{"ltrim", 1}, {"rtrim", 2}, {"replace", 3}, {"char", 1}, {"char", 2}, {"trim_space", 1}, {"char_count", 1},
		{"format", 2}, {"clip", 2}, {"abs", 1}, {"coalesce", 1}, {"printf", 2},
		{"max", 2}, {"min", 2}, {"max", 3}, {"min", 3}, {"max", 1},
		{"date", 1}, {"date", 2}, {"date", 3}, {"datetime", 1}, {"datetime", 2}, {"unixepoch", 1}, {"unixepoch", 2},
	}
	f := fns[g.r.IntN(len(fns))]
	args := make([]string, f.args)
	for i := range args {
		args[i] = g.expr(depth - 1)
	}
	if f.name == "format" {
		args[0] = []string{"'%s'", "'%d'", "'%q'", "'<%s|%s>'"}[g.r.IntN(4)]
	}
	return f.name + "(" + strings.Join(args, ", ") + ")"
}

func (g *exprGen) value() any {
	switch g.r.IntN(10) {
	case 0, 1:
		return nil
	case 2, 3, 4:
		return genInts[g.r.IntN(len(genInts))]
	case 5:
		return []any{1.5, []byte("b"), float64(2)}[g.r.IntN(3)]
	}
	return genTexts[g.r.IntN(len(genTexts))]
}

func sqliteMemory(t testing.TB) *sql.DB {
	t.Helper()
	if err := register("builtin", Builtins); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return db
}

// TestExprAgreesWithSQLite: over generated expressions and parameter
// values, whatever Go evaluates is what SQLite gives (value and type),
// and Go never answers where SQLite fails.
func TestExprAgreesWithSQLite(t *testing.T) {
	db := sqliteMemory(t)
	g := &exprGen{r: rand.New(rand.NewPCG(1, 2))}
	const n = 30000
	decided, parsed := 0, 0
	for range n {
		e := g.expr(3)
		x, ok := parseExpr(e)
		if !ok {
			continue
		}
		parsed++
		p := map[string]any{"x": g.value(), "y": g.value(), "z": g.value()}
		got, ok := x.eval(p)
		if !ok {
			continue
		}
		decided++
		var want any
		err := db.QueryRow("SELECT "+e, sql.Named("x", p["x"]), sql.Named("y", p["y"]), sql.Named("z", p["z"])).Scan(&want)
		if err != nil {
			t.Errorf("%s with %v: Go gives %#v, SQLite fails: %v", e, p, got, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s with %v: Go gives %#v, SQLite %#v", e, p, got, want)
		}
	}
	t.Logf("%d expressions: %d in the subset, %d evaluated in Go", n, parsed, decided)
	if decided < n/5 {
		t.Errorf("only %d of %d evaluated in Go", decided, n)
	}
}

// TestSelectPlanAgreesWithSQLite: a SELECT with no FROM, as a check or a
// row step runs it: the same row, or none, as SQLite.
func TestSelectPlanAgreesWithSQLite(t *testing.T) {
	db := sqliteMemory(t)
	g := &exprGen{r: rand.New(rand.NewPCG(3, 4))}
	decided := 0
	for range 5000 {
		q := "SELECT " + g.expr(2) + " AS a_col, " + g.expr(2) + " AS b"
		if g.r.IntN(3) > 0 {
			q += " WHERE " + g.expr(2)
		}
		s := selectPlanOf(q)
		if s == nil {
			continue
		}
		p := map[string]any{"x": g.value(), "y": g.value(), "z": g.value()}
		vals, found, ok := s.row(p)
		if !ok {
			continue
		}
		decided++
		cols, want, wantFound, err := firstRow(t.Context(), db, q, p)
		if err != nil {
			t.Errorf("%s with %v: Go gives %v %v, SQLite fails: %v", q, p, vals, found, err)
			continue
		}
		if found != wantFound || found && !reflect.DeepEqual(vals, want) || !reflect.DeepEqual(s.names, cols) {
			t.Errorf("%s with %v: Go gives %v %#v %v, SQLite %v %#v %v", q, p, found, vals, s.names, wantFound, want, cols)
		}
	}
	if decided < 500 {
		t.Errorf("only %d evaluated in Go", decided)
	}
}

// TestExprRefuses: what the subset does not hold goes to SQLite.
func TestExprRefuses(t *testing.T) {
	for _, e := range []string{
		"x = 1", ":x LIKE 'a%'", ":x NOT LIKE 'a%'", "1.5", ":x COLLATE NOCASE = 'a'", "(SELECT 1 FROM t)",
		":x IN (SELECT 1)", "json_extract(:x, '$.a')", ":x -> 'a'", "strftime('%Y', :x)", "printf('%d', :x)",
		"\"x\" = 1", ":x = 1 -- c", "EXISTS (SELECT 1)", "random()", "CAST(:x AS REAL)", ":x % 2",
		"(:x, :y) = (1, 2)", ":X", "?1", ":x;",
	} {
		if x, ok := parseExpr(e); ok {
			t.Errorf("%s: parsed as %T, want SQLite", e, x)
		}
	}
	for _, q := range []string{"SELECT 1 AS default", "SELECT :x AS null", "SELECT 1 AS into", "SELECT 1 AS Name", "SELECT 1 FROM t", "SELECT 1 LIMIT 1", "SELECT 1 UNION SELECT 2", "SELECT DISTINCT 1", "SELECT 1 ORDER BY 1"} {
		if s := selectPlanOf(q); s != nil {
			t.Errorf("%s: planned in Go, want SQLite", q)
		}
	}
}

// TestSQLValueStrings: a string argument is the text json.Unmarshal reads,
// with escapes or without.
func TestSQLValueStrings(t *testing.T) {
	for _, s := range []string{"", "plain", "ünï 😀", `quote " back \ slash`, "line\nbreak\ttab", "nul\x00byte", "<&>", "\u2028"} {
		raw, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		got := sqlValue(raw)
		want := any(s)
		if strings.IndexByte(s, 0) >= 0 {
			want = []byte(s)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("sqlValue(%s) = %#v, want %#v", raw, got, want)
		}
	}
	if got := sqlValue(json.RawMessage(`"\ud83d\ude00 \u00fc"`)); got != "😀 ü" {
		t.Errorf("escaped: %#v", got)
	}
}

// TestDatesAndGlobAgreeWithSQLite runs date, datetime and GLOB over every
// combination of date-like texts, modifiers, strings and patterns: what Go
// evaluates is what SQLite gives, and Go evaluates the plain cases.
func TestDatesAndGlobAgreeWithSQLite(t *testing.T) {
	db := sqliteMemory(t)
	days := []any{"2026-03-01", "2024-02-29", "2026-02-29", "2026-12-31 23:59:59", "2026-01-31 00:00:00", "0000-01-01", "9999-12-31",
		"2026-3-1", "2026-03-01T10:00:00", "2026-13-01", "2026-00-10", " 2026-03-01", "2026-03-01 24:00:00", "20260301", nil, int64(2460000), "now"}
	mods := []any{"+7 days", "-1 day", "+366 days", "-400000 days", "+1000000 days", "+0 days", "+1 month", "7 days", "+3 DAYS", "+1.5 days", "+ 1 days",
		"+90 minutes", "-2 hours", "+30 seconds", "+1 minute", "+1.5 minutes", "+1 minutes", "-1000000 seconds",
		"+1 months", "-1 month", "+13 months", "-25 months", "+1 year", "-3 years", "+1.5 months", "+1 MONTH", "+1 monthss", nil}
	var exprs []string
	for _, d := range days {
		exprs = append(exprs, fmt.Sprintf("date(%s)", sqlLit(d)), fmt.Sprintf("datetime(%s)", sqlLit(d)), fmt.Sprintf("julianday(%s)", sqlLit(d)), fmt.Sprintf("unixepoch(%s)", sqlLit(d)))
		for _, m := range mods {
			exprs = append(exprs, fmt.Sprintf("date(%s, %s)", sqlLit(d), sqlLit(m)), fmt.Sprintf("datetime(%s, %s)", sqlLit(d), sqlLit(m)))
			exprs = append(exprs, fmt.Sprintf("date(%s, %s, '-1 day')", sqlLit(d), sqlLit(m)))
			exprs = append(exprs, fmt.Sprintf("unixepoch(%s, %s)", sqlLit(d), sqlLit(m)))
		}
	}
	strs := []any{"", "a", "abc", "ABC", "123", "12a", "a]b", "-", "^", "x*y", "é", int64(42), nil}
	pats := []any{"", "*", "?", "a*", "*c", "?b?", "[a-c]*", "[^0-9]*", "*[^0-9]*", "[]a]*", "[^]]*", "[a-]*", "[-a]", "[z-a]", "1[2", "[", "*?*", "[a-c][^a-c]?", "A*", "é*", int64(4), nil}
	for _, s := range strs {
		for _, p := range pats {
			exprs = append(exprs, fmt.Sprintf("%s GLOB %s", sqlLit(s), sqlLit(p)), fmt.Sprintf("%s NOT GLOB %s", sqlLit(s), sqlLit(p)))
		}
	}
	for _, j := range []string{"[540,1020]", ` ["a", null, true, false, 1.5, -3, "é"] `, "[1,]", `{"a":1}`, "[[1],2]", "[9223372036854775808]", "[1e2]",
		// Plain integer arrays (intElement) and near misses.
		"[]", "[0]", "[-0]", "[-7,0,12]", "[01]", "[1,,2]", "[,1]", "[1 ,2]", "[+1]", "[-]", "[9223372036854775807,-9223372036854775808]", "[1]x", "[0x1]"} {
		for _, k := range []string{"0", "1", "2", "3", "4", "5", "6", "7", "-1", "'$[0]'", "NULL"} {
			exprs = append(exprs, fmt.Sprintf("%s ->> %s", sqlLit(j), k), fmt.Sprintf("(%s ->> %s) - 1", sqlLit(j), k))
		}
	}
	decided := 0
	for _, e := range exprs {
		x, ok := parseExpr(e)
		if !ok {
			t.Fatalf("%s: not parsed", e)
		}
		got, ok := x.eval(nil)
		if !ok {
			continue
		}
		decided++
		var want any
		if err := db.QueryRow("SELECT " + e).Scan(&want); err != nil {
			t.Errorf("%s: Go gives %#v, SQLite fails: %v", e, got, err)
			continue
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Go gives %#v, SQLite %#v", e, got, want)
		}
	}
	t.Logf("%d expressions, %d evaluated in Go", len(exprs), decided)
	if decided < len(exprs)/3 {
		t.Errorf("only %d of %d evaluated in Go", decided, len(exprs))
	}
}

func sqlLit(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case int64:
		return fmt.Sprint(x)
	case string:
		if strings.ContainsRune(x, 0) {
			return "CAST(x'" + fmt.Sprintf("%x", x) + "' AS TEXT)"
		}
		return "'" + strings.ReplaceAll(x, "'", "''") + "'"
	}
	panic(fmt.Sprintf("sqlLit %T", v))
}
