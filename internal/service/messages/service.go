package messages

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

// Options configures a Service. DBPath, Clock and Self are required.
type Options struct {
	// DBPath is the world's db/messages.sqlite. It must exist. It is
	// held open between calls and reopened when the file is replaced
	// (dbtool.DB; the runtime suspends the service around a reset).
	DBPath string
	// Clock gives the sent_at of new messages and created_at of new threads.
	Clock world.Clock
	// Self is the persona's sender name: the sender of every message
	// send_message writes.
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

// Service serves one world's messages database over MCP.
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
		return nil, errors.New("messages: Options.DBPath is required")
	case opts.Clock == nil:
		return nil, errors.New("messages: Options.Clock is required")
	case opts.Self == "":
		return nil, errors.New("messages: Options.Self is required")
	}
	s := &Service{path: opts.DBPath, clock: opts.Clock, self: opts.Self, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout}
	s.db = &dbtool.DB{Service: "messages", Path: s.path, Log: s.log, Ephemeral: opts.Ephemeral, Schemas: opts.Schemas}
	db, err := s.open(false)
	if err != nil {
		return nil, fmt.Errorf("messages: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("messages: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools and its thread
// resource template registered.
func (s *Service) Server() *mcp.Server {
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-messages", Title: "Messages", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("Direct and group messages of %s. Use list_threads to see conversations, read_thread to read one (this marks it read), search_messages to find a message, and send_message to write as %s.", s.self, s.self),
		Logger:       s.log,
	})
	s.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "thread",
		Title:       "Message thread",
		Description: "The whole thread as plain text, one message per line. Reading it does not mark messages read; use the read_thread tool for that.",
		MIMEType:    "text/plain",
		URITemplate: threadURIPrefix + "{thread}",
	}, s.db.ResourceHandler(threadURIPrefix, "text/plain", 1, renderThread))
	return srv
}

// querier is what the tools need of *sql.DB and *sql.Conn.
type querier = dbtool.Querier

// open opens the database; it never creates it (a missing file is an error,
// not a new empty database in the world).
type toolError = dbtool.ToolError

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
