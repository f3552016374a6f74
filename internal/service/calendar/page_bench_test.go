package calendar_test

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 2000 events, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	sql := append(calendar.TestSQL(),
		`INSERT INTO events (id, ext_id, title, location, starts_at, ends_at, notes, organizer, recurrence, status)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 2099)
		SELECT i, 'evt-b' || i, 'Meeting ' || i, 'Room ' || (i % 9), s, datetime(s, '+30 minutes'), 'Agenda: the plan.',
			CASE WHEN i % 3 = 0 THEN 'Alex' ELSE 'Maya Chen' END, CASE WHEN i % 10 = 0 THEN 'FREQ=DAILY;COUNT=5' ELSE '' END, 'confirmed'
		FROM (SELECT i, datetime('2026-02-20 08:00:00', '+' || (i * 13 % 25920) || ' minutes') AS s FROM c)`,
		`INSERT INTO invitations (event_id, guest, response) SELECT id, 'Alex', 'accepted' FROM events WHERE id >= 100 AND id % 3 <> 0`,
	)
	dir := state.MakeTestWorld(b, b.TempDir(), state.TestWorld{SQL: map[string][]string{"calendar": sql}})
	spec, err := service.Lookup("calendar")
	if err != nil {
		b.Fatal(err)
	}
	svc, err := spec.Open(service.Options{WorldDir: dir, Clock: calendar.TestClock(), Self: "Alex", SelfAddress: "alex@example.com", Ephemeral: true})
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
		{"list_events", "list_events", map[string]any{}, "", "next_cursor"},
		{"list_events_3weeks", "list_events", map[string]any{"from": "2026-02-20", "to": "2026-03-10"}, "", "next_cursor"},
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
