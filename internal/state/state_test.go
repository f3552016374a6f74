package state

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

var shopSQL = []string{
	`CREATE TABLE orders (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL, total REAL, placed_at DATETIME, note TEXT, receipt BLOB)`,
	`CREATE UNIQUE INDEX orders_nk ON orders(order_no)`,
	`CREATE TABLE tags (name TEXT, color TEXT)`,
	`CREATE TABLE items (sku TEXT PRIMARY KEY, title TEXT, UNIQUE(title)) WITHOUT ROWID`,
	`INSERT INTO orders VALUES (1, 'A-1', 10.5, '2026-03-01 10:00:00', 'first', x'00ff'), (2, 'A-2', 3, '2026-03-02 10:00:00', NULL, NULL)`,
	`INSERT INTO tags VALUES ('red', '#f00'), ('blue', '#00f')`,
	`INSERT INTO items VALUES ('s1', 'Surge Protector'), ('s2', 'Cable')`,
	`CREATE TABLE kv (k TEXT PRIMARY KEY, v)`,
	`INSERT INTO kv VALUES ('n', 3)`,
}

func newWorld(t *testing.T) string {
	return MakeTestWorld(t, t.TempDir(), TestWorld{
		SQL:   map[string][]string{"shop": shopSQL, "messages": {`CREATE TABLE threads (id INTEGER PRIMARY KEY, ext TEXT UNIQUE, title TEXT)`, `INSERT INTO threads VALUES (1, 't1', 'hello')`}},
		Files: map[string]string{"docs/a.md": "# A\n", "inventory.csv": "sku,qty\ns1,2\n"},
	})
}

