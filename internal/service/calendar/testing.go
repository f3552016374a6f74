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
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the calendar database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
