package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit  = 20
	MaxLimit      = 100
	MaxQueryChars = 200
	MaxMemoChars  = 200
)

// Account is one account as the tools return it.
type Account struct {
	Account      string `json:"account" jsonschema:"the account id to pass as account, from or to"`
	Name         string `json:"name"`
	Kind         string `json:"kind" jsonschema:"checking, savings or credit"`
	Currency     string `json:"currency" jsonschema:"ISO 4217 code, e.g. EUR"`
	BalanceCents int64  `json:"balance_cents" jsonschema:"balance in integer cents; negative on a credit account is the amount owed"`
	Balance      string `json:"balance" jsonschema:"the balance as a decimal string, e.g. 1250.00"`
	// AvailableCents is what a transfer may take out: the balance of a
	// checking or savings account (never below 0).
	AvailableCents *int64 `json:"available_cents,omitempty" jsonschema:"what a transfer can take out, in cents; absent for credit accounts"`
}

// Transaction is one booking as the tools return it.
type Transaction struct {
	Transaction string `json:"transaction" jsonschema:"the transaction id"`
	Account     string `json:"account" jsonschema:"the account id"`
	BookedAt    string `json:"booked_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	AmountCents int64  `json:"amount_cents" jsonschema:"signed integer cents: negative is money out"`
	Amount      string `json:"amount" jsonschema:"the signed amount as a decimal string, e.g. -45.50"`
	Payee       string `json:"payee"`
	Memo        string `json:"memo,omitempty"`
	Category    string `json:"category,omitempty"`
}

// ListAccountsIn are list_accounts' arguments (none).
type ListAccountsIn struct{}

// ListAccountsOut is list_accounts' result.
type ListAccountsOut struct {
	Accounts []Account `json:"accounts" jsonschema:"every account, by name"`
}

// AccountIn names one account.
type AccountIn struct {
	Account string `json:"account" jsonschema:"the account id, from list_accounts (e.g. chk-main)"`
}

// BalanceOut is get_balance's result.
type BalanceOut struct {
	Account Account `json:"account"`
}

// ListTransactionsIn are list_transactions' arguments.
type ListTransactionsIn struct {
	Account string `json:"account" jsonschema:"the account id, from list_accounts"`
	From    string `json:"from,omitempty" jsonschema:"YYYY-MM-DD: only transactions booked on or after this day; omit for no lower bound"`
	To      string `json:"to,omitempty" jsonschema:"YYYY-MM-DD: only transactions booked on or before this day; omit for no upper bound"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many transactions to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor  string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_transactions result with the same arguments; omit for the first page"`
}

