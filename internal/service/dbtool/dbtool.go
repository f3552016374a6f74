// Package dbtool is the plumbing the service engine (internal/service/engine)
// serves every MCP service with: its database, on one connection held open
// between calls and reopened when the file under its path is replaced (a
// vanished file is an error, never recreated empty), reads in a
// transaction that is always rolled back, writes in one BEGIN IMMEDIATE
// transaction (dbtool.go, stmt.go); the check of a tool's arguments against
// the top level of its input schema and ToolError, a failure the model can
// fix (args.go); schemas in the form the model APIs' function-calling
// adapters take and the check that they are (schema.go, adapters.go);
// resource handlers (resource.go); page cursors (page.go); tool results
// encoded in one pass (result.go); and the stdio and streamable-HTTP
// transports (stdio.go, server.go), which answer a request of id null with
// an invalid-request error (nullid.go). Every connection carries the SQL guard (internal/sqlguard),
// which judges the statements of a Guarded querier. It imports
// internal/state and internal/sqlguard.
package dbtool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/wildawm/wildawm/internal/sqlguard"
	"github.com/wildawm/wildawm/internal/state"
	"modernc.org/sqlite"
)

// Log attribute keys.
const (
	LogKeyTool = "tool"
	LogKeyErr  = "err"
	LogKeyDB   = "db"
)

// DB is one service's database, on one connection that stays open between
// calls (an open costs more than most tool calls), with the statements the
// tools run prepared once. Reads and writes share it, so a write does not
// make the next read reload its pages; reads run in a transaction that is
// rolled back, so a read tool cannot write. The connection is reopened
// when the file at Path is a different file than the one it holds
// (compared by device and inode on every call). An instance reset replaces
// the file under the same path, on an overlay possibly with the same inode
// number, so the runtime brackets every reset with Suspend, and every copy
// of the files (a snapshot) with Hold.
type DB struct {
	// Service names the service in errors and logs ("tasks").
	Service string
	// Path is the world's db/NAME.sqlite.
	Path string
	// Log receives internal failures; it must not be nil.
	Log *slog.Logger
	// Ephemeral keeps the rollback journal of writes in memory and skips
	// fsync (PRAGMA journal_mode=MEMORY, synchronous=OFF): for a world
	// that is a throwaway copy, where a crash mid-write may leave the
	// database torn. Otherwise writes use a journal file and fsync.
	Ephemeral bool
	// ReadOnly opens the database read-only (another service's database
	// that this one only reads); Write then fails.
	ReadOnly bool

	// gate is held shared by every call for its whole length and
	// exclusively by Suspend and Hold.
	gate sync.RWMutex
	// gen counts the resets (Suspend's resumes): a call that waited
	// through one fails rather than run in the world that replaced its
	// own.
	gen atomic.Uint64
	// mu serialises this process's calls on the connection; BEGIN
	// IMMEDIATE serialises writes against other processes.
	mu sync.Mutex
	h  handle
}

// ErrReset is the error of a call that waited while the world was reset:
// it did nothing.
var ErrReset = &ToolError{Msg: "the world was reset while this call waited, and the call did nothing; make it again if it is still needed"}

// handle is the open connection and its prepared statements; DB.mu guards
// it.
type handle struct {
	db    *sql.DB
	conn  *sql.Conn
	file  fileID // the file conn holds
	stmts map[stmtKey]*sql.Stmt
	// guard is the SQL guard installed on conn (sqlguard): off but for the
	// statements of a Guarded querier.
	guard *sqlguard.Guard
	// changes counts the rows the connection's statements inserted,
	// updated or deleted (triggers' included), from SQLite's pre-update
	// hook: what Read compares before and after a call without asking
	// SQLite for total_changes() twice. nil when the driver offers no such
	// hook, and Read asks.
	changes *atomic.Int64
}

// fileID identifies a file while it exists.
type fileID struct{ dev, ino uint64 }

// Querier is what tools need of *sql.DB and *sql.Conn.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Open opens a new handle to the database, which must exist; the caller
// closes it. Tools use Read and Write, which keep their connection open.
func (d *DB) Open(readOnly bool) (*sql.DB, error) {
	if _, err := os.Stat(d.Path); err != nil {
		return nil, fmt.Errorf("%s database: %w", d.Service, err)
	}
	return state.OpenDB(d.Path, readOnly)
}

