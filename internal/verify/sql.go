package verify

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/sqlguard"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// SQL limits.
const (
	SQLTimeout = 10 * time.Second
	MaxSQLRows = 1000
)

// queryPolicy is what a verifier query may do under the one guard of user
// SQL (internal/sqlguard): read, recurse (within SQLTimeout) and read the
// world's schema through the schema pragmas (pragma_table_info(...)); never
// write, attach, vacuum, read the host (pragma_database_list gives a host
// path) or load code.
func queryPolicy() *sqlguard.Policy {
	return &sqlguard.Policy{Who: "a verifier query", Recursive: true, Pragmas: sqlguard.SchemaPragmas()}
}

// checkSQL runs an sql criterion on the world at root.
func checkSQL(ctx context.Context, root, catalogDB string, c *task.Criterion) CriterionResult {
	want, err := task.ParseExpect(c.Expect)
	if err != nil {
		return CriterionResult{Error: fmt.Sprintf("expect: %v", err)}
	}
	cols, got, err := QueryWith(ctx, world.DBPath(root, c.DB), catalogDB, c.Query)
	if errors.Is(err, fs.ErrNotExist) {
		return CriterionResult{Evidence: fmt.Sprintf("database %q does not exist in the %s world", c.DB, c.WorldOrDefault())}
	}
	if err != nil {
		if ctx.Err() != nil {
			return CriterionResult{Error: fmt.Sprintf("%s: %v", c.DB, ctx.Err())}
		}
		return CriterionResult{Error: fmt.Sprintf("%s: %v", c.DB, err)}
	}
	pass := sqlMatch(got, want)
	ev := fmt.Sprintf("%s: %s -> %s", c.DB, strings.Join(cols, ", "), jsonText(got))
	if !pass {
		ev += "; expected " + jsonText(want)
	}
	return CriterionResult{Pass: pass, Evidence: ev}
}

// Query runs one read-only SELECT on the database at path and returns its
// column names and rows with values normalised to int64, float64, string
// (TEXT and BLOB) or nil. It refuses anything but a single SELECT (or WITH
// ... SELECT) statement: the connection is opened read-only with
// query_only set, and the SQL guard (sqlguard) with queryPolicy judges
// it; the query runs within SQLTimeout (sqlguard.Bound).
// A missing database is an error wrapping fs.ErrNotExist.
func Query(ctx context.Context, path, query string) ([]string, [][]any, error) {
	return QueryWith(ctx, path, "", query)
}

// QueryWith is Query with the catalog database at catalogDB ("" for none)
// attached read-only as schema "catalog": a criterion matches a site's
// rows to the catalog's by their natural columns (JOIN catalog.places p
// ON p.id = s.place_id WHERE p.name = ...) instead of naming row ids.
func QueryWith(ctx context.Context, path, catalogDB, query string) ([]string, [][]any, error) {
	q, err := singleSelect(query)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, nil, err
	}
	var cols []string
	var out [][]any
	err = sqlguard.Bound(ctx, SQLTimeout, func(ctx context.Context) error {
		var err error
		cols, out, err = runQuery(ctx, path, catalogDB, q)
		return err
	})
	return cols, out, err
}

