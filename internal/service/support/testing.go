package support

import (
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestShopRows returns inserts into the shop's orders and order_items (the
// tables of the shop site's Schema) for tests:
//   - SO-1001, placed 2026-02-20 (inside the return window): MUG-01 x2 and
//     TEE-M;
//   - SO-0950, placed 2026-01-10 (outside it): LAMP-2.
//
// They are the inserts of service.yaml's test world's shop database
// (test.other.shop).
func TestShopRows() []string {
	var rows []string
	for _, s := range Compiled().Def.Test.Other[ShopDBName] {
		if strings.HasPrefix(s, "INSERT ") {
			rows = append(rows, s)
		}
	}
	return rows
}

// TestSQL returns Schema followed by one ticket: T-1001, a warranty claim
// for LAMP-2 of order SO-0950, waiting on the customer after two events (the
// customer's opening message and support's request for a photo).
//
// The rows are service.yaml's test world (test.sql).
func TestSQL() []string { return append(Schema(), Compiled().Def.Test.SQL...) }

// MakeTestDB creates the support database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
