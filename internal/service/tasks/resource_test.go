package tasks

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

func TestResources(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.WantTemplates(t, cs, "text/markdown", "tasks://project/{project}", "tasks://todo/{todo}")
	before := servicetest.HashDB(t, path)

	uri := ProjectURI("Work")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"),
		"# Work\n",
		"Today: 2026-03-01 · Open: 2 · Overdue: 1 · Done: 1\n",
		"- [ ] Send invoice to ACME (todo-1) · due 2026-02-27 · overdue · priority high\n  Notes: January hours\n- [ ] Prepare Q1 report (todo-2) · due 2026-03-05 · priority medium\n",
		"- [x] Book flights to Lisbon (todo-5) · due 2026-02-20 · priority high · done 2026-02-19 10:00:00\n")
	uri = ProjectURI("Old")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"), "# Old\n", "Archived: takes no new to-dos.", "- [ ] Archive old files (todo-8) · priority low\n")
	uri = TodoURI("t-dentist")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"),
		"# Call dentist\n",
		"To-do: t-dentist · Project: Home · Status: open · Due: 2026-03-05 · Priority: high · Created: 2026-02-25 08:00:00\n",
		"\nDr. O'Neil\n")
	uri = TodoURI("todo-1")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"), "Status: open · Overdue (today is 2026-03-01) · Due: 2026-02-27")
	uri = TodoURI("todo-5")
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"), "Status: done", "Completed: 2026-02-19 10:00:00")

	for _, uri := range []string{
		ProjectURI("Nope"), ProjectURI("work"), TodoURI("todo-99"), TodoURI("TODO-1"), // unknown
		"tasks://project/", "tasks://todo/", "tasks://project/a/b", "tasks://todo/%zz", "tasks://task/todo-1", "notes://note/todo-1", // malformed
	} {
		servicetest.WantNotFound(t, cs, uri)
	}
	if after := servicetest.HashDB(t, path); after != before {
		t.Errorf("reading resources changed the database: %s -> %s", before, after)
	}

	// A name with characters url.PathEscape keeps still reads.
	name := "R&D + Ops's (2026)/Q1"
	servicetest.Call[ProjectOut](t, cs, "create_project", ProjectIn{Name: name})
	uri = ProjectURI(name)
	servicetest.WantText(t, uri, servicetest.ReadResource(t, cs, uri, "text/markdown"), "# "+name+"\n", "No to-dos.\n")
}

func TestResourceInternalError(t *testing.T) {
	path := newWorld(t)
	var logs bytes.Buffer
	s, err := New(Options{DBPath: path, Clock: TestClock(), Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{ProjectURI("Work"), TodoURI("todo-1")} {
		_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
		if err == nil || !strings.Contains(err.Error(), "internal error in the tasks service") || strings.Contains(err.Error(), path) {
			t.Errorf("read %s with the database gone: %v", uri, err)
		}
	}
	if !strings.Contains(logs.String(), "tasks resource failed") || !strings.Contains(logs.String(), "db="+path) {
		t.Errorf("logs = %s", logs.String())
	}
}

func TestProjectResourceBound(t *testing.T) {
	path := newWorld(t)
	state.ExecTest(t, path, `INSERT INTO projects (id, name, archived) VALUES (4, 'Big', 0)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 250)
INSERT INTO todos (id, ext_id, project_id, title, created_at) SELECT 100 + i, 'big-' || i, 4, 'Step ' || i, '2026-02-01 09:00:00' FROM n`)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	uri := ProjectURI("Big")
	text := servicetest.ReadResource(t, cs, uri, "text/markdown")
	servicetest.WantText(t, uri, text, "Open: 250 ", `Showing the first 200 of 250 to-dos; list_todos with project "Big" and status all pages through them all.`, "(big-200)")
	if n := strings.Count(text, "\n- [ ] "); n != ResourceTodos {
		t.Errorf("%d to-dos listed, want %d", n, ResourceTodos)
	}
	if strings.Contains(text, "(big-201)") {
		t.Errorf("to-do big-201 listed past the bound")
	}
}
