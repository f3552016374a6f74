package delta

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// dayWith returns a day-1 delta over day0 with exactly the given ops and no
// produces declaration.
func dayWith(t *testing.T, ops ...string) *Delta {
	t.Helper()
	d := load(t, "day1.json")
	d.Ops = nil
	d.Produces = world.Produces{}
	for _, op := range ops {
		o, err := ParseBytes([]byte(`{"version":1,"ops":[` + op + `]}`))
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		d.Ops = append(d.Ops, o.Ops...)
	}
	return d
}

// within runs f and fails the test if it does not return in time: the
// hostile inputs below used to hang apply.
func within(t *testing.T, limit time.Duration, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		t.Fatalf("did not return within %s", limit)
		return nil
	}
}

// applyUnlinted applies d to a copy of parent without running lint first, so
// a test sees what apply itself enforces.
func applyUnlinted(t *testing.T, parent string, d *Delta, opts *Options) (string, error) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "w")
	if err := state.Copy(ctx, parent, dir); err != nil {
		t.Fatal(err)
	}
	pm, err := world.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	if opts == nil {
		opts = &Options{}
	}
	return dir, applyLinted(ctx, dir, pm, d, opts)
}

// lintIssue returns the message of the issue at field, failing the test when
// lint accepted d or reported nothing there.
func lintIssue(t *testing.T, parent string, d *Delta, field string) string {
	t.Helper()
	err := Lint(context.Background(), parent, d, nil)
	var le *LintError
	if !errors.As(err, &le) {
		t.Fatalf("lint accepted the delta (err %v); want an issue at %s", err, field)
	}
	for _, is := range le.Issues {
		if strings.HasPrefix(is.String(), field+":") {
			return is.Msg
		}
	}
	t.Fatalf("no issue at %s:\n%v", field, err)
	return ""
}

const recursiveCTE = `WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c`

