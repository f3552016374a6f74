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
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO projects (id, name, archived) VALUES (1, 'Home', 0), (2, 'Work', 0), (3, 'Old', 1)`,
		`INSERT INTO todos (id, ext_id, project_id, title, notes, due_on, priority, status, created_at, completed_at) VALUES
  (1, 'todo-1', 2, 'Send invoice to ACME', 'January hours', '2026-02-27', 'high', 'open', '2026-02-20 10:00:00', NULL),
  (2, 'todo-2', 2, 'Prepare Q1 report', '', '2026-03-05', 'medium', 'open', '2026-02-21 10:00:00', NULL),
  (3, 'todo-3', 1, 'Buy milk', '', '2026-03-01', 'low', 'open', '2026-02-28 18:00:00', NULL),
  (4, 'todo-4', 1, 'Fix bike', '50% off tires at the shop', NULL, 'medium', 'open', '2026-02-10 09:00:00', NULL),
  (5, 'todo-5', 2, 'Book flights to Lisbon', '', '2026-02-20', 'high', 'done', '2026-02-12 09:30:00', '2026-02-19 10:00:00'),
  (6, 't-dentist', 1, 'Call dentist', 'Dr. O''Neil', '2026-03-05', 'high', 'open', '2026-02-25 08:00:00', NULL),
  (7, 'todo-8', 3, 'Archive old files', '', NULL, 'low', 'open', '2025-12-01 12:00:00', NULL)`,
	)
}

// MakeTestDB creates the tasks database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
