package skill

import (
	"context"
	"database/sql"
	"fmt"
	"sync"

	"github.com/wildawm/wildawm/internal/world"

	_ "modernc.org/sqlite" // the catalog is SQLite
)

// Catalog is the shared read-only catalog the skills draw real entities
// from. Rows caches whole queries (the lists a skill picks from); Query
// runs one. Safe for concurrent use.
type Catalog struct {
	db *sql.DB

	mu    sync.Mutex
	cache map[string][][]any
}

// OpenCatalog opens the catalog database in dir (catalog.Build's output)
// read-only.
func OpenCatalog(dir string) (*Catalog, error) {
	path := world.DBPath(dir, "catalog")
	uri, err := world.DBURI(path, "mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, err
	}
	if err := db.Ping(); err != nil {
		db.Close()
		return nil, fmt.Errorf("catalog %s: %w (build it with wildawm catalog build --out %s)", path, err, dir)
	}
	return &Catalog{db: db, cache: map[string][][]any{}}, nil
}

// Close closes the catalog.
func (c *Catalog) Close() error { return c.db.Close() }

// Rows returns every row of query (which must order its rows), cached.
func (c *Catalog) Rows(query string) ([][]any, error) {
	c.mu.Lock()
	rows, ok := c.cache[query]
	c.mu.Unlock()
	if ok {
		return rows, nil
	}
	rows, err := c.Query(query)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.cache[query] = rows
	c.mu.Unlock()
	return rows, nil
}

// Query runs query with args and returns its rows (integers as int64, text
// as string).
func (c *Catalog) Query(query string, args ...any) ([][]any, error) {
	rs, err := c.db.QueryContext(context.Background(), query, args...)
	if err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	defer rs.Close()
	cols, err := rs.Columns()
	if err != nil {
		return nil, err
	}
	var out [][]any
	for rs.Next() {
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rs.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range vals {
			if b, ok := v.([]byte); ok {
				vals[i] = string(b)
			}
		}
		out = append(out, vals)
	}
	return out, rs.Err()
}

// PickRow returns a random row of query (cached), or ErrSkip when it has
// none.
func (d *Draw) PickRow(query string) ([]any, error) {
	rows, err := d.Catalog.Rows(query)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrSkip
	}
	return rows[d.Rand.IntN(len(rows))], nil
}

// Str and Int read a catalog value.
func Str(v any) string { s, _ := v.(string); return s }

// Int reads an integer catalog value.
func Int(v any) int64 {
	switch n := v.(type) {
	case int64:
		return n
	case float64:
		return int64(n)
	}
	return 0
}
