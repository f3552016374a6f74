package engine

import (
	"database/sql"
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

// TestResultBuilderAgreesWithSQLite: a result built in Go is the bytes
// SQLite's json_object gives, for every value the builder takes; values it
// does not take go to SQLite.
func TestResultBuilderAgreesWithSQLite(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	q := "SELECT json_object('list', json(:list), 'name', :name, 'n', 1, 'more', CASE WHEN :more THEN 1 END)"
	b := compileResult(q)
	if b == nil {
		t.Fatal("not built in Go")
	}
	texts := []any{nil, "", "plain", "quote \" back \\ slash", "line\nbreak\ttab\rret\bbs\ffeed", "ctl \x01\x1f\x7f", "ünï <&> 😀", int64(-7), int64(0)}
	lists := []any{nil, "[]", `[{"a":1},"x",null]`, `{"k":[1,2]}`}
	mores := []any{nil, int64(0), int64(1), int64(5)}
	built := 0
	for _, name := range texts {
		for _, list := range lists {
			for _, more := range mores {
				p := map[string]any{"name": name, "list": list, "more": more}
				got, ok := b.build(p)
				if !ok {
					continue
				}
				built++
				var want string
				if err := db.QueryRow(q, args(q, p)...).Scan(&want); err != nil {
					t.Fatal(err)
				}
				if string(got) != want {
					t.Errorf("%v:\n Go     %s\n SQLite %s", p, got, want)
				}
			}
		}
	}
	if built < 100 {
		t.Errorf("only %d results built in Go", built)
	}
	for _, p := range []map[string]any{{"name": 1.5}, {"name": []byte("b")}, {"more": "yes"}, {"list": int64(3)}} {
		if _, ok := b.build(p); ok {
			t.Errorf("%v: built in Go, want SQLite", p)
		}
	}
	for _, q := range []string{"SELECT json_object('a', :a) FROM t", "SELECT json_object('a', lower(:a))", "SELECT json_object(:k, 1)", "SELECT 1"} {
		if compileResult(q) != nil {
			t.Errorf("%s: built in Go", q)
		}
	}
}
