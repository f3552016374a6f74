package tasks

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
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

func newService(t testing.TB, path string) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{DBPath: path, Clock: TestClock(), Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(ts []Todo) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Todo)
	}
	return out
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

func TestProjectResourceBound(t *testing.T) {
	path := newWorld(t)
	state.ExecTest(t, path, `INSERT INTO projects (id, name, archived) VALUES (4, 'Big', 0)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250)
INSERT INTO todos (id, ext_id, project_id, title, created_at) SELECT 100 + i, 'big-' || i, 4, 'Step ' || i, '2026-02-01 09:00:00' FROM n`)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	uri := "tasks://project/Big"
	text := servicetest.ReadResource(t, cs, uri, "text/markdown")
	servicetest.WantText(t, uri, text, "Open: 250 ", `Showing the first 200 of 250 to-dos; list_todos with project "Big" and status all pages through them all.`, "(big-200)")
	if n := strings.Count(text, "\n- [ ] "); n != 200 {
		t.Errorf("%d to-dos listed, want 200", n)
	}
	if strings.Contains(text, "(big-201)") {
		t.Errorf("to-do big-201 listed past the bound")
	}
}

// TestDatesAndCursors: list_todos reads dates and cursors as the Go
// service did (time.Parse, strconv): a real calendar day, zero padded; a
// cursor's rank 0 to 2 and id from 1, with an optional sign.
func TestDatesAndCursors(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	for d, ok := range map[string]bool{"2026-03-01": true, "2024-02-29": true, "2026-02-29": false, "2026-3-1": false, "2026-03-01T00:00:00Z": false, " 2026-03-01": false, "20260301": false} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_todos", Arguments: map[string]any{"due_before": d}})
		if err != nil || res.IsError == ok {
			t.Errorf("due_before %q: %v %s, want ok %v", d, err, servicetest.ResultText(res), ok)
		}
	}
	for fields, ok := range map[[3]string]bool{
		{"2026-03-05", "1", "7"}: true, {"2026-03-05", "+1", "+7"}: true, {"2026-03-05", "-0", "007"}: true,
		{"", "1", "7"}: false, {"x", "3", "7"}: false, {"x", "-1", "7"}: false, {"x", "1", "0"}: false, {"x", "1", "-7"}: false,
		{"x", "1", "++7"}: false, {"x", "", "7"}: false, {"x", "1", "7a"}: false, {"x", "1", "99999999999999999999"}: false,
	} {
		cursor := dbtool.EncodeCursor("t1", fields[:]...)
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "list_todos", Arguments: map[string]any{"cursor": cursor}})
		if err != nil || res.IsError == ok {
			t.Errorf("cursor %q: %v %s, want ok %v", fields, err, servicetest.ResultText(res), ok)
		}
	}
}

// The tools' results as the tests read them.
type (
	Todo struct {
		Todo        string `json:"todo"`
		Project     string `json:"project"`
		Priority    string `json:"priority"`
		Status      string `json:"status"`
		Overdue     bool   `json:"overdue"`
		CreatedAt   string `json:"created_at"`
		CompletedAt string `json:"completed_at"`
	}
	ListTodosOut struct {
		Todos []Todo `json:"todos"`
	}
	TodoOut struct {
		Todo Todo `json:"todo"`
	}
	Project struct {
		Name     string `json:"name"`
		Archived bool   `json:"archived"`
		Open     int    `json:"open"`
		Overdue  int    `json:"overdue"`
		Done     int    `json:"done"`
	}
	ListProjectsOut struct {
		Projects []Project `json:"projects"`
	}
)
