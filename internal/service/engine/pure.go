package engine

import (
	"context"
	"database/sql"
	"strings"
	"sync"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// A tool's leading steps that read no table — the checks and rows over its
// arguments, what a hand-written tool checks before it opens a
// transaction — run before the transaction, on an in-memory database of
// their own: a call they refuse costs no BEGIN, no change count and no
// ROLLBACK, and a write tool holds its database's lock for less time. A
// statement that names no table answers the same on any database.

// leadingPure returns how many of steps, from the first, read no table.
func leadingPure(steps []Step) int {
	for i, st := range steps {
		if !pureStep(st) {
			return i
		}
	}
	return len(steps)
}

// pureStep reports whether st is a check or row that reads no table.
func pureStep(st Step) bool {
	if st.DB != "" || st.Check == "" && st.Row == "" || st.Row != "" && st.Missing != "" {
		return false
	}
	for _, q := range []string{st.If, st.Check, st.Row} {
		if !pureSQL(q) {
			return false
		}
	}
	return true
}

// pureSQL reports whether q names no table and no state of the
// connection.
func pureSQL(q string) bool {
	u := strings.ToUpper(q)
	for _, w := range []string{"FROM", "CHANGES(", "LAST_INSERT_ROWID", "SQLITE_", "PRAGMA"} {
		if strings.Contains(u, w) {
			return false
		}
	}
	return true
}

var pure struct {
	once  sync.Once
	db    *sql.DB
	err   error
	stmts sync.Map // SQL -> *sql.Stmt
}

// pureQuerier is the in-memory database the pure steps run on, with each
// statement prepared once (database/sql prepares it again on each pooled
// connection that needs it).
func pureQuerier() (dbtool.Querier, error) {
	pure.once.Do(func() {
		pure.db, pure.err = sql.Open("sqlite", ":memory:")
		if pure.err == nil {
			pure.db.SetMaxIdleConns(8)
		}
	})
	if pure.err != nil {
		return nil, pure.err
	}
	return pureQ{}, nil
}

type pureQ struct{}

func (pureQ) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if v, ok := pure.stmts.Load(query); ok {
		return v.(*sql.Stmt), nil
	}
	st, err := pure.db.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	if v, loaded := pure.stmts.LoadOrStore(query, st); loaded {
		st.Close()
		return v.(*sql.Stmt), nil
	}
	return st, nil
}

func (q pureQ) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return pure.db.ExecContext(ctx, query, args...)
}

func (q pureQ) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return st.QueryContext(ctx, args...)
}

func (q pureQ) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := q.stmt(ctx, query)
	if err != nil {
		return pure.db.QueryRowContext(ctx, query, args...) // carries the error
	}
	return st.QueryRowContext(ctx, args...)
}
