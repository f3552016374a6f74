package notes

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose notes database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func noteIDs(ns []NoteSummary) []string {
	var out []string
	for _, n := range ns {
		out = append(out, n.Note)
	}
	return out
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			books := servicetest.Call[ListNotebooksOut](t, cs, "list_notebooks", nil)
			if want := []NotebookSummary{{"Archive", 0}, {"Personal", 2}, {"Work", 2}}; !reflect.DeepEqual(books.Notebooks, want) {
				t.Errorf("notebooks = %+v", books.Notebooks)
			}

			// list_notes: pinned first, then most recently updated.
			list := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{})
			if got, want := noteIDs(list.Notes), []string{"lisbon-packing", "groceries", "q1-plan", "standup-2026-02-27"}; !slices.Equal(got, want) {
				t.Fatalf("notes = %v, want %v", got, want)
			}
			if l := list.Notes[0]; !l.Pinned || l.Notebook != "Personal" || l.Preview != "# Packing - passport - adapter - sunscreen" {
				t.Errorf("first = %+v", l)
			}
			p1 := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"limit": 2})
			p2 := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"limit": 2, "cursor": p1.NextCursor})
			if got := append(noteIDs(p1.Notes), noteIDs(p2.Notes)...); !slices.Equal(got, noteIDs(list.Notes)) || p1.NextCursor == "" || p2.NextCursor != "" {
				t.Errorf("pages = %v %v, cursor %q", noteIDs(p1.Notes), noteIDs(p2.Notes), p2.NextCursor)
			}
			work := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"notebook": "work"})
			if got := noteIDs(work.Notes); !slices.Equal(got, []string{"q1-plan", "standup-2026-02-27"}) {
				t.Errorf("work = %v", got)
			}
			if got := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"notebook": "Archive"}); len(got.Notes) != 0 {
				t.Errorf("archive = %v", noteIDs(got.Notes))
			}

			// Walking one at a time gives the same order, crossing every boundary.
			var walked []string
			for cur, n := "", 0; n < 10; n++ {
				pg := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"limit": 1, "cursor": cur})
				walked = append(walked, noteIDs(pg.Notes)...)
				if cur = pg.NextCursor; cur == "" {
					break
				}
			}
			if !slices.Equal(walked, noteIDs(list.Notes)) {
				t.Errorf("walked %v, want %v", walked, noteIDs(list.Notes))
			}

			// search_notes: title and body, plain text.
			for q, want := range map[string][]string{
				"PASSPORT": {"lisbon-packing"}, "q1": {"q1-plan"}, "50%": {"groceries"}, "_": nil, "**beta**": {"q1-plan"},
			} {
				got := servicetest.Call[SearchNotesOut](t, cs, "search_notes", map[string]any{"query": q})
				if !slices.Equal(noteIDs(got.Notes), want) {
					t.Errorf("search %q = %v, want %v", q, noteIDs(got.Notes), want)
				}
			}
			found := servicetest.Call[SearchNotesOut](t, cs, "search_notes", map[string]any{"query": "designer"})
			if len(found.Notes) != 1 || !strings.Contains(found.Notes[0].Preview, "Hire a designer") {
				t.Errorf("snippet = %+v", found.Notes)
			}
			if got := servicetest.Call[SearchNotesOut](t, cs, "search_notes", map[string]any{"query": "e", "limit": 1}); len(got.Notes) != 1 || !got.More {
				t.Errorf("limited = %+v", got)
			}

			// read_note.
			n := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "lisbon-packing"})
			if n.Body != "# Packing\n\n- passport\n- adapter\n- sunscreen" || !n.Pinned || !slices.Equal(n.Links, []string{"https://www.visitlisboa.com/en", "travel/lisbon/booking.pdf"}) || n.CreatedAt != "2026-02-10 10:00:00" {
				t.Errorf("read = %+v", n)
			}

			// create_note in an existing notebook (case-insensitive) and a new one.
			cr := servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "personal", "title": "Groceries", "body": "Bread"})
			want := Note{Note: "groceries-2", Notebook: "Personal", Title: "Groceries", Body: "Bread", Links: []string{}, CreatedAt: "2026-03-01 09:00:00", UpdatedAt: "2026-03-01 09:00:00"}
			if cr.CreatedNotebook || !reflect.DeepEqual(cr.Note, want) {
				t.Errorf("create = %+v", cr)
			}
			cr = servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": " Recipes ", "title": "Pão de queijo"})
			if !cr.CreatedNotebook || cr.Note.Notebook != "Recipes" || cr.Note.Note != "p-o-de-queijo" || cr.Note.Body != "" {
				t.Errorf("create in new notebook = %+v", cr)
			}
			if got := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "groceries-2"}); !reflect.DeepEqual(got, want) {
				t.Errorf("read new = %+v", got)
			}

			// update_note: append, replace, title, no-op.
			up := servicetest.Call[UpdateNoteOut](t, cs, "update_note", map[string]any{"note": "q1-plan", "append": "- [ ] budget"})
			if up.Note.Body != "Ship the **beta** by March 15.\nHire a designer.\n- [ ] budget" || !slices.Equal(up.Changed, []string{"body"}) || up.Note.UpdatedAt != "2026-03-01 09:00:00" {
				t.Errorf("append = %+v", up)
			}
			up = servicetest.Call[UpdateNoteOut](t, cs, "update_note", map[string]any{"note": "standup-2026-02-27", "title": "Standup Feb 27", "append": "All green."})
			if up.Note.Body != "All green." || !slices.Equal(up.Changed, []string{"title", "body"}) {
				t.Errorf("title+append = %+v", up)
			}
			up = servicetest.Call[UpdateNoteOut](t, cs, "update_note", map[string]any{"note": "groceries", "body": ""})
			if up.Note.Body != "" || !slices.Equal(up.Changed, []string{"body"}) {
				t.Errorf("clear = %+v", up)
			}
			before := servicetest.HashDB(t, path)
			if up = servicetest.Call[UpdateNoteOut](t, cs, "update_note", map[string]any{"note": "groceries", "title": "Groceries"}); len(up.Changed) != 0 || servicetest.HashDB(t, path) != before {
				t.Errorf("no-op = %+v", up)
			}

			// pin_note.
			if pn := servicetest.Call[PinNoteOut](t, cs, "pin_note", map[string]any{"note": "q1-plan"}); !pn.Pinned || !pn.Changed {
				t.Errorf("pin = %+v", pn)
			}
			if pn := servicetest.Call[PinNoteOut](t, cs, "pin_note", map[string]any{"note": "q1-plan"}); !pn.Pinned || pn.Changed {
				t.Errorf("pin again = %+v", pn)
			}
			if pn := servicetest.Call[PinNoteOut](t, cs, "pin_note", map[string]any{"note": "lisbon-packing", "unpin": true}); pn.Pinned || !pn.Changed {
				t.Errorf("unpin = %+v", pn)
			}
			if got := servicetest.Call[ListNotesOut](t, cs, "list_notes", map[string]any{"limit": 1}); noteIDs(got.Notes)[0] != "q1-plan" {
				t.Errorf("first after pin = %v", noteIDs(got.Notes))
			}

			// link_note.
			ln := servicetest.Call[LinkNoteOut](t, cs, "link_note", map[string]any{"note": "q1-plan", "target": " https://example.com/a?b=c "})
			if !ln.Changed || !slices.Equal(ln.Links, []string{"docs/roadmap.md", "https://example.com/a?b=c"}) {
				t.Errorf("link = %+v", ln)
			}
			if ln = servicetest.Call[LinkNoteOut](t, cs, "link_note", map[string]any{"note": "q1-plan", "target": "docs/roadmap.md"}); ln.Changed {
				t.Errorf("relink = %+v", ln)
			}
			if ln = servicetest.Call[LinkNoteOut](t, cs, "link_note", map[string]any{"note": "q1-plan", "target": "docs/roadmap.md", "remove": true}); !ln.Changed || !slices.Equal(ln.Links, []string{"https://example.com/a?b=c"}) {
				t.Errorf("unlink = %+v", ln)
			}

			// delete_note.
			del := servicetest.Call[DeleteNoteOut](t, cs, "delete_note", map[string]any{"note": "lisbon-packing"})
			if !del.Deleted || del.Title != "Lisbon packing list" {
				t.Errorf("delete = %+v", del)
			}
			servicetest.CallError(t, cs, "read_note", map[string]any{"note": "lisbon-packing"})
			books = servicetest.Call[ListNotebooksOut](t, cs, "list_notebooks", nil)
			if want := []NotebookSummary{{"Archive", 0}, {"Personal", 2}, {"Recipes", 1}, {"Work", 2}}; !reflect.DeepEqual(books.Notebooks, want) {
				t.Errorf("notebooks at the end = %+v", books.Notebooks)
			}
		})
	}
}

