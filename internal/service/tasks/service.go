package tasks

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
	// DBPath is the world's db/tasks.sqlite. It must exist. It is
	// held open between calls and reopened when the file is replaced
	// (dbtool.DB; the runtime suspends the service around a reset).
	DBPath string
	// Clock gives created_at and completed_at of to-dos, and "today" for
	// overdue.
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

// Service serves one world's tasks database over MCP.
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
		return nil, errors.New("tasks: Options.DBPath is required")
	case opts.Clock == nil:
		return nil, errors.New("tasks: Options.Clock is required")
	}
	if opts.Self == "" {
		opts.Self = "the user"
	}
	s := &Service{path: opts.DBPath, clock: opts.Clock, self: opts.Self, log: opts.Logger}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.Transports = dbtool.Transports{Build: s.Server, Log: s.log, SessionTimeout: opts.SessionTimeout}
	s.db = &dbtool.DB{Service: "tasks", Path: s.path, Log: s.log, Ephemeral: opts.Ephemeral, Schemas: opts.Schemas}
	db, err := s.open(false)
	if err != nil {
		return nil, fmt.Errorf("tasks: %w", err)
	}
	defer db.Close()
	if err := checkSchema(context.Background(), db); err != nil {
		return nil, fmt.Errorf("tasks: %s: %w", opts.DBPath, err)
	}
	return s, nil
}

// Server returns a new MCP server with the service's tools and its project
// and to-do resource templates registered.
func (s *Service) Server() *mcp.Server {
	srv := dbtool.NewServer(&mcp.Implementation{Name: "wildawm-tasks", Title: "Tasks", Version: "1"}, &mcp.ServerOptions{
		Instructions: fmt.Sprintf("The to-do list of %s, grouped in projects. Use list_projects and list_todos to see what there is, search_todos to find a to-do, create_todo, update_todo, complete_todo, reopen_todo and delete_todo to change to-dos, create_project and archive_project to manage projects. A to-do is overdue when it is open and its due date is before today (the service's clock gives today).", s.self),
		Logger:       s.log,
	})
	s.addTools(srv)
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:  "project",
		Title: "To-do project",
		Description: fmt.Sprintf("One project as markdown: whether it is archived, today's date, its numbers of open, overdue and done to-dos, "+
			"then a checklist of its to-dos (open first, by due date and priority; at most %d), each with its id, due date, priority and status. "+
			"{project} is the project's name from list_projects.", ResourceTodos),
		MIMEType:    "text/markdown",
		URITemplate: projectURIPrefix + "{project}",
	}, s.db.ResourceHandler(projectURIPrefix, "text/markdown", 1, s.renderProject))
	srv.AddResourceTemplate(&mcp.ResourceTemplate{
		Name:        "todo",
		Title:       "To-do",
		Description: "One to-do as markdown: its title, project, status, due date, priority, whether it is overdue, its times and its notes. {todo} is the to-do id from list_todos or search_todos (e.g. todo-3).",
		MIMEType:    "text/markdown",
		URITemplate: todoURIPrefix + "{todo}",
	}, s.db.ResourceHandler(todoURIPrefix, "text/markdown", 1, s.renderTodo))
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
