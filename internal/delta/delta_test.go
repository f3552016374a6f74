package delta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

func load(t testing.TB, name string) *Delta {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	d, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// chain builds day 0 and day 1 and returns their directories.
func chain(t testing.TB) (day0, day1 string) {
	t.Helper()
	ctx := context.Background()
	root := t.TempDir()
	day0, day1 = filepath.Join(root, "d0"), filepath.Join(root, "d1")
	if err := ApplyCopy(ctx, "", day0, load(t, "day0.json"), nil); err != nil {
		t.Fatal(err)
	}
	if err := ApplyCopy(ctx, day0, day1, load(t, "day1.json"), nil); err != nil {
		t.Fatal(err)
	}
	return day0, day1
}

func hashOf(t testing.TB, dir string) world.ID {
	t.Helper()
	h, err := state.Hash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func query(t testing.TB, dir, db, q string) string {
	t.Helper()
	conn, err := state.OpenDB(world.DBPath(dir, db), true)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var s string
	if err := conn.QueryRow(q).Scan(&s); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return s
}

func TestApplyChain(t *testing.T) {
	ctx := context.Background()
	day0, day1 := chain(t)
	if got := query(t, day1, "shop", `SELECT group_concat(order_no || ':' || product_id || ':' || qty) FROM orders`); got != "A-1:1:2" {
		t.Errorf("orders = %q", got)
	}
	if got := query(t, day1, "shop", `SELECT price FROM products WHERE sku = 'SP-200'`); got != "84.5" {
		t.Errorf("SP-200 price = %q", got)
	}
	if got := query(t, day1, "messages", `SELECT group_concat(id || '/' || seq) FROM messages`); got != "1/1,2/2" {
		t.Errorf("message ids = %q (want derived MAX(id)+1)", got)
	}
	b, _ := os.ReadFile(filepath.Join(day1, "home/inventory.csv"))
	if string(b) != "sku,qty\nSP-100,0\nSP-200,2\n" {
		t.Errorf("inventory = %q", b)
	}
	if fi, _ := os.Stat(filepath.Join(day1, "home/inventory.csv")); fi.Mode().Perm() != 0o600 {
		t.Errorf("inventory mode = %v", fi.Mode())
	}
	if _, err := os.Stat(filepath.Join(day1, "home/projects/rack/bom.md")); err != nil {
		t.Errorf("moved file: %v", err)
	}
	accts, _ := world.ReadAccounts(day1)
	if len(accts) != 1 || !world.CheckPassword(accts[0].PasswordHash, "hunter2") || world.CheckPassword(accts[0].PasswordHash, "x") {
		t.Errorf("accounts = %+v", accts)
	}
	m, _ := world.ReadManifest(day1)
	if m.Day != 1 || m.Clock != "2026-03-02T18:00:00Z" || m.Produces == nil {
		t.Errorf("manifest = %+v", m)
	}
	for _, c := range []struct{ parent, result, delta string }{{"", day0, "day0.json"}, {day0, day1, "day1.json"}} {
		issues, err := CheckProduces(ctx, c.parent, c.result, &load(t, c.delta).Produces)
		if err != nil || len(issues) > 0 {
			t.Errorf("produces %s: %v %v", c.delta, err, issues)
		}
	}
}

func TestApplyIsPure(t *testing.T) {
	_, a := chain(t)
	_, b := chain(t)
	if hashOf(t, a) != hashOf(t, b) {
		t.Fatal("same parent and delta gave different hashes")
	}
}

func TestReplay(t *testing.T) {
	ctx := context.Background()
	day0, _ := chain(t)
	fresh := func(ctx context.Context, dst string) error { return state.Copy(ctx, day0, dst) }
	res, err := Replay(ctx, fresh, load(t, "day1.json"), t.TempDir(), nil)
	if err != nil || !res.Equal {
		t.Fatalf("replay: %v %+v", err, res)
	}
	// A parent that is not the same twice must be caught and located.
	calls := 0
	flaky := func(ctx context.Context, dst string) error {
		calls++
		if err := state.Copy(ctx, day0, dst); err != nil {
			return err
		}
		if calls == 2 {
			state.ExecTest(t, world.DBPath(dst, "messages"), `UPDATE threads SET title = 'Maya R.' WHERE ext_id = 'dm-maya'`)
		}
		return nil
	}
	res, err = Replay(ctx, flaky, load(t, "day1.json"), t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Equal || !strings.Contains(res.First, "database messages, table threads") || !strings.Contains(res.First, "dm-maya") || !strings.Contains(res.First, "title") {
		t.Fatalf("replay mismatch not located: %+v", res)
	}
}

func TestProducesCheckFindsMissing(t *testing.T) {
	ctx := context.Background()
	day0, _ := chain(t)
	d := load(t, "day1.json")
	d.Ops = d.Ops[:1] // writes only the order
	d.Produces.Rows = append(d.Produces.Rows, world.RowRef{DB: "shop", Table: "products", Key: map[string]any{"sku": "SP-100"}})
	out := filepath.Join(t.TempDir(), "out")
	if err := ApplyCopy(ctx, day0, out, d, nil); err != nil {
		t.Fatal(err)
	}
	issues, err := CheckProduces(ctx, day0, out, &d.Produces)
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(issues)
	for _, want := range []string{"produces.rows[1]: shop.products {sku=\"SP-200\"}", "produces.rows[2]", "produces.files[0]: home/inventory.csv", "produces.files[2]"} {
		if !strings.Contains(text, want) {
			t.Errorf("issues lack %q: %s", want, text)
		}
	}
	if strings.Contains(text, "produces.rows[0]") {
		t.Errorf("written row reported missing: %s", text)
	}
}

// editOp returns day1 with op i replaced by the given JSON.
func withOp(t *testing.T, i int, op string) *Delta {
	d := load(t, "day1.json")
	var o Op
	if err := json.Unmarshal([]byte(op), &o); err != nil {
		t.Fatal(err)
	}
	d.Ops[i] = o
	return d
}

func TestLintRules(t *testing.T) {
	day0, _ := chain(t)
	cases := []struct {
		name  string
		delta func(t *testing.T) *Delta
		field string
		msg   string
	}{
		{"now()", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":{"sql":"'x' || now()"}}}`)
		}, "ops[1].set.title", "wall clock"},
		{"CURRENT_TIMESTAMP", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":{"sql":"CURRENT_TIMESTAMP"}}}`)
		}, "ops[1].set.title", "CURRENT_TIMESTAMP reads the wall clock"},
		{"datetime('now')", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":1,"placed_at":{"sql":"datetime( 'NOW' )"}}}`)
		}, "ops[0].values.placed_at", "'NOW'"},
		{"localtime", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":1,"placed_at":{"sql":"datetime('2026-03-01', 'localtime')"}}}`)
		}, "ops[0].values.placed_at", "time zone"},
		{"random()", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":{"sql":"abs(random()) % 5"},"placed_at":"x"}}`)
		}, "ops[0].values.qty", "random"},
		{"randomblob in DDL", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.create","db":"shop","sql":["CREATE TABLE t (id INTEGER PRIMARY KEY, b BLOB DEFAULT (randomblob(4)))"]}`)
		}, "ops[0].sql[0]", "randomblob() is random"},
		{"DEFAULT CURRENT_TIMESTAMP", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.create","db":"notes","sql":["CREATE TABLE n (id INTEGER PRIMARY KEY, at TEXT DEFAULT CURRENT_TIMESTAMP)"]}`)
		}, "ops[0].sql[0]", "wall clock"},
		{"DROP TABLE", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.create","db":"shop","sql":["DROP TABLE orders"]}`)
		}, "ops[0].sql[0]", "only CREATE TABLE"},
		{"two statements", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.create","db":"shop","sql":["CREATE TABLE a (x); CREATE TABLE b (y)"]}`)
		}, "ops[0].sql[0]", "one statement"},
		{"semicolon in expression", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"1; DROP TABLE orders"}}}`)
		}, "ops[1].set.price", "no ';'"},
		{"bad expression", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"price":{"sql":"nosuchcol + 1"}}}`)
		}, "ops[1].set.price", "does not compile"},
		{"path leaves home", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"file.write","path":"../../etc/passwd","content":"x"}`)
		}, "ops[5].path", "leaves the home"},
		{"absolute path", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"file.write","path":"/etc/passwd","content":"x"}`)
		}, "ops[5].path", "absolute"},
		{"move to outside", func(t *testing.T) *Delta {
			return withOp(t, 4, `{"op":"file.move","from":"docs/bom.md","to":"a/../../x"}`)
		}, "ops[4].to", "leaves the home"},
		{"unknown database", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"nope","table":"products","key":{"sku":"SP-200"},"set":{"price":1}}`)
		}, "ops[1].db", "unknown database"},
		{"unknown table", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"prods","key":{"sku":"SP-200"},"set":{"price":1}}`)
		}, "ops[1].table", "unknown table"},
		{"unknown column", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"colour":"white"}}`)
		}, "ops[1].set.colour", "no column"},
		{"not the natural key", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"id":2},"set":{"price":1}}`)
		}, "ops[1].key", "natural key of products is [sku]"},
		{"missing NOT NULL", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":1}}`)
		}, "ops[0].values.placed_at", "NOT NULL"},
		{"unknown op", func(t *testing.T) *Delta { return withOp(t, 2, `{"op":"db.upsert","db":"shop"}`) }, "ops[2].op", "unknown operation"},
		{"field not used", func(t *testing.T) *Delta {
			return withOp(t, 3, `{"op":"file.append","path":"inventory.csv","content":"x","db":"shop"}`)
		}, "ops[3].db", "not used by file.append"},
		{"delete missing file", func(t *testing.T) *Delta { return withOp(t, 3, `{"op":"file.delete","path":"nope.txt"}`) }, "ops[3].path", "does not exist"},
		{"two contents", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"file.write","path":"a.txt","content":"x","content_base64":"eA=="}`)
		}, "ops[5].content", "exactly one"},
		{"generator without registry", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"file.write","path":"a.csv","generator":{"name":"csv","params":{}}}`)
		}, "ops[5].generator", "no generators"},
		{"bad mode", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"file.write","path":"a","content":"x","mode":"rwx"}`)
		}, "ops[5].mode", "octal"},
		{"duplicate account", func(t *testing.T) *Delta {
			return withOp(t, 5, `{"op":"account.create","site":"shop","username":"alex","password":"p","salt":"s"}`)
		}, "ops[5].username", "already exists"},
		{"wrong day", func(t *testing.T) *Delta { d := load(t, "day1.json"); d.Day = 5; return d }, "day", "want 1"},
		{"wrong persona", func(t *testing.T) *Delta { d := load(t, "day1.json"); d.Persona = "other"; return d }, "persona", "differs"},
		{"clock backwards", func(t *testing.T) *Delta { d := load(t, "day1.json"); d.Clock = "2026-02-01T00:00:00Z"; return d }, "clock", "before"},
		{"bad clock", func(t *testing.T) *Delta { d := load(t, "day1.json"); d.Clock = "tomorrow"; return d }, "clock", "RFC 3339"},
		{"produces unknown table", func(t *testing.T) *Delta {
			d := load(t, "day1.json")
			d.Produces.Rows[0].Table = "nope"
			return d
		}, "produces.rows[0].table", "unknown table"},
		{"produces bad path", func(t *testing.T) *Delta {
			d := load(t, "day1.json")
			d.Produces.Files[0] = "../x"
			return d
		}, "produces.files[0]", "leaves the home"},
		{"ref to unknown column", func(t *testing.T) *Delta {
			return withOp(t, 0, `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-1"},"values":{"qty":1,"placed_at":"x","product_id":{"ref":{"table":"products","key":{"sku":"SP-100"},"column":"uid"}}}}`)
		}, "ops[0].values.product_id.ref.column", "no column"},
		{"array value", func(t *testing.T) *Delta {
			return withOp(t, 1, `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":[1,2]}}`)
		}, "ops[1].set.title", "arrays"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := hashOf(t, day0)
			err := Lint(context.Background(), day0, c.delta(t), nil)
			var le *LintError
			if !errors.As(err, &le) || !errors.Is(err, ErrLint) {
				t.Fatalf("want a lint error, got %v", err)
			}
			found := false
			for _, is := range le.Issues {
				if strings.HasPrefix(is.String(), c.field+":") && strings.Contains(is.Msg, c.msg) {
					found = true
				}
			}
			if !found {
				t.Errorf("no issue at %s containing %q; got:\n%v", c.field, c.msg, err)
			}
			// Apply refuses too and the parent is untouched.
			out := filepath.Join(t.TempDir(), "out")
			if err := ApplyCopy(context.Background(), day0, out, c.delta(t), nil); err == nil {
				t.Error("apply accepted a delta lint rejects")
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("failed apply left its output")
			}
			if hashOf(t, day0) != before {
				t.Error("parent changed")
			}
		})
	}
}

