package support_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/service/support"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 tickets, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, support.Compiled(), []string{
		`INSERT INTO tickets (id, ext_id, order_no, sku, kind, subject, status, opened_at, updated_at)
		WITH RECURSIVE c(i) AS (SELECT 2 UNION ALL SELECT i + 1 FROM c WHERE i < 3001)
		SELECT i, 'T-' || (1000 + i), 'SO-1001', 'MUG-01', 'question', 'Question ' || i,
			CASE i % 4 WHEN 0 THEN 'open' WHEN 1 THEN 'waiting' WHEN 2 THEN 'resolved' ELSE 'closed' END,
			datetime('2025-06-01', '+' || i || ' hours'), datetime('2025-06-01', '+' || (i + 5) || ' hours')
		FROM c`,
	}, []servicetest.PageCase{
		{Name: "list_tickets", Tool: "list_tickets", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_tickets_open", Tool: "list_tickets", Args: map[string]any{"status": "open"}, Want: "next_cursor"},
	})
}
