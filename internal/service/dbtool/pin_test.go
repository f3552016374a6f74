package dbtool

import (
	"database/sql"
	"testing"
)

func TestPinEquals(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"SELECT 1", "SELECT 1"},
		{"SELECT id FROM f WHERE name = :folder", "SELECT id FROM f WHERE name = +:folder"},
		{"WHERE a=:a AND b == ?2 AND c =\n  @c AND d = $d", "WHERE a=+:a AND b == +?2 AND c =\n  +@c AND d = +$d"},
		{"WHERE a <= :a AND b >= :b AND c != :c AND d <> :d", "WHERE a <= :a AND b >= :b AND c != :c AND d <> :d"},
		{"WHERE a = b.c AND x = 'y = :z' AND \"q = :r\" = 1", "WHERE a = b.c AND x = 'y = :z' AND \"q = :r\" = 1"},
		{"WHERE a = 'it''s' AND b = :b", "WHERE a = 'it''s' AND b = +:b"},
		{"-- a = :a\nSELECT 1 WHERE b = :b /* c = :c */", "-- a = :a\nSELECT 1 WHERE b = +:b /* c = :c */"},
		{"UPDATE t SET n = :n WHERE [k = :k] = 1", "UPDATE t SET n = +:n WHERE [k = :k] = 1"},
		{"WHERE a = :a /* open", "WHERE a = :a /* open"},
	} {
		if got := pinEquals(c.in); got != c.want {
			t.Errorf("pinEquals(%q)\n got %q\nwant %q", c.in, got, c.want)
		}
	}
}

// TestPinEqualsKeepsPlans shows the pinned statements search the same
// indexes and give the same rows, also for values of every affinity.
func TestPinEqualsKeepsPlans(t *testing.T) {
	db, err := sql.Open("sqlite", ":memory:")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	for _, q := range []string{
		`CREATE TABLE m (id INTEGER PRIMARY KEY, ext TEXT NOT NULL UNIQUE, folder INTEGER NOT NULL, at TEXT NOT NULL, n REAL)`,
		`CREATE INDEX m_folder ON m(folder, at)`,
		`INSERT INTO m (ext, folder, at, n) VALUES ('a', 1, '2026-01-01', 1.5), ('b', 2, '2026-01-02', 2), ('c', 1, '2026-01-03', NULL), ('10', 0, '2026-01-04', 0)`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	queries := []string{
		`SELECT ext FROM m WHERE folder = :v ORDER BY at DESC`,
		`SELECT ext FROM m WHERE ext = :v`,
		`SELECT ext FROM m WHERE id = :v`,
		`SELECT ext FROM m WHERE n = :v ORDER BY id`,
	}
	rowsOf := func(q string, v any) (out []string) {
		rows, err := db.Query(q, sql.Named("v", v))
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			var a, b, c any
			var s string
			if rows.Scan(&a, &b, &c, &s) != nil {
				var x string
				rows.Scan(&x)
				s = x
			}
			out = append(out, s)
		}
		return out
	}
	if got := rowsOf(queries[0], 1); len(got) != 2 || got[0] != "c" {
		t.Fatalf("folder 1: %q, want [c a]", got)
	}
	for _, q := range queries {
		p := pinEquals(q)
		if p == q {
			t.Fatalf("pinEquals left %q unchanged", q)
		}
		plan, pinned := rowsOf("EXPLAIN QUERY PLAN "+q, 1), rowsOf("EXPLAIN QUERY PLAN "+p, 1)
		if len(plan) != len(pinned) || len(plan) == 0 || plan[0] != pinned[0] {
			t.Errorf("%s: plan %q, pinned %q", q, plan, pinned)
		}
		for _, v := range []any{1, 2, 0, "1", "10", 1.5, 2.0, "a", nil} {
			a, b := rowsOf(q, v), rowsOf(p, v)
			if len(a) != len(b) {
				t.Errorf("%s with %#v: %q, pinned %q", q, v, a, b)
				continue
			}
			for i := range a {
				if a[i] != b[i] {
					t.Errorf("%s with %#v: %q, pinned %q", q, v, a, b)
				}
			}
		}
	}
}