// ListTransactionsOut is list_transactions' result.
type ListTransactionsOut struct {
	Transactions []Transaction `json:"transactions" jsonschema:"newest first"`
	NextCursor   string        `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// SearchTransactionsIn are search_transactions' arguments.
type SearchTransactionsIn struct {
	Query   string `json:"query" jsonschema:"text to find in payee, memo or category; plain text, case-insensitive, not a pattern"`
	Account string `json:"account,omitempty" jsonschema:"an account id to search in; omit for every account"`
	Limit   int    `json:"limit,omitempty" jsonschema:"how many matches to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchTransactionsOut is search_transactions' result.
type SearchTransactionsOut struct {
	Transactions []Transaction `json:"transactions" jsonschema:"matches, newest first"`
	More         bool          `json:"more,omitempty" jsonschema:"true if more transactions match than were returned"`
}

// TransferIn are transfer's arguments.
type TransferIn struct {
	From   string `json:"from" jsonschema:"the account id to take the money from"`
	To     string `json:"to" jsonschema:"the account id to put the money in (another account, same currency)"`
	Amount string `json:"amount" jsonschema:"a positive decimal string with at most 2 decimals, e.g. 12.50; no sign or currency symbol"`
	Memo   string `json:"memo,omitempty" jsonschema:"a note for both transactions, at most 200 characters"`
}

// TransferOut is transfer's result.
type TransferOut struct {
	Transfer    string      `json:"transfer" jsonschema:"the transfer id"`
	AmountCents int64       `json:"amount_cents"`
	Amount      string      `json:"amount"`
	BookedAt    string      `json:"booked_at"`
	Memo        string      `json:"memo,omitempty"`
	From        Account     `json:"from" jsonschema:"the source account after the transfer"`
	To          Account     `json:"to" jsonschema:"the destination account after the transfer"`
	Debit       Transaction `json:"debit" jsonschema:"the transaction booked on the source account"`
	Credit      Transaction `json:"credit" jsonschema:"the transaction booked on the destination account"`
}

// GetStatementIn are get_statement's arguments.
type GetStatementIn struct {
	Account string `json:"account" jsonschema:"the account id, from list_accounts"`
	Period  string `json:"period" jsonschema:"the month, YYYY-MM, not after the current month"`
}

// StatementOut is get_statement's result.
type StatementOut struct {
	Account      string        `json:"account"`
	Period       string        `json:"period"`
	Currency     string        `json:"currency"`
	OpeningCents int64         `json:"opening_cents" jsonschema:"balance at the start of the month, in cents"`
	ClosingCents int64         `json:"closing_cents" jsonschema:"balance at the end of the month (so far, for the current month), in cents"`
	Opening      string        `json:"opening"`
	Closing      string        `json:"closing"`
	InCents      int64         `json:"in_cents" jsonschema:"sum of the month's positive transactions"`
	OutCents     int64         `json:"out_cents" jsonschema:"sum of the month's negative transactions (negative or 0)"`
	Source       string        `json:"source" jsonschema:"stored (an issued statement) or computed (from the balance and the transactions)"`
	Transactions []Transaction `json:"transactions" jsonschema:"the month's transactions, oldest first"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "list_accounts",
		Title:       "List accounts",
		Description: "Lists every account with its id, name, kind (checking, savings, credit), currency and balance. Use it to find an account id.",
		Annotations: readOnly,
	}, s.listAccounts)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "get_balance",
		Title:       "Get an account's balance",
		Description: "Returns one account with its balance and, for checking and savings, what a transfer can take out.",
		Annotations: readOnly,
	}, s.getBalance)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_transactions",
		Title: "List transactions",
		Description: "Lists an account's transactions, newest first, optionally between two days (inclusive). " +
			"Returns up to limit transactions and a next_cursor when there are more; pass it back as cursor, with the same arguments, for the next page.",
		Annotations: readOnly,
	}, s.listTransactions)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "search_transactions",
		Title:       "Search transactions",
		Description: "Finds transactions whose payee, memo or category contains the query (case-insensitive plain text, not a pattern), newest first, in one account or all.",
		Annotations: readOnly,
	}, s.searchTransactions)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "transfer",
		Title: "Transfer money",
		Description: "Moves amount (a decimal string such as \"12.50\") from one of your accounts to another of the same currency, now. " +
			"Books a negative transaction on from and a positive one on to, and updates both balances, all at once or not at all. " +
			"A checking or savings account cannot go below 0. Returns the transfer and both accounts after it.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.transfer)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "get_statement",
		Title: "Get a monthly statement",
		Description: "Returns an account's statement for a month (YYYY-MM): opening and closing balance, money in and out, " +
			"and the month's transactions oldest first. An issued statement is returned as stored; otherwise it is computed from the balance and the transactions.",
		Annotations: readOnly,
	}, s.getStatement)
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	r := []rune(s)
	if len(r) <= 60 {
		return s
	}
	return string(r[:60]) + "…"
}

// account is a row of accounts.
type account struct {
	id int64
	Account
}

func (a *account) fill() {
	a.Balance = FormatCents(a.BalanceCents)
	a.AvailableCents = nil
	if a.Kind != KindCredit {
		avail := max(a.BalanceCents, 0)
		a.AvailableCents = &avail
	}
}

const accountQuery = `SELECT id, ext_id, name, kind, currency, balance_cents FROM accounts`

func scanAccount(sc interface{ Scan(...any) error }) (account, error) {
	var a account
	err := sc.Scan(&a.id, &a.Account.Account, &a.Name, &a.Kind, &a.Currency, &a.BalanceCents)
	a.fill()
	return a, err
}

// findAccount returns the account with that ext_id, or a tool error naming
// how to find one (and a close match when there is one).
func findAccount(ctx context.Context, q querier, field, extID string) (account, error) {
	if strings.TrimSpace(extID) == "" {
		return account{}, badCall("%s is required: pass an account id from list_accounts (the \"account\" field)", field)
	}
	a, err := scanAccount(q.QueryRowContext(ctx, accountQuery+` WHERE ext_id = ?`, extID))
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return account{}, fmt.Errorf("find account: %w", err)
	}
	var near, name string
	err = q.QueryRowContext(ctx, `SELECT ext_id, name FROM accounts WHERE lower(ext_id) = lower(?1) OR lower(name) = lower(?1) ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &name)
	switch {
	case err == nil:
		return account{}, badCall("%s: no account %q; did you mean account %q (%s)? Pass the id from the \"account\" field", field, clip(extID), near, name)
	case !errors.Is(err, sql.ErrNoRows):
		return account{}, fmt.Errorf("find account: %w", err)
	}
	return account{}, badCall("%s: no account %q; call list_accounts to see the account ids", field, clip(extID))
}

