package tasks_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/service/tasks"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 to-dos, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(tasks.TestSQL(),
		`INSERT INTO todos (id, ext_id, project_id, title, notes, due_on, priority, status, created_at, completed_at)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'todo-' || i, 1 + i % 2, 'Bench task ' || i, 'send the invoice ' || i,
			CASE WHEN i % 7 = 0 THEN NULL ELSE date('2026-01-01', '+' || (i % 120) || ' days') END,
			CASE i % 3 WHEN 0 THEN 'high' WHEN 1 THEN 'medium' ELSE 'low' END, CASE WHEN i % 5 = 0 THEN 'done' ELSE 'open' END,
			'2026-01-01 10:00:00', CASE WHEN i % 5 = 0 THEN '2026-02-01 10:00:00' END
		FROM c`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"tasks": sql}})
	spec, err := service.Lookup("tasks")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: tasks.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
	if err != nil {
		b.Fatal(err)
	}
	cs := servicetest.ConnectMemory(b, svc)
	ctx := context.Background()
	for _, c := range []struct {
		name, tool string
		args       map[string]any
		uri, want  string
	}{
		{"list_todos", "list_todos", map[string]any{}, "", "next_cursor"},
		{"list_todos_all", "list_todos", map[string]any{"status": "all"}, "", "next_cursor"},
		{"list_todos_home", "list_todos", map[string]any{"project": "Home"}, "", "next_cursor"},
		{"list_todos_old", "list_todos", map[string]any{"project": "Old"}, "", "todo-8"},
		{"search_todos", "search_todos", map[string]any{"query": "invoice"}, "", "\"more\":true"},
		{"project", "", nil, "tasks://project/Home", "Showing the first 200"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				var text string
				if c.uri != "" {
					res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: c.uri})
					if err != nil {
						b.Fatal(err)
					}
					text = res.Contents[0].Text
				} else {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
					if err != nil {
						b.Fatal(err)
					}
					text = servicetest.ResultText(res)
					if res.IsError {
						b.Fatalf("%s: %s", c.tool, text)
					}
				}
				if !strings.Contains(text, c.want) {
					b.Fatalf("%s: %.300s has no %q", c.name, text, c.want)
				}
			}
		})
	}
}
