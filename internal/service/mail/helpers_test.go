package mail

import (
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes the test world and returns its directory.
func newWorld(t testing.TB) string {
	t.Helper()
	return MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
}

func dbPath(dir string) string { return world.DBPath(dir, DBName) }

var transports = servicetest.Transports()
