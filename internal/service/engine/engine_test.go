package engine_test

import (
	"context"
	"database/sql/driver"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// shelf is a small definition: shelves of books, a look-up by natural key,
// a write, a read of another database, and a synthesis operation.
const shelf = `
wildawm_service: 1
name: shelf
title: Shelf
instructions: The books of {{self}}.
health_tool: list_books
reads: [library]
tables:
  - name: shelves
    columns: [id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE]
    key: [name]
  - name: books
    columns:
      - id INTEGER PRIMARY KEY
      - isbn TEXT NOT NULL UNIQUE
      - shelf_id INTEGER NOT NULL REFERENCES shelves(id)
      - title TEXT NOT NULL
      - read INTEGER NOT NULL DEFAULT 0
    key: [isbn]
snippets:
  find_book:
    - row: SELECT b.id AS b_id, b.title AS b_title, b.read AS b_read FROM books b WHERE b.isbn = :isbn
      missing: SELECT format('no book %q; call list_books', :isbn)
tools:
  - name: list_books
    description: Lists the books.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output:
      type: object
      properties:
        books: {type: array, items: {type: object, properties: {isbn: {type: string}, read: {type: boolean}, note: {type: string}}, required: [isbn, read]}}
      required: [books]
    steps:
      - rows: SELECT json_object('isbn', isbn, 'read', read, 'note', NULL) FROM books ORDER BY isbn
        as: books
      - result: SELECT json_object('books', json(:books))
  - name: mark_read
    description: Marks a book read.
    annotations: {readOnlyHint: false, idempotentHint: true}
    input: {type: object, properties: {isbn: {type: string}}, required: [isbn]}
    output: {type: object, properties: {title: {type: string}, changed: {type: boolean}}, required: [title, changed]}
    steps:
      - use: find_book
      - exec: UPDATE books SET read = 1 WHERE id = :b_id AND read = 0
      - result: SELECT json_object('title', :b_title, 'changed', :changes)
  - name: loans
    description: The library's loans of a book.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {isbn: {type: string}}, required: [isbn]}
    output: {type: object, properties: {loans: {type: integer}, shout: {type: string}}, required: [loans]}
    steps:
      - db: library
        row: SELECT count(*) AS n FROM loans WHERE isbn = :isbn
      - result: SELECT json_object('loans', :n, 'shout', shelf_shout(:isbn))
resources:
  - name: book
    description: One book.
    mime: text/plain
    uri: shelf://book/{isbn}
    steps:
      - use: find_book
      - result: SELECT :b_title || CASE WHEN :b_read THEN ' (read)' ELSE '' END
ops:
  - name: add_book
    description: A book on a shelf.
    example: {shelf: Hall, isbn: "978-5", title: Middlemarch, tags: [novels]}
    params:
      type: object
      properties: {shelf: {type: string}, isbn: {type: string}, title: {type: string}, read: {type: boolean}, tags: {type: array, items: {type: string}}}
      required: [shelf, isbn, title]
    checks:
      - check: SELECT check_line('title', :title, 100, 'Dune')
    emit:
      - insert: shelves
        key: {name: ':shelf'}
      - insert: books
        key: {isbn: ':isbn'}
        values: {shelf_id: {ref: shelves, key: {name: ':shelf'}, column: id}, title: ':title', read: ':read'}
      - for: tags
        if: ":item <> 'skip'"
        insert: shelves
        key: {name: ':item'}
test:
  self: Alex
  now: "2026-03-01T09:00:00Z"
  sql:
    - INSERT INTO shelves VALUES (1, 'Den')
    - INSERT INTO books VALUES (1, '978-1', 1, 'Dune', 0), (2, '978-2', 1, 'Emma', 1)
  other:
    library: [CREATE TABLE loans (isbn TEXT NOT NULL), "INSERT INTO loans VALUES ('978-1'), ('978-1')"]
`

var shelfHooks = engine.Hooks{Funcs: map[string]engine.Func{
	"shelf_shout": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) { return strings.ToUpper(a[0].(string)) + "!", nil }},
}}

