package payments

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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

// readAccount renders an account as text: its name, kind and currency, its
// balance, then its latest transactions, newest first. It changes nothing.
func (s *Service) readAccount(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, accountURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	extID, err := url.PathUnescape(rest)
	if err != nil || extID == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var text string
	err = s.read(ctx, func(q querier) error {
		a, err := findAccount(ctx, q, "account", extID)
		if err != nil {
			return err
		}
		var total int
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*) FROM transactions WHERE account_id = ?`, a.id).Scan(&total); err != nil {
			return fmt.Errorf("count transactions: %w", err)
		}
		ts, err := queryTransactions(ctx, q, txQuery+` WHERE x.account_id = ? ORDER BY x.booked_at DESC, x.id DESC LIMIT ?`, a.id, ResourceTransactions)
		if err != nil {
			return err
		}
		text = accountText(a.Account, total, ts)
		return nil
	})
	return s.resourceResult(ctx, uri, text, err)
}

// readStatement renders get_statement's result for the account and period
// of the URI as text. It changes nothing.
func (s *Service) readStatement(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	rest, ok := strings.CutPrefix(uri, statementURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	rawAccount, rawPeriod, ok := strings.Cut(rest, "/")
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	extID, err1 := url.PathUnescape(rawAccount)
	period, err2 := url.PathUnescape(rawPeriod)
	if err1 != nil || err2 != nil || extID == "" || period == "" {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	// getStatement reads through s.read; a bad or future period and an
	// unknown account are its tool errors.
	st, err := s.getStatement(ctx, GetStatementIn{Account: extID, Period: period})
	if err != nil {
		return s.resourceResult(ctx, uri, "", err)
	}
	return s.resourceResult(ctx, uri, statementText(st), nil)
}

// resourceResult turns a read's outcome into the resource's result: a tool
// error (an unknown account, a bad period) is resource-not-found, any other
// error is logged and reported without internal detail.
func (s *Service) resourceResult(ctx context.Context, uri, text string, err error) (*mcp.ReadResourceResult, error) {
	var te *toolError
	switch {
	case errors.As(err, &te):
		return nil, mcp.ResourceNotFoundError(uri)
	case err != nil:
		s.log.ErrorContext(ctx, "payments resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the payments service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text}}}, nil
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
