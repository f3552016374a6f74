package pooltest

import (
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/pool"
)

func TestFixturePool(t *testing.T) {
	f := New(t, nil)
	defer f.Close()
	f.WritePool(t, func(fam string) string {
		if fam == "model-pick" {
			return pool.SplitVal
		}
		return pool.SplitRL
	})
	p, err := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Split(pool.SplitRL)) != 2 || len(p.Split(pool.SplitVal)) != 1 {
		t.Fatalf("splits: %+v", p.Counts)
	}
	for _, e := range p.Tasks {
		if f.Tasks[e.Family].ID != e.ID {
			t.Errorf("entry %+v", e)
		}
	}
}