// open makes d.h hold a connection to the file now at d.Path, closing one
// to a file since replaced or removed, and drops the prepared statements
// when there are too many (no rows of theirs are open between calls); d.mu
// is held.
func (d *DB) open(ctx context.Context) error {
	h := &d.h
	fi, err := os.Stat(d.Path)
	if err != nil {
		h.close()
		return fmt.Errorf("%s database: %w", d.Service, err)
	}
	var id fileID
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id = fileID{dev: uint64(st.Dev), ino: st.Ino}
	}
	if h.conn != nil && h.file == id {
		if len(h.stmts) >= maxStmts {
			h.closeStmts()
		}
		return nil
	}
	h.close()
	db, err := state.OpenDB(d.Path, d.ReadOnly)
	if err != nil {
		return err
	}
	ctx = context.WithoutCancel(ctx) // a half-set-up connection is not kept
	conn, err := db.Conn(ctx)
	if err == nil && d.Ephemeral && !d.ReadOnly {
		_, err = conn.ExecContext(ctx, "PRAGMA journal_mode=MEMORY; PRAGMA synchronous=OFF")
	}
	if err != nil {
		if conn != nil {
			conn.Close()
		}
		db.Close()
		return fmt.Errorf("%s database: %w", d.Service, err)
	}
	guard := &sqlguard.Guard{}
	if err := guard.Install(conn); err != nil {
		conn.Close()
		db.Close()
		return fmt.Errorf("%s database: %w", d.Service, err)
	}
	*h = handle{db: db, conn: conn, file: id, stmts: map[stmtKey]*sql.Stmt{}, guard: guard, changes: countChanges(conn)}
	return nil
}

// preUpdateHooker is the part of modernc.org/sqlite's connection that
// registers a pre-update hook.
type preUpdateHooker interface {
	RegisterPreUpdateHook(sqlite.PreUpdateHookFn)
}

// countChanges registers a pre-update hook on conn that counts every row
// changed, or returns nil if the driver's connection has none.
func countChanges(conn *sql.Conn) *atomic.Int64 {
	n := new(atomic.Int64)
	err := conn.Raw(func(dc any) error {
		c, ok := dc.(preUpdateHooker)
		if !ok {
			return errors.ErrUnsupported
		}
		c.RegisterPreUpdateHook(func(sqlite.SQLitePreUpdateData) { n.Add(1) })
		return nil
	})
	if err != nil {
		return nil
	}
	return n
}

// closeStmts closes h's prepared statements.
func (h *handle) closeStmts() error {
	var errs []error
	for k, st := range h.stmts {
		errs = append(errs, st.Close())
		delete(h.stmts, k)
	}
	return errors.Join(errs...)
}

// close closes h's statements and connection.
func (h *handle) close() error {
	if h.db == nil {
		return nil
	}
	errs := []error{h.closeStmts(), h.conn.Close(), h.db.Close()}
	*h = handle{}
	return errors.Join(errs...)
}

// Close closes the database's connection; the next call opens it again.
func (d *DB) Close() error {
	d.gate.Lock()
	defer d.gate.Unlock()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.h.close()
}

// Suspend waits for the calls in flight, closes the database and holds
// every new call until resume is called. The calls that waited then fail
// with ErrReset, and later ones open the database again. The runtime
// suspends every service of an instance around its reset, so no connection
// keeps the replaced file (or its mount) alive, and no call made before
// the reset lands in the world after it.
func (d *DB) Suspend() (resume func()) {
	d.gate.Lock()
	d.mu.Lock()
	if err := d.h.close(); err != nil {
		d.Log.Error(d.Service+" database close failed", LogKeyDB, d.Path, LogKeyErr, err)
	}
	d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			d.gen.Add(1)
			d.gate.Unlock()
		})
	}
}

// Hold waits for the calls in flight and holds every new call until
// release is called, when they go on: between the two the database file is
// whole and nothing writes it (a snapshot copies it then).
func (d *DB) Hold() (release func()) {
	d.gate.Lock()
	var once sync.Once
	return func() { once.Do(d.gate.Unlock) }
}

