package payments

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// URI prefixes of the resources: payments://account/{account} (an
// account's ext_id) and payments://statement/{account}/{period} (YYYY-MM).
const (
	accountURIPrefix   = "payments://account/"
	statementURIPrefix = "payments://statement/"
)

// ResourceTransactions bounds the transactions an account resource lists:
// the latest ones.
const ResourceTransactions = 50

// AccountURI returns the resource URI of the account with that ext_id.
func AccountURI(extID string) string {
	return accountURIPrefix + dbtool.URIEscape(extID)
}

// StatementURI returns the resource URI of the statement of the account
// with that ext_id for period (YYYY-MM).
func StatementURI(extID, period string) string {
	return statementURIPrefix + dbtool.URIEscape(extID) + "/" + dbtool.URIEscape(period)
}

// renderAccount renders the account keys[0] (its ext_id) as text: its
// name, kind and currency, its balance, then its latest transactions, newest
// first. It changes nothing.
func renderAccount(ctx context.Context, q querier, keys []string) (string, error) {
	a, err := findAccount(ctx, q, "account", keys[0])
	if err != nil {
		return "", err
	}
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM transactions WHERE account_id = ?`, a.id).Scan(&total); err != nil {
		return "", fmt.Errorf("count transactions: %w", err)
	}
	ts, err := queryTransactions(ctx, q, txQuery+` WHERE x.account_id = ? ORDER BY x.booked_at DESC, x.id DESC LIMIT ?`, a.id, ResourceTransactions)
	if err != nil {
		return "", err
	}
	return accountText(a.Account, total, ts), nil
}

// renderStatement renders get_statement's result for the account keys[0]
// and the period keys[1] as text; a bad or future period and an unknown
// account are tool errors, as there. It changes nothing.
func (s *Service) renderStatement(ctx context.Context, q querier, keys []string) (string, error) {
	in := GetStatementIn{Account: keys[0], Period: keys[1]}
	start, err := s.statementPeriod(in.Period)
	if err != nil {
		return "", err
	}
	st, err := statement(ctx, q, in, start)
	if err != nil {
		return "", err
	}
	return statementText(st), nil
}

func accountText(a Account, total int, ts []txRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (account %s, %s, %s)\nBalance: %s %s", a.Name, a.Account, a.Kind, a.Currency, a.Balance, a.Currency)
	switch {
	case a.AvailableCents != nil:
		fmt.Fprintf(&b, " · Available for transfers: %s %s", FormatCents(*a.AvailableCents), a.Currency)
	case a.BalanceCents < 0:
		fmt.Fprintf(&b, " (%s %s owed)", FormatCents(-a.BalanceCents), a.Currency)
	}
	b.WriteString("\n\n")
	switch {
	case total == 0:
		b.WriteString("No transactions.\n")
		return b.String()
	case len(ts) < total:
		fmt.Fprintf(&b, "Transactions, newest first: the latest %d of %d (this view shows the latest %d at most; list_transactions pages through them all):\n", len(ts), total, ResourceTransactions)
	default:
		fmt.Fprintf(&b, "Transactions, newest first: all %d (this view shows the latest %d at most):\n", total, ResourceTransactions)
	}
	for _, t := range ts {
		b.WriteString(txLine(t.Transaction))
	}
	return b.String()
}

func statementText(st StatementOut) string {
	var b strings.Builder
	source := "computed from the balance and the transactions"
	if st.Source == "stored" {
		source = "as issued"
	}
	fmt.Fprintf(&b, "Statement of account %s for %s, %s (%s)\n", st.Account, st.Period, st.Currency, source)
	fmt.Fprintf(&b, "Opening: %s · In: %s · Out: %s · Closing: %s\n\n", st.Opening, FormatCents(st.InCents), FormatCents(st.OutCents), st.Closing)
	if len(st.Transactions) == 0 {
		b.WriteString("No transactions in the month.\n")
		return b.String()
	}
	fmt.Fprintf(&b, "Transactions of the month, oldest first (%d):\n", len(st.Transactions))
	for _, t := range st.Transactions {
		b.WriteString(txLine(t))
	}
	return b.String()
}

// txLine is "BOOKED_AT  AMOUNT  PAYEE — MEMO [CATEGORY] (ID)\n".
func txLine(t Transaction) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s  %s  %s", t.BookedAt, t.Amount, oneLine(t.Payee))
	if t.Memo != "" {
		fmt.Fprintf(&b, " — %s", oneLine(t.Memo))
	}
	if t.Category != "" {
		fmt.Fprintf(&b, " [%s]", t.Category)
	}
	fmt.Fprintf(&b, " (%s)\n", t.Transaction)
	return b.String()
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
