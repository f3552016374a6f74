package tasks

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose tasks database holds TestSQL and returns the
// database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func ids(ts []Todo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Todo)
	}
	return out
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			projects := servicetest.Call[ListProjectsOut](t, cs, "list_projects", nil)
			want := []Project{{Name: "Home", Open: 3}, {Name: "Work", Open: 2, Overdue: 1, Done: 1}}
			if projects.Today != "2026-03-01" || !slices.Equal(projects.Projects, want) {
				t.Fatalf("list_projects = %+v", projects)
			}
			all := servicetest.Call[ListProjectsOut](t, cs, "list_projects", map[string]any{"include_archived": true})
			if len(all.Projects) != 3 || all.Projects[1] != (Project{Name: "Old", Archived: true, Open: 1}) {
				t.Errorf("with archived = %+v", all.Projects)
			}

			// list_todos: due date, then priority, then id; undated last.
			list := servicetest.Call[ListTodosOut](t, cs, "list_todos", nil)
			if got, want := ids(list.Todos), []string{"todo-1", "todo-3", "t-dentist", "todo-2", "todo-4", "todo-8"}; !slices.Equal(got, want) {
				t.Fatalf("list_todos = %v, want %v", got, want)
			}
			if first := list.Todos[0]; !first.Overdue || first.Project != "Work" || first.DueOn != "2026-02-27" || first.Priority != "high" {
				t.Errorf("first = %+v", first)
			}
			if list.Todos[1].Overdue || list.Todos[4].DueOn != "" || list.NextCursor != "" {
				t.Errorf("due today counted overdue, or undated has a date: %+v", list)
			}
			var paged []string
			cursor := ""
			for range 10 {
				page := servicetest.Call[ListTodosOut](t, cs, "list_todos", map[string]any{"limit": 4, "cursor": cursor, "status": "all"})
				paged = append(paged, ids(page.Todos)...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if want := []string{"todo-5", "todo-1", "todo-3", "t-dentist", "todo-2", "todo-4", "todo-8"}; !slices.Equal(paged, want) {
				t.Errorf("pages = %v, want %v", paged, want)
			}
			work := servicetest.Call[ListTodosOut](t, cs, "list_todos", map[string]any{"project": "Work", "status": "done"})
			if got := ids(work.Todos); !slices.Equal(got, []string{"todo-5"}) || work.Todos[0].CompletedAt != "2026-02-19 10:00:00" {
				t.Errorf("done in Work = %+v", work.Todos)
			}
			due := servicetest.Call[ListTodosOut](t, cs, "list_todos", map[string]any{"due_before": "2026-03-02"})
			if got := ids(due.Todos); !slices.Equal(got, []string{"todo-1", "todo-3"}) {
				t.Errorf("due before 03-02 = %v", got)
			}

			// search_todos: title, notes, project; plain text.
			if got := ids(servicetest.Call[SearchTodosOut](t, cs, "search_todos", map[string]any{"query": "INVOICE"}).Todos); !slices.Equal(got, []string{"todo-1"}) {
				t.Errorf("search invoice = %v", got)
			}
			if got := ids(servicetest.Call[SearchTodosOut](t, cs, "search_todos", map[string]any{"query": "50%"}).Todos); !slices.Equal(got, []string{"todo-4"}) {
				t.Errorf("search 50%% = %v", got)
			}
			if got := ids(servicetest.Call[SearchTodosOut](t, cs, "search_todos", map[string]any{"query": "work", "status": "open"}).Todos); !slices.Equal(got, []string{"todo-1", "todo-2"}) {
				t.Errorf("search work = %v", got)
			}
			if got := servicetest.Call[SearchTodosOut](t, cs, "search_todos", map[string]any{"query": "'; DROP TABLE todos; --"}); len(got.Todos) != 0 {
				t.Errorf("SQL-looking search = %v", got)
			}
			if got := servicetest.Call[SearchTodosOut](t, cs, "search_todos", map[string]any{"query": "o", "limit": 2}); len(got.Todos) != 2 || !got.More {
				t.Errorf("limited search = %+v", got)
			}

			// create_todo: the default id todo-8 is taken, so todo-8-2.
			created := servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "Renew passport", "project": "Home", "due_on": "2026-04-01", "priority": "high", "notes": "photo booth"})
			wantTodo := Todo{Todo: "todo-8-2", Project: "Home", Title: "Renew passport", Notes: "photo booth", DueOn: "2026-04-01", Priority: "high", Status: "open", CreatedAt: "2026-03-01 09:00:00"}
			if created.Todo != wantTodo {
				t.Errorf("created = %+v, want %+v", created.Todo, wantTodo)
			}
			plain := servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "Water plants", "project": "Home"})
			if plain.Todo.Todo != "todo-9" || plain.Todo.Priority != "medium" || plain.Todo.DueOn != "" {
				t.Errorf("plain = %+v", plain.Todo)
			}

			// update_todo: only the fields given; "" clears the due date.
			upd := servicetest.Call[TodoOut](t, cs, "update_todo", map[string]any{"todo": "todo-1", "due_on": "", "priority": "low", "project": "Home"})
			if u := upd.Todo; u.DueOn != "" || u.Priority != "low" || u.Project != "Home" || u.Title != "Send invoice to ACME" || u.Notes != "January hours" || u.Overdue {
				t.Errorf("updated = %+v", u)
			}
			upd = servicetest.Call[TodoOut](t, cs, "update_todo", map[string]any{"todo": "todo-1", "title": "Send invoice", "notes": "", "due_on": "2026-02-28"})
			if u := upd.Todo; u.Title != "Send invoice" || u.Notes != "" || !u.Overdue {
				t.Errorf("updated again = %+v", u)
			}

			// complete, reopen, delete.
			done := servicetest.Call[TodoOut](t, cs, "complete_todo", map[string]any{"todo": "todo-3"})
			if done.Todo.Status != "done" || done.Todo.CompletedAt != "2026-03-01 09:00:00" {
				t.Errorf("completed = %+v", done.Todo)
			}
			reopened := servicetest.Call[TodoOut](t, cs, "reopen_todo", map[string]any{"todo": "todo-5"})
			if reopened.Todo.Status != "open" || reopened.Todo.CompletedAt != "" || !reopened.Todo.Overdue {
				t.Errorf("reopened = %+v", reopened.Todo)
			}
			deleted := servicetest.Call[TodoOut](t, cs, "delete_todo", map[string]any{"todo": "t-dentist"})
			if deleted.Todo.Title != "Call dentist" {
				t.Errorf("deleted = %+v", deleted.Todo)
			}
			servicetest.CallError(t, cs, "complete_todo", map[string]any{"todo": "t-dentist"})

			// projects.
			np := servicetest.Call[ProjectOut](t, cs, "create_project", map[string]any{"name": "  Garden "})
			if np.Project != (Project{Name: "Garden"}) {
				t.Errorf("new project = %+v", np)
			}
			servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "Plant tulips", "project": "Garden"})
			arch := servicetest.Call[ProjectOut](t, cs, "archive_project", map[string]any{"project": "Work"})
			if arch.Project != (Project{Name: "Work", Archived: true, Open: 2, Overdue: 1}) {
				t.Errorf("archived = %+v", arch.Project)
			}
			projects = servicetest.Call[ListProjectsOut](t, cs, "list_projects", nil)
			if len(projects.Projects) != 2 || projects.Projects[0].Name != "Garden" || projects.Projects[1] != (Project{Name: "Home", Open: 4, Overdue: 1, Done: 1}) {
				t.Errorf("projects after = %+v", projects.Projects)
			}
		})
	}
}

