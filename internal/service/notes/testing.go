package notes

import (
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
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the notes database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
