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
// names the entry.
func ReadLayout(root string) (*Layout, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("read world %s: %w", root, err)
	}
	l := &Layout{Root: root}
	for _, e := range entries {
		switch e.Name() {
		case world.ManifestFile, world.AccountsFile:
			if !e.Type().IsRegular() {
				return nil, fmt.Errorf("world %s: %s must be a regular file", root, e.Name())
			}
		case world.DBDir, world.HomeDir:
			if !e.IsDir() {
				return nil, fmt.Errorf("world %s: %s must be a directory", root, e.Name())
			}
		default:
			return nil, fmt.Errorf("world %s: unexpected top-level entry %q (a world holds only %s, %s, %s/ and %s/)",
				root, e.Name(), world.ManifestFile, world.AccountsFile, world.DBDir, world.HomeDir)
		}
	}
	dbs, err := os.ReadDir(filepath.Join(root, world.DBDir))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("read world %s: %w", root, err)
	}
	for _, e := range dbs {
		name, ok := strings.CutSuffix(e.Name(), world.DBExt)
		switch {
		case strings.HasSuffix(e.Name(), "-journal") || strings.HasSuffix(e.Name(), "-wal") || strings.HasSuffix(e.Name(), "-shm"):
			return nil, fmt.Errorf("world %s: db/%s: a database is still open or was not closed cleanly; close it (or open and close it once to roll back) before hashing or snapshotting", root, e.Name())
		case !ok || !e.Type().IsRegular():
			return nil, fmt.Errorf("world %s: db/%s: want only files named NAME%s", root, e.Name(), world.DBExt)
		}
		if err := world.ValidDBName(name); err != nil {
			return nil, fmt.Errorf("world %s: db/%s: %w", root, e.Name(), err)
		}
		l.DBs = append(l.DBs, name)
	}
	sort.Strings(l.DBs)
	return l, nil
}
