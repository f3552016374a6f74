package store

import (
	"bytes"
	"slices"
	"testing"
)

func TestChunksCDC(t *testing.T) {
	data := randBytes(newRand(1), 4<<20)
	chunks := Chunks(data)
	if got := bytes.Join(chunks, nil); !bytes.Equal(got, data) {
		t.Fatal("chunks do not concatenate to the input")
	}
	for i, c := range chunks {
		if len(c) > MaxChunk || (len(c) < MinChunk && i != len(chunks)-1) {
			t.Errorf("chunk %d: %d bytes, want %d..%d", i, len(c), MinChunk, MaxChunk)
		}
	}
	avg := len(data) / len(chunks)
	if avg < AvgChunk/2 || avg > AvgChunk*2 {
		t.Errorf("average chunk %d bytes, want about %d", avg, AvgChunk)
	}
	// Boundaries are content defined: inserting bytes at the front leaves
	// almost all chunks intact.
	shifted := Chunks(append([]byte("a few inserted bytes"), data...))
	set := make(map[string]bool)
	for _, c := range chunks {
		set[string(c)] = true
	}
	shared := 0
	for _, c := range shifted {
		if set[string(c)] {
			shared++
		}
	}
	if shared < len(chunks)-3 {
		t.Errorf("after an insertion %d of %d chunks are shared, want all but a few", shared, len(chunks))
	}
}

// TestChunksStable pins the boundaries: changing the gear table or the
// masks would silently defeat dedup against existing stores.
func TestChunksStable(t *testing.T) {
	var sizes []int
	for _, c := range Chunks(randBytes(newRand(42), 100<<10)) {
		sizes = append(sizes, len(c))
	}
	want := []int{9956, 2742, 13061, 12004, 10748, 9223, 9806, 8871, 9457, 12590, 3942}
	if !slices.Equal(sizes, want) {
		t.Errorf("chunk sizes = %v, want %v", sizes, want)
	}
}

func TestChunksSmallAndEmpty(t *testing.T) {
	if got := Chunks(nil); len(got) != 0 {
		t.Errorf("Chunks(nil) = %d chunks, want 0", len(got))
	}
	small := randBytes(newRand(2), MinChunk)
	if got := Chunks(small); len(got) != 1 || !bytes.Equal(got[0], small) {
		t.Errorf("Chunks(%d bytes) = %d chunks, want 1", len(small), len(got))
	}
}

func TestChunksSQLite(t *testing.T) {
	for _, ps := range []int{512, 4096, 65536} {
		db := sqliteLike(newRand(3), ps, 10)
		db = append(db, 1, 2, 3) // a torn tail still round-trips
		chunks := Chunks(db)
		if len(chunks) != 11 {
			t.Fatalf("page size %d: %d chunks, want 11", ps, len(chunks))
		}
		for i, c := range chunks[:10] {
			if len(c) != ps {
				t.Errorf("page size %d: chunk %d has %d bytes", ps, i, len(c))
			}
		}
		if !bytes.Equal(bytes.Join(chunks, nil), db) {
			t.Errorf("page size %d: chunks do not concatenate to the input", ps)
		}
	}
	// An invalid page size falls back to content-defined chunking.
	bad := sqliteLike(newRand(4), 4096, 16)
	bad[16], bad[17] = 0x03, 0x00 // 768: not a power of two
	for _, c := range Chunks(bad) {
		if len(c) == 768 {
			t.Errorf("invalid page size was used for chunking")
		}
	}
}