func TestBadInputsChangeNothing(t *testing.T) {
	huge := strings.Repeat("x", MaxBodyChars+1)
	sqlish := "x'); DROP TABLE notes; --"
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"read_note", map[string]any{"note": "nope"}, "call search_notes"},
		{"read_note", map[string]any{"note": "Q1-PLAN"}, `did you mean note "q1-plan"`},
		{"read_note", map[string]any{"note": "groceries "}, `did you mean note "groceries"`},
		{"read_note", map[string]any{"note": "lisbon packing list"}, `did you mean note "lisbon-packing"`},
		{"read_note", map[string]any{"note": ""}, "note is required"},
		{"read_note", map[string]any{"note": sqlish}, "no note"},
		{"read_note", map[string]any{"note": huge}, "longer than any note id"},
		{"read_note", map[string]any{"note": 3}, "note"},
		{"read_note", map[string]any{"note": "q1-plan", "extra": true}, "extra"},
		{"list_notebooks", map[string]any{"x": 1}, "x"},
		{"list_notes", map[string]any{"limit": 0.5}, "limit"},
		{"list_notes", map[string]any{"limit": 500}, "between 1 and 100"},
		{"list_notes", map[string]any{"cursor": "abc"}, "pass next_cursor"},
		{"list_notes", map[string]any{"notebook": "Wrok"}, `the notebooks are "Archive", "Personal", "Work"`},
		{"list_notes", map[string]any{"notebook": sqlish}, "no notebook"},
		{"list_notes", map[string]any{"notebook": huge}, "at most 100"},
		{"search_notes", map[string]any{"query": ""}, "query is empty"},
		{"search_notes", map[string]any{"query": huge}, "at most 200"},
		{"search_notes", map[string]any{"query": []string{"a"}}, "query"},
		{"create_note", map[string]any{"notebook": "Work", "title": ""}, "title is empty"},
		{"create_note", map[string]any{"notebook": "", "title": "T"}, "notebook is empty"},
		{"create_note", map[string]any{"title": "T"}, "notebook"},
		{"create_note", map[string]any{"notebook": "Work", "title": "a\nb"}, "line break"},
		{"create_note", map[string]any{"notebook": "Work", "title": huge}, "at most 200"},
		{"create_note", map[string]any{"notebook": huge, "title": "T"}, "at most 100"},
		{"create_note", map[string]any{"notebook": "Work", "title": "T", "body": huge}, "at most 50000"},
		{"create_note", map[string]any{"notebook": "Work", "title": "T", "body": "a\x00b"}, "control character"},
		{"create_note", map[string]any{"notebook": "Work", "title": 5}, "title"},
		{"update_note", map[string]any{"note": "q1-plan"}, "nothing to change"},
		{"update_note", map[string]any{"note": "q1-plan", "body": "a", "append": "b"}, "not both"},
		{"update_note", map[string]any{"note": "nope", "append": "b"}, "no note"},
		{"update_note", map[string]any{"note": "q1-plan", "title": " "}, "title is empty"},
		{"update_note", map[string]any{"note": "q1-plan", "body": huge}, "at most 50000"},
		{"update_note", map[string]any{"note": "q1-plan", "append": strings.Repeat("y", MaxBodyChars-10)}, "after appending"},
		{"update_note", map[string]any{"note": "q1-plan", "title": "ok", "append": "\x07"}, "control character"},
		{"pin_note", map[string]any{"note": "nope"}, "no note"},
		{"pin_note", map[string]any{"note": "q1-plan", "unpin": "no"}, "unpin"},
		{"link_note", map[string]any{"note": "q1-plan", "target": ""}, "target is empty"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "/etc/passwd"}, "absolute"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "~/docs/a.md"}, "absolute"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "../secret"}, "inside home"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "docs/../../x"}, "inside home"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "docs//a.md"}, `"docs/a.md"`},
		{"link_note", map[string]any{"note": "q1-plan", "target": `docs\a.md`}, "backslash"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "javascript://alert(1)"}, "not an http or https URL"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "ftp://example.com/x"}, "not an http or https URL"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "https:///nohost"}, "no host"},
		{"link_note", map[string]any{"note": "q1-plan", "target": "https://" + huge}, "at most 2000"},
		{"link_note", map[string]any{"note": "nope", "target": "docs/a.md"}, "no note"},
		{"link_note", map[string]any{"note": "q1-plan"}, "target"},
		{"delete_note", map[string]any{"note": "nope"}, "no note"},
		{"delete_note", map[string]any{"note": sqlish}, "no note"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.80v): message %q does not mention %q", c.tool, c.args, clip(msg, 300), c.want)
				}
				if after := servicetest.HashDB(t, path); after != before {
					t.Fatalf("%s(%.80v) changed the database", c.tool, c.args)
				}
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "Ideas", "title": "Side project", "body": "A tiny *wiki*."})
	servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "ideas", "title": "Side project"})
	servicetest.Call[UpdateNoteOut](t, cs, "update_note", map[string]any{"note": "side-project", "append": "Use SQLite."})
	servicetest.Call[LinkNoteOut](t, cs, "link_note", map[string]any{"note": "side-project", "target": "code/wiki/README.md"})
	servicetest.Call[PinNoteOut](t, cs, "pin_note", map[string]any{"note": "side-project-2"})
	servicetest.Call[DeleteNoteOut](t, cs, "delete_note", map[string]any{"note": "groceries"})
	servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "Personal", "title": "Groceries"})
	servicetest.Call[ListNotesOut](t, cs, "list_notes", nil)
	servicetest.CallError(t, cs, "link_note", map[string]any{"note": "side-project", "target": "/abs"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	if servicetest.HashDB(t, a) != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	orig := servicetest.HashDB(t, a)
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	if ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b); ha != hb {
		t.Fatalf("same calls on equal worlds gave different databases: %s vs %s", ha, hb)
	} else if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"list_notebooks": {},
		"list_notes":     {"notebook", "limit", "cursor"},
		"search_notes":   {"query", "limit"},
		"read_note":      {"note"},
		"create_note":    {"notebook", "title", "body"},
		"update_note":    {"note", "title", "body", "append"},
		"pin_note":       {"note", "unpin"},
		"link_note":      {"note", "target", "remove"},
		"delete_note":    {"note"},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range want[tool.Name] {
			if prop, ok := schema.Properties[p]; !ok || prop.Description == "" {
				t.Errorf("%s: property %s missing or without description: %s", tool.Name, p, raw)
			}
		}
		if schema.Type != "object" || len(schema.Properties) != len(want[tool.Name]) {
			t.Errorf("%s: schema %s", tool.Name, raw)
		}
		readOnly := strings.HasPrefix(tool.Name, "list_") || tool.Name == "search_notes" || tool.Name == "read_note"
		if tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, tool.Annotations.ReadOnlyHint)
		}
	}
	if len(names) != len(want) {
		t.Errorf("tools = %v", names)
	}
}

