package skill

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/world"
)

// Check is what Review sees: the materialised world of the day.
type Check struct {
	Dir     string
	Persona *persona.Persona
	Catalog *Catalog

	mu  sync.Mutex
	dbs map[string]*sql.DB
}

// NewCheck returns a check of the world directory dir.
func NewCheck(dir string, p *persona.Persona, cat *Catalog) *Check {
	return &Check{Dir: dir, Persona: p, Catalog: cat, dbs: map[string]*sql.DB{}}
}

// Close closes the databases the check opened.
func (c *Check) Close() {
	for _, db := range c.dbs {
		db.Close()
	}
}

func (c *Check) db(name string) (*sql.DB, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if db, ok := c.dbs[name]; ok {
		return db, nil
	}
	path := world.DBPath(c.Dir, name)
	if _, err := os.Stat(path); err != nil {
		return nil, fmt.Errorf("database %s: %w", name, err)
	}
	uri, err := world.DBURI(path, "mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	db, err := sql.Open("sqlite", uri)
	if err != nil {
		return nil, err
	}
	c.dbs[name] = db
	return db, nil
}

// Count returns how many rows of db's table match where (SQL, with args).
func (c *Check) Count(db, table, where string, args ...any) (int, error) {
	h, err := c.db(db)
	if err != nil {
		return 0, err
	}
	var n int
	q := fmt.Sprintf("SELECT count(*) FROM %q WHERE %s", table, where)
	if err := h.QueryRowContext(context.Background(), q, args...).Scan(&n); err != nil {
		return 0, fmt.Errorf("%s.%s: %w", db, table, err)
	}
	return n, nil
}

// Has returns a problem line unless db's table has a row matching where.
func (c *Check) Has(what, db, table, where string, args ...any) []string {
	n, err := c.Count(db, table, where, args...)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", what, err)}
	}
	if n == 0 {
		return []string{fmt.Sprintf("%s: no row of %s.%s where %s %v", what, db, table, where, args)}
	}
	return nil
}

// File returns a home file's bytes.
func (c *Check) File(path string) ([]byte, error) {
	full, err := world.HomePath(c.Dir, path)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(full)
}

// FileHas returns a problem line unless the home file at path holds every
// one of texts.
func (c *Check) FileHas(path string, texts ...string) []string {
	b, err := c.File(path)
	if err != nil {
		return []string{fmt.Sprintf("file %s: %v", path, err)}
	}
	var out []string
	for _, t := range texts {
		if !strings.Contains(string(b), t) {
			out = append(out, fmt.Sprintf("file %s does not contain %q", path, t))
		}
	}
	return out
}

// Files lists the home directory's files, slash-separated, sorted.
func (c *Check) Files() ([]string, error) {
	root := filepath.Join(c.Dir, world.HomeDir)
	var out []string
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	slices.Sort(out)
	return out, err
}
