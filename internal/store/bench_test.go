package store

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

const benchTree = 20 << 20

func treeBytes(b *testing.B, dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
		return nil
	})
	return n
}

// BenchmarkSnapshot stores a ~20 MiB world into an empty store.
func BenchmarkSnapshot(b *testing.B) {
	src := makeWorld(b, filepath.Join(b.TempDir(), "w"), 61, benchTree)
	b.SetBytes(treeBytes(b, src))
	for b.Loop() {
		b.StopTimer()
		s, err := Init(filepath.Join(b.TempDir(), "store"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		if _, err := s.Snapshot(b.Context(), src, worldMeta("ada", 0, world.ID{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSnapshotUnchanged re-snapshots a ~20 MiB world the store already
// holds: read, chunk and hash only.
func BenchmarkSnapshotUnchanged(b *testing.B) {
	src := makeWorld(b, filepath.Join(b.TempDir(), "w"), 62, benchTree)
	s := newStore(b)
	mustSnapshot(b, s, src, worldMeta("ada", 0, world.ID{}))
	b.SetBytes(treeBytes(b, src))
	for b.Loop() {
		if _, err := s.Snapshot(b.Context(), src, worldMeta("ada", 0, world.ID{})); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckout materialises a ~20 MiB world.
func BenchmarkCheckout(b *testing.B) {
	src := makeWorld(b, filepath.Join(b.TempDir(), "w"), 63, benchTree)
	s := newStore(b)
	id := mustSnapshot(b, s, src, worldMeta("ada", 0, world.ID{}))
	b.SetBytes(treeBytes(b, src))
	out := b.TempDir()
	for b.Loop() {
		dst := filepath.Join(out, "w")
		if err := s.Checkout(b.Context(), id, dst); err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		if err := os.RemoveAll(dst); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
}

// BenchmarkChunks measures the chunker alone.
func BenchmarkChunks(b *testing.B) {
	data := randBytes(newRand(64), 8<<20)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		Chunks(data)
	}
}
