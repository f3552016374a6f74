package mail

import (
	"maps"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The persona of the test world (service.yaml's test).
const (
	TestSelf        = "Alex"
	TestSelfAddress = "alex@example.com"
)

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, after every mail
// of TestSQL.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by the rows of service.yaml's test world:
// the standard folders, a custom folder "receipts" and seven mails (three
// of the conversation t-lisbon, an unread invoice request in inbox, one
// each in archive, receipts and trash; three with attachments).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// TestFiles returns the home files of the test world: the attachments of
// TestSQL and docs/report.md and docs/invoice-jan.pdf to attach.
func TestFiles() map[string]string { return maps.Clone(Compiled().Def.Test.Files) }

// MakeTestWorld writes a world with TestSQL and TestFiles into dir and
// returns dir.
func MakeTestWorld(tb testing.TB, dir string) string {
	tb.Helper()
	return state.MakeTestWorld(tb, dir, state.TestWorld{SQL: map[string][]string{DBName: TestSQL()}, Files: TestFiles()})
}
