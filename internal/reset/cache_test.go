package reset

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// TestCacheIsBoundedAndCollected: past MaxBytes a checkout removes the
// least recently used lowers nobody holds (a scope, an instance, a Lower
// outside a scope until Close hold theirs); a removed lower is checked out
// again on its next use; Close collects once more; while another process
// holds the cache nothing is removed, and a later process collects the
// lowers an earlier one left, by the recency they kept on disk.
func TestCacheIsBoundedAndCollected(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	st, err := store.Init(filepath.Join(tmp, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ids := map[string]world.ID{}
	srcs := map[string]string{}
	// Five snapshots of one world (their records differ): lowers of one
	// size.
	src := filepath.Join(tmp, "src")
	if err := WriteFixture(ctx, src, &FixtureOptions{DBs: 1, Rows: 20, HomeFiles: 3, Binaries: 1}); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "b", "c", "d", "e"} {
		id, err := st.Snapshot(ctx, src, store.Meta{Kind: store.KindWorld, Persona: "p", WorldHash: world.Hash([]byte(name))})
		if err != nil {
			t.Fatal(err)
		}
		ids[name], srcs[name] = id, src
	}
	clock := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { clock = clock.Add(time.Minute); return clock }
	cache := filepath.Join(tmp, "cache")
	present := func(t *testing.T, want map[string]bool) {
		t.Helper()
		for name, id := range ids {
			_, err := os.Stat(filepath.Join(cache, id.String(), world.ManifestFile))
			if (err == nil) != want[name] {
				t.Errorf("lower %s present %t, want %t", name, err == nil, want[name])
			}
		}
	}

	// One lower's size sets the bound: room for two and a half.
	probe := &Materializer{Store: st, CacheDir: filepath.Join(tmp, "probe")}
	dir, err := probe.Lower(ctx, ids["a"])
	if err != nil {
		t.Fatal(err)
	}
	one, err := treeSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	probe.Close()

	m := &Materializer{Store: st, CacheDir: cache, MaxBytes: one*5/2 + one/10, Now: now, Strategy: &Copy{}}
	lower := func(m *Materializer, ctx context.Context, name string) {
		t.Helper()
		dir, err := m.Lower(ctx, ids[name])
		if err != nil {
			t.Fatal(err)
		}
		if err := Diff(srcs[name], dir); err != nil {
			t.Fatalf("lower %s differs from its snapshot: %v", name, err)
		}
	}
	for _, name := range []string{"a", "b"} {
		sctx, release := Scope(ctx)
		lower(m, sctx, name)
		release()
	}
	held, releaseHeld := Scope(ctx)
	lower(m, held, "c") // a, b, c: past the bound; a is the oldest free one
	present(t, map[string]bool{"b": true, "c": true})

	os.MkdirAll(filepath.Join(tmp, "inst"), 0o755)
	inst, err := m.New(ctx, ids["d"], filepath.Join(tmp, "inst", "d"))
	if err != nil {
		t.Fatal(err)
	}
	// b, c, d: c is held by its scope, d by the instance: b goes.
	present(t, map[string]bool{"c": true, "d": true})

	lower(m, ctx, "a") // checked out again, held until Close
	present(t, map[string]bool{"a": true, "c": true, "d": true})
	if rep := m.LastCollect(); rep.Lowers != 3 || rep.Removed != 0 || rep.Bytes <= m.MaxBytes {
		t.Errorf("every lower held: %+v, want 3 lowers over the bound and none removed", rep)
	}

	releaseHeld()
	if err := inst.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	// a, c, d free at Close: c, the least recently used, goes.
	present(t, map[string]bool{"a": true, "d": true})
	if rep := m.LastCollect(); rep.Lowers != 2 || rep.Removed != 1 || rep.Bytes > m.MaxBytes {
		t.Errorf("after Close: %+v, want 2 lowers within the bound", rep)
	}

	// A later process with a smaller bound while another holds the cache:
	// nothing is removed.
	other, err := os.OpenFile(filepath.Join(cache, LockFile), os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := unix.Flock(int(other.Fd()), unix.LOCK_SH); err != nil {
		t.Fatal(err)
	}
	m2 := &Materializer{Store: st, CacheDir: cache, MaxBytes: one * 3 / 2, Now: now}
	sctx, release := Scope(ctx)
	lower(m2, sctx, "e")
	release()
	if rep, err := m2.Collect(); err != nil || !rep.Busy || rep.Removed != 0 {
		t.Errorf("collect while another process holds the cache: %+v, %v", rep, err)
	}
	present(t, map[string]bool{"a": true, "d": true, "e": true})
	unix.Flock(int(other.Fd()), unix.LOCK_UN)
	// Alone now: the earlier process's lowers count, oldest first (d was
	// used before a).
	rep, err := m2.Collect()
	if err != nil {
		t.Fatal(err)
	}
	present(t, map[string]bool{"e": true})
	if rep.Removed != 2 || rep.Lowers != 1 {
		t.Errorf("the later process's collection: %+v, want d and a removed", rep)
	}
	m2.Close()
	if ents, _ := os.ReadDir(cache); len(ents) != 2 { // e and the lock file
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Errorf("the cache holds %v, want e's lower and %s", names, LockFile)
	}
}

type linkInst struct{ broke []string }

func (l *linkInst) Dir() string                     { return "x" }
func (l *linkInst) Reset(ctx context.Context) error { return nil }
func (l *linkInst) Close(ctx context.Context) error { return nil }
func (l *linkInst) BreakLink(rel string) error      { l.broke = append(l.broke, rel); return nil }

// TestHeldInstanceKeepsLinkBreaking: the instance New returns still
// breaks links (Writable relies on it), and its Close ends the hold once.
func TestHeldInstanceKeepsLinkBreaking(t *testing.T) {
	in := &linkInst{}
	released := 0
	h := heldInstance(in, func() { released++ })
	if _, err := Writable(h, "home/a.txt"); err != nil {
		t.Fatal(err)
	}
	if len(in.broke) != 1 {
		t.Errorf("the held instance did not break the link: %v", in.broke)
	}
	h.Close(context.Background())
	h.Close(context.Background())
	if released != 1 {
		t.Errorf("released %d times, want once", released)
	}
}
