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
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the contacts database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
