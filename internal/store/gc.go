package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// ErrDamaged is returned by GC when the store has errors: collecting garbage
// then could delete data a damaged object refers to.
var ErrDamaged = errors.New("store has errors; run check")

// GCReport is the result of GC.
type GCReport struct {
	TmpRemoved     int   // files removed from tmp/
	PacksRemoved   int   // packs deleted (unreferenced, unindexed or repacked)
	PacksRepacked  int   // partly used packs whose live blobs were copied
	PacksWritten   int   // new packs written by repacking
	IndexesRemoved int   // index files deleted
	BlobsRemoved   int   // blob copies dropped
	BytesBefore    int64 // packs + index files + snapshot records + tmp/
	BytesAfter     int64
}

// BytesFreed is BytesBefore - BytesAfter.
func (r *GCReport) BytesFreed() int64 { return r.BytesBefore - r.BytesAfter }

func (r *GCReport) String() string {
	return fmt.Sprintf("removed %d tmp files, %d packs (%d repacked into %d new), %d index files, %d blobs; freed %d bytes (%d -> %d)",
		r.TmpRemoved, r.PacksRemoved, r.PacksRepacked, r.PacksWritten, r.IndexesRemoved, r.BlobsRemoved, r.BytesFreed(), r.BytesBefore, r.BytesAfter)
}