// TestSQLGuardLintAndApply checks that lint and apply refuse the same SQL
// with the same reason: recursive queries (which never end), table-valued
// pragmas (which store host paths) and CREATE TABLE ... AS SELECT (which
// writes rows outside db.insert).
func TestSQLGuardLintAndApply(t *testing.T) {
	day0, _ := chain(t)
	// A view an older build let into the parent world.
	conn, err := state.OpenDB(world.DBPath(day0, "shop"), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`CREATE VIEW old_host AS SELECT file FROM pragma_database_list`,
		`CREATE VIEW old_loop AS ` + recursiveCTE,
	} {
		if _, err := conn.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	conn.Close()
	before := hashOf(t, day0)

	cases := []struct {
		name, op, field, want string
	}{
		{"recursive CTE in an insert", `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-9"},"values":{"qty":{"sql":"(` + recursiveCTE + `)"},"placed_at":"x"}}`,
			"ops[0].values.qty", "WITH RECURSIVE"},
		{"recursive CTE in an update", `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"(` + recursiveCTE + `)"}}}`,
			"ops[0].set.price", "WITH RECURSIVE"},
		{"recursive view", `{"op":"db.create","db":"shop","sql":["CREATE VIEW loop AS ` + recursiveCTE + `"]}`,
			"ops[0].sql[0]", "WITH RECURSIVE"},
		{"recursive view of the parent", `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"(SELECT count(*) FROM old_loop)"}}}`,
			"ops[0].set.price", "WITH RECURSIVE"},
		{"pragma_database_list", `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":{"sql":"(SELECT file FROM pragma_database_list)"}}}`,
			"ops[0].set.title", "pragma_database_list reads the host"},
		{"pragma in upper case", `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-9"},"values":{"qty":1,"placed_at":{"sql":"(SELECT group_concat(compile_options) FROM PRAGMA_COMPILE_OPTIONS)"}}}`,
			"ops[0].values.placed_at", "PRAGMA_COMPILE_OPTIONS reads the host"},
		{"pragma in a view", `{"op":"db.create","db":"shop","sql":["CREATE VIEW host AS SELECT file FROM pragma_database_list"]}`,
			"ops[0].sql[0]", "pragma_database_list reads the host"},
		{"pragma view of the parent", `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":{"sql":"(SELECT file FROM old_host)"}}}`,
			"ops[0].set.title", "pragma_database_list reads the host"},
		{"CREATE TABLE AS SELECT", `{"op":"db.create","db":"shop","sql":["CREATE TABLE copy AS SELECT * FROM products"]}`,
			"ops[0].sql[0]", "AS SELECT writes rows outside db.insert"},
		{"a second statement through an expression", `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"1); DELETE FROM orders; SELECT (1) FROM products"}}}`,
			"ops[0].set.price", "exactly one SQL statement"},
		{"CREATE TABLE AS VALUES", `{"op":"db.create","db":"shop","sql":["CREATE TABLE copy AS VALUES (1), (2)"]}`,
			"ops[0].sql[0]", "AS SELECT writes rows outside db.insert"},
	}
	// Lint's reason where its own rules refuse before the guard's.
	lintWant := map[string]string{
		"a second statement through an expression": "no ';'",
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			msg := lintIssue(t, day0, dayWith(t, c.op), c.field)
			if want := cmp.Or(lintWant[c.name], c.want); !strings.Contains(msg, want) {
				t.Errorf("lint: %s: %q, want %q", c.field, msg, want)
			}
			// Apply refuses on its own, with the same rule.
			err := within(t, time.Minute, func() error {
				_, err := applyUnlinted(t, day0, dayWith(t, c.op), nil)
				return err
			})
			var ae *ApplyError
			if !errors.As(err, &ae) || ae.Op != 0 || !strings.Contains(err.Error(), c.want) {
				t.Errorf("apply without lint: %v, want an error at ops[0] containing %q", err, c.want)
			}
			// Through the public entry point: refused, nothing written.
			out := filepath.Join(t.TempDir(), "out")
			err = within(t, time.Minute, func() error { return ApplyCopy(context.Background(), day0, out, dayWith(t, c.op), nil) })
			if !errors.Is(err, ErrLint) {
				t.Errorf("ApplyCopy: %v, want a lint error", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("refused apply left its output")
			}
		})
	}
	if hashOf(t, day0) != before {
		t.Error("parent changed")
	}
	// What the guard refuses it refuses only in the delta's SQL: plain DDL,
	// views and expressions still work.
	ok := dayWith(t,
		`{"op":"db.create","db":"shop","sql":["CREATE TABLE notes (id INTEGER PRIMARY KEY, k TEXT NOT NULL UNIQUE, v TEXT DEFAULT 'x', CHECK (length(k) > 0))","CREATE VIEW cheap AS SELECT sku, price FROM products WHERE price < 100"]}`,
		`{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"(WITH c(n) AS (SELECT count(*) FROM cheap) SELECT price - n FROM c)"}}}`,
		`{"op":"db.insert","db":"shop","table":"notes","key":{"k":"a"},"values":{"v":{"sql":"upper('b')"}}}`)
	if err := ApplyCopy(context.Background(), day0, filepath.Join(t.TempDir(), "ok"), ok, nil); err != nil {
		t.Fatalf("a guarded but harmless delta was refused: %v", err)
	}
}

