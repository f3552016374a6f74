package engine

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"testing"

	_ "modernc.org/sqlite"
)

// TestPredicatesAgreeWithSQLite: every if: the engine decides in Go gives
// what SQLite gives, for values of every type a parameter can hold; and
// the forms it does not know go to SQLite.
func TestPredicatesAgreeWithSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	exprs := []string{
		":x IS NULL", ":x IS NOT NULL", ":x", "NOT :x", "coalesce(:x, 0)", "NOT coalesce(:x, 0)",
		":x <> ''", ":x = ''", ":x != ''", "coalesce(:x, '') <> ''", "coalesce(:x, '') = ''",
	}
	values := []any{nil, int64(0), int64(1), int64(-2), float64(0), 0.5, "", "a", "0", "1x", []byte("b")}
	decided := 0
	for _, e := range exprs {
		p := compilePredicate(e)
		if p == nil {
			t.Errorf("%s: not decided in Go", e)
			continue
		}
		for _, v := range values {
			yes, ok := p(map[string]any{"x": v})
			if !ok {
				continue
			}
			decided++
			var want bool
			if err := db.QueryRow(condition(e), sql.Named("x", v)).Scan(&want); err != nil {
				t.Fatal(err)
			}
			if yes != want {
				t.Errorf("%s with x = %#v: Go says %v, SQLite %v", e, v, yes, want)
			}
		}
	}
	if decided < 60 {
		t.Errorf("only %d cases decided in Go", decided)
	}
	for _, e := range []string{":x > 1", "lower(:x) = 'a'", ":x <> '[]'", ":x IS NULL OR :y"} {
		if compilePredicate(e) != nil {
			t.Errorf("%s: decided in Go, want SQLite", e)
		}
	}
}

