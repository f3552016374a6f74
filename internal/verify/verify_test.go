package verify

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
)

var shopSQL = []string{
	`CREATE TABLE orders (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL, sku TEXT, qty INTEGER, price REAL, status TEXT, placed_at DATETIME, note TEXT)`,
	`CREATE UNIQUE INDEX orders_nk ON orders(order_no)`,
	`INSERT INTO orders VALUES (1, 'A-1', 'SP-100', 2, 9.5, 'open', '2026-03-02 11:00:00', 'a;b')`,
	`INSERT INTO orders VALUES (2, 'A-2', 'SP-200', 3, 20.0, 'open', '2026-03-02 12:00:00', NULL)`,
	`INSERT INTO orders VALUES (3, 'A-3', 'SP-100', 1, 9.5, 'shipped', '2026-03-01 09:00:00', NULL)`,
}

const ledgerDDL = `CREATE TABLE entries (id INTEGER PRIMARY KEY, memo TEXT UNIQUE, amount INTEGER)`

// testWorlds returns W0 and W: W adds a ledger entry, an exported CSV and
// edits notes.md.
func testWorlds(t *testing.T) (initial, final string) {
	t.Helper()
	dir := t.TempDir()
	initial = state.MakeTestWorld(t, filepath.Join(dir, "initial"), state.TestWorld{
		SQL:   map[string][]string{"shop": shopSQL, "ledger": {ledgerDDL}},
		Files: map[string]string{"notes.md": "# Notes\nnothing yet\n", "same.txt": "same\n"},
	})
	final = state.MakeTestWorld(t, filepath.Join(dir, "final"), state.TestWorld{
		SQL: map[string][]string{"shop": shopSQL, "ledger": {ledgerDDL, `INSERT INTO entries (memo, amount) VALUES ('open orders', 5)`}},
		Files: map[string]string{
			"notes.md":                "# Notes\nOpen orders: A-1, A-2 (total 5)\n",
			"same.txt":                "same\n",
			"reports/open-orders.csv": "\ufefforder_no,sku,qty\nA-1,SP-100,2\nA-2,SP-200, 3\n",
			"reports/bad.csv":         "a,b\n\"unterminated\n",
		},
	})
	return initial, final
}

func verifyOne(t *testing.T, in Input, c task.Criterion) CriterionResult {
	t.Helper()
	r, err := Verify(context.Background(), task.TestTask(t, c), in)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if len(r.Criteria) != 1 {
		t.Fatalf("got %d results", len(r.Criteria))
	}
	if want := 0; r.Criteria[0].Pass {
		want = 1
		if r.V != want {
			t.Fatalf("V = %d with the only criterion passing", r.V)
		}
	}
	return r.Criteria[0]
}

func raw(s string) json.RawMessage { return json.RawMessage(s) }

