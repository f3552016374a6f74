package dbtool

import (
	"context"
	"database/sql"
	"fmt"
)

// maxStmts bounds the prepared statements of a connection (a tool that
// builds its SQL could otherwise grow them without end). A call that finds
// the cache full runs its new statements unprepared; the next call starts
// with an empty cache.
const maxStmts = 128

// stmtQuerier is one call's Querier: it runs queries on the connection
// through its prepared statements, so SQLite parses and plans each
// distinct statement once per connection instead of on every call.
//
// A prepared statement is one cursor: while rows of one query are open, the
// same statement cannot serve another query. So a statement whose rows
// this call opened (QueryContext) is not used again in the call; a second
// use of that SQL runs unprepared. QueryRowContext and ExecContext leave
// no rows open.
type stmtQuerier struct {
	h *handle
	// queried holds the SQL of the statements whose rows this call opened.
	queried map[string]bool
}

func newStmtQuerier(h *handle) *stmtQuerier { return &stmtQuerier{h: h} }

// stmt returns the prepared statement for query, or nil when query must
// run unprepared: its statement has rows open in this call, or the cache
// is full.
func (q *stmtQuerier) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	if q.queried[query] {
		return nil, nil
	}
	if st, ok := q.h.stmts[query]; ok {
		return st, nil
	}
	if len(q.h.stmts) >= maxStmts {
		return nil, nil
	}
	st, err := q.h.conn.PrepareContext(ctx, pinEquals(query))
	if err != nil {
		return nil, err
	}
	q.h.stmts[query] = st
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

func (q *stmtQuerier) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		// Running it unprepared reports a preparation error the same way.
		return q.h.conn.ExecContext(ctx, query, args...)
	}
	return st.ExecContext(ctx, args...)
}

func (q *stmtQuerier) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		return q.h.conn.QueryContext(ctx, query, args...)
	}
	if q.queried == nil {
		q.queried = map[string]bool{}
	}
	q.queried[query] = true
	return st.QueryContext(ctx, args...)
}

func (q *stmtQuerier) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	st, err := q.stmt(ctx, query)
	if err != nil || st == nil {
		return q.h.conn.QueryRowContext(ctx, query, args...)
	}
	return st.QueryRowContext(ctx, args...)
}