func TestApplyErrorsChangeNothing(t *testing.T) {
	ctx := context.Background()
	day0, _ := chain(t)
	before := hashOf(t, day0)
	cases := map[string]string{
		"update missing row": `{"op":"db.update","db":"shop","table":"products","key":{"sku":"NOPE"},"set":{"price":1}}`,
		"ref to missing row": `{"op":"db.insert","db":"shop","table":"orders","key":{"order_no":"A-9"},"values":{"qty":1,"placed_at":"x","product_id":{"ref":{"table":"products","key":{"sku":"NOPE"},"column":"id"}}}}`,
		"constraint":         `{"op":"db.update","db":"shop","table":"products","key":{"sku":"SP-200"},"set":{"title":null}}`,
	}
	for name, op := range cases {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "out")
			err := ApplyCopy(ctx, day0, out, withOp(t, 1, op), nil)
			var ae *ApplyError
			if !errors.As(err, &ae) || ae.Op != 1 {
				t.Fatalf("want an ApplyError at ops[1], got %v", err)
			}
			if _, err := os.Stat(out); err == nil {
				t.Error("failed apply left its output")
			}
			if hashOf(t, day0) != before {
				t.Error("parent changed")
			}
		})
	}
	// A symlink in the parent's home must not let a write escape.
	outside := t.TempDir()
	os.Symlink(outside, filepath.Join(day0, "home/escape"))
	out := filepath.Join(t.TempDir(), "out")
	err := ApplyCopy(ctx, day0, out, withOp(t, 5, `{"op":"file.write","path":"escape/pwned.txt","content":"x"}`), nil)
	if err == nil || !strings.Contains(err.Error(), "symlink") {
		t.Fatalf("write through symlink: %v", err)
	}
	if ents, _ := os.ReadDir(outside); len(ents) != 0 {
		t.Fatalf("write escaped home: %v", ents)
	}
}

