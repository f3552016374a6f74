package sqlguard

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"
)

func TestSplit(t *testing.T) {
	for _, c := range []struct {
		q     string
		verbs []string
	}{
		{"SELECT 1", []string{"SELECT"}},
		{"SELECT 1;", []string{"SELECT"}},
		{" ; SELECT 1 ;; ", []string{"SELECT"}},
		{"SELECT 1; SELECT 2", []string{"SELECT", "SELECT"}},
		{"SELECT ';' -- ;\n, \";\", [;], `;` /* ; */", []string{"SELECT"}},
		{"SELECT 1 -- trailing; DELETE FROM t", []string{"SELECT"}},
		{"select 1;attach 'x' as y", []string{"SELECT", "ATTACH"}},
		{"CREATE TRIGGER t AFTER INSERT ON a BEGIN UPDATE a SET x = 1; DELETE FROM b; END; SELECT 1", []string{"CREATE", "SELECT"}},
		{"create temp trigger t after insert on a begin select 1; end", []string{"CREATE"}},
		{"EXPLAIN QUERY PLAN vacuum", []string{"VACUUM"}},
		{"WITH c(x) AS (SELECT 1) SELECT x FROM c; VACUUM INTO '/tmp/x'", []string{"WITH", "VACUUM"}},
		{"SELECT 'it''s'; SELECT 2", []string{"SELECT", "SELECT"}},
		{"/* unterminated ; SELECT 2", nil},
		{"", nil},
	} {
		var got []string
		for _, s := range Split(c.q) {
			got = append(got, s.Verb)
		}
		if strings.Join(got, ",") != strings.Join(c.verbs, ",") {
			t.Errorf("Split(%q) verbs = %v, want %v", c.q, got, c.verbs)
		}
	}
}

func TestOne(t *testing.T) {
	for q, want := range map[string]string{
		"SELECT 1; SELECT 2":         "exactly one SQL statement",
		"SELECT 1; ATTACH 'x' AS y":  "exactly one SQL statement",
		"VACUUM INTO '/tmp/x.db'":    "VACUUM",
		"vacuum":                     "VACUUM",
		"EXPLAIN VACUUM":             "VACUUM",
		"  ;  ":                      "empty",
		"SELECT 1 ; -- a comment ; ": "",
	} {
		_, err := One(q)
		switch {
		case want == "" && err != nil:
			t.Errorf("One(%q): %v", q, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, ErrRefused)):
			t.Errorf("One(%q) = %v, want a refusal with %q", q, err, want)
		}
	}
}

