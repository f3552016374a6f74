package mail_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 mails, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(mail.TestSQL(),
		`INSERT INTO mails (id, ext_id, folder_id, thread_key, from_addr, to_addrs, cc_addrs, subject, body, sent_at, is_read, is_starred)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, printf('m-%06d', i), CASE WHEN i % 5 = 0 THEN 3 ELSE 1 END, 't-bench-' || (i / 4), 'sender' || (i % 50) || '@example.com',
			'alex@example.com, sam@example.com', '', 'Weekly report ' || i,
			'Hello Alex, ' || replace(hex(zeroblob(30)), '00', 'the numbers look fine, ') || 'and here is the report ' || i || '.',
			datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), i % 2, 0
		FROM c`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"mail": sql}})
	spec, err := service.Lookup("mail")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: mail.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
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
		{"list_mails", "list_mails", map[string]any{}, "", "next_cursor"},
		{"list_mails_unread", "list_mails", map[string]any{"unread_only": true}, "", "next_cursor"},
		{"search_mails", "search_mails", map[string]any{"query": "report"}, "", "\"more\":true"},
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
