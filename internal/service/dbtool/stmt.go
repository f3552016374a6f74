package dbtool

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/wildawm/wildawm/internal/sqlguard"
)

// maxStmts bounds the prepared statements of a connection (a tool that
// builds its SQL could otherwise grow them without end). A call that finds
// the cache full runs its new statements unprepared; the next call starts
// with an empty cache.
const maxStmts = 128

// stmtKey names a prepared statement: its SQL and the policy of the guard
// it was compiled under (nil: the service's own, unguarded SQL), so a
// statement the guard allowed for a write tool is never reused by a read
// tool without being judged again.
type stmtKey struct {
	policy *sqlguard.Policy
	query  string
}

// stmtQuerier is one call's Querier: it runs queries on the connection
// through its prepared statements, so SQLite parses and plans each
// distinct statement once per connection instead of on every call.
//
// A prepared statement is one cursor: while rows of one query are open, the
// same statement cannot serve another query. So a statement whose rows
// this call opened (QueryContext) is not used again in the call; a second
// use of that SQL runs unprepared. QueryRowContext and ExecContext leave
// no rows open.
//
// With a policy (Guarded), every statement is compiled under the
// connection's sqlguard.Guard with that policy.
type stmtQuerier struct {
	h      *handle
	policy *sqlguard.Policy
	// queried holds the statements whose rows this call opened; shared by
	// the call's guarded and unguarded queriers.
	queried *map[stmtKey]bool
}

func newStmtQuerier(h *handle) *stmtQuerier {
	return &stmtQuerier{h: h, queried: new(map[stmtKey]bool)}
}

// Guarded returns q with every statement it compiles judged by the
// connection's SQL guard under policy p (sqlguard): the querier for SQL a
// user wrote (a service definition's steps), where q, given to a tool by
// Read or Write, runs the service's own. It fails for a Querier that did
// not come from Read or Write.
func Guarded(q Querier, p *sqlguard.Policy) (Querier, error) {
	sq, ok := q.(*stmtQuerier)
	if !ok || sq.h.guard == nil {
		return nil, fmt.Errorf("dbtool: %T carries no SQL guard", q)
	}
	g := *sq
	g.policy = p
	return &g, nil
}

// Watch interrupts the statement running on q's connection when ctx ends,
// until stop is called (sqlguard.Guard.Watch): the statement bound of a
// step whose rows are read one by one. For a Querier not from Read or
// Write it does nothing.
func Watch(ctx context.Context, q Querier) (stop func()) {
	sq, ok := q.(*stmtQuerier)
	if !ok || sq.h.guard == nil {
		return func() {}
	}
	return sq.h.guard.Watch(ctx)
}

// Prepare compiles query through q (Guarded) and keeps it prepared for the
// call's next use, returning the guard's refusal (an error wrapping
// sqlguard.ErrRefused) with its reason. Run before a statement, it gives
// the reason that QueryRowContext can only report as "not authorized".
func Prepare(ctx context.Context, q Querier, query string) error {
	sq, ok := q.(*stmtQuerier)
	if !ok {
		return fmt.Errorf("dbtool: %T carries no SQL guard", q)
	}
	k := stmtKey{sq.policy, query}
	if (*sq.queried)[k] {
		k.query = "" // its rows are open: judge a fresh copy
	} else if _, ok := sq.h.stmts[k]; ok {
		return nil
	}
	return sq.guarded(func() error {
		st, err := sq.h.conn.PrepareContext(ctx, pinEquals(query))
		if err != nil {
			return err
		}
		if k.query != "" && len(sq.h.stmts) < maxStmts {
			sq.h.stmts[k] = st
			return nil
		}
		return st.Close()
	})
}

// guarded runs f under the guard with q's policy, or as it is without one.
func (q *stmtQuerier) guarded(f func() error) error {
	if q.policy == nil {
		return f()
	}
	return q.h.guard.Run(q.policy, f)
}

// stmt returns the prepared statement for query, or nil when query must
// run unprepared: its statement has rows open in this call, or the cache
// is full.
func (q *stmtQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	k := stmtKey{q.policy, query}
	if (*q.queried)[k] {
		return nil, nil
	}
	if st, ok := q.h.stmts[k]; ok {
		return st, nil
	}
	if len(q.h.stmts) >= maxStmts {
		return nil, nil
	}
	var st *sql.Stmt
	err := q.guarded(func() error {
		var err error
		st, err = q.h.conn.PrepareContext(ctx, pinEquals(query))
		return err
	})
	if err != nil {
		return nil, err
	}
	q.h.stmts[k] = st
	return st, nil
}

// totalChanges is the number of rows the connection has changed since it
// opened: the pre-update hook's count, else SQLite's total_changes().
func (q *stmtQuerier) totalChanges(ctx context.Context) (int64, error) {
	if q.h.changes != nil {
		return q.h.changes.Load(), nil
	}
	var n int64
	if err := q.QueryRowContext(ctx, "SELECT total_changes()").Scan(&n); err != nil {
		return 0, fmt.Errorf("total_changes: %w", err)
	}
	return n, nil
}

func (q *stmtQuerier) ExecContext(ctx context.Context, query string, args ...any) (res sql.Result, err error) {
	st, err := q.stmt(ctx, query)
	if errors.Is(err, sqlguard.ErrRefused) {
		return nil, err
	}
	if err != nil || st == nil {
		// Running it unprepared reports a preparation error the same way.
		err = q.guarded(func() error {
			res, err = q.h.conn.ExecContext(ctx, query, args...)
			return err
		})
		return res, err
	}
	return st.ExecContext(ctx, args...)
}

func (q *stmtQuerier) QueryContext(ctx context.Context, query string, args ...any) (rows *sql.Rows, err error) {
	st, err := q.stmt(ctx, query)
	if errors.Is(err, sqlguard.ErrRefused) {
		return nil, err
	}
	if err != nil || st == nil {
		err = q.guarded(func() error {
			rows, err = q.h.conn.QueryContext(ctx, query, args...)
			return err
		})
		return rows, err
	}
	if *q.queried == nil {
		*q.queried = map[stmtKey]bool{}
	}
	(*q.queried)[stmtKey{q.policy, query}] = true
	return st.QueryContext(ctx, args...)
}

// QueryRowContext runs query; a statement the guard refuses fails at Scan
// as "not authorized" (Prepare first gives the reason).
func (q *stmtQuerier) QueryRowContext(ctx context.Context, query string, args ...any) (row *sql.Row) {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		q.guarded(func() error {
			row = q.h.conn.QueryRowContext(ctx, query, args...)
			return row.Err()
		})
		return row
	}
	return st.QueryRowContext(ctx, args...)
}