// enter admits a call: it holds the gate shared and d.mu, and has the
// connection open. It fails with ErrReset if a reset happened while it
// waited.
func (d *DB) enter(ctx context.Context) (leave func(), err error) {
	gen := d.gen.Load()
	d.gate.RLock()
	if d.gen.Load() != gen {
		d.gate.RUnlock()
		return nil, ErrReset
	}
	d.mu.Lock()
	leave = func() {
		d.mu.Unlock()
		d.gate.RUnlock()
	}
	if err := d.open(ctx); err != nil {
		leave()
		return nil, err
	}
	return leave, nil
}

// Read runs fn in a transaction that is always rolled back, so a read
// tool cannot change the database; one that tried gets an error.
func (d *DB) Read(ctx context.Context, fn func(q Querier) error) error {
	return d.ReadAfter(ctx, nil, fn)
}

// ReadAfter is Read with pre run first on the same connection, outside
// any transaction, and fn only when pre succeeds: pre is for statements
// that read no table (checks of a call's arguments), which then cost no
// BEGIN, change count or ROLLBACK when they refuse the call.
func (d *DB) ReadAfter(ctx context.Context, pre, fn func(q Querier) error) error {
	leave, err := d.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	q := newStmtQuerier(&d.h)
	if pre != nil {
		if err := pre(q); err != nil {
			return err
		}
	}
	// BEGIN, ROLLBACK and the change counts run whatever ctx says: a
	// statement that completes as ctx ends reports ctx's error, and a
	// transaction it did open must not outlive the call.
	bg := context.WithoutCancel(ctx)
	before, err := q.totalChanges(bg)
	if err != nil {
		d.h.close()
		return err
	}
	if _, err := q.ExecContext(bg, "BEGIN"); err != nil {
		d.h.close()
		return fmt.Errorf("begin: %w", err)
	}
	defer d.closeOnPanic()
	err = fn(q)
	after, cerr := q.totalChanges(bg)
	if _, rerr := q.ExecContext(bg, "ROLLBACK"); rerr != nil {
		d.h.close() // a connection whose state is in doubt is not reused
		return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
	}
	switch {
	case err != nil:
		return err
	case cerr != nil:
		return cerr
	case after != before:
		return fmt.Errorf("%s: a read changed %d rows (rolled back): the tool must use Write", d.Service, after-before)
	}
	return nil
}

// Write runs fn in one BEGIN IMMEDIATE transaction, committed when fn
// returns nil and rolled back otherwise (a tool error changes nothing).
func (d *DB) Write(ctx context.Context, fn func(q Querier) error) (err error) {
	return d.WriteAfter(ctx, nil, fn)
}

// WriteAfter is Write with pre run first, as ReadAfter runs it: outside
// the transaction, which then is not begun when pre refuses the call.
func (d *DB) WriteAfter(ctx context.Context, pre, fn func(q Querier) error) (err error) {
	if d.ReadOnly {
		return fmt.Errorf("%s database: opened read-only", d.Service)
	}
	leave, err := d.enter(ctx)
	if err != nil {
		return err
	}
	defer leave()
	q := newStmtQuerier(&d.h)
	if pre != nil {
		if err := pre(q); err != nil {
			return err
		}
	}
	bg := context.WithoutCancel(ctx) // as in Read
	if _, err := q.ExecContext(bg, "BEGIN IMMEDIATE"); err != nil {
		d.h.close()
		return fmt.Errorf("begin: %w", err)
	}
	defer d.closeOnPanic()
	if err := fn(q); err != nil {
		if _, rerr := q.ExecContext(bg, "ROLLBACK"); rerr != nil {
			d.h.close() // a connection whose state is in doubt is not reused
			return errors.Join(err, fmt.Errorf("rollback: %w", rerr))
		}
		return err
	}
	if _, err := q.ExecContext(bg, "COMMIT"); err != nil {
		q.ExecContext(bg, "ROLLBACK")
		d.h.close()
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

// closeOnPanic closes the connection if fn panicked inside a transaction
// (closing rolls it back), so the next call does not find it open, and
// panics on; d.mu is held.
func (d *DB) closeOnPanic() {
	if r := recover(); r != nil {
		d.h.close()
		panic(r)
	}
}
