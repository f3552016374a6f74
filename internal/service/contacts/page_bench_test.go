package contacts_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 contacts, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, contacts.Compiled(), []string{
		`INSERT INTO contacts (id, ext_id, name, email, phone, company, role, notes, updated_at)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'person-' || i, 'Person ' || (i * 7 % 3000), 'person' || i || '@example.com', '+1 415-555-' || (1000 + i),
			'Company ' || (i % 40), 'Engineer', 'Met at the offsite.', '2026-02-01 10:00:00'
		FROM c`,
		`INSERT INTO contact_tags (contact_id, tag) SELECT id, 'friend' FROM contacts WHERE id >= 100 AND id % 2 = 0`,
		`INSERT INTO contact_tags (contact_id, tag) SELECT id, 'work' FROM contacts WHERE id >= 100 AND id % 3 = 0`,
	}, []servicetest.PageCase{
		{Name: "list_contacts", Tool: "list_contacts", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_contacts_friend", Tool: "list_contacts", Args: map[string]any{"tag": "friend"}, Want: "next_cursor"},
		{Name: "search_contacts", Tool: "search_contacts", Args: map[string]any{"query": "example.com"}, Want: "\"more\":true"},
	})
}
