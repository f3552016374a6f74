package tasks

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, so today is
// 2026-03-01.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by three projects and seven to-dos:
//   - Home: todo-3 "Buy milk" due today (low), todo-4 "Fix bike" undated,
//     t-dentist "Call dentist" due 2026-03-05 (high);
//   - Work: todo-1 "Send invoice to ACME" due 2026-02-27 (high, overdue),
//     todo-2 "Prepare Q1 report" due 2026-03-05, todo-5 "Book flights to
//     Lisbon" (done);
//   - Old (archived): row 7 "Archive old files", whose ext_id is todo-8 (so
//     the next created to-do's default id is taken).
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the tasks database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
