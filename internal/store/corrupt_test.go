package store

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// corruptFixture is a store holding one snapshot, plus what tests need to
// damage it.
type corruptFixture struct {
	s    *Store
	src  string
	id   world.ID
	pack world.ID   // the largest pack
	ix   string     // its index file
	blob indexEntry // a data blob in the middle of it
}

func newCorruptFixture(t *testing.T) *corruptFixture {
	t.Helper()
	s := newStore(t)
	s.packSize = 1 << 20
	src := makeWorld(t, filepath.Join(t.TempDir(), "w"), 11, 3<<20)
	f := &corruptFixture{s: s, src: src}
	f.id = mustSnapshot(t, s, src, worldMeta("ada", 0, world.ID{}))
	names, _ := filepath.Glob(filepath.Join(s.Dir(), "index", "*"))
	var best int
	for _, n := range names {
		ix, err := s.loadIndex(t.Context(), filepath.Base(n))
		if err != nil {
			t.Fatal(err)
		}
		// A pack of data blobs only: damage hides no tree.
		var data []indexEntry
		for _, e := range ix.Blobs {
			if e.Type == TreeBlob {
				data = nil
				break
			}
			data = append(data, e)
		}
		if len(data) > best {
			best = len(data)
			f.pack, f.ix = ix.Pack, filepath.Base(n)
			f.blob = data[len(data)/2]
		}
	}
	if f.blob.Type != DataBlob {
		t.Fatalf("fixture: middle blob is a %s blob", f.blob.Type)
	}
	return f
}

func (f *corruptFixture) path(t FileType, name string) string {
	return filepath.Join(f.s.Dir(), string(t), name)
}

func flipByte(t *testing.T, path string, off int64) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[off] ^= 0x40
	os.Chmod(path, 0o644)
	if err := os.WriteFile(path, b, 0o444); err != nil {
		t.Fatal(err)
	}
}

func truncateHalf(t *testing.T, path string) {
	t.Helper()
	st, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, st.Size()/2); err != nil {
		t.Fatal(err)
	}
}

func check(t *testing.T, s *Store) *CheckReport {
	t.Helper()
	r, err := s.Check(t.Context())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	t.Logf("check report:\n%s", r)
	return r
}

// hasProblem reports whether r lists an error about object name (an ID or
// file name), optionally in pack, whose Err wraps target.
func hasProblem(r *CheckReport, object, name string, pack world.ID, target error) bool {
	return slices.ContainsFunc(r.Errors, func(p Problem) bool {
		return p.Object == object && p.Name == name && (pack.IsZero() || p.Pack == pack) && (target == nil || errors.Is(p.Err, target))
	})
}

// assertCheckoutFails checks that Checkout fails wrapping target and leaves
// nothing behind.
func assertCheckoutFails(t *testing.T, s *Store, id world.ID, target error) {
	t.Helper()
	parent := t.TempDir()
	dst := filepath.Join(parent, "out")
	err := s.Checkout(t.Context(), id, dst)
	if !errors.Is(err, target) {
		t.Errorf("Checkout = %v, want an error wrapping %v", err, target)
	}
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Errorf("failed Checkout left %v behind", ents)
	}
}

// assertGCRefuses checks that GC refuses a damaged store and deletes nothing.
func assertGCRefuses(t *testing.T, s *Store) {
	t.Helper()
	before := storeFiles(t, s.Dir())
	if _, err := s.GC(t.Context()); !errors.Is(err, ErrDamaged) {
		t.Errorf("GC on a damaged store = %v, want ErrDamaged", err)
	}
	if after := storeFiles(t, s.Dir()); !slices.Equal(before, after) {
		t.Errorf("refused GC changed files:\nbefore %v\nafter  %v", before, after)
	}
}