// GC removes what no snapshot needs, holding the store's lock exclusively:
// everything in tmp/, packs without an index file, index files whose pack
// is gone, and blobs no snapshot references. A pack whose blobs are all
// unreferenced is deleted; a pack with some live blobs is repacked: its live
// blobs are copied into new packs, then its index file and the pack are
// deleted. Of several copies of a blob one is kept. GC refuses, with an
// error wrapping ErrDamaged, to touch a store with errors that affect what
// is referenced (a corrupt snapshot record or index file, a missing or
// corrupt tree); run Check.
func (s *Store) GC(ctx context.Context) (report *GCReport, err error) {
	unlock, err := s.lock(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	defer unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	// Whatever happens, rebuild the in-memory index from what is left.
	defer func() {
		s.idx = make(map[world.ID][]blobLoc)
		s.seenIndex = make(map[string]bool)
		if rerr := s.refreshIndexLocked(context.WithoutCancel(ctx)); rerr != nil && err == nil {
			report, err = nil, fmt.Errorf("gc: %w", rerr)
		}
	}()

	r := &GCReport{}
	if r.BytesBefore, err = s.diskBytes(ctx); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}

	// Nobody else is writing: everything in tmp/ is a leftover.
	tmp := filepath.Join(s.dir, tmpDir)
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		r.TmpRemoved++
	}
	if err := world.SyncDir(tmp); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}

	sc, err := s.scan(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	var fatal []string
	for _, p := range sc.errs {
		fatal = append(fatal, p.String())
	}
	if len(fatal) > 0 {
		return nil, fmt.Errorf("gc: %w:\n  %s", ErrDamaged, strings.Join(fatal, "\n  "))
	}

	// keep[blob] is the copy GC keeps of each referenced blob: the first
	// (by pack ID) that is not known to be bad.
	keep := make(map[world.ID]world.ID)
	for id := range sc.referenced {
		for _, l := range sc.locs[id] {
			if sc.badLocs[locKey{id, l.Pack}] == nil {
				keep[id] = l.Pack
				break
			}
		}
	}

	// Decide per pack: keep as is, delete, or repack.
	var drop, repack []world.ID
	for _, p := range sortedIDs(sc.packs) {
		names := sc.packIndexes[p]
		if len(names) == 0 {
			drop = append(drop, p) // unindexed: left by a crash
			continue
		}
		seen := make(map[world.ID]bool)
		live, total := 0, 0
		for _, name := range names {
			for _, e := range sc.indexes[name].Blobs {
				total++
				if keep[e.ID] == p && !seen[e.ID] {
					live++
				}
				seen[e.ID] = true
			}
		}
		switch {
		case live == 0:
			drop = append(drop, p)
			r.BlobsRemoved += total
		case live < total || len(names) > 1:
			repack = append(repack, p)
			r.BlobsRemoved += total - live
		}
	}

	// Copy live blobs out of packs being repacked. New packs and their index
	// files are durable before anything is deleted.
	w := &packWriter{s: s, ctx: ctx, pending: make(map[world.ID]bool)} // no dedup: the old copies go
	for _, p := range repack {
		data, err := s.be.Load(ctx, PackFile, p.String(), 0, -1)
		if err != nil {
			return nil, fmt.Errorf("gc: repack %s: %w", p.Short(), err)
		}
		for _, name := range sc.packIndexes[p] {
			for _, e := range sc.indexes[name].Blobs {
				if keep[e.ID] != p || w.pending[e.ID] {
					continue
				}
				if e.Offset+e.Length > int64(len(data)) {
					return nil, fmt.Errorf("gc: repack: %w", &BlobError{Blob: e.ID, Pack: p, Err: fmt.Errorf("pack truncated")})
				}
				b := data[e.Offset : e.Offset+e.Length]
				if err := e.ID.Verify(b); err != nil {
					return nil, fmt.Errorf("gc: repack: %w", &BlobError{Blob: e.ID, Pack: p, Err: err})
				}
				if _, err := w.add(e.Type, b); err != nil {
					return nil, fmt.Errorf("gc: repack: %w", err)
				}
			}
		}
	}
	if err := w.finish(); err != nil {
		return nil, fmt.Errorf("gc: repack: %w", err)
	}
	r.PacksWritten = len(w.done)
	r.PacksRepacked = len(repack)
	written := make(map[world.ID]bool)
	writtenIndex := make(map[string]bool)
	for _, name := range w.indexNames {
		writtenIndex[name] = true
	}
	for _, ix := range w.done {
		written[ix.Pack] = true
	}

	// Delete: index files first, then their packs, so a crash in between
	// leaves only unindexed packs (garbage), never an index without a pack.
	remove := func(t FileType, name string) error {
		err := s.be.Remove(ctx, t, name)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	for _, p := range slices.Concat(drop, repack) {
		if written[p] {
			continue
		}
		for _, name := range sc.packIndexes[p] {
			if writtenIndex[name] {
				continue
			}
			if err := remove(IndexFile, name); err != nil {
				return nil, fmt.Errorf("gc: %w", err)
			}
			r.IndexesRemoved++
		}
		if err := remove(PackFile, p.String()); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		r.PacksRemoved++
	}
	for name := range sc.badPacks {
		if err := remove(PackFile, name); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		r.PacksRemoved++
	}
	// Index files whose pack is gone (scan found none of their blobs needed).
	for _, name := range slices.Sorted(maps.Keys(sc.indexes)) {
		if _, ok := sc.packs[sc.indexes[name].Pack]; ok || writtenIndex[name] {
			continue
		}
		if err := remove(IndexFile, name); err != nil {
			return nil, fmt.Errorf("gc: %w", err)
		}
		r.IndexesRemoved++
	}

	if r.BytesAfter, err = s.diskBytes(ctx); err != nil {
		return nil, fmt.Errorf("gc: %w", err)
	}
	return r, nil
}

// diskBytes sums the sizes of packs, index files, snapshot records and tmp/.
func (s *Store) diskBytes(ctx context.Context) (int64, error) {
	var n int64
	for _, t := range fileTypes {
		files, err := s.be.List(ctx, t)
		if err != nil {
			return 0, err
		}
		for _, f := range files {
			n += f.Size
		}
	}
	ents, err := os.ReadDir(filepath.Join(s.dir, tmpDir))
	if err != nil {
		return 0, err
	}
	for _, e := range ents {
		if info, err := e.Info(); err == nil {
			n += info.Size()
		}
	}
	return n, nil
}
