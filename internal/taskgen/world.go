package taskgen

import (
	"bufio"
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"

	_ "modernc.org/sqlite" // the world's databases

	"github.com/wildawm/wildawm/internal/world"
)

// World is a W0 world state, read only.
type World struct {
	// Dir is the materialised world (never written).
	Dir string
	// CatalogDir is the shared catalog the sites show.
	CatalogDir string
	Manifest   *world.Manifest
	// Snapshot is the world's snapshot ID in the store.
	Snapshot world.ID
	// Self is the persona's name as others see it (a message's sender).
	Self string
	// Logins are the site logins the persona keeps in notes/logins.md, by
	// site: what an agent finds on the computer.
	Logins map[string]Login
}

// Login is a site account as the persona noted it.
type Login struct{ User, Password string }

// LoginsFile is where a persona keeps its site logins.
const LoginsFile = "notes/logins.md"

var loginRE = regexp.MustCompile("^- ([a-z]+): user `([^`]+)`, password `([^`]+)`")

// Load reads the world at dir (a materialised snapshot).
func Load(dir, catalogDir string, snapshot world.ID, self string) (*World, error) {
	m, err := world.ReadManifest(dir)
	if err != nil {
		return nil, fmt.Errorf("taskgen: %w", err)
	}
	w := &World{Dir: dir, CatalogDir: catalogDir, Manifest: m, Snapshot: snapshot, Self: self, Logins: map[string]Login{}}
	b, err := w.Home(LoginsFile)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if m := loginRE.FindStringSubmatch(sc.Text()); m != nil {
			w.Logins[m[1]] = Login{User: m[2], Password: m[3]}
		}
	}
	return w, nil
}

// Home reads a home file of the world.
func (w *World) Home(rel string) ([]byte, error) {
	p, err := world.HomePath(w.Dir, rel)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(p)
}

// HomeFiles lists the home's files under dir ("" for all), slash paths.
func (w *World) HomeFiles(dir string) ([]string, error) {
	root := filepath.Join(w.Dir, world.HomeDir)
	var out []string
	err := filepath.WalkDir(filepath.Join(root, filepath.FromSlash(dir)), func(p string, d fs.DirEntry, err error) error {
		if errors.Is(err, fs.ErrNotExist) {
			return fs.SkipAll
		}
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	return out, err
}

// Query runs a read-only query on the world's database db; a world
// without that database has no rows.
func (w *World) Query(db, q string, args ...any) ([][]any, error) {
	return query(world.DBPath(w.Dir, db), q, args...)
}

// Catalog runs a read-only query on the catalog.
func (w *World) Catalog(q string, args ...any) ([][]any, error) {
	return query(filepath.Join(w.CatalogDir, "db", "catalog.sqlite"), q, args...)
}

func query(path, q string, args ...any) ([][]any, error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	db, err := sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?mode=ro&_pragma=query_only(1)")
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.Query(q, args...)
	if err != nil {
		return nil, fmt.Errorf("taskgen: %s: %w", filepath.Base(path), err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var out [][]any
	for rows.Next() {
		row := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range row {
			ptrs[i] = &row[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return nil, err
		}
		for i, v := range row {
			if b, ok := v.([]byte); ok {
				row[i] = string(b)
			}
		}
		out = append(out, row)
	}
	return out, rows.Err()
}

// str and num read a query's cells.
func str(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	return fmt.Sprint(v)
}

func num(v any) int64 {
	switch x := v.(type) {
	case int64:
		return x
	case float64:
		return int64(x)
	}
	return 0
}