func TestBadInputsChangeNothing(t *testing.T) {
	long := strings.Repeat("x", MaxNotesChars+1)
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_projects", map[string]any{"include_archived": "yes"}, "include_archived"},
		{"list_todos", map[string]any{"project": "Nope"}, "call list_projects"},
		{"list_todos", map[string]any{"project": "work"}, `did you mean project "Work"`},
		{"list_todos", map[string]any{"status": "closed"}, "open, done, all"},
		{"list_todos", map[string]any{"due_before": "2026-02-30"}, "YYYY-MM-DD"},
		{"list_todos", map[string]any{"due_before": "03/01/2026"}, "YYYY-MM-DD"},
		{"list_todos", map[string]any{"limit": 0.5}, "limit"},
		{"list_todos", map[string]any{"limit": 101}, "between 1 and 100"},
		{"list_todos", map[string]any{"limit": "ten"}, "limit"},
		{"list_todos", map[string]any{"cursor": "garbage"}, "pass next_cursor"},
		{"list_todos", map[string]any{"cursor": cursor{due: "x", rank: 1, id: 0}.String()}, "pass next_cursor"},
		{"search_todos", map[string]any{"query": " "}, "query is empty"},
		{"search_todos", map[string]any{"query": strings.Repeat("q", MaxQueryChars+1)}, "at most 200"},
		{"search_todos", map[string]any{"query": "x", "status": 3}, "status"},
		{"create_todo", map[string]any{"title": "", "project": "Home"}, "title is empty"},
		{"create_todo", map[string]any{"title": "x", "project": "Nope"}, "create_project"},
		{"create_todo", map[string]any{"title": "x", "project": "Old"}, "archived"},
		{"create_todo", map[string]any{"title": "x", "project": "Home", "due_on": "tomorrow"}, "YYYY-MM-DD"},
		{"create_todo", map[string]any{"title": "x", "project": "Home", "due_on": "2026-13-01"}, "YYYY-MM-DD"},
		{"create_todo", map[string]any{"title": "x", "project": "Home", "priority": "urgent"}, "low, medium, high"},
		{"create_todo", map[string]any{"title": strings.Repeat("t", MaxTitleChars+1), "project": "Home"}, "at most 200"},
		{"create_todo", map[string]any{"title": "x", "project": "Home", "notes": long}, "at most 5000"},
		{"create_todo", map[string]any{"title": "x"}, "project"},
		{"create_todo", map[string]any{"title": 5, "project": "Home"}, "title"},
		{"create_todo", map[string]any{"title": "x", "project": "Home'; DROP TABLE todos; --"}, "no project"},
		{"create_todo", map[string]any{"title": "x", "project": "Home", "extra": true}, "extra"},
		{"update_todo", map[string]any{"todo": "todo-1"}, "nothing to change"},
		{"update_todo", map[string]any{"todo": "todo-99", "title": "x"}, "call list_todos"},
		{"update_todo", map[string]any{"todo": "TODO-1", "title": "x"}, `did you mean to-do "todo-1"`},
		{"update_todo", map[string]any{"todo": "todo-1", "title": " "}, "title is empty"},
		{"update_todo", map[string]any{"todo": "todo-1", "due_on": "2026-2-1"}, "YYYY-MM-DD"},
		{"update_todo", map[string]any{"todo": "todo-1", "project": "Old"}, "archived"},
		{"update_todo", map[string]any{"todo": "todo-1", "priority": "HIGH"}, "low, medium, high"},
		{"complete_todo", map[string]any{"todo": "todo-5"}, "already done"},
		{"complete_todo", map[string]any{"todo": ""}, "todo is required"},
		{"complete_todo", map[string]any{"todo": "call dentist"}, `did you mean to-do "t-dentist"`},
		{"complete_todo", map[string]any{"todo": strings.Repeat("z", 100000)}, "call list_todos"},
		{"reopen_todo", map[string]any{"todo": "todo-1"}, "already open"},
		{"delete_todo", map[string]any{"todo": "1 OR 1=1"}, "call list_todos"},
		{"delete_todo", map[string]any{"todo": []string{"todo-1"}}, "todo"},
		{"create_project", map[string]any{"name": "home"}, `project "Home" already exists`},
		{"create_project", map[string]any{"name": "OLD"}, "archived"},
		{"create_project", map[string]any{"name": ""}, "name is empty"},
		{"create_project", map[string]any{"name": strings.Repeat("p", MaxProjectChars+1)}, "at most 100"},
		{"create_project", map[string]any{"name": "a\x00b"}, "invalid characters"},
		{"archive_project", map[string]any{"project": "Old"}, "already archived"},
		{"archive_project", map[string]any{"project": "Nope"}, "call list_projects"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.200v): message %q does not mention %q", c.tool, c.args, msg, c.want)
				}
				if servicetest.HashDB(t, path) != before {
					t.Fatalf("%s(%.200v) changed the database", c.tool, c.args)
				}
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "A", "project": "Work", "due_on": "2026-03-03"})
	servicetest.Call[ProjectOut](t, cs, "create_project", map[string]any{"name": "Side"})
	servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "B", "project": "Side", "priority": "low"})
	servicetest.Call[TodoOut](t, cs, "update_todo", map[string]any{"todo": "todo-2", "notes": "draft first"})
	servicetest.Call[TodoOut](t, cs, "complete_todo", map[string]any{"todo": "todo-1"})
	servicetest.Call[TodoOut](t, cs, "reopen_todo", map[string]any{"todo": "todo-5"})
	servicetest.Call[TodoOut](t, cs, "delete_todo", map[string]any{"todo": "todo-4"})
	servicetest.Call[ProjectOut](t, cs, "archive_project", map[string]any{"project": "Side"})
	servicetest.Call[ListTodosOut](t, cs, "list_todos", map[string]any{"status": "all"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	orig := servicetest.HashDB(t, a)
	if orig != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b)
	if ha != hb {
		if d, err := state.Compare(context.Background(), filepath.Dir(filepath.Dir(a)), filepath.Dir(filepath.Dir(b))); err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases")
	}
	if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for p, prop := range schema.Properties {
			if prop.Description == "" {
				t.Errorf("%s: property %s has no description", tool.Name, p)
			}
		}
		if ro := tool.Annotations.ReadOnlyHint; ro != strings.HasPrefix(tool.Name, "list_") && ro != strings.HasPrefix(tool.Name, "search_") {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
	}
	slices.Sort(names)
	want := []string{"archive_project", "complete_todo", "create_project", "create_todo", "delete_todo", "list_projects", "list_todos", "reopen_todo", "search_todos", "update_todo"}
	if !slices.Equal(names, want) {
		t.Errorf("tools = %v", names)
	}
}

