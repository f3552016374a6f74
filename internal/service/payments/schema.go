package payments

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world
// (db/payments.sqlite).
const DBName = "payments"

// Formats of the time columns (UTC).
const (
	TimeFormat   = "2006-01-02 15:04:05"
	DateFormat   = "2006-01-02"
	PeriodFormat = "2006-01"
)

// Account kinds, as stored.
const (
	KindChecking = "checking"
	KindSavings  = "savings"
	KindCredit   = "credit"
)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE accounts (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  name TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('checking','savings','credit')),
  currency TEXT NOT NULL,
  balance_cents INTEGER NOT NULL DEFAULT 0
)`,
		`CREATE TABLE transactions (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  booked_at TEXT NOT NULL,
  amount_cents INTEGER NOT NULL,
  payee TEXT NOT NULL DEFAULT '',
  memo TEXT NOT NULL DEFAULT '',
  category TEXT NOT NULL DEFAULT ''
)`,
		`CREATE TABLE transfers (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  from_account_id INTEGER NOT NULL REFERENCES accounts(id),
  to_account_id INTEGER NOT NULL REFERENCES accounts(id),
  amount_cents INTEGER NOT NULL CHECK (amount_cents > 0),
  booked_at TEXT NOT NULL,
  memo TEXT NOT NULL DEFAULT ''
)`,
		`CREATE TABLE statements (
  id INTEGER PRIMARY KEY,
  account_id INTEGER NOT NULL REFERENCES accounts(id),
  period TEXT NOT NULL,
  opening_cents INTEGER NOT NULL,
  closing_cents INTEGER NOT NULL,
  UNIQUE(account_id, period)
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"accounts", []string{"id", "ext_id", "name", "kind", "currency", "balance_cents"}},
	{"transactions", []string{"id", "ext_id", "account_id", "booked_at", "amount_cents", "payee", "memo", "category"}},
	{"transfers", []string{"id", "ext_id", "from_account_id", "to_account_id", "amount_cents", "booked_at", "memo"}},
	{"statements", []string{"id", "account_id", "period", "opening_cents", "closing_cents"}},
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
