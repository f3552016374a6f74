package store

import (
	"bytes"
	"encoding/binary"
)

// Chunking parameters for content-defined chunking.
const (
	MinChunk = 2 << 10  // smallest content-defined chunk (except a file's last)
	AvgChunk = 8 << 10  // target average size
	MaxChunk = 64 << 10 // largest chunk

	// Before AvgChunk a cut needs 15 zero bits, after it 11 (FastCDC's
	// normalised chunking): sizes cluster around the average.
	maskS = uint64(1<<15-1) << (64 - 15)
	maskL = uint64(1<<11-1) << (64 - 11)
)

// sqliteMagic starts every SQLite database file.
var sqliteMagic = []byte("SQLite format 3\x00")

// gear is the rolling-hash table: 256 constants from splitmix64 with a fixed
// seed, so chunk boundaries never change between builds.
var gear = func() (t [256]uint64) {
	x := uint64(0x77696c6461776d00) // "wildawm\0"
	for i := range t {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
		z = (z ^ z>>27) * 0x94d049bb133111eb
		t[i] = z ^ z>>31
	}
	return t
}()

// Chunks splits a file's content into the pieces the store keeps as blobs.
// A SQLite database is split at its page size, so one changed page costs
// one page; anything else is split by a gear rolling hash (FastCDC style)
// into chunks of MinChunk..MaxChunk bytes, about AvgChunk on average. The
// chunks are subslices of data; empty data has no chunks.
func Chunks(data []byte) [][]byte {
	var out [][]byte
	if ps := sqlitePageSize(data); ps > 0 {
		for len(data) > 0 {
			n := min(ps, len(data))
			out = append(out, data[:n:n])
			data = data[n:]
		}
		return out
	}
	for len(data) > 0 {
		n := cut(data)
		out = append(out, data[:n:n])
		data = data[n:]
	}
	return out
}

// sqlitePageSize returns the page size of a SQLite database file, or 0 if
// data is not one.
func sqlitePageSize(data []byte) int {
	if len(data) < 100 || !bytes.HasPrefix(data, sqliteMagic) {
		return 0
	}
	ps := int(binary.BigEndian.Uint16(data[16:18]))
	if ps == 1 {
		ps = 65536
	}
	if ps < 512 || ps&(ps-1) != 0 {
		return 0 // not a valid page size: treat as ordinary data
	}
	return ps
}

// cut returns the length of the first content-defined chunk of data.
func cut(data []byte) int {
	n := len(data)
	if n <= MinChunk {
		return n
	}
	n = min(n, MaxChunk)
	normal := min(n, AvgChunk)
	g := gear // a local copy is faster, also under -race (stack reads are not instrumented)
	var h uint64
	for i := MinChunk; i < n; i++ {
		h = h<<1 + g[data[i]]
		mask := maskL
		if i < normal {
			mask = maskS
		}
		if h&mask == 0 {
			return i + 1
		}
	}
	return n
}
