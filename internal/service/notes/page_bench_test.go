package notes_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 notes, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(notes.TestSQL(),
		`INSERT INTO notes (id, ext_id, notebook_id, title, body, created_at, updated_at, pinned)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'bench-' || i, 1 + i % 3, 'Weekly plan ' || i,
			'# Week ' || i || char(10) || char(10) || 'The plan for the week: ' || replace(hex(zeroblob(30)), '00', 'review the budget, call the bank, ') || 'and rest.',
			datetime('2025-06-01', '+' || i || ' hours'), datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), i % 100 = 0
		FROM c`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"notes": sql}})
	spec, err := service.Lookup("notes")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: notes.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
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
		{"list_notes", "list_notes", map[string]any{}, "", "next_cursor"},
		{"list_notes_work", "list_notes", map[string]any{"notebook": "Work"}, "", "next_cursor"},
		{"search_notes", "search_notes", map[string]any{"query": "budget"}, "", "\"more\":true"},
		{"search_notes_5", "search_notes", map[string]any{"query": "budget", "limit": 5}, "", "\"more\":true"},
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
