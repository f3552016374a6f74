package messages

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSelf is the persona's sender name in TestSQL's threads.
const TestSelf = "Alex"

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, after every
// message of TestSQL.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by three seeded threads:
//   - dm-maya-chen, a DM with Maya Chen: 3 messages, the last unread;
//   - grp-lisbon, the group "Lisbon trip": 4 messages, 2 unread;
//   - t-bob, a DM with Bob Weller whose id is not dm-<slug>: 2 read messages.
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO threads (id, ext_id, title, kind, created_at) VALUES
  (1, 'dm-maya-chen', 'Maya Chen', 'dm', '2026-02-10 10:00:00'),
  (2, 'grp-lisbon', 'Lisbon trip', 'group', '2026-02-12 09:30:00'),
  (3, 't-bob', 'Bob Weller', 'dm', '2026-02-15 16:00:00')`,
		`INSERT INTO participants (id, thread_id, name, role) VALUES
  (1, 1, 'Alex', ''), (2, 1, 'Maya Chen', ''),
  (3, 2, 'Alex', 'admin'), (4, 2, 'Maya Chen', ''), (5, 2, 'Sam Ortiz', ''), (6, 2, 'Priya Nair', ''),
  (7, 3, 'Alex', ''), (8, 3, 'Bob Weller', '')`,
		`INSERT INTO messages (id, thread_id, seq, sender, body, sent_at, is_read) VALUES
  (1, 1, 1, 'Maya Chen', 'Are we still on for dinner Friday?', '2026-02-27 18:02:00', 1),
  (2, 1, 2, 'Alex', 'Yes! 7pm at Lucia''s?', '2026-02-27 18:10:00', 1),
  (3, 1, 3, 'Maya Chen', 'Perfect. I''ll book a table for four.', '2026-03-01 08:15:00', 0),
  (4, 2, 1, 'Sam Ortiz', 'Flights to Lisbon are 50% off this week.', '2026-02-26 07:45:00', 1),
  (5, 2, 2, 'Alex', 'Nice, I can do the 12th to the 16th.', '2026-02-26 08:00:00', 1),
  (6, 2, 3, 'Priya Nair', 'Same here. Who books the apartment?', '2026-02-28 11:20:00', 0),
  (7, 2, 4, 'Maya Chen', 'I can. Budget around 600 EUR total? Dinner on us the first night.', '2026-02-28 12:00:00', 0),
  (8, 3, 1, 'Bob Weller', 'Can you send me the invoice for January?', '2026-02-20 14:00:00', 1),
  (9, 3, 2, 'Alex', 'Sent it this morning.', '2026-02-20 15:30:00', 1)`,
	)
}

// MakeTestDB creates the messages database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