func TestCorruptPackByte(t *testing.T) {
	f := newCorruptFixture(t)
	flipByte(t, f.path(PackFile, f.pack.String()), f.blob.Offset+f.blob.Length/2)
	r := check(t, f.s)
	if r.OK() {
		t.Fatal("Check is OK after a flipped byte")
	}
	if !hasProblem(r, "pack", f.pack.String(), world.ID{}, world.ErrIDMismatch) {
		t.Errorf("Check does not name pack %s", f.pack.Short())
	}
	if !hasProblem(r, "blob", f.blob.ID.String(), f.pack, world.ErrIDMismatch) {
		t.Errorf("Check does not name blob %s in pack %s", f.blob.ID.Short(), f.pack.Short())
	}
	assertCheckoutFails(t, f.s, f.id, world.ErrIDMismatch)
	var be *BlobError
	err := f.s.Checkout(t.Context(), f.id, filepath.Join(t.TempDir(), "x"))
	if !errors.As(err, &be) || be.Blob != f.blob.ID || be.Pack != f.pack {
		t.Errorf("Checkout error %v does not name blob %s in pack %s", err, f.blob.ID.Short(), f.pack.Short())
	}
	// A fresh Store sees the same.
	s2, err := Open(f.s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	assertCheckoutFails(t, s2, f.id, world.ErrIDMismatch)
}

func TestTruncatedPack(t *testing.T) {
	f := newCorruptFixture(t)
	truncateHalf(t, f.path(PackFile, f.pack.String()))
	r := check(t, f.s)
	if !hasProblem(r, "pack", f.pack.String(), world.ID{}, world.ErrIDMismatch) {
		t.Errorf("Check does not report truncated pack %s", f.pack.Short())
	}
	if !slices.ContainsFunc(r.Errors, func(p Problem) bool { return p.Object == "blob" && p.Pack == f.pack }) {
		t.Errorf("Check reports no truncated blob in pack %s", f.pack.Short())
	}
	assertCheckoutFails(t, f.s, f.id, io.ErrUnexpectedEOF)
}

func TestMissingPack(t *testing.T) {
	f := newCorruptFixture(t)
	if err := os.Remove(f.path(PackFile, f.pack.String())); err != nil {
		t.Fatal(err)
	}
	r := check(t, f.s)
	if !hasProblem(r, "index", f.ix, world.ID{}, ErrPackMissing) {
		t.Errorf("Check does not report index %s without its pack", f.ix)
	}
	if !hasProblem(r, "blob", f.blob.ID.String(), world.ID{}, ErrBlobMissing) {
		t.Errorf("Check does not report blob %s missing", f.blob.ID.Short())
	}
	assertCheckoutFails(t, f.s, f.id, ErrPackMissing)
	s2, err := Open(f.s.Dir())
	if err != nil {
		t.Fatal(err)
	}
	assertCheckoutFails(t, s2, f.id, ErrBlobMissing)
	assertGCRefuses(t, f.s)
}

func TestCorruptIndex(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"flipped":   func(t *testing.T, p string) { flipByte(t, p, 10) },
		"truncated": truncateHalf,
	} {
		t.Run(name, func(t *testing.T) {
			f := newCorruptFixture(t)
			damage(t, f.path(IndexFile, f.ix))
			s, err := Open(f.s.Dir()) // Open survives a bad index
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			r := check(t, s)
			if !hasProblem(r, "index", f.ix, world.ID{}, world.ErrIDMismatch) {
				t.Errorf("Check does not report index %s", f.ix)
			}
			if !hasProblem(r, "blob", f.blob.ID.String(), world.ID{}, ErrBlobMissing) {
				t.Errorf("Check does not report blob %s (only in the bad index) missing", f.blob.ID.Short())
			}
			assertCheckoutFails(t, s, f.id, ErrBlobMissing)
			assertGCRefuses(t, s)
		})
	}
}

func TestCorruptSnapshot(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"flipped":   func(t *testing.T, p string) { flipByte(t, p, 5) },
		"truncated": truncateHalf,
	} {
		t.Run(name, func(t *testing.T) {
			f := newCorruptFixture(t)
			damage(t, f.path(SnapshotFile, f.id.String()))
			r := check(t, f.s)
			if !hasProblem(r, "snapshot", f.id.String(), world.ID{}, world.ErrIDMismatch) {
				t.Errorf("Check does not report snapshot %s", f.id.Short())
			}
			if _, err := f.s.Load(f.id); !errors.Is(err, world.ErrIDMismatch) {
				t.Errorf("Load = %v, want ErrIDMismatch", err)
			}
			if _, err := f.s.List(); !errors.Is(err, world.ErrIDMismatch) {
				t.Errorf("List = %v, want ErrIDMismatch", err)
			}
			assertCheckoutFails(t, f.s, f.id, world.ErrIDMismatch)
			assertGCRefuses(t, f.s)
		})
	}
}

// TestCorruptTree damages a tree blob whose index and pack name still look
// right: a record that verifies pointing at a tree that does not.
func TestCorruptTree(t *testing.T) {
	f := newCorruptFixture(t)
	sn, err := f.s.Load(f.id)
	if err != nil {
		t.Fatal(err)
	}
	loc := f.s.locations(sn.Tree)[0]
	flipByte(t, f.path(PackFile, loc.Pack.String()), loc.Offset+1)
	r := check(t, f.s)
	if !hasProblem(r, "tree", sn.Tree.String(), world.ID{}, world.ErrIDMismatch) {
		t.Errorf("Check does not report tree %s", sn.Tree.Short())
	}
	assertCheckoutFails(t, f.s, f.id, world.ErrIDMismatch)
	assertGCRefuses(t, f.s)
}

func TestCheckReportJSONable(t *testing.T) {
	// The report renders; its String names errors and garbage sections.
	f := newCorruptFixture(t)
	r := check(t, f.s)
	if !r.OK() || r.Snapshots != 1 || r.Packs < 3 || r.Blobs == 0 {
		t.Errorf("clean store: report %+v", r)
	}
	if _, err := json.Marshal(r); err != nil {
		t.Errorf("marshal report: %v", err)
	}
}
