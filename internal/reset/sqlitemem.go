package reset

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver

	"github.com/wildawm/wildawm/internal/world"
)

// SQLiteDeserialize is the "sqlite-deserialize" component: not a directory
// strategy. New reads every db/*.sqlite of lower into memory once and opens
// one in-memory SQLite connection per database; Reset deserializes the
// pristine bytes into each connection again (sqlite3_deserialize: one memcpy
// per database, no file I/O). Its instances have no Dir; use
// SQLiteInstance.Conn. It measures what an in-memory-database design for
// sites and services would pay per reset.
type SQLiteDeserialize struct{}

// Name implements Strategy.
func (SQLiteDeserialize) Name() string { return "sqlite-deserialize" }

// New implements Strategy; dir is ignored and may be "".
func (SQLiteDeserialize) New(ctx context.Context, lower, dir string) (Instance, error) {
	paths, err := filepath.Glob(filepath.Join(lower, world.DBDir, "*"+world.DBExt))
	if err != nil {
		return nil, fmt.Errorf("sqlite-deserialize: %w", err)
	}
	sort.Strings(paths)
	in := &SQLiteInstance{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			in.Close(ctx)
			return nil, fmt.Errorf("sqlite-deserialize: %w", err)
		}
		name := strings.TrimSuffix(filepath.Base(p), world.DBExt)
		db, err := sql.Open("sqlite", ":memory:")
		if err != nil {
			in.Close(ctx)
			return nil, fmt.Errorf("sqlite-deserialize: %w", err)
		}
		conn, err := db.Conn(ctx)
		if err != nil {
			db.Close()
			in.Close(ctx)
			return nil, fmt.Errorf("sqlite-deserialize: %w", err)
		}
		in.dbs = append(in.dbs, memDB{name: name, pristine: b, db: db, conn: conn})
	}
	if err := in.Reset(ctx); err != nil {
		in.Close(ctx)
		return nil, err
	}
	return in, nil
}

// SQLiteInstance holds one in-memory connection per database of lower.
type SQLiteInstance struct {
	mu     sync.Mutex
	dbs    []memDB
	closed bool
}

type memDB struct {
	name     string
	pristine []byte
	db       *sql.DB
	conn     *sql.Conn
}

// Dir implements Instance: there is no directory.
func (*SQLiteInstance) Dir() string { return "" }

// Names lists the databases, sorted.
func (in *SQLiteInstance) Names() []string {
	var names []string
	for _, d := range in.dbs {
		names = append(names, d.name)
	}
	return names
}

// Conn returns the connection of database name, or nil. It stays valid
// across Reset until Close.
func (in *SQLiteInstance) Conn(name string) *sql.Conn {
	for _, d := range in.dbs {
		if d.name == name {
			return d.conn
		}
	}
	return nil
}

// Reset implements Instance.
func (in *SQLiteInstance) Reset(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return fmt.Errorf("sqlite-deserialize: reset: %w", ErrClosed)
	}
	for _, d := range in.dbs {
		err := d.conn.Raw(func(dc any) error {
			ds, ok := dc.(interface{ Deserialize([]byte) error })
			if !ok {
				return fmt.Errorf("driver connection %T has no Deserialize", dc)
			}
			return ds.Deserialize(d.pristine)
		})
		if err != nil {
			return fmt.Errorf("sqlite-deserialize: reset %s: %w", d.name, err)
		}
	}
	return nil
}

// Close implements Instance.
func (in *SQLiteInstance) Close(context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	var errs []error
	for _, d := range in.dbs {
		errs = append(errs, d.conn.Close(), d.db.Close())
	}
	return errors.Join(errs...)
}