func TestParseErrors(t *testing.T) {
	cases := map[string]struct{ in, want string }{
		"syntax":        {"{\n  \"version\": 1,\n  \"ops\": [,]\n}", "line 3"},
		"unknown field": {`{"version":1,"persona":"p","day":0,"clock":"x","ops":[{"op":"file.write","paht":"a"}]}`, `ops[0]: unknown field "paht"`},
		"no version":    {`{"persona":"p"}`, "field version is missing"},
		"new version":   {`{"version":2}`, "this build reads version 1"},
		"wrong type":    {`{"version":1,"day":"one"}`, "field day"},
		"trailing":      {`{"version":1} {}`, "unexpected data"},
		"top unknown":   {`{"version":1,"extra":1}`, `unknown field "extra"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := ParseBytes([]byte(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want %q", err, c.want)
			}
		})
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	d := load(t, "day1.json")
	b, err := d.Encode()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := ParseBytes(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := d2.Encode()
	if string(b) != string(b2) {
		t.Fatal("encode is not stable")
	}
}

// randomDelta builds a valid random day over the day-0 schema.
func randomDelta(r *rand.Rand, day int) *Delta {
	d := &Delta{Version: Version, Persona: "avtech", Day: day, Clock: fmt.Sprintf("2026-03-%02dT18:00:00Z", day+1)}
	for i := 0; i < 1+r.IntN(30); i++ {
		switch r.IntN(5) {
		case 0, 1:
			sku := fmt.Sprintf("R-%d", r.IntN(50))
			d.Ops = append(d.Ops, Op{Op: OpDBInsert, DB: "shop", Table: "products", Key: map[string]Value{"sku": Lit(sku)},
				Values: map[string]Value{"title": Lit(fmt.Sprintf("item %d", r.IntN(1000))), "price": Lit(float64(r.IntN(10000)) / 100)}})
		case 2:
			d.Ops = append(d.Ops, Op{Op: OpDBUpdate, DB: "shop", Table: "products", Key: map[string]Value{"sku": Lit("SP-100")},
				Set: map[string]Value{"price": SQLExpr(fmt.Sprintf("price + %d", r.IntN(7)))}})
		case 3:
			c := fmt.Sprintf("line %d\n", r.Uint64())
			d.Ops = append(d.Ops, Op{Op: OpFileAppend, Path: fmt.Sprintf("log/%d.txt", r.IntN(4)), Content: &c})
		case 4:
			c := strings.Repeat("x", r.IntN(5000))
			d.Ops = append(d.Ops, Op{Op: OpFileWrite, Path: fmt.Sprintf("f/%d.bin", r.IntN(8)), Content: &c})
		}
	}
	return d
}

func TestPropertyApplyTwiceSameHash(t *testing.T) {
	ctx := context.Background()
	day0, _ := chain(t)
	r := rand.New(rand.NewPCG(1, 2))
	fresh := func(ctx context.Context, dst string) error { return state.Copy(ctx, day0, dst) }
	for i := 0; i < 25; i++ {
		d := randomDelta(r, 1)
		res, err := Replay(ctx, fresh, d, t.TempDir(), nil)
		if err != nil {
			t.Fatalf("delta %d: %v", i, err)
		}
		if !res.Equal {
			t.Fatalf("delta %d: hashes differ: %s", i, res.First)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, name := range []string{"day0.json", "day1.json"} {
		b, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"version":1,"ops":[{"op":"db.insert","values":{"a":{"ref":{"table":"t","key":{"k":1},"column":"c"}}}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := ParseBytes(b)
		if err != nil {
			return
		}
		enc, err := d.Encode()
		if err != nil {
			t.Fatalf("encode parsed delta: %v", err)
		}
		d2, err := ParseBytes(enc)
		if err != nil {
			t.Fatalf("re-parse encoded delta: %v\n%s", err, enc)
		}
		enc2, _ := d2.Encode()
		if string(enc) != string(enc2) {
			t.Fatalf("encoding not stable")
		}
		// Lint must never panic on anything that parses.
		Lint(context.Background(), "", d, nil)
	})
}

func TestRefInKey(t *testing.T) {
	ctx := context.Background()
	day0, _ := chain(t)
	d := load(t, "day1.json")
	d.Ops = []Op{{Op: OpDBInsert, DB: "messages", Table: "messages",
		Key:    map[string]Value{"thread_id": RefTo("threads", map[string]Value{"ext_id": Lit("dm-maya")}, "id"), "seq": Lit(2)},
		Values: map[string]Value{"sender": Lit("alex"), "body": Lit("hi"), "sent_at": Lit("2026-03-02 09:00:00")}}}
	d.Produces = world.Produces{}
	out := filepath.Join(t.TempDir(), "out")
	if err := ApplyCopy(ctx, day0, out, d, nil); err != nil {
		t.Fatal(err)
	}
	if got := query(t, out, "messages", `SELECT thread_id || '/' || seq || '/' || body FROM messages WHERE seq = 2`); got != "1/2/hi" {
		t.Errorf("row = %q", got)
	}
	d.Ops[0].Key["thread_id"] = RefTo("threads", map[string]Value{"ext_id": Lit("dm-nobody")}, "id")
	if err := ApplyCopy(ctx, day0, filepath.Join(t.TempDir(), "o2"), d, nil); err == nil || !strings.Contains(err.Error(), "ops[0].key.thread_id.ref") {
		t.Errorf("missing ref in key: %v", err)
	}
	d.Ops[0].Key["thread_id"] = SQLExpr("1")
	if err := Lint(ctx, day0, d, nil); err == nil || !strings.Contains(err.Error(), "literals or refs") {
		t.Errorf("sql in key: %v", err)
	}
}

// TestServices: a day adds service definitions to the manifest, which
// keeps the parent's; a changed definition under a served name, an
// unsorted list or a missing hash is refused.
func TestServices(t *testing.T) {
	ctx := context.Background()
	_, day1 := chain(t)
	h := func(s string) world.ID { return world.Hash([]byte(s)) }
	mk := func(refs ...world.ServiceRef) *Delta {
		d := &Delta{Version: Version, Persona: load(t, "day1.json").Persona, Day: 2, Clock: "2026-03-06T18:00:00Z", Services: refs}
		return d
	}
	day2 := filepath.Join(t.TempDir(), "day2")
	if err := ApplyCopy(ctx, day1, day2, mk(world.ServiceRef{Name: "habits", SHA256: h("v1")}), nil); err != nil {
		t.Fatal(err)
	}
	m, err := world.ReadManifest(day2)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Services) != 1 || m.Services[0].Name != "habits" {
		t.Fatalf("services = %+v", m.Services)
	}
	if hashOf(t, day2) == hashOf(t, day1) {
		t.Error("adding a service did not change the world's hash")
	}
	day3 := mk(world.ServiceRef{Name: "budget", SHA256: h("b")})
	day3.Day, day3.Clock = 3, "2026-03-07T18:00:00Z"
	out := filepath.Join(t.TempDir(), "day3")
	if err := ApplyCopy(ctx, day2, out, day3, nil); err != nil {
		t.Fatal(err)
	}
	if m, _ := world.ReadManifest(out); len(m.Services) != 2 || m.Services[0].Name != "budget" || m.Services[1].Name != "habits" {
		t.Errorf("services after day 3 = %+v", m.Services)
	}
	for _, bad := range []struct {
		refs []world.ServiceRef
		want string
	}{
		{[]world.ServiceRef{{Name: "habits", SHA256: h("v2")}}, "already served from the definition"},
		{[]world.ServiceRef{{Name: "b", SHA256: h("b")}, {Name: "a", SHA256: h("a")}}, "sorted by name"},
		{[]world.ServiceRef{{Name: "zz"}}, "sha256: missing"},
		{[]world.ServiceRef{{Name: "Bad!", SHA256: h("x")}}, "name"},
	} {
		d := mk(bad.refs...)
		d.Day, d.Clock = 3, "2026-03-07T18:00:00Z"
		if err := ApplyCopy(ctx, day2, filepath.Join(t.TempDir(), "bad"), d, nil); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("services %+v: %v, want %q", bad.refs, err, bad.want)
		}
	}
}
