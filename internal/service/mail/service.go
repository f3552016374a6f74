package mail

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

// Options configures a Service. DBPath, WorldDir, Clock, Self and
// SelfAddress are required.
type Options struct {
	// DBPath is the world's db/mail.sqlite. It must exist. It is held open
	// between calls and reopened when the file is replaced (dbtool.DB; the
	// runtime suspends the service around a reset).
	DBPath string
	// WorldDir is the world's root: send_mail attaches files from
	// WorldDir/home, and only from there.
	WorldDir string
	// Clock gives the sent_at of mails that send_mail writes.
	Clock world.Clock
	// Self is the persona's name, used in the server's instructions.
	Self string
	// SelfAddress is the persona's mail address: the from_addr of every mail
	// send_mail writes.
	SelfAddress string
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

// Service serves one world's mail database over MCP.
type Service struct {
	dbtool.Transports // HTTPHandler and RunStdio

	path     string
	worldDir string
	clock    world.Clock
	self     string
	selfAddr string
	log      *slog.Logger
	db       *dbtool.DB // the database (one connection, held open)
}

// New checks opts and that the database at opts.DBPath has the service's
// tables, and returns a Service.
func New(opts Options) (*Service, error) {
	switch {
	case opts.DBPath == "":
		return nil, errors.New("mail: Options.DBPath is required")
	case opts.WorldDir == "":
		return nil, errors.New("mail: Options.WorldDir is required")
	case opts.Clock == nil:
		return nil, errors.New("mail: Options.Clock is required")
	case opts.Self == "":
		return nil, errors.New("mail: Options.Self is required")
	case opts.SelfAddress == "":
		return nil, errors.New("mail: Options.SelfAddress is required")
	}
	if msg := checkAddress(opts.SelfAddress); msg != "" {
		return nil, fmt.Errorf("mail: Options.SelfAddress: %s", msg)
	}
	s := &Service{path: opts.DBPath, worldDir: opts.WorldDir, clock: opts.Clock, self: opts.Self, selfAddr: opts.SelfAddress,
		log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout}
	s.db = &dbtool.DB{Service: "mail", Path: s.path, Log: s.log, Ephemeral: opts.Ephemeral, Schemas: opts.Schemas}
	db, err := s.open(false)
	if err != nil {
		return nil, fmt.Errorf("mail: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("mail: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools and its mailbox
// resource template registered.
func (s *Service) Server() *mcp.Server {
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-mail", Title: "Mail", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("The mailbox of %s <%s>. Use list_folders and list_mails to browse, search_mails to find a mail, "+
			"read_mail or read_thread to read (this marks mails read), send_mail to write (and reply) as %s, "+
			"and move_mail, star_mail and delete_mail to organise.", s.self, s.selfAddr, s.selfAddr),
		Logger: s.log,
	})
	s.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "mailbox",
		Title:       "Mail folder",
		Description: "The mails of one folder as plain text, newest first, one line per mail. Reading it does not mark mails read.",
		MIMEType:    "text/plain",
		URITemplate: mailboxURIPrefix + "{folder}",
	}, s.db.ResourceHandler(mailboxURIPrefix, "text/plain", 1, renderMailbox))
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