const txQuery = `SELECT x.id, x.ext_id, a.ext_id, x.booked_at, x.amount_cents, x.payee, x.memo, x.category
FROM transactions x JOIN accounts a ON a.id = x.account_id`

type txRow struct {
	id int64
	Transaction
}

func queryTransactions(ctx context.Context, q querier, query string, args ...any) ([]txRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	defer rows.Close()
	var ts []txRow
	for rows.Next() {
		var t txRow
		if err := rows.Scan(&t.id, &t.Transaction.Transaction, &t.Account, &t.BookedAt, &t.AmountCents, &t.Payee, &t.Memo, &t.Category); err != nil {
			return nil, fmt.Errorf("list transactions: %w", err)
		}
		t.Amount = FormatCents(t.AmountCents)
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list transactions: %w", err)
	}
	return ts, nil
}

func (s *Service) listAccounts(ctx context.Context, _ ListAccountsIn) (ListAccountsOut, error) {
	out := ListAccountsOut{Accounts: []Account{}}
	err := s.read(ctx, func(q querier) error {
		rows, err := q.QueryContext(ctx, accountQuery+` ORDER BY lower(name), ext_id`)
		if err != nil {
			return fmt.Errorf("list accounts: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			a, err := scanAccount(rows)
			if err != nil {
				return fmt.Errorf("list accounts: %w", err)
			}
			out.Accounts = append(out.Accounts, a.Account)
		}
		return rows.Err()
	})
	return out, err
}

func (s *Service) getBalance(ctx context.Context, in AccountIn) (BalanceOut, error) {
	var out BalanceOut
	err := s.read(ctx, func(q querier) error {
		a, err := findAccount(ctx, q, "account", in.Account)
		out.Account = a.Account
		return err
	})
	return out, err
}

func (s *Service) listTransactions(ctx context.Context, in ListTransactionsIn) (ListTransactionsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListTransactionsOut{}, err
	}
	for _, d := range []struct{ field, v string }{{"from", in.From}, {"to", in.To}} {
		if _, ok := parseDate(d.v); d.v != "" && !ok {
			return ListTransactionsOut{}, badCall("%s %q is not a date; use YYYY-MM-DD, e.g. 2026-02-01", d.field, clip(d.v))
		}
	}
	if in.From != "" && in.To != "" && in.From > in.To {
		return ListTransactionsOut{}, badCall("from %s is after to %s; swap them", in.From, in.To)
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListTransactionsOut{}, badCall("cursor %q is not one list_transactions returned; pass next_cursor from the previous result unchanged, or omit cursor to start from the first page", clip(in.Cursor))
		}
		after = &c
	}
	out := ListTransactionsOut{Transactions: []Transaction{}}
	err = s.read(ctx, func(q querier) error {
		a, err := findAccount(ctx, q, "account", in.Account)
		if err != nil {
			return err
		}
		where, args := []string{"x.account_id = ?"}, []any{a.id}
		if in.From != "" {
			where, args = append(where, "x.booked_at >= ?"), append(args, in.From)
		}
		if in.To != "" {
			// booked_at is "YYYY-MM-DD HH:MM:SS": every time of day To sorts
			// before To + "~".
			where, args = append(where, "x.booked_at < ?"), append(args, in.To+"~")
		}
		if after != nil {
			where, args = append(where, "(x.booked_at, x.id) < (?, ?)"), append(args, after.at, after.id)
		}
		ts, err := queryTransactions(ctx, q, txQuery+` WHERE `+strings.Join(where, " AND ")+` ORDER BY x.booked_at DESC, x.id DESC LIMIT ?`, append(args, limit+1)...)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts = ts[:limit]
			out.NextCursor = cursor{at: ts[limit-1].BookedAt, id: ts[limit-1].id}.String()
		}
		for _, t := range ts {
			out.Transactions = append(out.Transactions, t.Transaction)
		}
		return nil
	})
	return out, err
}

