package support

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/world"
)

// Options configures a Service. DBPath, WorldDir and Clock are required.
type Options struct {
	// DBPath is the world's db/support.sqlite. It must exist. It is
	// held open between calls and reopened when the file is replaced
	// (dbtool.DB; the runtime suspends the service around a reset).
	DBPath string
	// WorldDir is the world's root; the shop's orders are read, read-only,
	// from its db/shop.sqlite.
	WorldDir string
	// Clock gives opened_at, updated_at and event times, and "today" for
	// the return window.
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

// Service serves one world's support database over MCP.
type Service struct {
	dbtool.Transports // HTTPHandler and RunStdio

	path     string
	shopPath string
	clock    world.Clock
	self     string
	log      *slog.Logger
	db       *dbtool.DB // the support database
	shop     *dbtool.DB // the shop's database, read only
}

// New checks opts and that the database at opts.DBPath has the service's
// tables, and returns a Service. The shop's database is not needed until a
// ticket is opened.
func New(opts Options) (*Service, error) {
	switch {
	case opts.DBPath == "":
		return nil, errors.New("support: Options.DBPath is required")
	case opts.WorldDir == "":
		return nil, errors.New("support: Options.WorldDir is required")
	case opts.Clock == nil:
		return nil, errors.New("support: Options.Clock is required")
	}
	if opts.Self == "" {
		opts.Self = "the user"
	}
	s := &Service{path: opts.DBPath, shopPath: world.DBPath(opts.WorldDir, ShopDBName), clock: opts.Clock,
		self: opts.Self, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout}
	s.db = &dbtool.DB{Service: "support", Path: s.path, Log: s.log, Ephemeral: opts.Ephemeral, Schemas: opts.Schemas}
	s.shop = &dbtool.DB{Service: "shop", Path: s.shopPath, Log: s.log, ReadOnly: true}
	db, err := s.db.Open(false)
	if err != nil {
		return nil, fmt.Errorf("support: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("support: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools and its ticket
// resource template registered.
func (s *Service) Server() *mcp.Server {
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-support", Title: "Shop support", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("The shop website's customer support desk for %s: tickets about items of orders placed on the shop. "+
			"Use list_tickets and get_ticket to see tickets and their history, open_ticket to ask about, return (within %d days of the order) "+
			"or claim warranty on an item of an order, add_comment to reply on a ticket and close_ticket when it is settled.", s.self, ReturnDays),
		Logger: s.log,
	})
	s.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:  "ticket",
		Title: "Support ticket",
		Description: "One support ticket as text: its subject, kind (return, warranty, question), status, the shop order and item (sku) it is about, " +
			"its times, then its whole history oldest first, one line per event (the opening message, comments and status changes) with its author, time and the status after it. " +
			"{ticket} is the ticket id from list_tickets (e.g. T-1001).",
		MIMEType:    "text/plain",
		URITemplate: ticketURIPrefix + "{ticket}",
	}, s.db.ResourceHandler(ticketURIPrefix, "text/plain", 1, renderTicket))
	return srv
}

// errNoShop is returned by readShop when the world has no shop database.
var errNoShop = errors.New("no shop database")

// readShop runs fn on the shop's database, opened read-only.
func (s *Service) readShop(ctx context.Context, fn func(q querier) error) error {
	if _, err := os.Stat(s.shopPath); errors.Is(err, os.ErrNotExist) {
		return errNoShop
	} else if err != nil {
		return fmt.Errorf("shop database: %w", err)
	}
	return s.shop.Read(ctx, fn)
}

// querier is what the tools need of a connection.
type querier = dbtool.Querier

// read runs fn in a transaction that is rolled back (dbtool.DB.Read).
func (s *Service) read(ctx context.Context, fn func(q querier) error) error {
	return s.db.Read(ctx, fn)
}

// write runs fn in one BEGIN IMMEDIATE transaction (dbtool.DB.Write).
func (s *Service) write(ctx context.Context, fn func(q querier) error) error {
	return s.db.Write(ctx, fn)
}

func badCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }

// Suspend closes the support and shop databases and holds every call until
// resume (dbtool.DB.Suspend); the runtime brackets an instance reset with it.
func (s *Service) Suspend() (resume func()) {
	r1, r2 := s.db.Suspend(), s.shop.Suspend()
	return func() { r2(); r1() }
}

// Hold holds every call to either database until release
// (dbtool.DB.Hold); the runtime brackets a snapshot with it.
func (s *Service) Hold() (release func()) {
	r1, r2 := s.db.Hold(), s.shop.Hold()
	return func() { r2(); r1() }
}
