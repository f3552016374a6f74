package payments

import (
	"errors"
	"fmt"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
)

// This file is the "god mode" synthesis API: Go functions that build delta
// operations seeding or changing a world's payments database. They are for
// world synthesis, never tools.

// SeedAccount is an account to insert.
type SeedAccount struct {
	ID           string // ext_id, the natural key; e.g. "chk-main"
	Name         string
	Kind         string // checking, savings, credit
	Currency     string // e.g. "EUR"
	BalanceCents int64
}

// SeedTransaction is a transaction to insert.
type SeedTransaction struct {
	ID          string // ext_id, the natural key
	Account     string // an account's ID
	BookedAt    time.Time
	AmountCents int64 // signed, not 0
	Payee       string
	Memo        string
	Category    string
}

// SeedTransfer is a transfer between two accounts of the same currency.
type SeedTransfer struct {
	ID          string // ext_id of the transfer; its transactions are ID+"-out" and ID+"-in"
	From, To    string // account IDs
	AmountCents int64  // > 0
	BookedAt    time.Time
	Memo        string
	// FromName and ToName label the transactions' payees ("Transfer to
	// <ToName>"); empty means the account ID.
	FromName, ToName string
}

// SeedStatement is a stored monthly statement.
type SeedStatement struct {
	Account      string // an account's ID
	Period       string // YYYY-MM
	OpeningCents int64
	ClosingCents int64
}

// ErrSeed is wrapped by every error of the synthesis functions.
var ErrSeed = errors.New("payments: bad seed")

func seedErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSeed, fmt.Sprintf(format, args...))
}

// CreateOp returns the db.create operation that creates the payments
// database with Schema.
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

func extKey(id string) map[string]delta.Value {
	return map[string]delta.Value{"ext_id": delta.Lit(id)}
}

func accountRef(id string) delta.Value {
	return delta.RefTo("accounts", extKey(id), "id")
}

// AccountOp returns the db.insert of a.
func AccountOp(a SeedAccount) (delta.Op, error) {
	switch {
	case a.ID == "" || a.Name == "":
		return delta.Op{}, seedErr("account needs ID and Name (got %q, %q)", a.ID, a.Name)
	case a.Kind != KindChecking && a.Kind != KindSavings && a.Kind != KindCredit:
		return delta.Op{}, seedErr("account %s: kind %q is not checking, savings or credit", a.ID, a.Kind)
	case len(a.Currency) != 3:
		return delta.Op{}, seedErr("account %s: currency %q is not a 3-letter code", a.ID, a.Currency)
	case a.Kind != KindCredit && a.BalanceCents < 0:
		return delta.Op{}, seedErr("account %s: a %s account cannot have a negative balance", a.ID, a.Kind)
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "accounts", Key: extKey(a.ID), Values: map[string]delta.Value{
		"name": delta.Lit(a.Name), "kind": delta.Lit(a.Kind), "currency": delta.Lit(a.Currency), "balance_cents": delta.Lit(a.BalanceCents),
	}}, nil
}

// TransactionOp returns the db.insert of t. It does not change the
// account's balance; BookOps does.
func TransactionOp(t SeedTransaction) (delta.Op, error) {
	switch {
	case t.ID == "" || t.Account == "":
		return delta.Op{}, seedErr("transaction needs ID and Account (got %q, %q)", t.ID, t.Account)
	case t.AmountCents == 0 || t.AmountCents > MaxAmountCents || t.AmountCents < -MaxAmountCents:
		return delta.Op{}, seedErr("transaction %s: amount %d cents must be non-zero and at most %d in size", t.ID, t.AmountCents, int64(MaxAmountCents))
	case t.BookedAt.IsZero():
		return delta.Op{}, seedErr("transaction %s: BookedAt is required", t.ID)
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "transactions", Key: extKey(t.ID), Values: map[string]delta.Value{
		"account_id":   accountRef(t.Account),
		"booked_at":    delta.Lit(t.BookedAt.UTC().Format(TimeFormat)),
		"amount_cents": delta.Lit(t.AmountCents),
		"payee":        delta.Lit(t.Payee),
		"memo":         delta.Lit(t.Memo),
		"category":     delta.Lit(t.Category),
	}}, nil
}