func (s *Service) searchTransactions(ctx context.Context, in SearchTransactionsIn) (SearchTransactionsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchTransactionsOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch n := utf8.RuneCountInString(query); {
	case query == "":
		return SearchTransactionsOut{}, badCall("query is empty; pass a word to look for in payee, memo or category, e.g. \"rent\"")
	case n > MaxQueryChars:
		return SearchTransactionsOut{}, badCall("query is %d characters; use at most %d (a distinctive word or phrase)", n, MaxQueryChars)
	}
	out := SearchTransactionsOut{Transactions: []Transaction{}}
	err = s.read(ctx, func(q querier) error {
		// Bound as a parameter; instr (not LIKE) so that % and _ are plain.
		where := `(instr(lower(x.payee), lower(?1)) > 0 OR instr(lower(x.memo), lower(?1)) > 0 OR instr(lower(x.category), lower(?1)) > 0)`
		args := []any{query, limit + 1}
		if in.Account != "" {
			a, err := findAccount(ctx, q, "account", in.Account)
			if err != nil {
				return err
			}
			where += ` AND x.account_id = ?3`
			args = append(args, a.id)
		}
		ts, err := queryTransactions(ctx, q, txQuery+` WHERE `+where+` ORDER BY x.booked_at DESC, x.id DESC LIMIT ?2`, args...)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts, out.More = ts[:limit], true
		}
		for _, t := range ts {
			out.Transactions = append(out.Transactions, t.Transaction)
		}
		return nil
	})
	return out, err
}

