package store

import (
	"cmp"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// SnapshotEntry is a snapshot record with its ID.
type SnapshotEntry struct {
	ID world.ID
	Snapshot
}

// ErrNoSnapshot is wrapped by errors for snapshots that are not in the store.
var ErrNoSnapshot = errors.New("no such snapshot")

// Load reads and verifies the snapshot record id.
func (s *Store) Load(id world.ID) (*Snapshot, error) {
	return s.loadSnapshot(context.Background(), id)
}

func (s *Store) loadSnapshot(ctx context.Context, id world.ID) (*Snapshot, error) {
	b, err := s.be.Load(ctx, SnapshotFile, id.String(), 0, -1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("snapshot %s: %w", id.Short(), ErrNoSnapshot)
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id.Short(), err)
	}
	if err := id.Verify(b); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id.Short(), err)
	}
	var sn Snapshot
	if err := json.Unmarshal(b, &sn); err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", id.Short(), err)
	}
	if sn.Version != SnapshotVersion {
		return nil, fmt.Errorf("snapshot %s: version %d, this build reads version %d", id.Short(), sn.Version, SnapshotVersion)
	}
	return &sn, nil
}

// snapshotIDs lists the IDs of all snapshot files; names that are not IDs
// are returned separately.
func (s *Store) snapshotIDs(ctx context.Context) (ids []world.ID, bad []string, err error) {
	files, err := s.be.List(ctx, SnapshotFile)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range files {
		id, err := world.ParseID(f.Name)
		if err != nil || id.String() != f.Name {
			bad = append(bad, f.Name)
			continue
		}
		ids = append(ids, id)
	}
	return ids, bad, nil
}

// Resolve returns the snapshot whose ID starts with prefix, which must have
// at least 4 hex digits and match exactly one snapshot.
func (s *Store) Resolve(prefix string) (world.ID, error) {
	var zero world.ID
	p := strings.ToLower(prefix)
	if len(p) < 4 {
		return zero, fmt.Errorf("resolve %q: give at least 4 hex digits of a snapshot ID", prefix)
	}
	if len(p) > 64 {
		return zero, fmt.Errorf("resolve %q: longer than an ID (64 hex digits)", prefix)
	}
	if _, err := hex.DecodeString(p[:len(p)&^1]); err != nil || strings.Trim(p, "0123456789abcdef") != "" {
		return zero, fmt.Errorf("resolve %q: not a hex ID prefix", prefix)
	}
	ids, _, err := s.snapshotIDs(context.Background())
	if err != nil {
		return zero, fmt.Errorf("resolve %q: %w", prefix, err)
	}
	var match []world.ID
	for _, id := range ids {
		if strings.HasPrefix(id.String(), p) {
			match = append(match, id)
		}
	}
	switch len(match) {
	case 0:
		return zero, fmt.Errorf("resolve %q: %w", prefix, ErrNoSnapshot)
	case 1:
		return match[0], nil
	}
	var names []string
	for _, id := range match {
		names = append(names, id.Short())
	}
	return zero, fmt.Errorf("resolve %q: ambiguous: matches %d snapshots (%s); give more digits", prefix, len(match), strings.Join(names, ", "))
}

// List returns every snapshot, ordered by persona, day, then ID. It fails
// on the first record that does not verify (Check reports them all).
func (s *Store) List() ([]SnapshotEntry, error) {
	ctx := context.Background()
	ids, _, err := s.snapshotIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("list snapshots: %w", err)
	}
	out := make([]SnapshotEntry, 0, len(ids))
	for _, id := range ids {
		sn, err := s.loadSnapshot(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("list snapshots: %w", err)
		}
		out = append(out, SnapshotEntry{ID: id, Snapshot: *sn})
	}
	slices.SortFunc(out, func(a, b SnapshotEntry) int {
		return cmp.Or(
			cmp.Compare(a.Persona, b.Persona),
			cmp.Compare(a.Day, b.Day),
			strings.Compare(a.ID.String(), b.ID.String()),
		)
	})
	return out, nil
}

// Log returns snapshot id, its parent, the parent's parent and so on to the
// root.
func (s *Store) Log(id world.ID) ([]SnapshotEntry, error) {
	var out []SnapshotEntry
	seen := make(map[world.ID]bool)
	for cur := id; !cur.IsZero(); {
		if seen[cur] {
			return out, fmt.Errorf("log %s: parent cycle at %s", id.Short(), cur.Short())
		}
		seen[cur] = true
		sn, err := s.Load(cur)
		if err != nil {
			return out, fmt.Errorf("log %s: %w", id.Short(), err)
		}
		out = append(out, SnapshotEntry{ID: cur, Snapshot: *sn})
		cur = sn.Parent
	}
	return out, nil
}

// Forget removes the snapshot record id. Its blobs stay until GC. It refuses
// to remove the parent of another snapshot.
func (s *Store) Forget(ctx context.Context, id world.ID) error {
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return fmt.Errorf("forget %s: %w", id.Short(), err)
	}
	defer unlock()
	if _, err := s.loadSnapshot(ctx, id); errors.Is(err, ErrNoSnapshot) {
		return fmt.Errorf("forget %s: %w", id.Short(), err)
	}
	ids, _, err := s.snapshotIDs(ctx)
	if err != nil {
		return fmt.Errorf("forget %s: %w", id.Short(), err)
	}
	for _, other := range ids {
		sn, err := s.loadSnapshot(ctx, other)
		if err == nil && sn.Parent == id {
			return fmt.Errorf("forget %s: it is the parent of snapshot %s; forget that first", id.Short(), other.Short())
		}
	}
	if err := s.be.Remove(ctx, SnapshotFile, id.String()); err != nil {
		return fmt.Errorf("forget %s: %w", id.Short(), err)
	}
	return nil
}

// Stats counts what a store holds.
type Stats struct {
	Snapshots int
	Packs     int
	Indexes   int
	Blobs     int   // distinct blobs in the index
	BlobBytes int64 // their total size
	TreeBlobs int   // of which tree blobs
	TreeBytes int64 // and their size
	Bytes     int64 // on disk: packs + index files + snapshot records
}

// Stats returns counts and sizes of the store's files.
func (s *Store) Stats() (Stats, error) {
	ctx := context.Background()
	var st Stats
	if err := s.refreshIndex(ctx); err != nil {
		return st, fmt.Errorf("stats: %w", err)
	}
	for _, t := range fileTypes {
		files, err := s.be.List(ctx, t)
		if err != nil {
			return st, fmt.Errorf("stats: %w", err)
		}
		for _, f := range files {
			st.Bytes += f.Size
		}
		switch t {
		case PackFile:
			st.Packs = len(files)
		case IndexFile:
			st.Indexes = len(files)
		case SnapshotFile:
			st.Snapshots = len(files)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Blobs = len(s.idx)
	for _, locs := range s.idx {
		st.BlobBytes += locs[0].Length
		if locs[0].Type == TreeBlob {
			st.TreeBlobs++
			st.TreeBytes += locs[0].Length
		}
	}
	return st, nil
}
