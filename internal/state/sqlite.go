package state

import (
	"context"
	"database/sql"
	"fmt"
	"net/url"
	"slices"
	"strings"

	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// OpenDB opens the SQLite database at path. Read-only connections refuse
// writes; read-write ones use a rollback journal (never WAL) so a closed
// database is one self-contained file.
func OpenDB(path string, readOnly bool) (*sql.DB, error) {
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	if readOnly {
		q.Add("mode", "ro")
	} else {
		q.Add("_pragma", "journal_mode(DELETE)")
		q.Add("_pragma", "foreign_keys(ON)")
	}
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode()
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// Column describes one column of a table.
type Column struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	NotNull bool   `json:"not_null,omitempty"`
	// PK is the 1-based position in the primary key, 0 if not part of it.
	PK int `json:"pk,omitempty"`
	// HasDefault is set when the column declares a DEFAULT.
	HasDefault bool `json:"has_default,omitempty"`
}

// Table describes one table of a database.
type Table struct {
	Name    string   `json:"name"`
	Columns []Column `json:"columns"`
	// PK lists the primary-key columns in key order; empty for a rowid table
	// without a declared primary key.
	PK []string `json:"pk,omitempty"`
	// IntegerPK is set when the primary key is a single INTEGER PRIMARY KEY
	// column (an alias of the rowid).
	IntegerPK bool `json:"integer_pk,omitempty"`
	// NaturalKey lists the natural-key columns, empty if none is declared.
	NaturalKey []string `json:"natural_key,omitempty"`
}

// Column returns the column named name.
func (t *Table) Column(name string) (Column, bool) {
	for _, c := range t.Columns {
		if c.Name == name {
			return c, true
		}
	}
	return Column{}, false
}

// ColumnNames returns the column names in declaration order.
func (t *Table) ColumnNames() []string {
	names := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		names[i] = c.Name
	}
	return names
}

// Key returns the columns that identify a row: the natural key if declared,
// else the primary key, else nil (rows are then identified by all columns).
func (t *Table) Key() []string {
	if len(t.NaturalKey) > 0 {
		return t.NaturalKey
	}
	return t.PK
}

// Querier is what table introspection needs: *sql.DB, *sql.Tx and *sql.Conn.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// Tables describes every user table of the database, sorted by name.
// Internal tables (sqlite_*) are left out.
func Tables(ctx context.Context, q Querier) ([]Table, error) {
	names, err := queryStrings(ctx, q, `SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE 'sqlite\_%' ESCAPE '\' ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list tables: %w", err)
	}
	tables := make([]Table, 0, len(names))
	for _, name := range names {
		t, err := DescribeTable(ctx, q, name)
		if err != nil {
			return nil, err
		}
		tables = append(tables, *t)
	}
	return tables, nil
}

// DescribeTable describes one table; it fails if the table does not exist.
func DescribeTable(ctx context.Context, q Querier, name string) (*Table, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, type, "notnull", pk, dflt_value IS NOT NULL FROM pragma_table_info(?) ORDER BY cid`, name)
	if err != nil {
		return nil, fmt.Errorf("describe table %s: %w", name, err)
	}
	t := &Table{Name: name}
	for rows.Next() {
		var c Column
		if err := rows.Scan(&c.Name, &c.Type, &c.NotNull, &c.PK, &c.HasDefault); err != nil {
			rows.Close()
			return nil, fmt.Errorf("describe table %s: %w", name, err)
		}
		t.Columns = append(t.Columns, c)
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("describe table %s: %w", name, err)
	}
	if len(t.Columns) == 0 {
		return nil, fmt.Errorf("table %q does not exist", name)
	}
	pk := slices.Clone(t.Columns)
	pk = slices.DeleteFunc(pk, func(c Column) bool { return c.PK == 0 })
	slices.SortFunc(pk, func(a, b Column) int { return a.PK - b.PK })
	for _, c := range pk {
		t.PK = append(t.PK, c.Name)
	}
	t.IntegerPK = len(pk) == 1 && strings.EqualFold(pk[0].Type, "INTEGER")
	nk, err := naturalKey(ctx, q, name)
	if err != nil {
		return nil, err
	}
	t.NaturalKey = nk
	return t, nil
}

// naturalKey finds the unique index named TABLE_nk, else the first UNIQUE
// constraint of the table definition.
func naturalKey(ctx context.Context, q Querier, table string) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT name, "unique", origin FROM pragma_index_list(?)`, table)
	if err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", table, err)
	}
	var declared, constraint string
	for rows.Next() {
		var name, origin string
		var unique bool
		if err := rows.Scan(&name, &unique, &origin); err != nil {
			rows.Close()
			return nil, fmt.Errorf("indexes of %s: %w", table, err)
		}
		switch {
		case !unique:
		case name == table+"_nk":
			declared = name
		case origin == "u" && (constraint == "" || autoindexLess(name, constraint)):
			constraint = name
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, fmt.Errorf("indexes of %s: %w", table, err)
	}
	idx := declared
	if idx == "" {
		idx = constraint
	}
	if idx == "" {
		return nil, nil
	}
	cols, err := queryStrings(ctx, q, `SELECT name FROM pragma_index_info(?) ORDER BY seqno`, idx)
	if err != nil {
		return nil, fmt.Errorf("natural key of %s: %w", table, err)
	}
	if slices.Contains(cols, "") {
		return nil, fmt.Errorf("natural key of %s: index %s uses an expression; a natural key must name columns", table, idx)
	}
	return cols, nil
}

// autoindexLess orders sqlite_autoindex_T_N names by N.
func autoindexLess(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

func queryStrings(ctx context.Context, q Querier, query string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	var out []string
	for rows.Next() {
		var s sql.NullString
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, s.String)
	}
	return out, closeRows(rows)
}

func closeRows(rows *sql.Rows) error {
	err := rows.Err()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	return err
}

// QuoteIdent quotes an SQL identifier.
func QuoteIdent(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, `""`) + `"`
}
