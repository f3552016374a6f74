package tasks_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/service/tasks"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 to-dos, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, tasks.Compiled(), []string{
		`INSERT INTO todos (id, ext_id, project_id, title, notes, due_on, priority, status, created_at, completed_at)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'todo-' || i, 1 + i % 2, 'Bench task ' || i, 'send the invoice ' || i,
			CASE WHEN i % 7 = 0 THEN NULL ELSE date('2026-01-01', '+' || (i % 120) || ' days') END,
			CASE i % 3 WHEN 0 THEN 'high' WHEN 1 THEN 'medium' ELSE 'low' END, CASE WHEN i % 5 = 0 THEN 'done' ELSE 'open' END,
			'2026-01-01 10:00:00', CASE WHEN i % 5 = 0 THEN '2026-02-01 10:00:00' END
		FROM c`,
	}, []servicetest.PageCase{
		{Name: "list_todos", Tool: "list_todos", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_todos_all", Tool: "list_todos", Args: map[string]any{"status": "all"}, Want: "next_cursor"},
		{Name: "list_todos_home", Tool: "list_todos", Args: map[string]any{"project": "Home"}, Want: "next_cursor"},
		{Name: "list_todos_old", Tool: "list_todos", Args: map[string]any{"project": "Old"}, Want: "todo-8"},
		{Name: "search_todos", Tool: "search_todos", Args: map[string]any{"query": "invoice"}, Want: "\"more\":true"},
		{Name: "project", URI: "tasks://project/Home", Want: "Showing the first 200"},
	})
}
