package notes_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 notes, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, notes.Compiled(), []string{
		`INSERT INTO notes (id, ext_id, notebook_id, title, body, created_at, updated_at, pinned)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'bench-' || i, 1 + i % 3, 'Weekly plan ' || i,
			'# Week ' || i || char(10) || char(10) || 'The plan for the week: ' || replace(hex(zeroblob(30)), '00', 'review the budget, call the bank, ') || 'and rest.',
			datetime('2025-06-01', '+' || i || ' hours'), datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), i % 100 = 0
		FROM c`,
	}, []servicetest.PageCase{
		{Name: "list_notes", Tool: "list_notes", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_notes_work", Tool: "list_notes", Args: map[string]any{"notebook": "Work"}, Want: "next_cursor"},
		{Name: "search_notes", Tool: "search_notes", Args: map[string]any{"query": "budget"}, Want: "\"more\":true"},
		{Name: "search_notes_5", Tool: "search_notes", Args: map[string]any{"query": "budget", "limit": 5}, Want: "\"more\":true"},
	})
}