// guarded opens a database in dir with one table of n rows and a Guard.
func guarded(t *testing.T, dir string, n int) (*sql.Conn, *Guard) {
	t.Helper()
	db, err := sql.Open("sqlite", filepath.Join(dir, "w.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	ctx := context.Background()
	c, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if _, err := c.ExecContext(ctx, "CREATE TABLE t (x INTEGER)"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ExecContext(ctx, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c WHERE i < ?) INSERT INTO t SELECT i FROM c", n); err != nil {
		t.Fatal(err)
	}
	g := &Guard{}
	if err := g.Install(c); err != nil {
		t.Fatal(err)
	}
	return c, g
}

func TestGuard(t *testing.T) {
	dir := t.TempDir()
	host := filepath.Join(dir, "host.db")
	c, g := guarded(t, dir, 10)
	ctx := context.Background()
	read := &Policy{Who: "a read-only tool", Recursive: true}
	write := &Policy{Who: "a tool", Write: true, Recursive: true}
	schema := &Policy{Who: "a delta", Write: true, Schema: true}
	verifier := &Policy{Who: "a verifier query", Recursive: true, Pragmas: SchemaPragmas()}
	for _, c2 := range []struct {
		p    *Policy
		q    string
		want string // "" = allowed
	}{
		{read, "SELECT count(*) FROM t", ""},
		{read, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 3) SELECT * FROM c", ""},
		{schema, "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM c LIMIT 3) SELECT * FROM c", "WITH RECURSIVE"},
		{read, "INSERT INTO t VALUES (1)", "may only read"},
		{write, "INSERT INTO t VALUES (1)", ""},
		{write, "CREATE TABLE u (a)", "may not change the schema"},
		{schema, "CREATE TABLE u (a)", ""},
		{schema, "CREATE TABLE v AS SELECT * FROM t", "AS SELECT"},
		{write, "ATTACH '" + host + "' AS h", "ATTACH"},
		{schema, "DETACH h", "ATTACH"},
		{read, "SELECT file FROM pragma_database_list", "pragma_database_list reads the host"},
		{read, "SELECT * FROM PRAGMA_COMPILE_OPTIONS", "reads the host"},
		{verifier, "SELECT name FROM pragma_table_info('t')", ""},
		{verifier, "SELECT file FROM pragma_database_list", "reads the host"},
		{write, "PRAGMA journal_mode = OFF", "PRAGMA journal_mode"},
		{verifier, "PRAGMA table_info(t)", ""},
		{write, "SELECT load_extension('/tmp/x.so')", "load_extension"},
		{write, "BEGIN", "the caller owns the transaction"},
		{write, "SAVEPOINT s", "the caller owns the transaction"},
		{read, "SELECT * FROM dbstat", "reads the host"},
	} {
		err := g.Run(c2.p, func() error {
			st, err := c.PrepareContext(ctx, c2.q)
			if err != nil {
				return err
			}
			return st.Close()
		})
		switch {
		case c2.want == "" && err != nil:
			t.Errorf("%s: %q: %v", c2.p.Who, c2.q, err)
		case c2.want != "" && (err == nil || !strings.Contains(err.Error(), c2.want) || !errors.Is(err, ErrRefused)):
			t.Errorf("%s: %q: %v, want a refusal with %q", c2.p.Who, c2.q, err, c2.want)
		}
	}
	// Running ATTACH under the guard creates no file on the host.
	err := g.Run(write, func() error { _, err := c.ExecContext(ctx, "ATTACH ? AS h", host); return err })
	if !errors.Is(err, ErrRefused) {
		t.Errorf("ATTACH ran: %v", err)
	}
	if _, err := os.Stat(host); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("ATTACH under the guard touched %s: %v", host, err)
	}
	// Off outside Run: the caller's own statements pass.
	if _, err := c.ExecContext(ctx, "PRAGMA user_version = 3"); err != nil {
		t.Errorf("the caller's own PRAGMA outside Run: %v", err)
	}
}

// TestBound checks that the deadline stops a cross join of big tables and
// names the bound, while the end of the caller's own context stays its
// error.
func TestBound(t *testing.T) {
	c, g := guarded(t, t.TempDir(), 2000)
	ctx := context.Background()
	start := time.Now()
	err := Bound(ctx, 200*time.Millisecond, func(ctx context.Context) error {
		return g.Run(&Policy{}, func() error {
			var n int64
			return c.QueryRowContext(ctx, "SELECT count(*) FROM t a, t b, t c WHERE a.x + b.x = c.x * 7").Scan(&n)
		})
	})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "200ms") {
		t.Errorf("cross join: %v, want ErrTimeout naming 200ms", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("the bound of 200ms stopped the statement after %s", d)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	err = Bound(cctx, time.Second, func(ctx context.Context) error { return c.PingContext(ctx) })
	if errors.Is(err, ErrTimeout) {
		t.Errorf("a cancelled caller's context: %v, want its own error", err)
	}
}

// slowRows has a first row at once and the next after a scan of 8e9 rows.
const slowRows = "SELECT a.x FROM t a, t b, t c WHERE (a.x = 1 AND b.x = 1 AND c.x = 1) OR a.x + b.x = c.x * 7 + 100000"

// TestWatch reads the rows of a query whose second row takes hours: the
// driver stops a statement on its context only while it computes its
// first row, Watch stops it at the bound while later rows are read too.
func TestWatch(t *testing.T) {
	c, g := guarded(t, t.TempDir(), 2000)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	stop := g.Watch(ctx)
	done := make(chan error, 1)
	go func() {
		rows, err := c.QueryContext(ctx, slowRows)
		if err != nil {
			done <- err
			return
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		if n != 1 {
			done <- fmt.Errorf("%d rows", n)
			return
		}
		done <- rows.Err()
	}()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the rows ended without an error")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Watch did not stop the statement in 20s")
	}
	stop()
	// The connection goes on, and a stop before the end interrupts nothing.
	ctx2, cancel2 := context.WithTimeout(context.Background(), time.Minute)
	defer cancel2()
	stop2 := g.Watch(ctx2)
	stop2()
	var n int64
	if err := c.QueryRowContext(context.Background(), "SELECT count(*) FROM t").Scan(&n); err != nil || n != 2000 {
		t.Errorf("after Watch: %d %v", n, err)
	}
}
