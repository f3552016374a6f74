package delta

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wildawm/wildawm/internal/sqlguard"
	"github.com/wildawm/wildawm/internal/state"
)

// DefaultSQLTimeout bounds one SQL statement of a delta at apply time when
// Options.SQLTimeout is zero.
const DefaultSQLTimeout = sqlguard.DefaultTimeout

// ErrSQLTimeout is matched by errors.Is when a statement of a delta did not
// finish within Options.SQLTimeout. It is sqlguard.ErrTimeout.
var ErrSQLTimeout = sqlguard.ErrTimeout

// deltaPolicy is what the SQL a delta brings (DDL and {"sql": ...}
// expressions) may do under the one guard of user SQL (internal/sqlguard):
// write rows and the schema, never recurse (a recursive common table
// expression may never end), and nothing the guard refuses everywhere
// (table-valued pragmas, which would store a host path in the world,
// PRAGMA, ATTACH, DETACH, VACUUM, CREATE TABLE ... AS SELECT, which writes
// rows outside db.insert). Lint installs the guard on its in-memory schema
// and apply on the world's databases, so both refuse the same statements
// when they compile them.
func deltaPolicy() *sqlguard.Policy {
	return &sqlguard.Policy{Who: "a delta", Write: true, Schema: true}
}

// guardedConn is what the guard needs of a connection or transaction.
type guardedConn interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	PrepareContext(ctx context.Context, query string) (*sql.Stmt, error)
}

// guardedDB is a database with one pinned connection that carries a guard.
type guardedDB struct {
	db     *sql.DB
	conn   *sql.Conn
	guard  *sqlguard.Guard
	policy *sqlguard.Policy
}

func newGuardedDB(ctx context.Context, db *sql.DB) (*guardedDB, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		db.Close()
		return nil, err
	}
	g := &sqlguard.Guard{}
	if err := g.Install(conn); err != nil {
		conn.Close()
		db.Close()
		return nil, err
	}
	return &guardedDB{db: db, conn: conn, guard: g, policy: deltaPolicy()}, nil
}

func (d *guardedDB) close() error {
	err := d.conn.Close()
	if cerr := d.db.Close(); err == nil {
		err = cerr
	}
	return err
}

// run runs f, which compiles the one statement q of the delta, with the
// guard on: q must be exactly one statement (sqlguard.One), and a refusal
// is the guard's reason rather than SQLite's "not authorized".
func (d *guardedDB) run(q string, f func() error) error {
	if _, err := sqlguard.One(q); err != nil {
		return err
	}
	return d.guard.Run(d.policy, f)
}

// execDDL runs one DDL statement of a delta under the guard. A view it
// creates is compiled at once, so a refusal inside the view's body is
// reported by this statement rather than by the first one that reads it.
func (d *guardedDB) execDDL(ctx context.Context, c guardedConn, stmt string) error {
	return d.run(stmt, func() error {
		if _, err := c.ExecContext(ctx, stmt); err != nil {
			return err
		}
		view := d.guard.View()
		if view == "" {
			return nil
		}
		st, err := c.PrepareContext(ctx, "SELECT * FROM "+state.QuoteIdent(view))
		if err != nil {
			return fmt.Errorf("view %s: %w", view, err)
		}
		return st.Close()
	})
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
	return sqlguard.Bound(ctx, limit, f)
}

// compile prepares one statement under the guard and closes it: lint's check
// of an expression, which runs nothing.
func (d *guardedDB) compile(ctx context.Context, q string) error {
	return d.run(q, func() error {
		st, err := d.conn.PrepareContext(ctx, q)
		if err != nil {
			return fmt.Errorf("expression does not compile: %w", err)
		}
		return st.Close()
	})
}
