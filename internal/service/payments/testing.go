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

// TestSQL returns Schema followed by four accounts and their transactions:
//   - chk-main "Everyday Checking", EUR 1250.00: salaries, rent, a dinner;
//   - sav-rainy "Rainy Day Savings", EUR 5000.00, with a stored statement
//     for 2026-01;
//   - cc-visa "Visa Card", credit, EUR -230.50;
//   - chk-usd "US Checking", USD 100.00.
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO accounts (id, ext_id, name, kind, currency, balance_cents) VALUES
  (1, 'chk-main', 'Everyday Checking', 'checking', 'EUR', 125000),
  (2, 'sav-rainy', 'Rainy Day Savings', 'savings', 'EUR', 500000),
  (3, 'cc-visa', 'Visa Card', 'credit', 'EUR', -23050),
  (4, 'chk-usd', 'US Checking', 'checking', 'USD', 10000)`,
		`INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee, memo, category) VALUES
  (1, 'tx-1', 1, '2026-01-31 09:00:00', 250000, 'ACME Corp', 'January salary', 'income'),
  (2, 'tx-2', 1, '2026-02-01 08:00:00', -120000, 'Landlord', 'February rent', 'housing'),
  (3, 'tx-3', 1, '2026-02-14 19:30:00', -4550, 'Lucia''s', 'dinner, 50% tip', 'dining'),
  (4, 'tx-4', 1, '2026-02-28 09:00:00', 250000, 'ACME Corp', 'February salary', 'income'),
  (5, 'tx-5', 1, '2026-03-01 08:00:00', -120000, 'Landlord', 'March rent', 'housing'),
  (6, 'tx-6', 3, '2026-02-20 12:00:00', -23050, 'Bookshop', '', 'shopping'),
  (7, 'tx-7', 2, '2026-01-15 10:00:00', 500000, 'Initial deposit', '', 'savings'),
  (8, 'tx-9', 4, '2026-02-02 10:00:00', 10000, 'Wire', '', 'income')`,
		`INSERT INTO statements (id, account_id, period, opening_cents, closing_cents) VALUES (1, 2, '2026-01', 0, 500000)`,
	)
}

// MakeTestDB creates the payments database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}
