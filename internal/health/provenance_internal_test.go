package health

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestServiceDBsSkipProvenance holds layer 4 to the provenance rule: the
// world's image facts database is served by no MCP service, so it is not
// one health must load, while any other database that is no site's is.
func TestServiceDBsSkipProvenance(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, world.DBDir), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{world.ImageFactsDB, "mail", "stray"} {
		if err := os.WriteFile(world.DBPath(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := serviceDBs(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"mail", "stray"}; !slices.Equal(got, want) {
		t.Errorf("serviceDBs = %v, want %v (%s is provenance, served by no service)", got, want, world.ImageFactsDB)
	}
}