// TestSynthesis seeds a world with the god-mode API through a delta and reads
// it back through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	at := time.Date(2026, 2, 1, 8, 0, 0, 0, time.UTC)
	ops, err := SeedOps(
		[]SeedProject{{Name: "Errands"}, {Name: "Attic", Archived: true}},
		[]SeedTodo{
			{ID: "e-1", Project: "Errands", Title: "Post parcel", DueOn: "2026-02-28", Priority: "high", CreatedAt: at},
			{ID: "e-2", Project: "Errands", Title: "Return books", Status: "done", CreatedAt: at, CompletedAt: at.Add(time.Hour)},
			{ID: "a-1", Project: "Attic", Title: "Sort boxes", CreatedAt: at},
		})
	if err != nil {
		t.Fatal(err)
	}
	ops = append(ops, CompleteOp("a-1", at.Add(2*time.Hour)))
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-01T09:00:00Z", Ops: ops}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	path := world.DBPath(dst, DBName)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	list := servicetest.Call[ListTodosOut](t, cs, "list_todos", map[string]any{"status": "all"})
	if got := ids(list.Todos); !slices.Equal(got, []string{"e-1", "e-2", "a-1"}) {
		t.Fatalf("seeded = %v", got)
	}
	if e1 := list.Todos[0]; !e1.Overdue || e1.Project != "Errands" || e1.CreatedAt != "2026-02-01 08:00:00" {
		t.Errorf("e-1 = %+v", e1)
	}
	if a1 := list.Todos[2]; a1.Status != "done" || a1.CompletedAt != "2026-02-01 10:00:00" || a1.Project != "Attic" || a1.Priority != "medium" {
		t.Errorf("a-1 = %+v", a1)
	}
	projects := servicetest.Call[ListProjectsOut](t, cs, "list_projects", nil)
	if len(projects.Projects) != 1 || projects.Projects[0] != (Project{Name: "Errands", Open: 1, Overdue: 1, Done: 1}) {
		t.Errorf("projects = %+v", projects.Projects)
	}
	// A second day archives Errands.
	d2 := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 2, Clock: "2026-03-02T09:00:00Z", Ops: []delta.Op{ArchiveOp("Errands")}}
	dst2 := filepath.Join(t.TempDir(), "child2")
	if err := delta.ApplyCopy(ctx, dst, dst2, d2, nil); err != nil {
		t.Fatal(err)
	}
	cs2 := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst2, DBName)))
	if got := servicetest.Call[ListProjectsOut](t, cs2, "list_projects", nil); len(got.Projects) != 0 {
		t.Errorf("after archiving: %+v", got.Projects)
	}

	for _, bad := range []SeedTodo{
		{ID: "", Project: "P", Title: "t", CreatedAt: at},
		{ID: "x", Project: "P", Title: "t", CreatedAt: at, DueOn: "2026-02-30"},
		{ID: "x", Project: "P", Title: "t", CreatedAt: at, Priority: "urgent"},
		{ID: "x", Project: "P", Title: "t", CreatedAt: at, Status: "done"},
		{ID: "x", Project: "P", Title: "t", CreatedAt: at, CompletedAt: at},
		{ID: "x", Project: "P", Title: "t"},
		{ID: "x", Title: "t", CreatedAt: at},
	} {
		if _, err := TodoOp(bad); err == nil {
			t.Errorf("TodoOp(%+v): no error", bad)
		}
	}
	if _, err := ProjectOp(SeedProject{}); err == nil {
		t.Error("ProjectOp with no name: no error")
	}
}

