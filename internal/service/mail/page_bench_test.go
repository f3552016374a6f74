package mail_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 mails, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, mail.Compiled(), []string{
		`INSERT INTO mails (id, ext_id, folder_id, thread_key, from_addr, to_addrs, cc_addrs, subject, body, sent_at, is_read, is_starred)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, printf('m-%06d', i), CASE WHEN i % 5 = 0 THEN 3 ELSE 1 END, 't-bench-' || (i / 4), 'sender' || (i % 50) || '@example.com',
			'alex@example.com, sam@example.com', '', 'Weekly report ' || i,
			'Hello Alex, ' || replace(hex(zeroblob(30)), '00', 'the numbers look fine, ') || 'and here is the report ' || i || '.',
			datetime('2025-06-01', '+' || (i * 7 % 3000) || ' hours'), i % 2, 0
		FROM c`,
	}, []servicetest.PageCase{
		{Name: "list_mails", Tool: "list_mails", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_mails_unread", Tool: "list_mails", Args: map[string]any{"unread_only": true}, Want: "next_cursor"},
		{Name: "search_mails", Tool: "search_mails", Args: map[string]any{"query": "report"}, Want: "\"more\":true"},
	})
}
