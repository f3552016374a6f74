package payments

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by the rows of service.yaml's test world:
// four accounts and their transactions:
//   - chk-main "Everyday Checking", EUR 1250.00: salaries, rent, a dinner;
//   - sav-rainy "Rainy Day Savings", EUR 5000.00, with a stored statement
//     for 2026-01;
//   - cc-visa "Visa Card", credit, EUR -230.50;
//   - chk-usd "US Checking", USD 100.00.
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the payments database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