// TestApplyBoundsSQLTime checks that a statement lint cannot judge (a join of
// many tables) is stopped by the statement bound with a clear error.
func TestApplyBoundsSQLTime(t *testing.T) {
	day0, _ := chain(t)
	from := strings.Repeat("products, ", 40) + "products"
	d := dayWith(t, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"(SELECT count(*) FROM `+from+`)"}}}`)
	if err := Lint(context.Background(), day0, d, nil); err != nil {
		t.Fatalf("lint: %v", err)
	}
	out := filepath.Join(t.TempDir(), "out")
	start := time.Now()
	err := within(t, time.Minute, func() error {
		return ApplyCopy(context.Background(), day0, out, d, &Options{SQLTimeout: 200 * time.Millisecond})
	})
	var ae *ApplyError
	if !errors.Is(err, ErrSQLTimeout) || !errors.As(err, &ae) || ae.Op != 0 || !strings.Contains(err.Error(), "ops[0].set: ") || !strings.Contains(err.Error(), "200ms") {
		t.Fatalf("err = %v, want ErrSQLTimeout at ops[0].set naming the bound", err)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the bound took %s to stop the statement", took)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("stopped apply left its output")
	}
}

// TestParseRefusesRepeatedKeys checks that a key given twice in any object of
// a delta is an error naming the object and the key, never last-wins.
func TestParseRefusesRepeatedKeys(t *testing.T) {
	head := `{"version":1,"persona":"avtech","day":1,"clock":"2026-03-02T18:00:00Z","ops":[{"op":"file.write","path":"a.txt","content":"x"},`
	cases := map[string]struct{ in, want string }{
		"op field": {head + `{"op":"file.write","path":"notes.txt","path":"../../etc/x","content":"x"}]}`,
			`delta: ops[1]: key "path" appears more than once`},
		"op field in another case": {head + `{"op":"file.write","path":"notes.txt","Path":"other.txt","content":"x"}]}`,
			`delta: ops[1]: keys "path" and "Path" are the same key`},
		"escaped key": {head + `{"op":"file.delete","path":"a.txt","p\u0061th":"b.txt"}]}`,
			`delta: ops[1]: key "path" appears more than once`},
		"column in values": {head + `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":1,"placed_at":"x","qty":2}}]}`,
			`delta: ops[1].values: key "qty" appears more than once`},
		"column in key": {head + `{"op":"db.delete","db":"shop","table":"products","key":{"sku":"SP-100","SKU":"SP-200"}}]}`,
			`delta: ops[1].key: keys "sku" and "SKU"`},
		"sql value": {head + `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"1","sql":"2"}}}]}`,
			`delta: ops[1].set.price: key "sql" appears more than once`},
		"ref key": {head + `{"op":"db.update","db":"shop","table":"orders","key":{"order_no":"A-1"},"set":{"product_id":{"ref":{"table":"products","key":{"sku":"a","sku":"b"},"column":"id"}}}}]}`,
			`delta: ops[1].set.product_id.ref.key: key "sku"`},
		"generator params": {head + `{"op":"file.write","path":"a.csv","generator":{"name":"csv","params":{"rows":[],"rows":[]}}}]}`,
			`delta: ops[1].generator.params: key "rows"`},
		"top level": {`{"version":1,"day":1,"day":2,"persona":"avtech","clock":"2026-03-02T18:00:00Z","ops":[]}`,
			`delta: the top-level object: key "day" appears more than once`},
		"produces": {head + `{"op":"file.delete","path":"a.txt"}],"produces":{"files":["a"],"files":["b"]}}`,
			`delta: produces: key "files"`},
		"second row of produces": {head + `{"op":"file.delete","path":"a.txt"}],"produces":{"rows":[{"db":"d","table":"t","key":{"k":1}},{"db":"d","table":"t","key":{"k":1,"k":2}}]}}`,
			`delta: produces.rows[1].key: key "k"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseBytes([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
	// Arrays are counted right: the same key in two sibling objects is fine.
	ok := head + `{"op":"file.write","path":"b.txt","content":"x"}],"produces":{"files":["a.txt","b.txt"],"rows":[{"db":"d","table":"t","key":{"k":1}},{"db":"d","table":"t","key":{"k":2}}]}}`
	if _, err := ParseBytes([]byte(ok)); err != nil {
		t.Fatalf("valid delta refused: %v", err)
	}
}

// TestAccountCreateValidated checks that account.create refuses fields that
// become paths or keys, in lint and in apply with the same rule.
func TestAccountCreateValidated(t *testing.T) {
	day0, _ := chain(t)
	before := hashOf(t, day0)
	cases := []struct {
		name, op, field, want string
	}{
		{"site leaves the directory", `{"op":"account.create","site":"../../etc","username":"alex2","password":"p","salt":"s"}`, "ops[0].site", `site "../../etc"`},
		{"site with NUL", `{"op":"account.create","site":"shop\u0000x","username":"alex2","password":"p","salt":"s"}`, "ops[0].site", "site"},
		{"username with NUL", `{"op":"account.create","site":"shop","username":"alex\u0000root","password":"p","salt":"s"}`, "ops[0].username", "U+0000"},
		{"username path", `{"op":"account.create","site":"shop","username":"../../alex","password":"p","salt":"s"}`, "ops[0].username", "never a path"},
		{"salt with NUL", `{"op":"account.create","site":"shop","username":"alex2","password":"p","salt":"s\u0000x"}`, "ops[0].salt", "U+0000"},
		{"password with newline", `{"op":"account.create","site":"shop","username":"alex2","password":"p\nq","salt":"s"}`, "ops[0].password", "U+000A"},
		{"display with escape", `{"op":"account.create","site":"shop","username":"alex2","password":"p","salt":"s","display":"Alex\u001b[2J"}`, "ops[0].display", "U+001B"},
		{"empty salt", `{"op":"account.create","site":"shop","username":"alex2","password":"p"}`, "ops[0].salt", "deterministic"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if msg := lintIssue(t, day0, dayWith(t, c.op), c.field); !strings.Contains(msg, c.want) {
				t.Errorf("lint: %s: %q, want %q", c.field, msg, c.want)
			}
			dir, err := applyUnlinted(t, day0, dayWith(t, c.op), nil)
			var ae *ApplyError
			if !errors.As(err, &ae) || "ops[0]."+ae.Field != c.field || !strings.Contains(err.Error(), c.want) {
				t.Errorf("apply without lint: %v, want an error at %s containing %q", err, c.field, c.want)
			}
			if accts, err := world.ReadAccounts(dir); err != nil || len(accts) != 1 {
				t.Errorf("accounts after a refused create: %v %v", accts, err)
			}
		})
	}
	d := dayWith(t, `{"op":"account.create","site":"shop","username":"alex"}`)
	d.Ops[0].Username = "alex2"
	d.Produces.Accounts = []world.AccountRef{{Site: "../x", Username: "alex2"}}
	if msg := lintIssue(t, day0, d, "produces.accounts[0].site"); !strings.Contains(msg, "site") {
		t.Errorf("produces: %q", msg)
	}
	if hashOf(t, day0) != before {
		t.Error("parent changed")
	}
}

// TestSymlinksSameRuleInLintAndApply runs lint and apply on the same inputs
// against a home with symlinks: they must agree, never follow a link, and
// file.delete of a link must remove the link itself.
func TestSymlinksSameRuleInLintAndApply(t *testing.T) {
	day0, _ := chain(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(day0, world.HomeDir)
	for link, target := range map[string]string{"escape": outside, "link.txt": secret, "inlink": "inventory.csv"} {
		if err := os.Symlink(target, filepath.Join(home, link)); err != nil {
			t.Fatal(err)
		}
	}
	before := hashOf(t, day0)
	cases := []struct {
		name  string
		ops   []string
		field string // "" when the delta is valid
		want  string
		after func(t *testing.T, out string)
	}{
		{"write through a directory link", []string{`{"op":"file.write","path":"escape/pwned.txt","content":"x"}`}, "ops[0].path", "passes through the symlink escape", nil},
		{"append through a directory link", []string{`{"op":"file.append","path":"escape/secret.txt","content":"x"}`}, "ops[0].path", "passes through the symlink escape", nil},
		{"write onto a file link", []string{`{"op":"file.write","path":"link.txt","content":"x"}`}, "ops[0].path", `"link.txt" is a symlink`, nil},
		{"append onto a file link", []string{`{"op":"file.append","path":"link.txt","content":"x"}`}, "ops[0].path", `"link.txt" is a symlink`, nil},
		{"delete through a link", []string{`{"op":"file.delete","path":"escape/secret.txt"}`}, "ops[0].path", "passes through the symlink escape", nil},
		{"move a link", []string{`{"op":"file.move","from":"link.txt","to":"moved.txt"}`}, "ops[0].from", "never move one", nil},
		{"move into a link", []string{`{"op":"file.move","from":"inventory.csv","to":"escape/inventory.csv"}`}, "ops[0].to", "passes through the symlink escape", nil},
		{"write under a file", []string{`{"op":"file.write","path":"inventory.csv/x","content":"x"}`}, "ops[0].path", "inventory.csv is a file, not a directory", nil},
		{"write under a file written today", []string{`{"op":"file.write","path":"a/b.txt","content":"x"}`, `{"op":"file.write","path":"a/b.txt/c","content":"x"}`}, "ops[1].path", "a/b.txt is a file", nil},
		{"write onto a directory", []string{`{"op":"file.write","path":"docs","content":"x"}`}, "ops[0].path", `"docs" is a directory`, nil},
		{"delete a directory", []string{`{"op":"file.delete","path":"docs"}`}, "ops[0].path", "delete its files one by one", nil},
		{"move a directory", []string{`{"op":"file.move","from":"docs","to":"docs2"}`}, "ops[0].from", "move its files one by one", nil},
		{"delete a file link", []string{`{"op":"file.delete","path":"link.txt"}`}, "", "", func(t *testing.T, out string) {
			if _, err := os.Lstat(filepath.Join(out, "home/link.txt")); err == nil {
				t.Error("link.txt still exists")
			}
		}},
		{"delete a directory link", []string{`{"op":"file.delete","path":"escape"}`}, "", "", func(t *testing.T, out string) {
			if _, err := os.Lstat(filepath.Join(out, "home/escape")); err == nil {
				t.Error("escape still exists")
			}
		}},
		{"delete a link inside home", []string{`{"op":"file.delete","path":"inlink"}`}, "", "", func(t *testing.T, out string) {
			if b, err := os.ReadFile(filepath.Join(out, "home/inventory.csv")); err != nil || !strings.HasPrefix(string(b), "sku,qty") {
				t.Errorf("the link's target changed: %q %v", b, err)
			}
		}},
		{"delete a link, then write a file there", []string{`{"op":"file.delete","path":"link.txt"}`, `{"op":"file.write","path":"link.txt","content":"mine"}`}, "", "", func(t *testing.T, out string) {
			fi, err := os.Lstat(filepath.Join(out, "home/link.txt"))
			if err != nil || !fi.Mode().IsRegular() {
				t.Errorf("link.txt: %v %v", fi, err)
			}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			lintErr := Lint(context.Background(), day0, dayWith(t, c.ops...), nil)
			_, applyErr := applyUnlinted(t, day0, dayWith(t, c.ops...), nil)
			out := filepath.Join(t.TempDir(), "out")
			copyErr := ApplyCopy(context.Background(), day0, out, dayWith(t, c.ops...), nil)
			if c.field == "" {
				if lintErr != nil || applyErr != nil || copyErr != nil {
					t.Fatalf("valid delta refused:\nlint: %v\napply without lint: %v\napply: %v", lintErr, applyErr, copyErr)
				}
				c.after(t, out)
				return
			}
			if msg := lintIssue(t, day0, dayWith(t, c.ops...), c.field); !strings.Contains(msg, c.want) {
				t.Errorf("lint: %s: %q, want %q", c.field, msg, c.want)
			}
			var ae *ApplyError
			if !errors.As(applyErr, &ae) || fmt.Sprintf("ops[%d].%s", ae.Op, ae.Field) != c.field || !strings.Contains(applyErr.Error(), c.want) {
				t.Errorf("apply without lint: %v, want an error at %s containing %q", applyErr, c.field, c.want)
			}
			if !errors.Is(copyErr, ErrLint) {
				t.Errorf("apply: %v, want the lint error", copyErr)
			}
		})
	}
	if b, err := os.ReadFile(secret); err != nil || string(b) != "host secret\n" {
		t.Errorf("the file outside home changed: %q %v", b, err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 1 {
		t.Errorf("a file appeared outside home: %v", ents)
	}
	if hashOf(t, day0) != before {
		t.Error("parent changed")
	}
}
