// Package dbtool is the plumbing every MCP service shares: its database,
// opened per call (so an instance reset that replaces the file is always
// seen, and a vanished file is never recreated empty), read-only reads,
// writes in one BEGIN IMMEDIATE transaction, and the tool handler that
// turns a failure the model can fix into an isError result and any other
// failure into a logged, detail-free one. It imports internal/state only.
package dbtool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/state"
)

// Log attribute keys.
const (
	LogKeyTool = "tool"
	LogKeyErr  = "err"
	LogKeyDB   = "db"
)

// DB is one service's database.
type DB struct {
	// Service names the service in errors and logs ("tasks").
	Service string
	// Path is the world's db/NAME.sqlite.
	Path string
	// Log receives internal failures; it must not be nil.
	Log *slog.Logger
	// writeMu serialises this process's write transactions; BEGIN
	// IMMEDIATE serialises them against other processes.
	writeMu sync.Mutex
}

// Querier is what tools need of *sql.DB and *sql.Conn.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open opens the database, which must exist.
func (d *DB) Open(readOnly bool) (*sql.DB, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return nil, fmt.Errorf("%s database: %w", d.Service, err)
	}
	return state.OpenDB(d.Path, readOnly)
}

// Read runs fn on a read-only connection.
func (d *DB) Read(ctx context.Context, fn func(q Querier) error) error {
	db, err := d.Open(true)
	if err != nil {
		return err
	}
	defer db.Close()
	return fn(db)
}

// Write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise (a tool error changes nothing).
func (d *DB) Write(ctx context.Context, fn func(q Querier) error) (err error) {
	d.writeMu.Lock()
	defer d.writeMu.Unlock()
	db, err := d.Open(false)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := db.Close(); err == nil && cerr != nil {
			err = fmt.Errorf("close %s database: %w", d.Service, cerr)
		}
	}()
	conn, err := db.Conn(ctx)
	if err != nil {
		return fmt.Errorf("%s database: %w", d.Service, err)
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

// ToolError is a failure the model can fix; its message names the problem
// and the fix.
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

// BadCall returns a ToolError.
func BadCall(format string, args ...any) error {
	return &ToolError{Msg: fmt.Sprintf(format, args...)}
}

// Handler adapts fn to the SDK: a ToolError becomes an isError result with
// its message; any other error is logged and becomes an isError result that
// says the service failed, without internal detail.
func Handler[In, Out any](d *DB, tool string, fn func(context.Context, In) (Out, error)) mcp.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, _ *mcp.CallToolRequest, in In) (*mcp.CallToolResult, Out, error) {
		out, err := fn(ctx, in)
		if err == nil {
			return nil, out, nil
		}
		var zero Out
		var te *ToolError
		if errors.As(err, &te) {
			return nil, zero, te
		}
		d.Log.ErrorContext(ctx, d.Service+" tool failed", LogKeyTool, tool, LogKeyDB, d.Path, LogKeyErr, err)
		return nil, zero, fmt.Errorf("%s failed: the %s service had an internal error and changed nothing; try again later", tool, d.Service)
	}
}
