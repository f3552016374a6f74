package contacts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 3000 contacts, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(contacts.TestSQL(),
		`INSERT INTO contacts (id, ext_id, name, email, phone, company, role, notes, updated_at)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 3099)
		SELECT i, 'person-' || i, 'Person ' || (i * 7 % 3000), 'person' || i || '@example.com', '+1 415-555-' || (1000 + i),
			'Company ' || (i % 40), 'Engineer', 'Met at the offsite.', '2026-02-01 10:00:00'
		FROM c`,
		`INSERT INTO contact_tags (contact_id, tag) SELECT id, 'friend' FROM contacts WHERE id >= 100 AND id % 2 = 0`,
		`INSERT INTO contact_tags (contact_id, tag) SELECT id, 'work' FROM contacts WHERE id >= 100 AND id % 3 = 0`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"contacts": sql}})
	spec, err := service.Lookup("contacts")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: contacts.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
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
		{"list_contacts", "list_contacts", map[string]any{}, "", "next_cursor"},
		{"list_contacts_friend", "list_contacts", map[string]any{"tag": "friend"}, "", "next_cursor"},
		{"search_contacts", "search_contacts", map[string]any{"query": "example.com"}, "", "\"more\":true"},
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
