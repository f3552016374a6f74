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
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the messages database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
