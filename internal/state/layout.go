package state

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// Layout is what a world directory holds at its top level.
type Layout struct {
	Root string
	DBs  []string // database names, sorted
}

// ReadLayout checks the top level of the world at root against the layout of
// docs/world.md and lists its databases. Anything unexpected is an error that
// names the entry relative to root (never root itself: the runtime hands
// these errors to agents).
func ReadLayout(root string) (*Layout, error) {
	l, err := readLayout(root)
	return l, hidePaths(err, root)
}

func readLayout(root string) (*Layout, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read world: %w", err)
	}
	l := &Layout{Root: root}
	for _, e := range entries {
		switch e.Name() {
		case world.ManifestFile, world.AccountsFile:
			if !e.Type().IsRegular() {
				return nil, fmt.Errorf("world: %s must be a regular file", e.Name())
			}
		case world.DBDir, world.HomeDir:
			if !e.IsDir() {
				return nil, fmt.Errorf("world: %s must be a directory", e.Name())
			}
		default:
			return nil, fmt.Errorf("world: unexpected top-level entry %q (a world holds only %s, %s, %s/ and %s/)",
				e.Name(), world.ManifestFile, world.AccountsFile, world.DBDir, world.HomeDir)
		}
	}
	dbs, err := os.ReadDir(filepath.Join(root, world.DBDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read world: %w", err)
	}
	for _, e := range dbs {
		name, ok := strings.CutSuffix(e.Name(), world.DBExt)
		switch {
		case strings.HasSuffix(e.Name(), "-journal") || strings.HasSuffix(e.Name(), "-wal") || strings.HasSuffix(e.Name(), "-shm"):
			return nil, fmt.Errorf("world: db/%s: a database is still open or was not closed cleanly; close it (or open and close it once to roll back) before hashing or snapshotting", e.Name())
		case !ok || !e.Type().IsRegular():
			return nil, fmt.Errorf("world: db/%s: want only files named NAME%s", e.Name(), world.DBExt)
		}
		if err := world.ValidDBName(name); err != nil {
			return nil, fmt.Errorf("world: db/%s: %w", e.Name(), err)
		}
		l.DBs = append(l.DBs, name)
	}
	sort.Strings(l.DBs)
	return l, nil
}
