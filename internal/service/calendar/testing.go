package calendar

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSelf is the persona's name in TestSQL's events.
const TestSelf = "Alex"

// TestClock is a clock for tests: Monday 2026-03-02 08:30:00 UTC.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 2, 8, 30, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by six seeded events:
//   - evt-standup, "Team standup" by Maya Chen, daily 09:30-09:45 from
//     2026-03-02, COUNT=5; Alex accepted;
//   - evt-lunch, "Lunch with Priya" by Alex, 2026-03-02 12:00-13:00 at
//     Lucia's; Priya Nair has not answered;
//   - evt-review, "Quarterly review" by Bob Weller, 2026-03-03 14:00-15:30;
//     Alex needs-action, Maya Chen tentative;
//   - evt-yoga, "Yoga" by Alex, weekly 07:00-08:00 from Monday 2026-02-23
//     UNTIL=2026-03-23 (5 occurrences);
//   - evt-offsite, "Offsite" by Bob Weller on 2026-03-04, cancelled;
//   - evt-demo, "Vendor demo" by Sam Ortiz, 2026-03-02 15:00-16:00; Alex
//     declined.
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO events (id, ext_id, title, location, starts_at, ends_at, notes, organizer, recurrence, status) VALUES
  (1, 'evt-standup', 'Team standup', 'Room 4', '2026-03-02 09:30:00', '2026-03-02 09:45:00', '', 'Maya Chen', 'FREQ=DAILY;COUNT=5', 'confirmed'),
  (2, 'evt-lunch', 'Lunch with Priya', 'Lucia''s', '2026-03-02 12:00:00', '2026-03-02 13:00:00', 'Catch up on the Lisbon trip.', 'Alex', '', 'confirmed'),
  (3, 'evt-review', 'Quarterly review', '', '2026-03-03 14:00:00', '2026-03-03 15:30:00', 'Bring the Q1 numbers.', 'Bob Weller', '', 'confirmed'),
  (4, 'evt-yoga', 'Yoga', 'Studio', '2026-02-23 07:00:00', '2026-02-23 08:00:00', '', 'Alex', 'FREQ=WEEKLY;UNTIL=2026-03-23', 'confirmed'),
  (5, 'evt-offsite', 'Offsite', 'Cascais', '2026-03-04 10:00:00', '2026-03-04 16:00:00', '', 'Bob Weller', '', 'cancelled'),
  (6, 'evt-demo', 'Vendor demo', '', '2026-03-02 15:00:00', '2026-03-02 16:00:00', '', 'Sam Ortiz', '', 'confirmed')`,
		`INSERT INTO invitations (id, event_id, guest, response, responded_at) VALUES
  (1, 1, 'Alex', 'accepted', '2026-02-27 10:00:00'), (2, 1, 'Sam Ortiz', 'accepted', '2026-02-27 11:00:00'),
  (3, 2, 'Priya Nair', 'needs-action', ''),
  (4, 3, 'Alex', 'needs-action', ''), (5, 3, 'Maya Chen', 'tentative', '2026-02-28 09:00:00'),
  (6, 5, 'Alex', 'accepted', '2026-02-20 09:00:00'),
  (7, 6, 'Alex', 'declined', '2026-02-26 16:00:00')`,
	)
}

// MakeTestDB creates the calendar database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
