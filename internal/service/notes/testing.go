package notes

import (
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSelf is the persona whose notes TestSQL holds.
const TestSelf = "Alex"

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, after every time
// of TestSQL.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by two notebooks and four notes:
//   - Personal: lisbon-packing (pinned, 2 links), groceries (body with 50%);
//   - Work: q1-plan (1 link), standup-2026-02-27 (empty body);
//   - Archive: no notes.
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO notebooks (id, name) VALUES (1, 'Personal'), (2, 'Work'), (3, 'Archive')`,
		strings.ReplaceAll(`INSERT INTO notes (id, ext_id, notebook_id, title, body, created_at, updated_at, pinned) VALUES
  (1, 'lisbon-packing', 1, 'Lisbon packing list', '# Packing\n\n- passport\n- adapter\n- sunscreen', '2026-02-10 10:00:00', '2026-02-26 08:00:00', 1),
  (2, 'groceries', 1, 'Groceries', 'Milk, eggs, coffee (50% off at the corner shop)', '2026-02-20 18:00:00', '2026-02-28 19:30:00', 0),
  (3, 'q1-plan', 2, 'Q1 plan', 'Ship the **beta** by March 15.\nHire a designer.', '2026-01-05 09:00:00', '2026-02-27 11:00:00', 0),
  (4, 'standup-2026-02-27', 2, 'Standup 2026-02-27', '', '2026-02-27 09:30:00', '2026-02-27 09:30:00', 0)`, `\n`, "\n"),
		`INSERT INTO note_links (id, note_id, target) VALUES
  (1, 1, 'https://www.visitlisboa.com/en'), (2, 1, 'travel/lisbon/booking.pdf'), (3, 3, 'docs/roadmap.md')`,
	)
}

// MakeTestDB creates the notes database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
