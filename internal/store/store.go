package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// Version is the store format this code reads and writes.
const Version = 1

// DefaultPackSize is the size at which a pack is closed and a new one begun.
const DefaultPackSize = 16 << 20

const (
	configFile = "config.json"
	lockFile   = "lock"
	tmpDir     = "tmp"
)

// ErrNotStore is returned by Open for a directory that is not a store.
var ErrNotStore = errors.New("not a wildawm snapshot store")

// BlobType says what a blob holds.
type BlobType string

// Blob types.
const (
	DataBlob BlobType = "data"
	TreeBlob BlobType = "tree"
)

type config struct {
	Version int `json:"version"`
}

// Store is a content-addressed snapshot store in a local directory. Its
// methods are safe for concurrent use, also by several processes: writers
// share the store's lock, GC holds it exclusively.
type Store struct {
	dir string
	be  *dirBackend

	// packSize is the pack size target; tests lower it.
	packSize int
	// hook, if set, is called at named points of a Snapshot (crash tests):
	// "blob", "pack", "index", "snapshot".
	hook func(event string)

	mu        sync.Mutex             // guards idx and seenIndex; serialises Snapshot and GC
	idx       map[world.ID][]blobLoc // every blob known from index files
	seenIndex map[string]bool        // index files already merged into idx
}

// blobLoc is where a blob lives.
type blobLoc struct {
	Pack   world.ID
	Type   BlobType
	Offset int64
	Length int64
}

// Init creates a store in dir (creating dir if needed) or opens the store
// already there. It refuses a non-empty directory that is not a store.
func Init(dir string) (*Store, error) {
	if _, err := os.Stat(filepath.Join(dir, configFile)); err == nil {
		return Open(dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("init store: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("init store: %w", err)
	}
	for _, e := range ents {
		if e.Name() != tmpDir && e.Name() != lockFile && !isFileTypeDir(e.Name()) {
			return nil, fmt.Errorf("init store %s: directory is not empty and not a store (found %q)", dir, e.Name())
		}
	}
	for _, sub := range []string{string(PackFile), string(IndexFile), string(SnapshotFile), tmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("init store: %w", err)
		}
	}
	if err := touch(filepath.Join(dir, lockFile)); err != nil {
		return nil, fmt.Errorf("init store: %w", err)
	}
	b, _ := json.Marshal(config{Version: Version})
	// config.json is written last: its presence marks a complete store.
	if err := world.WriteFileAtomic(filepath.Join(dir, configFile), append(b, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("init store: %w", err)
	}
	return Open(dir)
}

func isFileTypeDir(name string) bool {
	for _, t := range fileTypes {
		if string(t) == name {
			return true
		}
	}
	return false
}

func touch(path string) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	return f.Close()
}

// Open opens the store in dir. It fails with an error wrapping ErrNotStore
// and naming dir when dir holds no store.
func Open(dir string) (*Store, error) {
	b, err := os.ReadFile(filepath.Join(dir, configFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("open store %s: %w (no %s; create one with Init)", dir, ErrNotStore, configFile)
	}
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	var c config
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("open store %s: %s: %w", dir, configFile, err)
	}
	if c.Version != Version {
		return nil, fmt.Errorf("open store %s: %s: version %d, this build reads version %d", dir, configFile, c.Version, Version)
	}
	for _, sub := range []string{string(PackFile), string(IndexFile), string(SnapshotFile), tmpDir} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o755); err != nil {
			return nil, fmt.Errorf("open store %s: %w", dir, err)
		}
	}
	if err := touch(filepath.Join(dir, lockFile)); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	s := &Store{
		dir:       dir,
		be:        &dirBackend{dir: dir},
		packSize:  DefaultPackSize,
		idx:       make(map[world.ID][]blobLoc),
		seenIndex: make(map[string]bool),
	}
	if err := s.refreshIndex(context.Background()); err != nil {
		return nil, fmt.Errorf("open store %s: %w", dir, err)
	}
	return s, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// Close releases the store. A Store holds no files or locks between calls,
// so there is nothing to release yet; callers should still call it.
func (s *Store) Close() error { return nil }