// runQuery runs the one SELECT q on the database at path under the guard.
func runQuery(ctx context.Context, path, catalogDB, q string) ([]string, [][]any, error) {
	db, err := state.OpenDB(path, true)
	if err != nil {
		return nil, nil, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close()
	if catalogDB != "" {
		// Attached before the guard, which refuses ATTACH in the query.
		uri, err := world.DBURI(catalogDB, "mode=ro")
		if err != nil {
			return nil, nil, err
		}
		if _, err := conn.ExecContext(ctx, "ATTACH DATABASE ? AS catalog", uri); err != nil {
			return nil, nil, fmt.Errorf("attach the catalog %s: %w", catalogDB, err)
		}
	}
	if _, err := conn.ExecContext(ctx, "PRAGMA query_only = 1"); err != nil {
		return nil, nil, err
	}
	guard := &sqlguard.Guard{}
	if err := guard.Install(conn); err != nil {
		return nil, nil, err
	}
	defer guard.Watch(ctx)() // the bound between rows too
	policy := queryPolicy()
	var cols []string
	if err := guard.Run(policy, func() error {
		var err error
		cols, err = columns(ctx, conn, q)
		return err
	}); err != nil {
		return nil, nil, err
	}
	// Re-select every column as an expression (+cN) so the driver sees no
	// declared type and never turns DATE/DATETIME text into time values.
	names := make([]string, len(cols))
	exprs := make([]string, len(cols))
	for i := range cols {
		names[i] = fmt.Sprintf("c%d", i)
		exprs[i] = "+" + names[i]
	}
	wrapped := fmt.Sprintf("WITH wildawm_verify_q(%s) AS (\n%s\n) SELECT %s FROM wildawm_verify_q",
		strings.Join(names, ", "), q, strings.Join(exprs, ", "))
	var rows *sql.Rows
	if err := guard.Run(policy, func() error {
		var err error
		rows, err = conn.QueryContext(ctx, wrapped)
		return err
	}); err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		if len(out) == MaxSQLRows {
			return nil, nil, fmt.Errorf("the query returned more than %d rows: aggregate or add LIMIT", MaxSQLRows)
		}
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, nil, err
		}
		for i, v := range vals {
			if v, err = normValue(v); err != nil {
				return nil, nil, fmt.Errorf("column %s: %w", cols[i], err)
			}
			vals[i] = v
		}
		out = append(out, vals)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, err
	}
	return cols, out, nil
}

func columns(ctx context.Context, conn *sql.Conn, q string) ([]string, error) {
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return nil, err
	}
	cols, err := rows.Columns()
	if cerr := rows.Close(); err == nil {
		err = cerr
	}
	if err == nil && len(cols) == 0 {
		err = errors.New("the statement returns no columns: want a SELECT")
	}
	return cols, err
}

func normValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, int64, float64, string:
		return v, nil
	case []byte:
		return string(v), nil
	case bool:
		if v {
			return int64(1), nil
		}
		return int64(0), nil
	}
	return nil, fmt.Errorf("unexpected value of type %T", v)
}

// sqlMatch compares query rows with an expect value (task.ParseExpect): a
// scalar matches exactly one row of one column; an array matches the rows in
// order, each row an array of values or a bare value for a one-column row.
func sqlMatch(got [][]any, want any) bool {
	rows, ok := want.([]any)
	if !ok {
		return len(got) == 1 && len(got[0]) == 1 && valueMatch(got[0][0], want)
	}
	if len(rows) != len(got) {
		return false
	}
	for i, w := range rows {
		wr, ok := w.([]any)
		if !ok {
			wr = []any{w}
		}
		if len(wr) != len(got[i]) {
			return false
		}
		for j := range wr {
			if !valueMatch(got[i][j], wr[j]) {
				return false
			}
		}
	}
	return true
}

// valueMatch compares an SQLite value with an expected JSON value: numbers by
// numeric value (3 matches 3.0), booleans as 1/0, strings exactly, null only
// null.
func valueMatch(got, want any) bool {
	if b, ok := want.(bool); ok {
		want = int64(0)
		if b {
			want = int64(1)
		}
	}
	switch w := want.(type) {
	case nil:
		return got == nil
	case string:
		g, ok := got.(string)
		return ok && g == w
	case int64:
		switch g := got.(type) {
		case int64:
			return g == w
		case float64:
			return g == float64(w) && math.Abs(g) < 1<<53
		}
	case float64:
		switch g := got.(type) {
		case int64:
			return float64(g) == w && math.Abs(w) < 1<<53
		case float64:
			return g == w
		}
	}
	return false
}

func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

// singleSelect checks that q is exactly one SELECT, WITH or VALUES
// statement (sqlguard.One: quotes and comments are honoured) and returns
// it without a trailing ';'.
func singleSelect(q string) (string, error) {
	st, err := sqlguard.One(q)
	switch {
	case err != nil && strings.Contains(err.Error(), "empty"):
		return "", errors.New("the query is empty: want a single SELECT statement")
	case err != nil:
		return "", fmt.Errorf("only a single SELECT statement may run: %w", err)
	}
	switch st.Verb {
	case "SELECT", "WITH", "VALUES":
		return st.Text, nil
	}
	return "", fmt.Errorf("only a single SELECT statement may run, not %s", st.Verb)
}
