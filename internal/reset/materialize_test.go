package reset

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

func TestMaterializerFromStore(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	src := filepath.Join(tmp, "src")
	if err := WriteFixture(ctx, src, &FixtureOptions{}); err != nil {
		t.Fatal(err)
	}
	st, err := store.Init(filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	id, err := st.Snapshot(ctx, src, store.Meta{Kind: store.KindWorld, Persona: "p", WorldHash: world.Hash([]byte("x"))})
	if err != nil {
		t.Fatal(err)
	}
	m := &Materializer{Store: st, CacheDir: filepath.Join(tmp, "cache")}
	if err := os.MkdirAll(filepath.Join(tmp, "inst"), 0o755); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	insts := make([]Instance, 4)
	errs := make([]error, 4)
	for i := range insts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			insts[i], errs[i] = m.New(ctx, id, filepath.Join(tmp, "inst", string(rune('a'+i))))
		}()
	}
	wg.Wait()
	for i, in := range insts {
		if errs[i] != nil {
			t.Fatalf("instance %d: %v", i, errs[i])
		}
		defer in.Close(ctx)
		if err := Diff(src, in.Dir()); err != nil {
			t.Fatalf("instance %d differs from the snapshot: %v", i, err)
		}
	}
	t.Logf("strategy: %s", m.Strategy.Name())
	f, err := OpenWritable(insts[0], "home/new.txt")
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("x")
	f.Close()
	if err := insts[0].Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if err := Diff(src, insts[0].Dir()); err != nil {
		t.Fatalf("after reset: %v", err)
	}
	if err := Diff(src, filepath.Join(m.CacheDir, id.String())); err != nil {
		t.Fatalf("lower changed: %v", err)
	}
}
