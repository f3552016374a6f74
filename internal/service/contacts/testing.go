package contacts

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSelf is the persona whose address book TestSQL is.
const TestSelf = "Alex"

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, after every
// updated_at of TestSQL.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by four seeded contacts:
//   - maya-chen: Maya Chen, maya@example.com, Lumen Labs CTO, tags friend, work;
//   - bob-weller: Bob Weller, bob@weller.io, accountant, tag work;
//   - priya-nair: Priya Nair, phone only, tag friend, with notes;
//   - sam: Sam Ortiz, whose id is not the slug of his name, no tags.
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO contacts (id, ext_id, name, email, phone, company, role, notes, updated_at) VALUES
  (1, 'maya-chen', 'Maya Chen', 'maya@example.com', '+1 415-555-0101', 'Lumen Labs', 'CTO', 'Met at the 2025 offsite.', '2026-02-10 10:00:00'),
  (2, 'bob-weller', 'Bob Weller', 'bob@weller.io', '', 'Weller & Co', 'Accountant', '', '2026-02-12 09:30:00'),
  (3, 'priya-nair', 'Priya Nair', '', '+44 20 7946 0958', '', '', 'Allergic to peanuts. Birthday 12 May.', '2026-02-15 16:00:00'),
  (4, 'sam', 'Sam Ortiz', 'sam.ortiz@example.org', '', '50% Studio', 'Designer', '', '2026-02-20 14:00:00')`,
		`INSERT INTO contact_tags (id, contact_id, tag) VALUES
  (1, 1, 'friend'), (2, 1, 'work'), (3, 2, 'work'), (4, 3, 'friend')`,
	)
}

// MakeTestDB creates the contacts database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
