package store

import (
	"os"
	"path/filepath"
	"testing"
)

func TestDirBackend(t *testing.T) {
	TestBackend(t, func(t *testing.T) Backend {
		dir := t.TempDir()
		for _, sub := range []string{"packs", "index", "snapshots", "tmp"} {
			if err := os.Mkdir(filepath.Join(dir, sub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		return NewDirBackend(dir)
	})
}

func TestMemBackend(t *testing.T) {
	TestBackend(t, func(t *testing.T) Backend { return NewMemBackend() })
}
