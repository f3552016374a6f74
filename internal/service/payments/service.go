package payments

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/world"
)

// Options configures a Service. DBPath and Clock are required.
type Options struct {
	// DBPath is the world's db/payments.sqlite. It must exist. It is
	// held open between calls and reopened when the file is replaced
	// (dbtool.DB; the runtime suspends the service around a reset).
	DBPath string
	// Clock gives booked_at of transfers and the current month of
	// get_statement.
	Clock world.Clock
	// Self is the persona's name, used in the server's instructions;
	// empty means "the user".
	Self string
	// Logger receives internal failures; nil discards.
	Logger *slog.Logger
	// SessionTimeout closes streamable-HTTP sessions idle this long; zero
	// keeps them until the client ends them.
	SessionTimeout time.Duration
	// Ephemeral marks the world as a throwaway copy (a runtime instance, a
	// harness's scratch world): writes then keep their rollback journal in
	// memory and skip fsync, so a crash of this process or of the machine
	// mid-write may leave the database torn. Leave it false for a world
	// that must survive a crash.
	Ephemeral bool
	// Schemas, when set, shares the tools' schemas with every other
	// service given the same cache (a runtime's instances).
	Schemas *dbtool.SchemaCache
}

// Service serves one world's payments database over MCP.
type Service struct {
	dbtool.Transports // HTTPHandler and RunStdio

	path  string
	clock world.Clock
	self  string
	log   *slog.Logger
	db    *dbtool.DB // the database (one connection, held open)
}

// New checks opts and that the database at opts.DBPath has the service's
// tables, and returns a Service.
func New(opts Options) (*Service, error) {
	switch {
	case opts.DBPath == "":
		return nil, errors.New("payments: Options.DBPath is required")
	case opts.Clock == nil:
		return nil, errors.New("payments: Options.Clock is required")
	}
	if opts.Self == "" {
		opts.Self = "the user"
	}
	s := &Service{path: opts.DBPath, clock: opts.Clock, self: opts.Self, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout}
	s.db = &dbtool.DB{Service: "payments", Path: s.path, Log: s.log, Ephemeral: opts.Ephemeral, Schemas: opts.Schemas}
	db, err := s.open(false)
	if err != nil {
		return nil, fmt.Errorf("payments: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("payments: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools and its account
// and statement resource templates registered.
func (s *Service) Server() *mcp.Server {
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-payments", Title: "Payments", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Bank accounts of %s. Use list_accounts to see accounts and balances, get_balance for one account, list_transactions and search_transactions to find payments, get_statement for a month's opening and closing balance, and transfer to move money between two of the accounts. Amounts are decimal strings with at most 2 decimals (e.g. \"12.50\"); *_cents fields are integer cents.", s.self),
		Logger:       s.log,
	})
	s.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:  "account",
		Title: "Bank account",
		Description: fmt.Sprintf("One account as text: its name, kind, currency and balance (with what a transfer can take out, or what is owed on a credit account), "+
			"then its latest transactions, newest first (at most %d; list_transactions pages through all), each with its time, signed amount, payee, memo, category and id. "+
			"{account} is the account id from list_accounts (e.g. chk-main).", ResourceTransactions),
		MIMEType:    "text/plain",
		URITemplate: accountURIPrefix + "{account}",
	}, s.db.ResourceHandler(accountURIPrefix, "text/plain", 1, renderAccount))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:  "statement",
		Title: "Monthly statement",
		Description: "An account's statement for one month as text, as get_statement returns it: opening and closing balance, money in and out, " +
			"whether it was issued or computed, then the month's transactions, oldest first. {account} is the account id from list_accounts, " +
			"{period} the month, YYYY-MM, not after the current month.",
		MIMEType:    "text/plain",
		URITemplate: statementURIPrefix + "{account}/{period}",
	}, s.db.ResourceHandler(statementURIPrefix, "text/plain", 2, s.renderStatement))
	return srv
}

// querier is what the tools need of *sql.DB and *sql.Conn.
type querier = dbtool.Querier

// open opens the database; it never creates it (a missing file is an error,
// not a new empty database in the world).
func (s *Service) open(readOnly bool) (*sql.DB, error) { return s.db.Open(readOnly) }

// read runs fn in a transaction that is rolled back (dbtool.DB.Read).
func (s *Service) read(ctx context.Context, fn func(q querier) error) error {
	return s.db.Read(ctx, fn)
}

// write runs fn in one BEGIN IMMEDIATE transaction (dbtool.DB.Write).
func (s *Service) write(ctx context.Context, fn func(q querier) error) error {
	return s.db.Write(ctx, fn)
}

func badCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }

// Suspend closes the database and holds every call until resume
// (dbtool.DB.Suspend); the runtime brackets an instance reset with it.
func (s *Service) Suspend() (resume func()) { return s.db.Suspend() }

// Hold holds every call until release (dbtool.DB.Hold); the runtime
// brackets a snapshot of the instance with it.
func (s *Service) Hold() (release func()) { return s.db.Hold() }
