package store

import (
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestConcurrent runs snapshots, checkouts and GC at once, through two
// Store values on one directory, as parallel rollouts would.
func TestConcurrent(t *testing.T) {
	s1 := newStore(t)
	s2, err := Open(s1.Dir())
	if err != nil {
		t.Fatal(err)
	}
	base := makeWorld(t, filepath.Join(t.TempDir(), "base"), 71, 1<<20)
	baseID := mustSnapshot(t, s1, base, worldMeta("base", 0, world.ID{}))

	var srcs []string
	for i := range 4 {
		srcs = append(srcs, makeWorld(t, filepath.Join(t.TempDir(), fmt.Sprint("w", i)), uint64(72+i), 512<<10))
	}
	ids := make([]world.ID, len(srcs))
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for i, src := range srcs {
		st := []*Store{s1, s2}[i%2]
		wg.Go(func() {
			id, err := st.Snapshot(t.Context(), src, worldMeta(fmt.Sprint("p", i), 0, world.ID{}))
			ids[i] = id
			errs <- err
		})
	}
	for i := range 4 {
		st := []*Store{s1, s2}[i%2]
		wg.Go(func() {
			dst := filepath.Join(t.TempDir(), "out")
			if err := st.Checkout(t.Context(), baseID, dst); err != nil {
				errs <- err
				return
			}
			assertTreesEqual(t, base, dst)
		})
	}
	for i := range 2 {
		st := []*Store{s1, s2}[i%2]
		wg.Go(func() {
			_, err := st.GC(t.Context())
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	for _, st := range []*Store{s1, s2} {
		r := mustCheckOK(t, st)
		if r.Snapshots != 5 {
			t.Errorf("Check counts %d snapshots, want 5", r.Snapshots)
		}
		for i, id := range ids {
			dst := filepath.Join(t.TempDir(), "out")
			mustCheckout(t, st, id, dst)
			assertTreesEqual(t, srcs[i], dst)
		}
	}
}

// TestStaleIndexAfterOtherGC: a Store whose in-memory index predates
// another Store's GC must neither dedup against deleted blobs nor fail to
// find repacked ones.
func TestStaleIndexAfterOtherGC(t *testing.T) {
	s1 := newStore(t)
	s2, err := Open(s1.Dir())
	if err != nil {
		t.Fatal(err)
	}
	r := newRand(81)
	src := filepath.Join(t.TempDir(), "w")
	x, y := randBytes(r, 256<<10), randBytes(r, 256<<10)
	writeFile(t, filepath.Join(src, "x"), x, 0o644)
	writeFile(t, filepath.Join(src, "y"), y, 0o644)
	b := mustSnapshot(t, s1, src, worldMeta("ada", 0, world.ID{})) // x and y share a pack
	removeFile(t, filepath.Join(src, "y"))
	c := mustSnapshot(t, s1, src, worldMeta("ada", 1, world.ID{}))
	if err := s1.Forget(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.GC(t.Context()); err != nil { // repacks x, deletes y
		t.Fatal(err)
	}
	// s1 still believes in the old pack: Checkout must find x's new copy.
	dst := filepath.Join(t.TempDir(), "c")
	mustCheckout(t, s1, c, dst)
	assertTreesEqual(t, src, dst)
	// s1 must store y again, not dedup against the deleted copy.
	writeFile(t, filepath.Join(src, "y"), y, 0o644)
	d := mustSnapshot(t, s1, src, worldMeta("ada", 2, world.ID{}))
	mustCheckOK(t, s2)
	dst = filepath.Join(t.TempDir(), "d")
	mustCheckout(t, s2, d, dst)
	assertTreesEqual(t, src, dst)
}