func TestNoteResource(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "notes://note/{note}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: NoteURI("lisbon-packing")})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	for _, want := range []string{"# Lisbon packing list\n", "Notebook: Personal", "· Pinned", "- passport\n", "Links:\n- https://www.visitlisboa.com/en\n- travel/lisbon/booking.pdf\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("resource text lacks %q:\n%s", want, text)
		}
	}
	if res.Contents[0].MIMEType != "text/markdown" {
		t.Errorf("mime = %q", res.Contents[0].MIMEType)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: NoteURI("nope")}); err == nil {
		t.Error("unknown note resource: no error")
	}
}

func TestNew(t *testing.T) {
	path := newWorld(t)
	partial := filepath.Join(t.TempDir(), "partial.sqlite")
	state.ExecTest(t, partial, "CREATE TABLE notebooks (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock(), Self: "A"}, "DBPath is required"},
		{Options{DBPath: path, Self: "A"}, "Clock is required"},
		{Options{DBPath: path, Clock: TestClock()}, "Self is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock(), Self: "A"}, "no such file"},
		{Options{DBPath: partial, Clock: TestClock(), Self: "A"}, `table "notes" does not exist`},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "n.sqlite")
	state.ExecTest(t, path, Schema()...)
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := state.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"notebooks": {"name"}, "notes": {"ext_id"}, "note_links": {"note_id", "target"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

// TestSynthesis applies god-mode operations to a world without a notes
// database and reads the result through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ops, err := InsertOps(
		Seed{Notebook: "Work", Title: "Q2 plan", Body: "# Q2\n\n- launch", Pinned: true, Links: []string{"docs/q2.md", "https://example.com/okr"}, CreatedAt: at},
		Seed{ExtID: "n-2", Notebook: "Work", Title: "Retro", Body: "Went well; it's fine.", CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
		Seed{Notebook: "Home", Title: "Plumber", CreatedAt: at},
	)
	if err != nil {
		t.Fatal(err)
	}
	link, err := LinkOp("n-2", "docs/retro.md")
	if err != nil {
		t.Fatal(err)
	}
	body := "Went well; it's fine.\nAction: fix CI; 'now' is fine."
	up, err := UpdateOp("n-2", nil, &body, at.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := NotebookOp("Archive")
	if err != nil {
		t.Fatal(err)
	}
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z",
		Ops: append(append([]delta.Op{CreateOp(), nb}, ops...), link, up, PinOp("plumber", true))}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst, DBName)))
	books := servicetest.Call[ListNotebooksOut](t, cs, "list_notebooks", nil)
	if want := []NotebookSummary{{"Archive", 0}, {"Home", 1}, {"Work", 2}}; !reflect.DeepEqual(books.Notebooks, want) {
		t.Errorf("notebooks = %+v", books.Notebooks)
	}
	list := servicetest.Call[ListNotesOut](t, cs, "list_notes", nil)
	if got := noteIDs(list.Notes); !slices.Equal(got, []string{"plumber", "q2-plan", "n-2"}) {
		t.Errorf("notes = %v", got)
	}
	retro := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "n-2"})
	if retro.Body != body || retro.UpdatedAt != "2026-03-02 10:00:00" || retro.CreatedAt != "2026-03-02 08:00:00" || !slices.Equal(retro.Links, []string{"docs/retro.md"}) {
		t.Errorf("retro = %+v", retro)
	}
	q2 := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "q2-plan"})
	if !q2.Pinned || !slices.Equal(q2.Links, []string{"docs/q2.md", "https://example.com/okr"}) {
		t.Errorf("q2 = %+v", q2)
	}
	// The tools continue from the synthesized state.
	if cr := servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "work", "title": "Q2 plan"}); cr.Note.Note != "q2-plan-2" || cr.CreatedNotebook {
		t.Errorf("create after synthesis = %+v", cr)
	}

	for _, bad := range [][]Seed{
		{{Notebook: "", Title: "T", CreatedAt: at}},
		{{Notebook: "W", Title: "", CreatedAt: at}},
		{{Notebook: "W", Title: "T"}},
		{{Notebook: "W", Title: "T", CreatedAt: at, UpdatedAt: at.Add(-time.Hour)}},
		{{Notebook: "W", Title: "T", CreatedAt: at, Links: []string{"/abs"}}},
		{{Notebook: "W", Title: "T", CreatedAt: at}, {Notebook: "W", Title: "t", CreatedAt: at}},
	} {
		if _, err := InsertOps(bad...); err == nil {
			t.Errorf("InsertOps(%+v): no error", bad)
		}
	}
	if _, err := UpdateOp("x", nil, nil, at); err == nil {
		t.Error("UpdateOp without changes: no error")
	}
}

func TestTargets(t *testing.T) {
	for _, ok := range []string{"a.md", "docs/plan.md", "My Docs/plan v2.md", "http://example.com", "https://example.com/a#b"} {
		if _, err := checkTarget(ok); err != nil {
			t.Errorf("checkTarget(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{".", "..", "./a", "a/", "/a", "a/./b", "mailto:x@y.z://", "https://exa mple.com", "file:///etc/passwd"} {
		if _, err := checkTarget(bad); err == nil {
			t.Errorf("checkTarget(%q) ok", bad)
		}
	}
	c := cursor{pinned: true, updatedAt: "2026-03-01 09:00:00", note: "x"}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
}

// TestMissingDatabase: a vanished file is an internal tool error, and the
// service does not create an empty database in its place.
func TestMissingDatabase(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "create_note", map[string]any{"notebook": "W", "title": "T"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_notebooks", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}
