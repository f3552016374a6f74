package benchworld

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/state"
)

func TestChainIsValidAndShaped(t *testing.T) {
	ctx := context.Background()
	opts := &delta.Options{Generators: generator.Default()}
	root := t.TempDir()
	g := NewGenerator(1)
	parent := ""
	for day := range 4 {
		d := g.Next()
		dir := filepath.Join(root, "day", string(rune('0'+day)))
		if day > 0 {
			fresh := func(ctx context.Context, dst string) error { return state.Copy(ctx, parent, dst) }
			res, err := delta.Replay(ctx, fresh, d, t.TempDir(), opts)
			if err != nil || !res.Equal {
				t.Fatalf("day %d replay: %v %+v", day, err, res)
			}
		}
		if err := delta.ApplyCopy(ctx, parent, dir, d, opts); err != nil {
			t.Fatalf("day %d: %v", day, err)
		}
		issues, err := delta.CheckProduces(ctx, parent, dir, &d.Produces)
		if err != nil || len(issues) > 0 {
			t.Fatalf("day %d produces: %v %v", day, err, issues)
		}
		s, err := state.Summarize(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		if day == 0 {
			if s.Stats.Tables < 20 || s.Stats.Rows < 10000 || s.Stats.Files < 50 || len(s.DBs) != 23 {
				t.Fatalf("day 0 shape: %+v, %d dbs", s.Stats, len(s.DBs))
			}
			t.Logf("day 0: %+v", s.Stats)
		}
		parent = dir
	}
	// Same seed, same day 0.
	a, b := NewGenerator(7).Next(), NewGenerator(7).Next()
	ea, _ := a.Encode()
	eb, _ := b.Encode()
	if string(ea) != string(eb) {
		t.Fatal("generator is not deterministic")
	}
}

func TestCatalog(t *testing.T) {
	ctx := context.Background()
	a, b := filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	for _, dir := range []string{a, b} {
		if err := WriteCatalog(ctx, dir, 3, 2<<20, generator.Default()); err != nil {
			t.Fatal(err)
		}
	}
	ha, err := state.Hash(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	if hb, _ := state.Hash(ctx, b); ha != hb {
		t.Fatal("catalog is not deterministic")
	}
}
