package delta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"modernc.org/sqlite"

	"github.com/wildawm/wildawm/internal/state"
)

// DefaultSQLTimeout bounds one SQL statement of a delta at apply time when
// Options.SQLTimeout is zero.
const DefaultSQLTimeout = 10 * time.Second

// ErrSQLTimeout is matched by errors.Is when a statement of a delta did not
// finish within Options.SQLTimeout.
var ErrSQLTimeout = errors.New("SQL statement did not finish in time")

// hostTables are eponymous virtual tables that read the host, the build or
// the connection's history rather than the world. Every pragma_* table is
// refused as well.
var hostTables = []string{"sqlite_stmt", "sqlite_dbpage", "dbstat"}

// sqlGuard is the one rule for the SQL a delta brings (DDL and {"sql": ...}
// expressions). Lint installs it on its in-memory schema and apply on the
// world's databases, as an SQLite authorizer, so both refuse the same
// statements when they compile them:
//
//   - a recursive common table expression, which may never end;
//   - a table-valued pragma (pragma_database_list and every other pragma_*
//     table) or another table that reads the host, which would store a host
//     path or the build's settings in the world;
//   - PRAGMA, ATTACH and DETACH;
//   - CREATE TABLE ... AS SELECT, which writes rows outside db.insert.
//
// It is off for the statements delta itself writes (schema reads through
// pragma_table_info, BEGIN, COMMIT); run turns it on for one statement.
type sqlGuard struct {
	on    bool
	table bool   // the statement creates a table
	view  string // the view the statement creates, if any
	why   string // the first refusal of the statement
}

func (g *sqlGuard) authorize(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	if !g.on {
		return sqlite.AuthorizerOK
	}
	var why string
	switch action {
	case sqlite.AuthRecursive:
		why = "a recursive common table expression (WITH RECURSIVE) may never end: write the values as literals or the rows with db.insert"
	case sqlite.AuthRead:
		t := strings.ToLower(arg1)
		if strings.HasPrefix(t, "pragma_") || slices.Contains(hostTables, t) {
			why = fmt.Sprintf("%s reads the host or the connection, not the world (pragma_database_list, for one, gives a host path): a delta may not read it", arg1)
		}
	case sqlite.AuthPragma:
		why = fmt.Sprintf("PRAGMA %s is not allowed in a delta", arg1)
	case sqlite.AuthAttach, sqlite.AuthDetach:
		why = "ATTACH and DETACH are not allowed in a delta: every database is its own db"
	case sqlite.AuthCreateTable, sqlite.AuthCreateTempTable:
		g.table = true
	case sqlite.AuthCreateView, sqlite.AuthCreateTempView:
		g.view = arg1
	case sqlite.AuthSelect:
		if g.table {
			why = "CREATE TABLE ... AS SELECT writes rows outside db.insert: declare the columns (CREATE TABLE t (a, b)) and add the rows with db.insert"
		}
	}
	if why == "" {
		return sqlite.AuthorizerOK
	}
	if g.why == "" {
		g.why = why
	}
	return sqlite.AuthorizerDeny
}

// guardedConn is what the guard needs of a connection or transaction.
type guardedConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// run runs f, which compiles one statement of the delta, with the guard on.
// A refusal is returned as the guard's reason rather than SQLite's "not
// authorized".
func (g *sqlGuard) run(f func() error) error {
	g.on, g.table, g.view, g.why = true, false, "", ""
	err := f()
	g.on = false
	if g.why != "" {
		return errors.New(g.why)
	}
	return err
}

// execDDL runs one DDL statement of a delta under the guard. A view it
// creates is compiled at once, so a refusal inside the view's body is
// reported by this statement rather than by the first one that reads it.
func (g *sqlGuard) execDDL(ctx context.Context, c guardedConn, stmt string) error {
	return g.run(func() error {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return err
		}
		if g.view == "" {
			return nil
		}
		st, err := c.PrepareContext(ctx, "SELECT * FROM "+state.QuoteIdent(g.view))
		if err != nil {
			return fmt.Errorf("view %s: %w", g.view, err)
		}
		return st.Close()
	})
}

// install registers the guard on the physical connection behind c.
func (g *sqlGuard) install(c *sql.Conn) error {
	return c.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer: refusing to run a delta's SQL")
		}
		return r.RegisterAuthorizer(g.authorize)
	})
}

// guardedDB is a database with one pinned connection that carries a guard.
type guardedDB struct {
	db    *sql.DB
	conn  *sql.Conn
	guard *sqlGuard
}

func newGuardedDB(ctx context.Context, db *sql.DB) (*guardedDB, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	g := &sqlGuard{}
	if err := g.install(conn); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	return &guardedDB{db: db, conn: conn, guard: g}, nil
}

func (d *guardedDB) close() error {
	err := d.conn.Close()
	if cerr := d.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// sqlTimeout returns the bound of one statement at apply time.
func (o *Options) sqlTimeout() time.Duration {
	if o.SQLTimeout > 0 {
		return o.SQLTimeout
	}
	return DefaultSQLTimeout
}

// bounded runs f with a context that ends after the statement bound. A
// statement cut off by the bound gives an error wrapping ErrSQLTimeout.
func bounded(ctx context.Context, limit time.Duration, f func(ctx context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	err := f(sctx)
	if err != nil && ctx.Err() == nil && errors.Is(sctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: stopped after %s; the statement is unbounded or too large (a join of many tables?): simplify it or write the values as literals", ErrSQLTimeout, limit)
	}
	return err
}

// compile prepares one statement under the guard and closes it: lint's check
// of an expression, which runs nothing.
func (d *guardedDB) compile(ctx context.Context, q string) error {
	return d.guard.run(func() error {
		st, err := d.conn.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("expression does not compile: %w", err)
		}
		return st.Close()
	})
}
