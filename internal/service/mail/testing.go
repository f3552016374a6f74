package mail

import (
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The persona of TestSQL.
const (
	TestSelf        = "Alex"
	TestSelfAddress = "alex@example.com"
)

// TestClock is a clock for tests: 2026-03-01 09:00:00 UTC, after every mail
// of TestSQL.
func TestClock() world.Clock {
	return world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
}

// TestSQL returns Schema followed by the standard folders, a custom folder
// "receipts" and seven mails:
//   - t-lisbon: m-000001 (inbox, read, attachment docs/itinerary.pdf),
//     m-000002 (sent, Alex's reply), m-000003 (inbox, unread, starred);
//   - m-000004 (inbox, unread, "Invoice for January" from bob@weller.example);
//   - m-000005 (archive); m-000006 (receipts, attachment
//     docs/receipts/receipt-4411.pdf); m-000007 (trash, unread, attachment
//     downloads/prize.txt).
func TestSQL() []string {
	return append(Schema(),
		`INSERT INTO folders (id, name) VALUES (1, 'inbox'), (2, 'sent'), (3, 'archive'), (4, 'drafts'), (5, 'trash'), (6, 'receipts')`,
		`INSERT INTO mails (id, ext_id, folder_id, thread_key, from_addr, to_addrs, cc_addrs, subject, body, sent_at, is_read, is_starred) VALUES
  (1, 'm-000001', 1, 't-lisbon', 'maya@example.com', 'alex@example.com', 'sam@example.com', 'Lisbon flights', 'Flights to Lisbon are 50% off this week. Itinerary attached.', '2026-02-26 07:45:00', 1, 0),
  (2, 'm-000002', 2, 't-lisbon', 'alex@example.com', 'maya@example.com', '', 'Re: Lisbon flights', 'Nice, I can do the 12th to the 16th.', '2026-02-26 08:00:00', 1, 0),
  (3, 'm-000003', 1, 't-lisbon', 'maya@example.com', 'alex@example.com', 'sam@example.com', 'Re: Lisbon flights', 'Booked! Dinner on us the first night.', '2026-02-28 12:00:00', 0, 1),
  (4, 'm-000004', 1, 't-invoice', 'bob@weller.example', 'alex@example.com', '', 'Invoice for January', 'Can you send me the invoice for January?', '2026-02-20 14:00:00', 0, 0),
  (5, 'm-000005', 3, 't-order', 'news@shop.example', 'alex@example.com', '', 'Your order has shipped', 'Your order #881 is on its way.', '2026-02-10 09:00:00', 1, 0),
  (6, 'm-000006', 6, 't-receipt', 'billing@cloud.example', 'alex@example.com', '', 'Receipt #4411', 'Thanks for your payment of 12 EUR.', '2026-02-01 10:00:00', 1, 0),
  (7, 'm-000007', 5, 't-prize', 'promo@spam.example', 'alex@example.com', '', 'WIN a prize', 'Click to claim your prize!', '2026-02-05 11:00:00', 0, 0)`,
		`INSERT INTO attachments (id, mail_id, filename, home_path) VALUES
  (1, 1, 'itinerary.pdf', 'docs/itinerary.pdf'),
  (2, 6, 'receipt-4411.pdf', 'docs/receipts/receipt-4411.pdf'),
  (3, 7, 'prize.txt', 'downloads/prize.txt')`,
	)
}

// TestFiles returns the home files of the test world: the attachments of
// TestSQL and docs/report.md and docs/invoice-jan.pdf to attach.
func TestFiles() map[string]string {
	return map[string]string{
		"docs/itinerary.pdf":             "%PDF itinerary",
		"docs/receipts/receipt-4411.pdf": "%PDF receipt",
		"downloads/prize.txt":            "prize",
		"docs/report.md":                 "# Report\n",
		"docs/invoice-jan.pdf":           "%PDF invoice",
	}
}

// MakeTestWorld writes a world with TestSQL and TestFiles into dir and
// returns dir.
func MakeTestWorld(tb testing.TB, dir string) string {
	tb.Helper()
	return state.MakeTestWorld(tb, dir, state.TestWorld{SQL: map[string][]string{DBName: TestSQL()}, Files: TestFiles()})
}

// MakeTestDB creates the mail database at path with TestSQL.
func MakeTestDB(tb testing.TB, path string) {
	tb.Helper()
	state.ExecTest(tb, path, TestSQL()...)
}

// NewTestService returns a Service over the world at dir with the test
// persona and clock.
func NewTestService(tb testing.TB, dir string) *Service {
	tb.Helper()
	s, err := New(Options{DBPath: world.DBPath(dir, DBName), WorldDir: dir, Clock: TestClock(), Self: TestSelf, SelfAddress: TestSelfAddress})
	if err != nil {
		tb.Fatal(err)
	}
	return s
}
