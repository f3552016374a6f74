package support

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/support.sqlite).
const DBName = "support"

// ShopDBName is the name of the shop's database in a world (db/shop.sqlite),
// read for orders and their items.
const ShopDBName = "shop"

// TimeFormat is the format of the time columns (UTC), the shop's too.
const (
	TimeFormat = "2006-01-02 15:04:05"
	DateFormat = "2006-01-02"
)

// ReturnDays is the return window: a return ticket needs an order placed at
// most this many days before the clock.
const ReturnDays = 30

// Kinds, statuses and authors, as stored.
const (
	KindReturn   = "return"
	KindWarranty = "warranty"
	KindQuestion = "question"

	StatusOpen     = "open"
	StatusWaiting  = "waiting"
	StatusResolved = "resolved"
	StatusClosed   = "closed"

	AuthorCustomer = "customer"
	AuthorSupport  = "support"
)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE tickets (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  order_no TEXT NOT NULL,
  sku TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('return','warranty','question')),
  subject TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','waiting','resolved','closed')),
  opened_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`,
		`CREATE TABLE ticket_events (
  id INTEGER PRIMARY KEY,
  ticket_id INTEGER NOT NULL REFERENCES tickets(id),
  seq INTEGER NOT NULL CHECK (seq >= 1),
  author TEXT NOT NULL CHECK (author IN ('customer','support')),
  body TEXT NOT NULL,
  status_after TEXT NOT NULL CHECK (status_after IN ('open','waiting','resolved','closed')),
  at TEXT NOT NULL,
  UNIQUE (ticket_id, seq)
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"tickets", []string{"id", "ext_id", "order_no", "sku", "kind", "subject", "status", "opened_at", "updated_at"}},
	{"ticket_events", []string{"id", "ticket_id", "seq", "author", "body", "status_after", "at"}},
}

// checkSchema fails unless every table and column the service uses exists.
func checkSchema(ctx context.Context, q state.Querier) error {
	for _, w := range wantColumns {
		t, err := state.DescribeTable(ctx, q, w.table)
		if err != nil {
			return err
		}
		for _, c := range w.columns {
			if _, ok := t.Column(c); !ok {
				return fmt.Errorf("table %s has no column %s", w.table, c)
			}
		}
	}
	return nil
}