// TestReplacedDatabase: an instance reset replaces the file between calls.
func TestReplacedDatabase(t *testing.T) {
	path := newWorld(t)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	MakeTestDB(t, pristine)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.Call[TodoOut](t, cs, "delete_todo", map[string]any{"todo": "todo-1"})
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.WriteFileAtomic(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	servicetest.Call[TodoOut](t, cs, "complete_todo", map[string]any{"todo": "todo-1"})
}

func TestMissingDatabase(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "create_todo", map[string]any{"title": "x", "project": "Home"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_todos", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}

func TestConcurrentCreates(t *testing.T) {
	path := newWorld(t)
	s := newService(t, path)
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			got[i] = servicetest.Call[TodoOut](t, cs, "create_todo", map[string]any{"title": "c", "project": "Home"}).Todo.Todo
		})
	}
	wg.Wait()
	slices.Sort(got)
	if len(slices.Compact(slices.Clone(got))) != n {
		t.Errorf("ids = %v, want %d distinct", got, n)
	}
}

func TestNew(t *testing.T) {
	path := newWorld(t)
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	state.ExecTest(t, empty, "CREATE TABLE projects (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock()}, "DBPath is required"},
		{Options{DBPath: path}, "Clock is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock()}, "no such file"},
		{Options{DBPath: empty, Clock: TestClock()}, "no column archived"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sqlite")
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
	want := map[string][]string{"projects": {"name"}, "todos": {"ext_id"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

func TestCursorAndDate(t *testing.T) {
	c := cursor{due: "2026-03-05", rank: 1, id: 7}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
	for _, bad := range []string{"", "!!", "YWJj"} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) ok", bad)
		}
	}
	for d, ok := range map[string]bool{"2026-03-01": true, "2024-02-29": true, "2026-02-29": false, "2026-3-1": false, "": false, "2026-03-01T00:00:00Z": false} {
		if _, got := parseDate(d); got != ok {
			t.Errorf("parseDate(%q) = %v", d, got)
		}
	}
}