func TestDeclarativeKinds(t *testing.T) {
	initial, final := testWorlds(t)
	in := Input{Initial: initial, Final: final, Answer: "The open orders TOTAL 5 units."}
	no := false
	tests := []struct {
		name string
		c    task.Criterion
		pass bool
		err  string // substring of Error; "" means no error
		ev   string // substring of Evidence
	}{
		{"sql scalar", task.Criterion{Kind: "sql", DB: "ledger", Query: "SELECT amount FROM entries WHERE memo = 'open orders'", Expect: raw("5")}, true, "", "-> [[5]]"},
		{"sql scalar wrong", task.Criterion{Kind: "sql", DB: "ledger", Query: "SELECT amount FROM entries WHERE memo = 'open orders'", Expect: raw("6")}, false, "", "expected 6"},
		{"sql initial world", task.Criterion{Kind: "sql", DB: "ledger", Query: "SELECT count(*) FROM entries", Expect: raw("0"), World: "initial"}, true, "", ""},
		{"sql rows", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT order_no, qty, price FROM orders WHERE status = 'open' ORDER BY order_no", Expect: raw(`[["A-1", 2, 9.5], ["A-2", 3.0, 20]]`)}, true, "", ""},
		{"sql rows order matters", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT order_no FROM orders WHERE status = 'open' ORDER BY order_no DESC", Expect: raw(`["A-1", "A-2"]`)}, false, "", ""},
		{"sql bare one-column rows", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT order_no FROM orders WHERE status = 'open' ORDER BY order_no", Expect: raw(`["A-1", "A-2"]`)}, true, "", ""},
		{"sql empty", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT 1 FROM orders WHERE 0", Expect: raw(`[]`)}, true, "", ""},
		{"sql null", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT note FROM orders WHERE order_no = 'A-2'", Expect: raw(`null`)}, true, "", ""},
		{"sql null is not empty string", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT note FROM orders WHERE order_no = 'A-2'", Expect: raw(`""`)}, false, "", ""},
		{"sql bool", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT count(*) > 0 FROM orders", Expect: raw(`true`)}, true, "", ""},
		{"sql datetime stays text", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT placed_at FROM orders WHERE order_no = 'A-1'", Expect: raw(`"2026-03-02 11:00:00"`)}, true, "", ""},
		{"sql semicolon in string and trailing", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT order_no FROM orders WHERE note = 'a;b'; -- done", Expect: raw(`"A-1"`)}, true, "", ""},
		{"sql with cte", task.Criterion{Kind: "sql", DB: "shop", Query: "WITH o AS (SELECT * FROM orders WHERE status = 'open') SELECT sum(qty) FROM o", Expect: raw(`5`)}, true, "", ""},
		{"sql pragma function", task.Criterion{Kind: "sql", DB: "ledger", Query: "SELECT name FROM pragma_table_info('entries') ORDER BY cid", Expect: raw(`["id", "memo", "amount"]`)}, true, "", ""},
		{"sql bad query", task.Criterion{Kind: "sql", DB: "shop", Query: "SELECT nope FROM orders", Expect: raw(`1`)}, false, "no such column", ""},
		{"sql missing db", task.Criterion{Kind: "sql", DB: "crm", Query: "SELECT 1", Expect: raw(`1`)}, false, "", `database "crm" does not exist`},
		{"file exists", task.Criterion{Kind: "file", Path: "reports/open-orders.csv"}, true, "", "exists"},
		{"file missing", task.Criterion{Kind: "file", Path: "reports/none.csv"}, false, "", "does not exist"},
		{"file absent as required", task.Criterion{Kind: "file", Path: "reports/none.csv", Exists: &no}, true, "", ""},
		{"file present but must not", task.Criterion{Kind: "file", Path: "notes.md", Exists: &no}, false, "", "exists but must not"},
		{"file contains any case", task.Criterion{Kind: "file", Path: "notes.md", Contains: []string{"OPEN ORDERS", "a-2"}}, true, "", ""},
		{"file contains missing", task.Criterion{Kind: "file", Path: "notes.md", Contains: []string{"A-3"}}, false, "", `does not contain ["A-3"]`},
		{"file regex", task.Criterion{Kind: "file", Path: "notes.md", Regex: `total \d+`}, true, "", ""},
		{"file regex fails", task.Criterion{Kind: "file", Path: "notes.md", Regex: `total \d{3}`}, false, "", "does not match"},
		{"file changed", task.Criterion{Kind: "file", Path: "notes.md", Changed: true}, true, "", "changed"},
		{"file new counts as changed", task.Criterion{Kind: "file", Path: "reports/open-orders.csv", Changed: true}, true, "", "is new"},
		{"file unchanged", task.Criterion{Kind: "file", Path: "same.txt", Changed: true}, false, "", "unchanged"},
		{"file is a directory", task.Criterion{Kind: "file", Path: "reports", Contains: []string{"x"}}, false, "", "not a regular file"},
		{"csv header and min rows", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Header: []string{"order_no", "sku", "qty"}, MinRows: 2}, true, "", "2 data rows"},
		{"csv wrong header", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Header: []string{"order", "sku", "qty"}}, false, "", "header is"},
		{"csv too few rows", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", MinRows: 3}, false, "", "at least 3"},
		{"csv row equals", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Row: 1, Equals: map[string]string{"order_no": "A-2", "qty": "3"}}, true, "", ""},
		{"csv last row", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Row: -1, Equals: map[string]string{"sku": "SP-200"}}, true, "", ""},
		{"csv row differs", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Equals: map[string]string{"qty": "3"}}, false, "", `column "qty" is "2"`},
		{"csv row out of range", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Row: 5, Equals: map[string]string{"qty": "3"}}, false, "", "does not exist"},
		{"csv unknown column", task.Criterion{Kind: "csv", Path: "reports/open-orders.csv", Equals: map[string]string{"total": "3"}}, false, "", `no column "total"`},
		{"csv invalid", task.Criterion{Kind: "csv", Path: "reports/bad.csv"}, false, "", "not valid CSV"},
		{"csv missing", task.Criterion{Kind: "csv", Path: "reports/x.csv"}, false, "", "does not exist"},
		{"answer contains", task.Criterion{Kind: "answer", Contains: []string{"total 5"}}, true, "", ""},
		{"answer missing", task.Criterion{Kind: "answer", Contains: []string{"total 6"}}, false, "", "does not contain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.c.ID = "c"
			got := verifyOne(t, in, tc.c)
			if got.Pass != tc.pass {
				t.Errorf("pass = %v, want %v (%+v)", got.Pass, tc.pass, got)
			}
			if tc.err == "" && got.Error != "" || !strings.Contains(got.Error, tc.err) {
				t.Errorf("error = %q, want %q", got.Error, tc.err)
			}
			if !strings.Contains(got.Evidence, tc.ev) {
				t.Errorf("evidence = %q, want it to contain %q", got.Evidence, tc.ev)
			}
		})
	}
}

func TestSymlinkCannotLeaveHome(t *testing.T) {
	initial, final := testWorlds(t)
	secret := filepath.Join(t.TempDir(), "secret.txt")
	os.WriteFile(secret, []byte("top secret"), 0o644)
	if err := os.Symlink(secret, filepath.Join(final, "home", "link.txt")); err != nil {
		t.Fatal(err)
	}
	got := verifyOne(t, Input{Initial: initial, Final: final}, task.Criterion{ID: "c", Kind: "file", Path: "link.txt", Contains: []string{"secret"}})
	if got.Pass || got.Error == "" {
		t.Fatalf("a symlink out of home was read: %+v", got)
	}
}

func TestSQLRejectsWrites(t *testing.T) {
	initial, final := testWorlds(t)
	before, err := state.Hash(context.Background(), final)
	if err != nil {
		t.Fatal(err)
	}
	attach := filepath.Join(t.TempDir(), "x.sqlite")
	queries := map[string]string{
		"update":             "UPDATE orders SET qty = 99",
		"insert":             "INSERT INTO orders (order_no) VALUES ('Z')",
		"delete in cte":      "WITH x AS (SELECT 1) DELETE FROM orders",
		"attach":             "ATTACH DATABASE '" + attach + "' AS x",
		"pragma writable":    "PRAGMA writable_schema = 1",
		"pragma query_only":  "PRAGMA query_only = 0",
		"multiple":           "SELECT 1; DELETE FROM orders",
		"multiple commented": "SELECT 1 /* ; */; UPDATE orders SET qty = 0 -- x",
		"create temp":        "CREATE TEMP TABLE t AS SELECT 1",
		"vacuum into":        "VACUUM INTO '" + attach + "'",
		"load extension":     "SELECT load_extension('/tmp/x')",
		"host path":          "SELECT file FROM pragma_database_list",
		"host build":         "SELECT group_concat(compile_options) FROM PRAGMA_COMPILE_OPTIONS",
		"host path in a cte": "WITH p AS (SELECT * FROM pragma_database_list) SELECT count(*) FROM p",
		"empty":              "  -- nothing\n",
		"unterminated":       "SELECT 'a",
	}
	for name, q := range queries {
		t.Run(name, func(t *testing.T) {
			got := verifyOne(t, Input{Initial: initial, Final: final}, task.Criterion{ID: "c", Kind: "sql", DB: "shop", Query: q, Expect: raw("null")})
			if got.Pass || got.Error == "" {
				t.Fatalf("%q was not rejected: %+v", q, got)
			}
		})
	}
	after, err := state.Hash(context.Background(), final)
	if err != nil {
		t.Fatal(err)
	}
	if before != after {
		t.Fatal("a rejected query changed the world")
	}
	if _, err := os.Stat(attach); err == nil {
		t.Fatal("a query created a file")
	}
}

func TestVIsProduct(t *testing.T) {
	initial, final := testWorlds(t)
	in := Input{Initial: initial, Final: final, Answer: "5"}
	pass := task.Criterion{ID: "a", Kind: "answer", Contains: []string{"5"}}
	pass2 := task.Criterion{ID: "b", Kind: "file", Path: "notes.md"}
	fail := task.Criterion{ID: "c", Kind: "sql", DB: "ledger", Query: "SELECT count(*) FROM entries", Expect: raw("2")}
	for _, tc := range []struct {
		criteria []task.Criterion
		v, n     int
	}{
		{[]task.Criterion{pass, pass2}, 1, 2},
		{[]task.Criterion{pass, fail, pass2}, 0, 2},
		{[]task.Criterion{fail}, 0, 0},
	} {
		r, err := Verify(context.Background(), task.TestTask(t, tc.criteria...), in)
		if err != nil {
			t.Fatal(err)
		}
		if r.V != tc.v || r.Passed != tc.n || r.Total != len(tc.criteria) || len(r.Criteria) != len(tc.criteria) {
			t.Errorf("V=%d passed=%d total=%d, want V=%d passed=%d total=%d", r.V, r.Passed, r.Total, tc.v, tc.n, len(tc.criteria))
		}
	}
}

func TestHarnessErrors(t *testing.T) {
	initial, final := testWorlds(t)
	ctx := context.Background()
	tk := task.TestTask(t)
	if _, err := Verify(ctx, tk, Input{Initial: initial, Final: filepath.Join(final, "nope")}); err == nil {
		t.Error("a missing world is not an error")
	}
	if _, err := Verify(ctx, tk, Input{Final: final}); err == nil {
		t.Error("a missing initial world is not an error")
	}
	script := task.TestTask(t, task.Criterion{ID: "s", Kind: "script", Script: "scripts/x.py"})
	if _, err := Verify(ctx, script, Input{Initial: initial, Final: final}); !errors.Is(err, ErrNoRunner) {
		t.Errorf("no runner: got %v, want ErrNoRunner", err)
	}
	bad := task.TestTask(t)
	bad.Verifier.Criteria = nil
	if _, err := Verify(ctx, bad, Input{Initial: initial, Final: final}); err == nil {
		t.Error("a verifier without criteria is not an error")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Verify(cctx, tk, Input{Initial: initial, Final: final}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v", err)
	}
}

func TestResultJSON(t *testing.T) {
	initial, final := testWorlds(t)
	r, err := Verify(context.Background(), task.TestTask(t), Input{Initial: initial, Final: final, Answer: "42"})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(r)
	want := `{"version":1,"v":1,"passed":1,"total":1,"script_errors":0,"criteria":[{"id":"answer","kind":"answer","pass":true,"evidence":"the answer contains [\"42\"]"}]}`
	if string(b) != want {
		t.Fatalf("JSON:\n got %s\nwant %s", b, want)
	}
}

func TestDigest(t *testing.T) {
	dir := t.TempDir()
	if err := WriteSDK(dir); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "scripts", "a.py"), []byte("print(1)\n"), 0o644)
	before, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 2 || before["scripts/_verify_sdk.py"] == "" {
		t.Fatalf("digest = %v", before)
	}
	cp := filepath.Join(t.TempDir(), "copy")
	if err := CopyDir(context.Background(), dir, cp); err != nil {
		t.Fatal(err)
	}
	if d, _ := Digest(cp); len(DigestChanges(before, d)) != 0 {
		t.Fatalf("copy differs: %v", DigestChanges(before, d))
	}
	os.WriteFile(filepath.Join(dir, "scripts", "a.py"), []byte("print(2)\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "scripts", "b.py"), []byte(""), 0o644)
	os.Remove(filepath.Join(dir, "scripts", "_verify_sdk.py"))
	after, err := Digest(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := strings.Join(DigestChanges(before, after), ", ")
	if want := "removed scripts/_verify_sdk.py, changed scripts/a.py, added scripts/b.py"; got != want {
		t.Fatalf("changes = %q, want %q", got, want)
	}
}

func TestExampleSDKIsCurrent(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "task", "testdata", "example", "verifier", filepath.FromSlash(task.SDKScript)))
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != SDKPy {
		t.Fatal("internal/task/testdata/example's _verify_sdk.py is stale: copy internal/verify/_verify_sdk.py over it")
	}
}

// TestUnreadableFilesFail: a home file its owner cannot read (mode 000, or
// in a directory without its owner's search bit) fails the file and csv
// criteria that read it, as the agent's doing (no error), although the
// verifier, as root, could read it; the same content readable passes.
func TestUnreadableFilesFail(t *testing.T) {
	for _, c := range []struct {
		name      string
		file, dir fs.FileMode
		pass      bool
	}{{"readable", 0o644, 0o755, true}, {"mode 000", 0, 0o755, false}, {"directory without search", 0o644, 0o600, false}} {
		t.Run(c.name, func(t *testing.T) {
			initial, final := testWorlds(t)
			reports := filepath.Join(final, "home", "reports")
			csvPath := filepath.Join(reports, "open-orders.csv")
			if err := os.Chmod(csvPath, c.file); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(reports, c.dir); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.Chmod(reports, 0o755); os.Chmod(csvPath, 0o644) })
			for _, cr := range []task.Criterion{
				{ID: "file", Kind: "file", Path: "reports/open-orders.csv", Contains: []string{"A-2"}},
				{ID: "csv", Kind: "csv", Path: "reports/open-orders.csv", MinRows: 2},
			} {
				got := verifyOne(t, Input{Initial: initial, Final: final}, cr)
				if got.Pass != c.pass || got.Error != "" || (!c.pass && !strings.Contains(got.Evidence, "not readable by its owner")) {
					t.Errorf("%s criterion: %+v, want pass %t and no error", cr.Kind, got, c.pass)
				}
			}
		})
	}
}

// TestSQLReadsTheCatalog: with a catalog, a criterion joins a site's rows
// to the catalog's by their natural columns; it cannot write the catalog,
// and without one the schema is not there.
func TestSQLReadsTheCatalog(t *testing.T) {
	initial, final := testWorlds(t)
	catRoot := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "catalog"), state.TestWorld{SQL: map[string][]string{"catalog": {
		`CREATE TABLE products (sku TEXT PRIMARY KEY, name TEXT)`,
		`INSERT INTO products VALUES ('SP-100', 'Espresso cup'), ('SP-200', 'Saucer')`,
	}}})
	cat := filepath.Join(catRoot, "db", "catalog.sqlite")
	if _, err := os.Stat(cat); err != nil {
		t.Fatal(err)
	}
	join := task.Criterion{ID: "c", Kind: "sql", DB: "shop", Query: `SELECT count(*) FROM orders o JOIN catalog.products p ON p.sku = o.sku WHERE p.name = 'Espresso cup' AND o.status = 'open'`, Expect: raw("1")}
	if got := verifyOne(t, Input{Initial: initial, Final: final, Catalog: cat}, join); !got.Pass {
		t.Fatalf("the join over the catalog: %+v", got)
	}
	if got := verifyOne(t, Input{Initial: initial, Final: final}, join); got.Pass || got.Error == "" {
		t.Fatalf("without a catalog the join ran: %+v", got)
	}
	before, _ := os.ReadFile(cat)
	for _, q := range []string{`DELETE FROM catalog.products`, `UPDATE catalog.products SET name = 'x'`} {
		got := verifyOne(t, Input{Initial: initial, Final: final, Catalog: cat}, task.Criterion{ID: "c", Kind: "sql", DB: "shop", Query: q, Expect: raw("null")})
		if got.Pass || got.Error == "" {
			t.Fatalf("%q was not rejected: %+v", q, got)
		}
	}
	if after, _ := os.ReadFile(cat); string(after) != string(before) {
		t.Fatal("a query changed the catalog")
	}
}
