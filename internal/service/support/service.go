package support

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Attribute keys of the service's log records.
const (
	logKeyTool = "tool"
	logKeyErr  = "err"
	logKeyDB   = "db"
)

// Options configures a Service. DBPath, WorldDir and Clock are required.
type Options struct {
	// DBPath is the world's db/support.sqlite. It must exist; it is opened
	// per call, so it may be replaced between calls (an instance reset).
	DBPath string
	// WorldDir is the world's root; the shop's orders are read, read-only,
	// from its db/shop.sqlite, opened per call.
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
}

// Service serves one world's support database over MCP.
type Service struct {
	path     string
	shopPath string
	clock    world.Clock
	self     string
	log      *slog.Logger
	// sessionTimeout closes idle streamable-HTTP sessions.
	sessionTimeout time.Duration
	srvOnce        sync.Once
	srv            *mcp.Server
	// writeMu serializes this process's write transactions; BEGIN IMMEDIATE
	// serializes them against other processes.
	writeMu sync.Mutex
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
		self: opts.Self, log: opts.Logger, sessionTimeout: opts.SessionTimeout}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	db, err := s.open(false)
	if err != nil {
		return nil, fmt.Errorf("support: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("support: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools registered.
func (s *Service) Server() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "wildawm-support", Title: "Shop support", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("The shop website's customer support desk for %s: tickets about items of orders placed on the shop. "+
			"Use list_tickets and get_ticket to see tickets and their history, open_ticket to ask about, return (within %d days of the order) "+
			"or claim warranty on an item of an order, add_comment to reply on a ticket and close_ticket when it is settled.", s.self, ReturnDays),
		Logger: s.log,
	})
	s.addTools(srv)
	return srv
}

// HTTPHandler serves the service over MCP's streamable HTTP transport, one
// server for all sessions. The SDK's default DNS-rebinding protection stays on:
// requests that arrive on a loopback address must name a loopback Host.
func (s *Service) HTTPHandler() http.Handler {
	// One server serves every handler of this service: building one infers
	// the tools' JSON schemas, which costs more than a reset.
	s.srvOnce.Do(func() { s.srv = s.Server() })
	srv := s.srv
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Logger: s.log, SessionTimeout: s.sessionTimeout})
}

// RunStdio serves one session over stdin/stdout until the client disconnects
// or ctx is cancelled.
func (s *Service) RunStdio(ctx context.Context) error {
	return s.Server().Run(ctx, &mcp.StdioTransport{})
}

// open opens the database; it never creates it (a missing file is an error,
// not a new empty database in the world).
func (s *Service) open(readOnly bool) (*sql.DB, error) {
	if _, err := os.Stat(s.path); err != nil {
		return nil, fmt.Errorf("support database: %w", err)
	}
	return state.OpenDB(s.path, readOnly)
}

// errNoShop is returned by readShop when the world has no shop database.
var errNoShop = errors.New("no shop database")

// readShop runs fn on a read-only connection to the shop's database.
func (s *Service) readShop(ctx context.Context, fn func(q querier) error) error {
	if _, err := os.Stat(s.shopPath); errors.Is(err, os.ErrNotExist) {
		return errNoShop
	} else if err != nil {
		return fmt.Errorf("shop database: %w", err)
	}
	db, err := state.OpenDB(s.shopPath, true)
	if err != nil {
		return fmt.Errorf("shop database: %w", err)
	}
	defer db.Close()
	return fn(db)
}

// querier is what the tools need of *sql.DB and *sql.Conn.
type querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// read runs fn on a read-only connection.
func (s *Service) read(ctx context.Context, fn func(q querier) error) error {
	db, err := s.open(true)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise (a tool error changes nothing).
func (s *Service) write(ctx context.Context, fn func(q querier) error) (err error) {
	s.writeMu.Lock()
	defer s.writeMu.Unlock()
	db, err := s.open(false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close support database: %w", cerr)
		}
	}()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("support database: %w", err)
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	if err := fn(conn); err != nil {
		if _, rerr := conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := conn.ExecContext(context.WithoutCancel(ctx), "COMMIT"); err != nil {
		conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// toolError is a failure the model can fix; its message names the problem
// and the fix.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

func badCall(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// handler adapts fn to the SDK: a tool error becomes an IsError result with
// its message; any other error is logged and becomes an IsError result that
// says the service failed, without internal detail.
func handler[In, Out any](s *Service, tool string, fn func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := fn(ctx, in)
		if err == nil {
			return nil, out, nil
		}
		var zero Out
		var te *toolError
		if errors.As(err, &te) {
			return nil, zero, te
		}
		s.log.ErrorContext(ctx, "support tool failed", logKeyTool, tool, logKeyDB, s.path, logKeyErr, err)
		return nil, zero, fmt.Errorf("%s failed: the support service had an internal error and changed nothing; try again later", tool)
	}
}
