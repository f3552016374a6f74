package payments_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 transactions, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, payments.Compiled(), []string{
		`INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee, memo, category)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'tx-b' || i, 1 + i % 2, datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), -(i * 37 % 10000) - 1,
			'Coffee shop ' || (i % 30), 'morning coffee ' || i, 'dining'
		FROM c`,
	}, []servicetest.PageCase{
		{Name: "list_transactions", Tool: "list_transactions", Args: map[string]any{"account": "chk-main"}, Want: "next_cursor"},
		{Name: "search_transactions", Tool: "search_transactions", Args: map[string]any{"query": "coffee"}, Want: "\"more\":true"},
		{Name: "account", URI: "payments://account/chk-main", Want: "the latest 50 of"},
	})
}
