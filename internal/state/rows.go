package state

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// orderBy returns the ORDER BY clause that lists t's rows in primary-key
// order, or by every column when the table has no declared primary key.
func orderBy(t *Table) string {
	cols := t.PK
	if len(cols) == 0 {
		cols = t.ColumnNames()
	}
	q := make([]string, len(cols))
	for i, c := range cols {
		q[i] = QuoteIdent(c)
	}
	return " ORDER BY " + strings.Join(q, ", ")
}

// selectAll returns a SELECT of every column of t in declaration order. Each
// column is wrapped in unary + so the driver sees no declared type and
// returns the stored value as is (int64, float64, string, []byte or nil),
// never a converted time.Time.
func selectAll(t *Table) string {
	q := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		q[i] = "+" + QuoteIdent(c.Name)
	}
	return "SELECT " + strings.Join(q, ", ") + " FROM " + QuoteIdent(t.Name)
}

// scanRows calls fn with each row of t in primary-key order. The slice passed
// to fn is reused between calls.
func scanRows(ctx context.Context, q Querier, t *Table, fn func(row []any) error) error {
	rows, err := q.QueryContext(ctx, selectAll(t)+orderBy(t))
	if err != nil {
		return fmt.Errorf("read table %s: %w", t.Name, err)
	}
	vals := make([]any, len(t.Columns))
	ptrs := make([]any, len(t.Columns))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			rows.Close()
			return fmt.Errorf("read table %s: %w", t.Name, err)
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = append([]byte(nil), b...)
			}
		}
		if err := fn(vals); err != nil {
			rows.Close()
			return err
		}
	}
	if err := closeRows(rows); err != nil {
		return fmt.Errorf("read table %s: %w", t.Name, err)
	}
	return nil
}

// sqliteSequence describes the AUTOINCREMENT counters table when present.
func sqliteSequence(ctx context.Context, q Querier) (*Table, error) {
	names, err := queryStrings(ctx, q, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name = 'sqlite_sequence'`)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	return &Table{Name: "sqlite_sequence", Columns: []Column{{Name: "name"}, {Name: "seq"}}}, nil
}

var _ Querier = (*sql.DB)(nil)
