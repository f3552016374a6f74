package payments_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 transactions, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(payments.TestSQL(),
		`INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee, memo, category)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'tx-b' || i, 1 + i % 2, datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), -(i * 37 % 10000) - 1,
			'Coffee shop ' || (i % 30), 'morning coffee ' || i, 'dining'
		FROM c`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"payments": sql}})
	spec, err := service.Lookup("payments")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: payments.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
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
		{"list_transactions", "list_transactions", map[string]any{"account": "chk-main"}, "", "next_cursor"},
		{"search_transactions", "search_transactions", map[string]any{"query": "coffee"}, "", "\"more\":true"},
		{"account", "", nil, "payments://account/chk-main", "the latest 50 of"},
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