// balanceOp returns the db.update adding cents to an account's balance.
func balanceOp(account string, cents int64) delta.Op {
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "accounts", Key: extKey(account),
		Set: map[string]delta.Value{"balance_cents": delta.SQLExpr(fmt.Sprintf("balance_cents + (%d)", cents))}}
}

// BookOps returns the insert of t and the update that moves its account's
// balance by t.AmountCents.
func BookOps(t SeedTransaction) ([]delta.Op, error) {
	op, err := TransactionOp(t)
	if err != nil {
		return nil, err
	}
	return []delta.Op{op, balanceOp(t.Account, t.AmountCents)}, nil
}

// TransferOps returns what the transfer tool writes for tr: the transfers
// row, a debit and a credit transaction (category "transfer") and both
// balance updates. It does not check the source's balance (god mode); the
// caller keeps checking and savings accounts at or above 0.
func TransferOps(tr SeedTransfer) ([]delta.Op, error) {
	switch {
	case tr.ID == "" || tr.From == "" || tr.To == "":
		return nil, seedErr("transfer needs ID, From and To")
	case tr.From == tr.To:
		return nil, seedErr("transfer %s: From and To are both %s", tr.ID, tr.From)
	case tr.AmountCents <= 0 || tr.AmountCents > MaxAmountCents:
		return nil, seedErr("transfer %s: amount %d cents must be positive and at most %d", tr.ID, tr.AmountCents, int64(MaxAmountCents))
	case tr.BookedAt.IsZero():
		return nil, seedErr("transfer %s: BookedAt is required", tr.ID)
	}
	fromName, toName := cmpOr(tr.FromName, tr.From), cmpOr(tr.ToName, tr.To)
	ops := []delta.Op{{Op: delta.OpDBInsert, DB: DBName, Table: "transfers", Key: extKey(tr.ID), Values: map[string]delta.Value{
		"from_account_id": accountRef(tr.From),
		"to_account_id":   accountRef(tr.To),
		"amount_cents":    delta.Lit(tr.AmountCents),
		"booked_at":       delta.Lit(tr.BookedAt.UTC().Format(TimeFormat)),
		"memo":            delta.Lit(tr.Memo),
	}}}
	for _, t := range []SeedTransaction{
		{ID: tr.ID + "-out", Account: tr.From, BookedAt: tr.BookedAt, AmountCents: -tr.AmountCents, Payee: "Transfer to " + toName, Memo: tr.Memo, Category: "transfer"},
		{ID: tr.ID + "-in", Account: tr.To, BookedAt: tr.BookedAt, AmountCents: tr.AmountCents, Payee: "Transfer from " + fromName, Memo: tr.Memo, Category: "transfer"},
	} {
		b, err := BookOps(t)
		if err != nil {
			return nil, err
		}
		ops = append(ops, b...)
	}
	return ops, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// StatementOp returns the db.insert of a stored statement, keyed by
// (account_id, period).
func StatementOp(st SeedStatement) (delta.Op, error) {
	if st.Account == "" {
		return delta.Op{}, seedErr("statement needs Account")
	}
	if _, ok := parsePeriod(st.Period); !ok {
		return delta.Op{}, seedErr("statement of %s: period %q is not YYYY-MM", st.Account, st.Period)
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "statements",
		Key: map[string]delta.Value{"account_id": accountRef(st.Account), "period": delta.Lit(st.Period)},
		Values: map[string]delta.Value{
			"opening_cents": delta.Lit(st.OpeningCents),
			"closing_cents": delta.Lit(st.ClosingCents),
		}}, nil
}
