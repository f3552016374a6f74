package calendar_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkPages calls the paged and capped reads in process on the test
// world grown by 2000 events, so that a page costs what its own rows cost,
// not what the rows it leaves out would. Each call's answer must hold want
// (a full page), which proves the grown world is what it reads.
func BenchmarkPages(b *testing.B) {
	servicetest.BenchPages(b, calendar.Compiled(), []string{
		`INSERT INTO events (id, ext_id, title, location, starts_at, ends_at, notes, organizer, recurrence, status)
		WITH RECURSIVE c(i) AS (SELECT 100 UNION ALL SELECT i + 1 FROM c WHERE i < 2099)
		SELECT i, 'evt-b' || i, 'Meeting ' || i, 'Room ' || (i % 9), s, datetime(s, '+30 minutes'), 'Agenda: the plan.',
			CASE WHEN i % 3 = 0 THEN 'Alex' ELSE 'Maya Chen' END, CASE WHEN i % 10 = 0 THEN 'FREQ=DAILY;COUNT=5' ELSE '' END, 'confirmed'
		FROM (SELECT i, datetime('2026-02-20 08:00:00', '+' || (i * 13 % 25920) || ' minutes') AS s FROM c)`,
		`INSERT INTO invitations (event_id, guest, response) SELECT id, 'Alex', 'accepted' FROM events WHERE id >= 100 AND id % 3 <> 0`,
	}, []servicetest.PageCase{
		{Name: "list_events", Tool: "list_events", Args: map[string]any{}, Want: "next_cursor"},
		{Name: "list_events_3weeks", Tool: "list_events", Args: map[string]any{"from": "2026-02-20", "to": "2026-03-10"}, Want: "next_cursor"},
	})
}