func compileShelf(t *testing.T, src string) *engine.Compiled {
	t.Helper()
	d, err := engine.Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, shelfHooks)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestShelf(t *testing.T) {
	c := compileShelf(t, shelf)
	dir := servicetest.NewWorld(t, c.Def)
	cs := servicetest.ConnectMemory(t, servicetest.Open(t, c, dir))
	if got := servicetest.ResultText(mustCall(t, cs, "list_books", nil)); got != `{"books":[{"isbn":"978-1","read":false},{"isbn":"978-2","read":true}]}` {
		t.Errorf("list_books = %s", got)
	}
	if got := servicetest.ResultText(mustCall(t, cs, "mark_read", map[string]any{"isbn": "978-1"})); got != `{"title":"Dune","changed":true}` {
		t.Errorf("mark_read = %s", got)
	}
	if got := servicetest.ResultText(mustCall(t, cs, "mark_read", map[string]any{"isbn": "978-1"})); got != `{"title":"Dune","changed":false}` {
		t.Errorf("mark_read again = %s", got)
	}
	if got := servicetest.CallError(t, cs, "mark_read", map[string]any{"isbn": "x"}); got != `no book "x"; call list_books` {
		t.Errorf("mark_read(x) = %s", got)
	}
	if got := servicetest.ResultText(mustCall(t, cs, "loans", map[string]any{"isbn": "978-1"})); got != `{"loans":2,"shout":"978-1!"}` {
		t.Errorf("loans = %s", got)
	}
	if got := servicetest.ReadResource(t, cs, "shelf://book/978-1", "text/plain"); got != "Dune (read)" {
		t.Errorf("book = %q", got)
	}
	servicetest.WantNotFound(t, cs, "shelf://book/nope")
}

func mustCall(t *testing.T, cs *mcp.ClientSession, name string, args any) *mcp.CallToolResult {
	t.Helper()
	if args == nil {
		args = map[string]any{}
	}
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil || res.IsError {
		t.Fatalf("%s: %v %s", name, err, servicetest.ResultText(res))
	}
	return res
}

func TestShelfPassesTheSuite(t *testing.T) {
	servicetest.Suite(t, compileShelf(t, shelf), servicetest.SuiteOptions{})
}

// TestParseNamesTheField breaks a good definition in one place at a time:
// the error must name the field.
func TestParseNamesTheField(t *testing.T) {
	for _, tc := range []struct{ from, to, want string }{
		{"wildawm_service: 1", "wildawm_service: 2", "wildawm_service: is 2"},
		{"name: shelf", "name: Shelf!", "name: \"Shelf!\""},
		{"key: [isbn]", "key: [title]", "tables[1].key: [title] is not UNIQUE"},
		{"key: [isbn]", "key: [nope]", `tables[1].key[0]: "nope" is not a column`},
		{"WHERE b.isbn = :isbn", "WHERE b.isbn = :isbm", "uses :isbm"},
		{"      - result: SELECT json_object('books'", "      - result: SELECT 1\n      - result: SELECT json_object('books'", "tools[0] (list_books).steps[1]: a result step must be the last"},
		{"annotations: {readOnlyHint: false, idempotentHint: true}", "annotations: {readOnlyHint: true}", "cannot write"},
		{"health_tool: list_books", "health_tool: mark_read", "health_tool: \"mark_read\" is not read-only"},
		{"      - use: find_book\n      - exec", "      - use: find_boo\n      - exec", `no snippet "find_boo"`},
		{"      - result: SELECT json_object('title'", "      - row: SELECT 1 AS x\n        rows: SELECT 1\n      - result: SELECT json_object('title'", "has row and rows"},
		{"uri: shelf://book/{isbn}", "uri: shelf://book/{isbn}/x", "every segment must be one {variable}"},
		{"db: library", "db: libary", `db: "libary" is not in reads`},
		{"key: {name: ':shelf'}", "key: {title: ':shelf'}", `"title" is not in shelves's natural key`},
		{`now: "2026-03-01T09:00:00Z"`, `now: "March"`, "test.now"},
		{"title: Shelf", "title: Shelf\nbogus: 1", "field bogus not found"},
	} {
		if !strings.Contains(shelf, tc.from) {
			t.Fatalf("the definition has no %q", tc.from)
		}
		_, err := engine.Parse([]byte(strings.Replace(shelf, tc.from, tc.to, 1)))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q -> %q: error %v, want %q", tc.from, tc.to, err, tc.want)
		}
	}
}

// TestUseWithIf: an if: beside a use step guards every step of the
// snippet.
func TestUseWithIf(t *testing.T) {
	src := strings.Replace(shelf, "    steps:\n      - use: find_book\n      - exec", "    steps:\n      - if: :isbn <> 'skip'\n        use: find_book\n      - exec", 1)
	c := compileShelf(t, src)
	cs := servicetest.ConnectMemory(t, servicetest.Open(t, c, servicetest.NewWorld(t, c.Def)))
	if got := servicetest.CallError(t, cs, "mark_read", map[string]any{"isbn": "x"}); got != `no book "x"; call list_books` {
		t.Errorf("mark_read(x) = %s", got)
	}
	// With the look-up skipped, :b_title is unbound: the result says so.
	if got := servicetest.ResultText(mustCall(t, cs, "mark_read", map[string]any{"isbn": "skip"})); got != `{"title":null,"changed":false}` {
		t.Errorf("mark_read(skip) = %s", got)
	}
}