// TestOptimizeMergesChecks: consecutive plain checks become one statement
// giving the first message; a check with a condition stays apart.
func TestOptimizeMergesChecks(t *testing.T) {
	steps := []Step{
		{Check: "SELECT 'one' WHERE :a = 1"},
		{Check: "SELECT CASE WHEN :b = 1 THEN 'two' END"},
		{Check: "SELECT 'three' WHERE :c = 1"},
		{If: ":x IS NULL", Check: "SELECT 'four'"},
		{Row: "SELECT 1 AS n"},
	}
	got := optimize(steps)
	if len(got) != 3 || got[1].If == "" {
		t.Fatalf("optimize = %+v", got)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, abc := range [][3]int64{{0, 0, 0}, {1, 1, 1}, {0, 1, 1}, {0, 0, 1}} {
		p := map[string]any{"a": abc[0], "b": abc[1], "c": abc[2]}
		var want sql.NullString
		for _, st := range steps[:3] {
			var msg sql.NullString
			err := db.QueryRow(st.Check, args(st.Check, p)...).Scan(&msg)
			if err == nil && msg.Valid {
				want = msg
				break
			}
		}
		var merged sql.NullString
		if err := db.QueryRow(got[0].Check, args(got[0].Check, p)...).Scan(&merged); err != nil {
			t.Fatal(err)
		}
		if merged != want {
			t.Errorf("%v: merged %v, in turn %v", abc, merged, want)
		}
	}
}

// TestTermsAgreeWithSQLite: a result or a row the engine builds in Go
// is what SQLite gives, byte for byte, for every value Go takes; values it
// does not take go to SQLite.
func TestTermsAgreeWithSQLite(t *testing.T) {
	if err := register("builtin", Builtins); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	results := []string{
		"SELECT json_object('list', json(:list), 'name', :name, 'n', 1, 'more', CASE WHEN :more THEN 1 END)",
		"SELECT json_object('a', json_object('name', :name, 'clip', clip(:name, 3), 'trim', trim_space(:name)), 'b', coalesce(:name, 'none'), 'c', nullif(:name, ''))",
		"SELECT json_object('q', format('%q is %d', :name, :more), 's', 'text')",
		"SELECT json_object('a', :name,\n                   'b', json(:list))", // YAML keeps a more-indented line's break
		"SELECT json_object('body', CAST(:name AS TEXT), 'n', :more)",
		"SELECT json_object('a', lower(:name), 'b', :more > 0, 'c', CASE WHEN :name = '' THEN 'empty' ELSE :name || '!' END)",
		"SELECT json_object('t', json_object('n', :name, 'events', CASE WHEN :list <> '[]' THEN json(:list) END), 'm', CASE WHEN :more THEN json(:list) END)",
	}
	rows := []string{
		"SELECT coalesce(:more, 20) AS page_size, trim_space(:name) AS q",
		"SELECT 'account' AS field, :name AS acct, nullif(:name, '') AS n",
		"SELECT clip(coalesce(:name, ''), 4) AS c, one_line(coalesce(:name, 'x')) AS o",
		"SELECT :more > 0 AS x, length(:name) AS n, upper(:name) IS NULL AS u",
	}
	texts := []any{nil, []byte("blob\x00nul"), []byte("bytes"), "", "plain", "  padded  ", "quote \" back \\ slash", "line\nbreak\ttab\rret\bbs\ffeed", "ctl \x01\x1f\x7f", "ünï <&> 😀", int64(-7), int64(0)}
	lists := []any{nil, "[]", `[{"a":1},"x",null]`}
	mores := []any{nil, int64(0), int64(1), int64(5)}
	built := 0
	for _, name := range texts {
		for _, list := range lists {
			for _, more := range mores {
				p := map[string]any{"name": name, "list": list, "more": more}
				for _, q := range results {
					rt := resultTermOf(q)
					if rt == nil {
						t.Fatalf("%s: not built in Go", q)
					}
					got, ok := rt.build(p)
					if !ok {
						continue
					}
					built++
					var want string
					if err := db.QueryRow(q, args(q, p)...).Scan(&want); err != nil {
						t.Fatalf("%s: %v", q, err)
					}
					if string(got) != want {
						t.Errorf("%s with %v:\n Go     %s\n SQLite %s", q, p, got, want)
					}
				}
				for _, q := range rows {
					r := rowTermOf(q)
					if r == nil {
						t.Fatalf("%s: not run in Go", q)
					}
					got, ok := r.eval(p)
					if !ok {
						continue
					}
					built++
					_, want, _, err := firstRow(context.Background(), db, q, p)
					if err != nil {
						t.Fatal(err)
					}
					if fmt.Sprintf("%#v", got) != fmt.Sprintf("%#v", want) {
						t.Errorf("%s with %v:\n Go     %#v\n SQLite %#v", q, p, got, want)
					}
				}
			}
		}
	}
	if built < 500 {
		t.Errorf("only %d built in Go", built)
	}
	b := resultTermOf(results[0])
	for _, p := range []map[string]any{{"name": 1.5}, {"name": []byte("b")}, {"more": "yes"}, {"list": int64(3)}} {
		if _, ok := b.build(p); ok {
			t.Errorf("%v: built in Go, want SQLite", p)
		}
	}
	for _, q := range []string{"SELECT json_object('a', :a) FROM t", "SELECT json_object('a', :a LIKE 'x%')", "SELECT json_object(:k, 1)", "SELECT 1", "SELECT json_object('a', :a) WHERE 0"} {
		if resultTermOf(q) != nil {
			t.Errorf("%s: built in Go", q)
		}
	}
	for _, q := range []string{"SELECT :a > 0.5 AS x", "SELECT :a AS default", "SELECT 1.0 AS f", "SELECT id AS x FROM t", "SELECT :a", "SELECT json(:a) AS j"} {
		if rowTermOf(q) != nil {
			t.Errorf("%s: run in Go", q)
		}
	}
}

// TestShapeOfBrokenJSON: what a result step gives that is not JSON is an
// error, never a panic.
func TestShapeOfBrokenJSON(t *testing.T) {
	for _, bad := range []string{`{"a":`, `{"a" 1}`, `{oops`, `{"a":[1,`, `{"a":"x`, `{`, `{"a":{"b":`} {
		if _, err := shape([]byte(bad), compileOutput(map[string]any{"type": "object"})); err == nil {
			t.Errorf("shape(%s): no error", bad)
		}
	}
}

// TestObjectRowsAgreeWithSQLite: rows whose objects Go writes are the
// bytes SQLite's json_object writes, and the rows Go cannot write (a
// real, a BLOB) come from SQLite as written.
func TestObjectRowsAgreeWithSQLite(t *testing.T) {
	if err := register("builtin", Builtins); err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		"CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, n INTEGER, tags TEXT)",
		`INSERT INTO t VALUES (1, 'plain', 3, '["a"]'), (2, 'quote " back \ slash', NULL, NULL), (3, 'line
break	tab', -7, '{"k":[1,2]}'), (4, 'ünï <&> 😀', 0, '[]'), (5, NULL, 12, 'null')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		query string
		plan  bool
	}{
		{"SELECT json_object('id', id, 'name', name, 'n', n, 'tags', json(tags)) AS item, id AS k FROM t WHERE id <= :max ORDER BY id", true},
		{"WITH p AS (SELECT id FROM t ORDER BY id DESC LIMIT :max) SELECT json_object('name', t.name, 'twice', t.n * 2, 'upper', upper(t.name)) AS item, t.id AS k FROM p JOIN t ON t.id = p.id ORDER BY t.id DESC", true},
		{"SELECT json_object('id', id, 'half', n / 2.0) FROM t WHERE id <= :max ORDER BY id", true}, // reals: SQLite writes them
		{"SELECT json_object('id', id, 'all', json_group_array(name)) FROM t WHERE id <= :max GROUP BY id", false},
		{"SELECT json_quote(name) FROM t WHERE id <= :max", false},
		// Go SQL functions of columns, called in Go: one argument, two,
		// one the function refuses (clip of a negative count is an error
		// in SQLite too), and one inside another expression (SQLite's).
		{"SELECT json_object('line', one_line(name), 'short', clip(name, 4), 'id', id) AS item, id AS k FROM t WHERE id <= :max ORDER BY id", true},
		{"SELECT json_object('short', clip(name, n)) AS item FROM t WHERE id <= :max AND id <> 3 ORDER BY id", true},
		{"SELECT json_object('x', upper(one_line(name)), 'len', char_count(name) + 1) AS item FROM t WHERE id <= :max ORDER BY id", true},
		{"SELECT json_object('tags', json(coalesce(tags, '[]')), 'q', json(clip(coalesce(tags, 'null'), 100))) AS item FROM t WHERE id <= :max ORDER BY id", true},
	} {
		if got := objectRowsOf(tc.query) != nil; got != tc.plan {
			t.Errorf("%s: planned %v, want %v", tc.query, got, tc.plan)
		}
		if plan := objectRowsOf(tc.query); plan != nil && strings.Contains(tc.query, "'line', one_line(") && (plan.fns[0] == nil || plan.fns[1] == nil || plan.fns[2] != nil) {
			t.Errorf("%s: one_line and clip are not called in Go: %+v", tc.query, plan)
		}
		for _, max := range []int64{0, 2, 5} {
			p := map[string]any{"max": max}
			got, gotLast, _, err := jsonRows(context.Background(), db, tc.query, p, -1)
			if err != nil {
				t.Fatal(err)
			}
			objectPlans.Store(tc.query, (*objectRows)(nil)) // SQLite alone
			want, wantLast, _, err := jsonRows(context.Background(), db, tc.query, p, -1)
			objectPlans.Delete(tc.query)
			if err != nil {
				t.Fatal(err)
			}
			if got != want || fmt.Sprint(gotLast) != fmt.Sprint(wantLast) {
				t.Errorf("%s (max %d):\n Go     %s %v\n SQLite %s %v", tc.query, max, got, gotLast, want, wantLast)
			}
		}
	}
}

// TestShapeStrings: strings with escaped quotes and backslashes pass
// through shaping whole.
func TestShapeStrings(t *testing.T) {
	for _, v := range []string{`""`, `"a"`, `"a\"b"`, `"a\\"`, `"a\\\"b"`, `"\\\\"`, `"x\\\\\"y"`, `"\u0022"`} {
		in := `{"k":` + v + `,"n":1}`
		out, err := shape([]byte(in), compileOutput(map[string]any{"type": "object"}))
		if err != nil || string(out) != in {
			t.Errorf("shape(%s) = %s, %v", in, out, err)
		}
	}
}

// args binds query's parameters by name, as written: the reference the
// engine's positional binding (bind) is held to.
func args(query string, p map[string]any) []any {
	var out []any
	for _, n := range sqlParams(query) {
		out = append(out, sql.Named(n, p[n]))
	}
	return out
}

// TestBindPositional: a statement bound by position answers as the
// statement as written bound by name; what the rewrite cannot be sure of
// stays by name.
func TestBindPositional(t *testing.T) {
	db := sqliteMemory(t)
	p := map[string]any{"a": int64(1), "b": "x:y", "a_2": "two", "c": nil}
	for _, c := range []struct {
		q, text string
		names   []string
	}{
		{"SELECT :a, :b, :a", "SELECT ?, ?, ?", []string{"a", "b", "a"}},
		{"SELECT ':a' || :b -- :c\n, :a_2", "SELECT ':a' || ? -- :c\n, ?", []string{"b", "a_2"}},
		{`SELECT "x:a" FROM (SELECT 1 AS "x:a") WHERE :c IS NULL`, `SELECT "x:a" FROM (SELECT 1 AS "x:a") WHERE ? IS NULL`, []string{"c"}},
		{"SELECT 1", "SELECT 1", []string{}},
		{"SELECT :a /* :b */", "", nil},
		{"SELECT :aB", "", nil},
		{"SELECT :a, ?2", "", nil},
	} {
		b := boundOf(c.q)
		if c.names == nil {
			if b.names != nil || b.text != c.q {
				t.Errorf("%q: rewritten as %q %v, want it left by name", c.q, b.text, b.names)
			}
			continue
		}
		if b.text != c.text || !slices.Equal(b.names, c.names) {
			t.Errorf("%q: rewritten as %q %v, want %q %v", c.q, b.text, b.names, c.text, c.names)
		}
		text, a := bind(c.q, p)
		rows, err := db.Query(text, a...)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		rows.Next()
		rows.Scan(ptrs...)
		rows.Close()
		want := make([]any, len(cols))
		wptrs := make([]any, len(cols))
		for i := range want {
			wptrs[i] = &want[i]
		}
		if err := db.QueryRow(c.q, args(c.q, p)...).Scan(wptrs...); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(vals) != fmt.Sprint(want) {
			t.Errorf("%q: by position %v, by name %v", c.q, vals, want)
		}
	}
}

// TestAppendSQLiteStringAgreesWithJSONQuote holds appendSQLiteString to
// SQLite's json_quote for every ASCII byte, alone and inside runs of
// bytes that need no escape, and for multi-byte UTF-8.
func TestAppendSQLiteStringAgreesWithJSONQuote(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var cases []string
	for c := range 0x80 {
		cases = append(cases, string(rune(c)), "ab"+string(rune(c))+"cd"+string(rune(c)), string(rune(c))+"tail")
	}
	cases = append(cases, "", "ünï <&> 😀 \"q\"\n", strings.Repeat("long body, no escapes ", 200)+"\"")
	for _, s := range cases {
		var want string
		if err := db.QueryRow("SELECT json_quote(?)", s).Scan(&want); err != nil {
			t.Fatal(err)
		}
		if got := string(appendSQLiteString(nil, s)); got != want {
			t.Errorf("%q: Go %s, SQLite %s", s, got, want)
		}
	}
}