func mustHash(t *testing.T, dir string) world.ID {
	t.Helper()
	id, err := Hash(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func TestTablesNaturalKeys(t *testing.T) {
	dir := newWorld(t)
	db, err := OpenDB(world.DBPath(dir, "shop"), true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ts, err := Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, tb := range ts {
		got[tb.Name] = strings.Join(tb.NaturalKey, ",") + "|" + strings.Join(tb.PK, ",")
	}
	want := map[string]string{"orders": "order_no|id", "tags": "|", "items": "title|sku"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("table %s: natural|pk = %q, want %q", k, got[k], v)
		}
	}
	for _, tb := range ts {
		if tb.IntegerPK != (tb.Name == "orders") {
			t.Errorf("table %s: IntegerPK = %v", tb.Name, tb.IntegerPK)
		}
	}
}

func TestHashIgnoresPageLayoutAndParent(t *testing.T) {
	dir := newWorld(t)
	h0 := mustHash(t, dir)
	path := world.DBPath(dir, "shop")
	before, _ := os.ReadFile(path)
	// Mutate and revert: rows end equal, pages differ.
	ExecTest(t, path,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i+1 FROM n WHERE i < 2000) INSERT INTO tags SELECT 'tmp' || i, 'x' FROM n`,
		`DELETE FROM tags WHERE name LIKE 'tmp%'`,
		`UPDATE orders SET note = 'changed' WHERE id = 1`,
		`UPDATE orders SET note = 'first' WHERE id = 1`,
	)
	after, _ := os.ReadFile(path)
	if bytes.Equal(before, after) {
		t.Fatal("test setup: expected page bytes to change after mutate-and-revert")
	}
	if h := mustHash(t, dir); h != h0 {
		t.Errorf("hash changed after mutate-and-revert: %s -> %s", h0.Short(), h.Short())
	}
	m, _ := world.ReadManifest(dir)
	m.Parent = world.Hash([]byte("some parent"))
	if err := world.WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	if h := mustHash(t, dir); h != h0 {
		t.Errorf("hash depends on manifest parent")
	}
}

func TestHashSameContentDifferentHistory(t *testing.T) {
	a := newWorld(t)
	// Same content built in another order, in a fresh directory.
	b := MakeTestWorld(t, t.TempDir(), TestWorld{
		SQL: map[string][]string{
			"messages": {`CREATE TABLE threads (id INTEGER PRIMARY KEY, ext TEXT UNIQUE, title TEXT)`, `INSERT INTO threads VALUES (1, 't1', 'draft')`, `UPDATE threads SET title = 'hello'`},
			"shop":     append(append([]string{}, shopSQL[:4]...), shopSQL[7], shopSQL[6], shopSQL[8], shopSQL[5], shopSQL[4]),
		},
		Files: map[string]string{"inventory.csv": "sku,qty\ns1,2\n", "docs/a.md": "# A\n"},
	})
	if ha, hb := mustHash(t, a), mustHash(t, b); ha != hb {
		d, _ := Compare(context.Background(), a, b)
		t.Fatalf("equal content, different hashes; first difference: %s", d.First())
	}
}

func TestHashDetectsEveryChange(t *testing.T) {
	cases := map[string]func(t *testing.T, dir string){
		"cell": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `UPDATE orders SET total = 10.25 WHERE id = 1`)
		},
		"int to real": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `UPDATE kv SET v = 3.0`)
		},
		"text type": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `UPDATE orders SET note = x'6669727374' WHERE id = 1`)
		},
		"blob byte": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `UPDATE orders SET receipt = x'00fe' WHERE id = 1`)
		},
		"datetime": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `UPDATE orders SET placed_at = '2026-03-01T10:00:00' WHERE id = 1`)
		},
		"no-pk row": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `INSERT INTO tags VALUES ('red', '#f00')`)
		},
		"schema": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "shop"), `CREATE INDEX tags_color ON tags(color)`)
		},
		"user version": func(t *testing.T, dir string) { ExecTest(t, world.DBPath(dir, "shop"), `PRAGMA user_version = 7`) },
		"file byte": func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, "home/docs/a.md"), []byte("# B\n"), 0o644)
		},
		"file mode": func(t *testing.T, dir string) { os.Chmod(filepath.Join(dir, "home/docs/a.md"), 0o600) },
		"file move": func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "home/docs/a.md"), filepath.Join(dir, "home/docs/b.md"))
		},
		"empty dir": func(t *testing.T, dir string) { os.Mkdir(filepath.Join(dir, "home/empty"), 0o755) },
		"symlink":   func(t *testing.T, dir string) { os.Symlink("docs/a.md", filepath.Join(dir, "home/link")) },
		"day": func(t *testing.T, dir string) {
			m, _ := world.ReadManifest(dir)
			m.Day++
			world.WriteManifest(dir, m)
		},
		"account": func(t *testing.T, dir string) {
			world.WriteAccounts(dir, []world.Account{{Site: "shop", Username: "alex", PasswordHash: world.HashPassword("shop", "alex", "s", "pw")}})
		},
		"new db": func(t *testing.T, dir string) {
			ExecTest(t, world.DBPath(dir, "notes"), `CREATE TABLE n (id INTEGER PRIMARY KEY)`)
		},
	}
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			dir := newWorld(t)
			h0 := mustHash(t, dir)
			mutate(t, dir)
			if h := mustHash(t, dir); h == h0 {
				t.Errorf("hash did not change")
			}
		})
	}
}

func TestLayoutErrors(t *testing.T) {
	cases := map[string]struct {
		mutate func(dir string)
		want   string
	}{
		"stray top-level": {func(dir string) { os.WriteFile(filepath.Join(dir, "x.txt"), nil, 0o644) }, `unexpected top-level entry "x.txt"`},
		"hot journal":     {func(dir string) { os.WriteFile(filepath.Join(dir, "db/shop.sqlite-journal"), nil, 0o644) }, "not closed cleanly"},
		"bad db name":     {func(dir string) { os.WriteFile(filepath.Join(dir, "db/Shop.sqlite"), nil, 0o644) }, "database name"},
		"bad manifest": {func(dir string) {
			os.WriteFile(filepath.Join(dir, "manifest.json"), []byte(`{"version":1,"persona":"p","day":0,"clock":"yesterday"}`), 0o644)
		}, "field clock"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			dir := newWorld(t)
			c.mutate(dir)
			_, err := Hash(context.Background(), dir)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
		})
	}
}

func TestDiff(t *testing.T) {
	a := newWorld(t)
	b := MakeTestWorld(t, t.TempDir(), TestWorld{
		SQL: map[string][]string{
			"shop": append(append([]string{}, shopSQL...),
				// Reassign row ids but keep natural keys: not a change by natural key.
				`UPDATE orders SET id = id + 10`,
				`INSERT INTO orders (id, order_no, total) VALUES (3, 'A-3', 99)`,
				`UPDATE orders SET total = 11 WHERE order_no = 'A-1'`,
				`DELETE FROM tags WHERE name = 'blue'`,
			),
			"messages": {`CREATE TABLE threads (id INTEGER PRIMARY KEY, ext TEXT UNIQUE, title TEXT)`, `INSERT INTO threads VALUES (1, 't1', 'hello')`},
		},
		Files: map[string]string{"docs/a.md": "# A changed\n", "new.txt": "n"},
	})
	d, err := Compare(context.Background(), a, b)
	if err != nil {
		t.Fatal(err)
	}
	if d.Empty() {
		t.Fatal("diff empty")
	}
	var orders, tags *TableDiff
	for i := range d.Tables {
		switch d.Tables[i].Table {
		case "orders":
			orders = &d.Tables[i]
		case "tags":
			tags = &d.Tables[i]
		}
	}
	if orders == nil || len(orders.Added) != 1 || orders.Added[0]["order_no"] != "A-3" {
		t.Fatalf("orders added = %+v", orders)
	}
	if len(orders.Deleted) != 0 {
		t.Errorf("orders deleted = %+v, want none (natural keys unchanged)", orders.Deleted)
	}
	// A-1 changed total and id; A-2 changed id only.
	if len(orders.Changed) != 2 || orders.Changed[0].Key["order_no"] != "A-1" || !strings.Contains(strings.Join(orders.Changed[0].Cols, ","), "total") {
		t.Errorf("orders changed = %+v", orders.Changed)
	}
	if tags == nil || len(tags.Deleted) != 1 || tags.Deleted[0]["name"] != "blue" || len(tags.Key) != 0 {
		t.Errorf("tags = %+v", tags)
	}
	wantFiles := map[string]string{"docs/a.md": Changed, "inventory.csv": Deleted, "new.txt": Added}
	if len(d.Files) != len(wantFiles) {
		t.Errorf("files = %+v", d.Files)
	}
	for _, f := range d.Files {
		if wantFiles[f.Path] != f.Change {
			t.Errorf("file %s: change %s, want %s", f.Path, f.Change, wantFiles[f.Path])
		}
	}
	var text bytes.Buffer
	if err := d.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"shop.orders (by order_no): +1 ~2 -0", `+ {order_no="A-3"}`, "total: 10.5 -> 11", "file + new.txt"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text diff lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := d.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back["version"] != float64(1) {
		t.Errorf("json diff: %v %v", err, back["version"])
	}
	if !strings.Contains(d.First(), "database shop, table orders") {
		t.Errorf("First() = %q", d.First())
	}
	same, err := Compare(context.Background(), a, a)
	if err != nil || !same.Empty() || same.First() != "" {
		t.Errorf("self diff: %v %+v", err, same)
	}
}