func TestCompileNeedsItsHooks(t *testing.T) {
	d, err := engine.Parse([]byte(strings.Replace(shelf, "      - result: SELECT json_object('loans'", "      - hook: count_loans\n      - result: SELECT json_object('loans'", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engine.Compile(d, shelfHooks); err == nil || !strings.Contains(err.Error(), `no Go hook "count_loans"`) {
		t.Errorf("Compile = %v, want the missing hook named", err)
	}
	if _, err := engine.Compile(d, engine.Hooks{Funcs: map[string]engine.Func{"shout": shelfHooks.Funcs["shelf_shout"]}}); err == nil || !strings.Contains(err.Error(), "name it shelf_") {
		t.Errorf("Compile with an unprefixed function = %v", err)
	}
}

// TestOps applies a synthesis operation's delta to a world and reads the
// rows back through the tools.
func TestOps(t *testing.T) {
	c := compileShelf(t, shelf)
	ops, err := c.Op("add_book", map[string]any{"shelf": "Hall", "isbn": "978-9", "title": "Ulysses", "read": true, "tags": []any{"classics", "skip"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 3 {
		b, _ := json.Marshal(ops)
		t.Fatalf("%d ops, want 3 (the skip tag emits nothing): %s", len(ops), b)
	}
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{SQL: map[string][]string{"library": {"CREATE TABLE loans (isbn TEXT NOT NULL)"}}})
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z", Ops: append([]delta.Op{c.Def.CreateOp()}, ops...)}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(context.Background(), parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(c, engine.Options{WorldDir: dst, Clock: world.FixedClock(time.Date(2026, 3, 3, 0, 0, 0, 0, time.UTC)), Self: "A"})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	if got := servicetest.ResultText(mustCall(t, cs, "list_books", nil)); got != `{"books":[{"isbn":"978-9","read":true}]}` {
		t.Errorf("list_books = %s", got)
	}
	for _, bad := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"shelf": "Hall", "isbn": "1"}, `argument "title"`},
		{map[string]any{"shelf": "Hall", "isbn": "1", "title": " "}, "title is empty"},
		{map[string]any{"shelf": "Hall", "isbn": "1", "title": "T", "pages": 3}, `no argument "pages"`},
	} {
		if _, err := c.Op("add_book", bad.params); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Op(%v) = %v, want %q", bad.params, err, bad.want)
		}
	}
	if _, err := c.Op("burn_book", nil); err == nil || !strings.Contains(err.Error(), "it has add_book") {
		t.Errorf("unknown op: %v", err)
	}
}

func TestShape(t *testing.T) {
	schema := map[string]any{"type": "object", "required": []any{"a", "list"}, "properties": map[string]any{
		"a": map[string]any{"type": "boolean"}, "b": map[string]any{"type": "string"}, "list": map[string]any{"type": "array"},
		"nested": map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": []any{"boolean", "null"}}}},
	}}
	got, err := engine.Shape([]byte(`{"z":1,"a":1,"b":null,"list":null,"nested":{"ok":0},"s":"<&>"}`), schema)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"z":1,"a":true,"list":[],"nested":{"ok":false},"s":"<&>"}`; string(got) != want {
		t.Errorf("Shape = %s, want %s", got, want)
	}
	for _, bad := range []string{`[1]`, `{"a":`, `{"a" 1}`, `{oops`, `{"a":[1,`, `{"a":"x`} {
		if _, err := engine.Shape([]byte(bad), schema); err == nil {
			t.Errorf("Shape(%s): no error", bad)
		}
	}
}

func TestLint(t *testing.T) {
	r, err := engine.Lint(context.Background(), compileShelf(t, shelf))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Problems) > 0 || r.Tools != 3 || r.Resources != 1 || r.Ops != 1 {
		t.Errorf("lint of shelf = %+v", r)
	}
	// A column that does not exist is found without a call reaching it;
	// an example call that fails inside the service is reported.
	broken := strings.Replace(shelf, "SELECT json_object('isbn', isbn, 'read', read", "SELECT json_object('isbn', isbn, 'read', readd", 1)
	broken = strings.Replace(broken, "test:\n", "test:\n  calls: [{tool: list_books}, {tool: mark_read, args: {isbn: nope}}]\n", 1)
	r, err = engine.Lint(context.Background(), compileShelf(t, broken))
	if err != nil {
		t.Fatal(err)
	}
	joined := strings.Join(r.Problems, "\n")
	if !strings.Contains(joined, "tools[0] (list_books).steps[0].rows: ") || !strings.Contains(joined, "no such column: readd") ||
		!strings.Contains(joined, "test.calls[0] (list_books)") || strings.Contains(joined, "test.calls[1]") {
		t.Errorf("lint of a broken shelf:\n%s", joined)
	}
}