func (s *Service) transfer(ctx context.Context, in TransferIn) (TransferOut, error) {
	cents, ok := ParseAmount(in.Amount)
	switch n := utf8.RuneCountInString(in.Memo); {
	case !ok:
		return TransferOut{}, badCall("amount %q is not a positive amount with at most 2 decimals; pass a decimal string such as \"12.50\" (no sign, currency symbol or thousands separator, at most %s)", clip(in.Amount), FormatCents(MaxAmountCents))
	case n > MaxMemoChars:
		return TransferOut{}, badCall("memo is %d characters; use at most %d", n, MaxMemoChars)
	case !utf8.ValidString(in.Memo) || strings.ContainsRune(in.Memo, 0):
		return TransferOut{}, badCall("memo contains invalid characters (NUL or invalid UTF-8)")
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	out := TransferOut{AmountCents: cents, Amount: FormatCents(cents), BookedAt: now, Memo: in.Memo}
	err := s.write(ctx, func(q querier) error {
		from, err := findAccount(ctx, q, "from", in.From)
		if err != nil {
			return err
		}
		to, err := findAccount(ctx, q, "to", in.To)
		if err != nil {
			return err
		}
		switch {
		case from.id == to.id:
			return badCall("from and to are both %q; pick two different accounts", from.Account.Account)
		case from.Currency != to.Currency:
			return badCall("%s is in %s and %s in %s; a transfer needs two accounts of the same currency", from.Account.Account, from.Currency, to.Account.Account, to.Currency)
		case from.Kind != KindCredit && from.BalanceCents-cents < 0:
			return badCall("%s (%s) has %s %s available; a transfer of %s would take it below 0. Transfer at most %s", from.Account.Account, from.Kind, FormatCents(max(from.BalanceCents, 0)), from.Currency, out.Amount, FormatCents(max(from.BalanceCents, 0)))
		case to.BalanceCents > MaxAmountCents*10:
			return badCall("%s's balance is too large to receive more", to.Account.Account)
		}
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM transfers`).Scan(&id); err != nil {
			return fmt.Errorf("next transfer id: %w", err)
		}
		if out.Transfer, err = freeExtID(ctx, q, "transfers", fmt.Sprintf("tr-%d", id)); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO transfers (id, ext_id, from_account_id, to_account_id, amount_cents, booked_at, memo) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			id, out.Transfer, from.id, to.id, cents, now, in.Memo); err != nil {
			return fmt.Errorf("insert transfer: %w", err)
		}
		if out.Debit, err = book(ctx, q, from, -cents, now, "Transfer to "+to.Name, in.Memo); err != nil {
			return err
		}
		if out.Credit, err = book(ctx, q, to, cents, now, "Transfer from "+from.Name, in.Memo); err != nil {
			return err
		}
		if out.From, err = reload(ctx, q, from.id); err != nil {
			return err
		}
		out.To, err = reload(ctx, q, to.id)
		return err
	})
	if err != nil {
		return TransferOut{}, err
	}
	return out, nil
}

// book inserts a transaction of category "transfer" and moves the balance.
func book(ctx context.Context, q querier, a account, cents int64, at, payee, memo string) (Transaction, error) {
	var id int64
	if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM transactions`).Scan(&id); err != nil {
		return Transaction{}, fmt.Errorf("next transaction id: %w", err)
	}
	ext, err := freeExtID(ctx, q, "transactions", fmt.Sprintf("tx-%d", id))
	if err != nil {
		return Transaction{}, err
	}
	if _, err := q.ExecContext(ctx, `INSERT INTO transactions (id, ext_id, account_id, booked_at, amount_cents, payee, memo, category) VALUES (?, ?, ?, ?, ?, ?, ?, 'transfer')`,
		id, ext, a.id, at, cents, payee, memo); err != nil {
		return Transaction{}, fmt.Errorf("insert transaction: %w", err)
	}
	if _, err := q.ExecContext(ctx, `UPDATE accounts SET balance_cents = balance_cents + ? WHERE id = ?`, cents, a.id); err != nil {
		return Transaction{}, fmt.Errorf("update balance: %w", err)
	}
	return Transaction{Transaction: ext, Account: a.Account.Account, BookedAt: at, AmountCents: cents, Amount: FormatCents(cents), Payee: payee, Memo: memo, Category: "transfer"}, nil
}

func reload(ctx context.Context, q querier, id int64) (Account, error) {
	a, err := scanAccount(q.QueryRowContext(ctx, accountQuery+` WHERE id = ?`, id))
	if err != nil {
		return Account{}, fmt.Errorf("reload account: %w", err)
	}
	return a.Account, nil
}

// freeExtID returns base, or base-2, base-3, ... if base is taken in table.
func freeExtID(ctx context.Context, q querier, table, base string) (string, error) {
	ext := base
	for i := 2; ; i++ {
		var taken bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM `+table+` WHERE ext_id = ?)`, ext).Scan(&taken); err != nil {
			return "", fmt.Errorf("new %s id: %w", table, err)
		}
		if !taken {
			return ext, nil
		}
		ext = fmt.Sprintf("%s-%d", base, i)
	}
}

func (s *Service) getStatement(ctx context.Context, in GetStatementIn) (StatementOut, error) {
	start, err := s.statementPeriod(in.Period)
	if err != nil {
		return StatementOut{}, err
	}
	var out StatementOut
	err = s.read(ctx, func(q querier) error {
		var err error
		out, err = statement(ctx, q, in, start)
		return err
	})
	return out, err
}

// statementPeriod returns the start of period, or a tool error when period
// is not a month (YYYY-MM) or is after the current one.
func (s *Service) statementPeriod(period string) (time.Time, error) {
	start, ok := parsePeriod(period)
	if !ok {
		return time.Time{}, badCall("period %q is not a month; use YYYY-MM, e.g. 2026-02", clip(period))
	}
	if current := s.clock.Now().UTC().Format(PeriodFormat); period > current {
		return time.Time{}, badCall("period %s is after the current month %s; there is no statement yet", period, current)
	}
	return start, nil
}

// statement computes the statement of in.Account for in.Period, which
// starts at start (statementPeriod), on q.
func statement(ctx context.Context, q querier, in GetStatementIn, start time.Time) (StatementOut, error) {
	from, until := start.Format(DateFormat), start.AddDate(0, 1, 0).Format(DateFormat)
	out := StatementOut{Period: in.Period, Transactions: []Transaction{}}
	a, err := findAccount(ctx, q, "account", in.Account)
	if err != nil {
		return out, err
	}
	out.Account, out.Currency = a.Account.Account, a.Currency
	ts, err := queryTransactions(ctx, q, txQuery+` WHERE x.account_id = ? AND x.booked_at >= ? AND x.booked_at < ? ORDER BY x.booked_at, x.id`, a.id, from, until)
	if err != nil {
		return out, err
	}
	for _, t := range ts {
		out.Transactions = append(out.Transactions, t.Transaction)
		if t.AmountCents > 0 {
			out.InCents += t.AmountCents
		} else {
			out.OutCents += t.AmountCents
		}
	}
	err = q.QueryRowContext(ctx, `SELECT opening_cents, closing_cents FROM statements WHERE account_id = ? AND period = ?`, a.id, in.Period).Scan(&out.OpeningCents, &out.ClosingCents)
	switch {
	case err == nil:
		out.Source = "stored"
	case !errors.Is(err, sql.ErrNoRows):
		return out, fmt.Errorf("stored statement: %w", err)
	default:
		// The balance is now; undo what was booked since the month ended.
		var later int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(SUM(amount_cents), 0) FROM transactions WHERE account_id = ? AND booked_at >= ?`, a.id, until).Scan(&later); err != nil {
			return out, fmt.Errorf("statement: %w", err)
		}
		out.Source = "computed"
		out.ClosingCents = a.BalanceCents - later
		out.OpeningCents = out.ClosingCents - out.InCents - out.OutCents
	}
	out.Opening, out.Closing = FormatCents(out.OpeningCents), FormatCents(out.ClosingCents)
	return out, nil
}
