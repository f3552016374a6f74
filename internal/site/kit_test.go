package site_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

var built struct {
	once sync.Once
	dir  string
	err  error
}

// builtCatalog is the generated catalog (seed 1), built once per test
// binary into a directory the tests share read-only.
func builtCatalog(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir = filepath.Join(sharedTmp, "catalog")
		_, built.err = catalog.Build(context.Background(), built.dir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed})
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.dir
}

// TestKitSites runs the kit suite over every kit site of the registry.
func TestKitSites(t *testing.T) {
	cat := builtCatalog(t)
	n := 0
	for _, spec := range site.All() {
		dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), spec.Name), state.TestWorld{})
		s, err := spec.Open(site.Options{WorldDir: dir, CatalogDir: cat, Clock: world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC))})
		if err != nil {
			t.Fatal(err)
		}
		ks, ok := s.(*kit.Site)
		s.Close()
		if !ok {
			continue // the shop has tests of its own
		}
		n++
		t.Run(spec.Name, func(t *testing.T) {
			t.Parallel()
			kit.Suite(t, ks.Spec(), cat)
		})
	}
	if n < 14 {
		t.Errorf("%d kit sites, want 14", n)
	}
}
