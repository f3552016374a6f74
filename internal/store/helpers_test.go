package store

import (
	"bytes"
	"context"
	"encoding/binary"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x5eed)) }

func randBytes(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := 0; i+8 <= n; i += 8 {
		binary.LittleEndian.PutUint64(b[i:], r.Uint64())
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// sqliteLike returns a file that looks like a SQLite database to the
// chunker: the magic, the page size at offset 16, random pages.
func sqliteLike(r *rand.Rand, pageSize, pages int) []byte {
	b := randBytes(r, pageSize*pages)
	copy(b, sqliteMagic)
	ps := pageSize
	if ps == 65536 {
		ps = 1
	}
	binary.BigEndian.PutUint16(b[16:], uint16(ps))
	return b
}

func writeFile(t testing.TB, path string, data []byte, mode fs.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// makeWorld builds a world-like tree at dir with about bigBytes of large
// files, and returns dir.
func makeWorld(t testing.TB, dir string, seed uint64, bigBytes int) string {
	t.Helper()
	r := newRand(seed)
	writeFile(t, filepath.Join(dir, "manifest.json"), []byte(`{"version":1,"persona":"ada","day":3}`+"\n"), 0o644)
	writeFile(t, filepath.Join(dir, "accounts.json"), []byte("[]\n"), 0o600)
	writeFile(t, filepath.Join(dir, "db", "shop.sqlite"), sqliteLike(r, 4096, 64), 0o644)
	writeFile(t, filepath.Join(dir, "db", "mail.sqlite"), sqliteLike(r, 65536, 3), 0o644)
	writeFile(t, filepath.Join(dir, "home", "notes", "empty.txt"), nil, 0o644)
	writeFile(t, filepath.Join(dir, "home", "bin", "run.sh"), []byte("#!/bin/sh\necho hi\n"), 0o755)
	writeFile(t, filepath.Join(dir, "home", "small.txt"), []byte("tiny"), 0o600)
	if err := os.MkdirAll(filepath.Join(dir, "home", "empty-dir"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "home", "private"), 0o700); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(dir, "home", "private", "key"), []byte("secret"), 0o400)
	if err := os.Symlink("notes/empty.txt", filepath.Join(dir, "home", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/nonexistent/target", filepath.Join(dir, "home", "dangling")); err != nil {
		t.Fatal(err)
	}
	for i := 0; bigBytes > 0; i++ {
		n := min(bigBytes, 5<<20+int(r.Uint32N(64<<10)))
		writeFile(t, filepath.Join(dir, "home", "big", string(rune('a'+i))+".bin"), randBytes(r, n), 0o644)
		bigBytes -= n
	}
	return dir
}

// assertTreesEqual compares two trees: names, types, permission bits,
// contents and symlink targets.
func assertTreesEqual(t testing.TB, want, got string) {
	t.Helper()
	type ent struct {
		mode   fs.FileMode
		data   []byte
		target string
	}
	read := func(root string) map[string]ent {
		m := make(map[string]ent)
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			info, err := os.Lstat(p)
			if err != nil {
				return err
			}
			e := ent{mode: info.Mode()}
			switch {
			case info.Mode().IsRegular():
				if e.data, err = os.ReadFile(p); err != nil {
					return err
				}
			case info.Mode()&fs.ModeSymlink != 0:
				e.mode = fs.ModeSymlink
				if e.target, err = os.Readlink(p); err != nil {
					return err
				}
			}
			if rel == "." {
				e.mode = fs.ModeDir // the root's mode is not stored
			}
			m[rel] = e
			return nil
		})
		if err != nil {
			t.Fatalf("walk %s: %v", root, err)
		}
		return m
	}
	a, b := read(want), read(got)
	for name, ea := range a {
		eb, ok := b[name]
		switch {
		case !ok:
			t.Errorf("%s: missing from %s", name, got)
		case ea.mode != eb.mode:
			t.Errorf("%s: mode %v, want %v", name, eb.mode, ea.mode)
		case !bytes.Equal(ea.data, eb.data):
			t.Errorf("%s: content differs (%d bytes, want %d)", name, len(eb.data), len(ea.data))
		case ea.target != eb.target:
			t.Errorf("%s: symlink target %q, want %q", name, eb.target, ea.target)
		}
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			t.Errorf("%s: unexpected in %s", name, got)
		}
	}
}

// storeFiles lists every file in the store directory (relative paths).
func storeFiles(t testing.TB, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

func newStore(t testing.TB) *Store {
	t.Helper()
	s, err := Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func worldMeta(persona string, day int, parent world.ID) Meta {
	return Meta{Kind: KindWorld, Persona: persona, Day: day, Parent: parent, WorldHash: world.Hash([]byte(persona))}
}

func mustSnapshot(t testing.TB, s *Store, dir string, m Meta) world.ID {
	t.Helper()
	id, err := s.Snapshot(t.Context(), dir, m)
	if err != nil {
		t.Fatalf("Snapshot(%s): %v", dir, err)
	}
	return id
}

func mustCheckout(t testing.TB, s *Store, id world.ID, dst string) {
	t.Helper()
	if err := s.Checkout(t.Context(), id, dst); err != nil {
		t.Fatalf("Checkout(%s): %v", id.Short(), err)
	}
}

func mustCheckOK(t testing.TB, s *Store) *CheckReport {
	t.Helper()
	r, err := s.Check(t.Context())
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	if !r.OK() {
		t.Fatalf("Check found errors:\n%s", r)
	}
	return r
}

var errCanceled = context.Canceled

func contextWithCancel(t testing.TB) (context.Context, context.CancelFunc) {
	return context.WithCancel(t.Context())
}

// lockedBuffer is a bytes.Buffer safe for a child's stdout and stderr.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func removeFile(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}
