package support

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

// TestShopRows returns inserts into the shop's orders and order_items (the
// tables of the shop site's Schema) for tests:
//   - SO-1001, placed 2026-02-20 (inside the return window): MUG-01 x2 and
//     TEE-M;
//   - SO-0950, placed 2026-01-10 (outside it): LAMP-2.
func TestShopRows() []string {
	return []string{
		`INSERT INTO orders (id, order_no, username, placed_at, total_cents) VALUES
  (1, 'SO-0950', 'alex', '2026-01-10 14:00:00', 4500),
  (2, 'SO-1001', 'alex', '2026-02-20 10:30:00', 3700)`,
		`INSERT INTO order_items (id, order_no, sku, qty, price_cents) VALUES
  (1, 'SO-0950', 'LAMP-2', 1, 4500),
  (2, 'SO-1001', 'MUG-01', 2, 850),
  (3, 'SO-1001', 'TEE-M', 1, 2000)`,
	}
}

// TestSQL returns Schema followed by one ticket: T-1001, a warranty claim
// for LAMP-2 of order SO-0950, waiting on the customer after two events (the
// customer's opening message and support's request for a photo).
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO tickets (id, ext_id, order_no, sku, kind, subject, status, opened_at, updated_at) VALUES
  (1, 'T-1001', 'SO-0950', 'LAMP-2', 'warranty', 'Lamp flickers', 'waiting', '2026-02-25 08:00:00', '2026-02-26 12:00:00')`,
		`INSERT INTO ticket_events (id, ticket_id, seq, author, body, status_after, at) VALUES
  (1, 1, 1, 'customer', 'The lamp flickers since last week.', 'open', '2026-02-25 08:00:00'),
  (2, 1, 2, 'support', 'Could you send a photo of the label?', 'waiting', '2026-02-26 12:00:00')`,
	)
}

// MakeTestDB creates the support database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
