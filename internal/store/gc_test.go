package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

func TestGCKeepsReferenced(t *testing.T) {
	s := newStore(t)
	s.packSize = 512 << 10
	src := makeWorld(t, filepath.Join(t.TempDir(), "w"), 21, 3<<20)
	r := newRand(21)
	refs := t.TempDir()
	var ids []world.ID
	for day := range 7 {
		// Each day rewrites one file, adds one and deletes the one added two
		// days before: forgetting a day kills part of its pack.
		writeFile(t, filepath.Join(src, "home", "big", "a.bin"), randBytes(r, 300<<10), 0o644)
		os.Remove(filepath.Join(src, "home", "day"+string(rune('0'+day-2))))
		writeFile(t, filepath.Join(src, "home", "day"+string(rune('0'+day))), randBytes(r, 100<<10), 0o644)
		id := mustSnapshot(t, s, src, worldMeta("ada", day, world.ID{}))
		ids = append(ids, id)
		mustCheckout(t, s, id, filepath.Join(refs, id.String()))
	}
	for _, day := range []int{2, 4} {
		if err := s.Forget(t.Context(), ids[day]); err != nil {
			t.Fatal(err)
		}
	}
	ids = slices.Delete(ids, 4, 5)
	ids = slices.Delete(ids, 2, 3)
	// A second line of history that will be forgotten.
	other := makeWorld(t, filepath.Join(t.TempDir(), "o"), 22, 2<<20)
	forgotten := mustSnapshot(t, s, other, worldMeta("bob", 0, world.ID{}))
	if err := s.Forget(t.Context(), forgotten); err != nil {
		t.Fatal(err)
	}
	// Garbage a crash would leave: a tmp file, an unindexed pack, an index
	// whose pack is gone.
	writeFile(t, filepath.Join(s.Dir(), "tmp", "packs-x-123"), []byte("partial"), 0o644)
	orphan := []byte("orphan pack")
	writeFile(t, filepath.Join(s.Dir(), "packs", world.Hash(orphan).String()), orphan, 0o444)
	ixb := []byte(`{"pack":"` + world.Hash([]byte("gone")).String() + `","blobs":[]}`)
	writeFile(t, filepath.Join(s.Dir(), "index", world.Hash(ixb).String()), ixb, 0o444)

	before := mustCheckOK(t, s)
	if len(before.Garbage) == 0 || before.GarbageBytes < 2<<20 {
		t.Errorf("Check before GC lists %d garbage objects, %d bytes; want the forgotten snapshot's 2 MiB and more", len(before.Garbage), before.GarbageBytes)
	}
	statsBefore, _ := s.Stats()
	rep, err := s.GC(t.Context())
	if err != nil {
		t.Fatalf("GC: %v", err)
	}
	t.Logf("gc: %s", rep)
	if rep.TmpRemoved != 1 || rep.PacksRepacked == 0 || rep.BytesFreed() < 2<<20 {
		t.Errorf("GC report %s: want 1 tmp file removed, some packs repacked, >= 2 MiB freed", rep)
	}
	after := mustCheckOK(t, s)
	if len(after.Garbage) != 0 {
		t.Errorf("Check after GC still lists garbage:\n%s", after)
	}
	statsAfter, _ := s.Stats()
	if statsAfter.Bytes != statsBefore.Bytes-rep.BytesFreed()+int64(len("partial")) {
		t.Errorf("Stats bytes %d -> %d, GC says freed %d", statsBefore.Bytes, statsAfter.Bytes, rep.BytesFreed())
	}
	// Every remaining snapshot checks out byte-equal, from this Store and a
	// fresh one.
	s2, err := Open(s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range []*Store{s, s2} {
		for _, id := range ids {
			dst := filepath.Join(t.TempDir(), "out")
			mustCheckout(t, st, id, dst)
			assertTreesEqual(t, filepath.Join(refs, id.String()), dst)
		}
	}
	// GC again has nothing to do.
	rep, err = s.GC(t.Context())
	if err != nil || rep.BytesFreed() != 0 || rep.PacksRemoved != 0 {
		t.Errorf("second GC = %s, %v; want nothing freed", rep, err)
	}
	// And snapshots still dedup against the repacked blobs.
	files := storeFiles(t, s.Dir())
	if id := mustSnapshot(t, s, src, worldMeta("ada", 6, world.ID{})); id != ids[len(ids)-1] {
		t.Errorf("re-snapshot after GC gave %s, want %s", id.Short(), ids[len(ids)-1].Short())
	}
	if got := storeFiles(t, s.Dir()); len(got) != len(files) {
		t.Errorf("re-snapshot after GC wrote %d files", len(got)-len(files))
	}
}

func TestGCFreesForgotten(t *testing.T) {
	s := newStore(t)
	base := makeWorld(t, filepath.Join(t.TempDir(), "w"), 31, 2<<20)
	a := mustSnapshot(t, s, base, worldMeta("ada", 0, world.ID{}))
	stA, _ := s.Stats()
	extra := randBytes(newRand(32), 3<<20)
	writeFile(t, filepath.Join(base, "home", "extra.bin"), extra, 0o644)
	b := mustSnapshot(t, s, base, worldMeta("ada", 1, a))
	stB, _ := s.Stats()
	if grew := stB.Bytes - stA.Bytes; grew < int64(len(extra)) || grew > int64(len(extra))+64<<10 {
		t.Errorf("adding a 3 MiB file grew the store by %d bytes", grew)
	}
	rec, err := os.Stat(filepath.Join(s.Dir(), "snapshots", b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Forget(t.Context(), b); err != nil {
		t.Fatal(err)
	}
	rep, err := s.GC(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gc: %s", rep)
	if rep.BytesFreed() != stB.Bytes-stA.Bytes-rec.Size() {
		t.Errorf("GC freed %d bytes, want %d (snapshot b's unique data, tree, index and record)", rep.BytesFreed(), stB.Bytes-stA.Bytes)
	}
	mustCheckOK(t, s)
	dst := filepath.Join(t.TempDir(), "out")
	mustCheckout(t, s, a, dst)
	os.Remove(filepath.Join(base, "home", "extra.bin"))
	assertTreesEqual(t, base, dst)
}

// TestGCRepacksMixedPack forgets a snapshot whose dead blobs share a pack
// with live ones.
func TestGCRepacksMixedPack(t *testing.T) {
	s := newStore(t)
	src := filepath.Join(t.TempDir(), "w")
	r := newRand(41)
	keep := randBytes(r, 1<<20)
	writeFile(t, filepath.Join(src, "keep.bin"), keep, 0o644)
	writeFile(t, filepath.Join(src, "drop.bin"), randBytes(r, 1<<20), 0o644)
	c := mustSnapshot(t, s, src, worldMeta("ada", 0, world.ID{})) // one pack, both files
	os.Remove(filepath.Join(src, "drop.bin"))
	d := mustSnapshot(t, s, src, worldMeta("ada", 1, world.ID{}))
	if err := s.Forget(t.Context(), c); err != nil {
		t.Fatal(err)
	}
	rep, err := s.GC(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("gc: %s", rep)
	if rep.PacksRepacked != 1 || rep.PacksWritten != 1 || rep.BytesFreed() < 1<<20 {
		t.Errorf("GC = %s; want the mixed pack repacked into one new pack, >= 1 MiB freed", rep)
	}
	st, _ := s.Stats()
	if st.Bytes > int64(len(keep))+32<<10 {
		t.Errorf("store holds %d bytes after GC, want about %d", st.Bytes, len(keep))
	}
	mustCheckOK(t, s)
	dst := filepath.Join(t.TempDir(), "out")
	mustCheckout(t, s, d, dst)
	assertTreesEqual(t, src, dst)
}

func TestGCWaitsForWriters(t *testing.T) {
	s := newStore(t)
	unlock, err := s.lock(t.Context(), false) // a writer in progress
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := contextWithCancel(t)
	done := make(chan error, 1)
	go func() {
		_, err := s.GC(ctx)
		done <- err
	}()
	cancel()
	if err := <-done; !errors.Is(err, errCanceled) {
		t.Errorf("GC while a writer holds the lock, cancelled: err = %v, want context.Canceled", err)
	}
	unlock()
	if _, err := s.GC(t.Context()); err != nil {
		t.Errorf("GC after the writer finished: %v", err)
	}
}
