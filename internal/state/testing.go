package state

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestWorld describes a small world for tests: SQL statements per database
// and home files by slash path.
type TestWorld struct {
	Persona string
	Day     int
	SQL     map[string][]string
	Files   map[string]string
}

// MakeTestWorld writes w into dir (created) and returns dir.
func MakeTestWorld(tb testing.TB, dir string, w TestWorld) string {
	tb.Helper()
	if w.Persona == "" {
		w.Persona = "test-persona"
	}
	if err := os.MkdirAll(filepath.Join(dir, world.DBDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, world.HomeDir), 0o755); err != nil {
		tb.Fatal(err)
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: w.Persona, Day: w.Day, Clock: "2026-03-01T09:00:00Z"}
	if err := world.WriteManifest(dir, m); err != nil {
		tb.Fatal(err)
	}
	if err := world.WriteAccounts(dir, nil); err != nil {
		tb.Fatal(err)
	}
	for name, stmts := range w.SQL {
		ExecTest(tb, world.DBPath(dir, name), stmts...)
	}
	for rel, content := range w.Files {
		p := filepath.Join(dir, world.HomeDir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	return dir
}

// ExecTest runs statements against the database at path (created if absent).
func ExecTest(tb testing.TB, path string, stmts ...string) {
	tb.Helper()
	db, err := OpenDB(path, false)
	if err != nil {
		tb.Fatal(err)
	}
	defer db.Close()
	for _, s := range stmts {
		if _, err := db.ExecContext(context.Background(), s); err != nil {
			tb.Fatalf("exec %q: %v", s, err)
		}
	}
}