// lock takes the store's lock, shared or exclusive, waiting until it is
// free or ctx is done. Each call opens its own descriptor, so locks taken by
// concurrent calls in one process are independent.
func (s *Store) lock(ctx context.Context, exclusive bool) (unlock func(), err error) {
	f, err := os.OpenFile(filepath.Join(s.dir, lockFile), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, fmt.Errorf("lock store: %w", err)
	}
	how := syscall.LOCK_SH
	if exclusive {
		how = syscall.LOCK_EX
	}
	for {
		err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil // closing releases the flock
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("lock store %s: %w", s.dir, err)
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, fmt.Errorf("lock store %s: in use: %w", s.dir, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// index is the JSON of one index file: the blobs of one pack.
type index struct {
	Pack  world.ID     `json:"pack"`
	Blobs []indexEntry `json:"blobs"`
}

type indexEntry struct {
	ID     world.ID `json:"id"`
	Type   BlobType `json:"type"`
	Offset int64    `json:"offset"`
	Length int64    `json:"length"`
}

// loadIndex reads and verifies one index file.
func (s *Store) loadIndex(ctx context.Context, name string) (*index, error) {
	id, err := world.ParseID(name)
	if err != nil {
		return nil, fmt.Errorf("index %s: bad file name: %w", name, err)
	}
	b, err := s.be.Load(ctx, IndexFile, name, 0, -1)
	if err != nil {
		return nil, fmt.Errorf("index %s: %w", id.Short(), err)
	}
	if err := id.Verify(b); err != nil {
		return nil, fmt.Errorf("index %s: %w", id.Short(), err)
	}
	var ix index
	if err := json.Unmarshal(b, &ix); err != nil {
		return nil, fmt.Errorf("index %s: %w", id.Short(), err)
	}
	for _, e := range ix.Blobs {
		if e.Offset < 0 || e.Length < 0 || (e.Type != DataBlob && e.Type != TreeBlob) {
			return nil, fmt.Errorf("index %s: invalid entry for blob %s", id.Short(), e.ID.Short())
		}
	}
	return &ix, nil
}

// refreshIndex brings s.idx up to date with the index files on disk: it
// merges files not seen yet, and rebuilds from scratch when a file seen
// before is gone (another process ran GC). Index files that fail to verify,
// and those whose pack is missing, are skipped: their blobs count as absent
// (Check reports them), so a Snapshot writes them again.
func (s *Store) refreshIndex(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.refreshIndexLocked(ctx)
}

func (s *Store) refreshIndexLocked(ctx context.Context) error {
	files, err := s.be.List(ctx, IndexFile)
	if err != nil {
		return err
	}
	packs, err := s.packSet(ctx)
	if err != nil {
		return err
	}
	present := make(map[string]bool, len(files))
	for _, f := range files {
		present[f.Name] = true
	}
	for name := range s.seenIndex {
		if !present[name] {
			s.idx = make(map[world.ID][]blobLoc)
			s.seenIndex = make(map[string]bool)
			break
		}
	}
	for _, f := range files {
		if s.seenIndex[f.Name] {
			continue
		}
		ix, err := s.loadIndex(ctx, f.Name)
		if err != nil || !packs[ix.Pack] {
			continue
		}
		s.seenIndex[f.Name] = true
		s.addIndexLocked(ix)
	}
	return nil
}

// hasBlob reports whether the in-memory index has blob id of type t.
func (s *Store) hasBlob(id world.ID, t BlobType) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, l := range s.idx[id] {
		if l.Type == t {
			return true
		}
	}
	return false
}

// addIndex merges a just-written index file into the in-memory index.
func (s *Store) addIndex(name string, ix *index) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seenIndex[name] = true
	s.addIndexLocked(ix)
}

func (s *Store) addIndexLocked(ix *index) {
	for _, e := range ix.Blobs {
		s.idx[e.ID] = append(s.idx[e.ID], blobLoc{Pack: ix.Pack, Type: e.Type, Offset: e.Offset, Length: e.Length})
	}
}

func (s *Store) packSet(ctx context.Context) (map[world.ID]bool, error) {
	files, err := s.be.List(ctx, PackFile)
	if err != nil {
		return nil, err
	}
	set := make(map[world.ID]bool, len(files))
	for _, f := range files {
		if id, err := world.ParseID(f.Name); err == nil {
			set[id] = true
		}
	}
	return set, nil
}

func (s *Store) locations(id world.ID) []blobLoc {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.idx[id])
}

// BlobError describes a blob that could not be read.
type BlobError struct {
	Blob world.ID
	Pack world.ID // zero when the blob is in no pack
	Err  error
}

func (e *BlobError) Error() string {
	if e.Pack.IsZero() {
		return fmt.Sprintf("blob %s: %v", e.Blob.Short(), e.Err)
	}
	return fmt.Sprintf("blob %s in pack %s: %v", e.Blob.Short(), e.Pack.Short(), e.Err)
}

func (e *BlobError) Unwrap() error { return e.Err }

// ErrBlobMissing is wrapped by errors for blobs no index lists.
var ErrBlobMissing = errors.New("blob not in any index")

// readBlob returns the verified content of blob id of type t, trying every
// copy the index knows. When all fail it returns the first copy's error, a
// *BlobError.
func (s *Store) readBlob(ctx context.Context, id world.ID, t BlobType) ([]byte, error) {
	locs := s.locations(id)
	b, err := s.readCopies(ctx, id, t, locs)
	if err == nil || ctx.Err() != nil {
		return b, err
	}
	// Another process may have added the blob, or repacked it, since we
	// last looked.
	if rerr := s.refreshIndex(ctx); rerr != nil {
		return nil, rerr
	}
	if fresh := s.locations(id); !slices.Equal(fresh, locs) {
		return s.readCopies(ctx, id, t, fresh)
	}
	return nil, err
}

func (s *Store) readCopies(ctx context.Context, id world.ID, t BlobType, locs []blobLoc) ([]byte, error) {
	if len(locs) == 0 {
		return nil, &BlobError{Blob: id, Err: ErrBlobMissing}
	}
	var first error
	for _, l := range locs {
		b, err := s.readAt(ctx, id, l)
		if err == nil && l.Type != t {
			err = &BlobError{Blob: id, Pack: l.Pack, Err: fmt.Errorf("is a %s blob, want %s", l.Type, t)}
		}
		if err == nil {
			return b, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if first == nil {
			first = err
		}
	}
	return nil, first
}

func (s *Store) readAt(ctx context.Context, id world.ID, l blobLoc) ([]byte, error) {
	b, err := s.be.Load(ctx, PackFile, l.Pack.String(), l.Offset, l.Length)
	if errors.Is(err, fs.ErrNotExist) {
		err = fmt.Errorf("%w: %w", ErrPackMissing, err)
	}
	if err != nil {
		return nil, &BlobError{Blob: id, Pack: l.Pack, Err: err}
	}
	if err := id.Verify(b); err != nil {
		return nil, &BlobError{Blob: id, Pack: l.Pack, Err: err}
	}
	return b, nil
}
