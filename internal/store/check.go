package store

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/wildawm/wildawm/internal/world"
)

// Problem is one finding of Check: an object that is corrupt or missing
// (an error) or that nothing references (garbage).
type Problem struct {
	Object string   // "snapshot", "index", "pack", "blob", "tree" or "tmp"
	Name   string   // the file name or the object's ID
	Pack   world.ID // for blobs: the pack holding the copy, if any
	Err    error    // what is wrong; wraps world.ErrIDMismatch for corruption
}

func (p Problem) String() string {
	name := p.Name
	if id, err := world.ParseID(name); err == nil {
		name = id.Short()
	}
	s := p.Object + " " + name
	if !p.Pack.IsZero() {
		s += " in pack " + p.Pack.Short()
	}
	return s + ": " + p.Err.Error()
}

// CheckReport is the result of Check.
type CheckReport struct {
	Snapshots, Indexes, Packs, Blobs int
	// Restored is how many distinct trees were checked out to scratch
	// (snapshots sharing a tree share one restore); Hashed how many of
	// those were hashed and compared with their records' world hashes.
	Restored, Hashed int
	// Errors are corrupt or missing objects: data is damaged.
	Errors []Problem
	// Garbage are objects no snapshot needs (left by a crash, or by Forget);
	// GC removes them. They are not errors.
	Garbage      []Problem
	GarbageBytes int64
	// Incomplete is set when damage (a bad snapshot record, index file or
	// tree) hid what is referenced; unreferenced blobs are then not listed
	// as garbage.
	Incomplete bool
}

// OK reports whether Check found no errors. Garbage is fine.
func (r *CheckReport) OK() bool { return len(r.Errors) == 0 }

// String renders the report for people.
func (r *CheckReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "checked %d snapshots, %d index files, %d packs, %d blobs\n", r.Snapshots, r.Indexes, r.Packs, r.Blobs)
	fmt.Fprintf(&b, "restored %d trees, hashed %d\n", r.Restored, r.Hashed)
	if len(r.Errors) == 0 {
		b.WriteString("no errors\n")
	} else {
		fmt.Fprintf(&b, "%d errors:\n", len(r.Errors))
		for _, p := range r.Errors {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	if r.Incomplete {
		b.WriteString("damage hides what is referenced: unreferenced blobs not listed\n")
	}
	if len(r.Garbage) > 0 {
		fmt.Fprintf(&b, "%d garbage objects (%d bytes), removed by gc:\n", len(r.Garbage), r.GarbageBytes)
		for _, p := range r.Garbage {
			fmt.Fprintf(&b, "  %s\n", p)
		}
	}
	return b.String()
}

// Errors Check reports.
var (
	ErrPackMissing   = errors.New("pack missing")
	ErrNotIndexed    = errors.New("not in any index")
	ErrUnreferenced  = errors.New("not referenced by any snapshot")
	ErrParentMissing = errors.New("parent snapshot missing")
	ErrBadName       = errors.New("file name is not an ID")
	// ErrRestore: a snapshot whose objects all verify does not check out.
	ErrRestore = errors.New("does not restore")
	// ErrWorldHashMismatch: a snapshot checks out to a world whose hash is
	// not the one its record holds.
	ErrWorldHashMismatch = errors.New("restores to a world hash other than the recorded one")
)

// HashFunc computes the world hash of a directory (state.Hash; the store
// does not read worlds logically itself).
type HashFunc func(ctx context.Context, dir string) (world.ID, error)

// CheckOptions tunes Check. Nil or the zero value means the whole check,
// restores included.
type CheckOptions struct {
	// Hash, if set, hashes each restored snapshot, and a hash other than
	// the record's world_hash is an error (ErrWorldHashMismatch). A record
	// without a world hash (zero) is restored, not compared.
	Hash HashFunc
	// NoRestore skips restoring snapshots: objects and trees are checked
	// as before issue 29, and a tree that does not check out or hashes
	// differently goes unnoticed.
	NoRestore bool
	// Scratch is where restores go (one temporary directory inside it,
	// removed before Check returns); "" means os.TempDir().
	Scratch string
	// Parallel is how many trees are restored and hashed at once; 0 (or
	// less) means 2.
	Parallel int
}

// Check reads every snapshot record, index file and pack in full and
// verifies them, then walks every snapshot's trees. It returns an error only
// when it cannot do its job (I/O on the directories, a cancelled ctx);
// what it finds is in the report.
//
// Then it restores every snapshot whose objects all verified (checks it
// out to a scratch directory, each distinct tree once) and reports one that
// does not check out (ErrRestore); CheckWith with a Hash also hashes each
// restored world and reports one whose hash is not its record's
// (ErrWorldHashMismatch), each naming the snapshot.
func (s *Store) Check(ctx context.Context) (*CheckReport, error) {
	return s.CheckWith(ctx, nil)
}

// CheckWith is Check with options (nil means the defaults).
func (s *Store) CheckWith(ctx context.Context, opts *CheckOptions) (*CheckReport, error) {
	if opts == nil {
		opts = &CheckOptions{}
	}
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	defer unlock()
	sc, err := s.scan(ctx, true)
	if err != nil {
		return nil, fmt.Errorf("check: %w", err)
	}
	if !opts.NoRestore {
		if err := s.restoreAll(ctx, sc, opts); err != nil {
			return nil, fmt.Errorf("check: %w", err)
		}
	}
	return sc.report(), nil
}

// restoreAll restores, and with opts.Hash hashes, every snapshot scan found
// sound, each distinct tree once, opts.Parallel at a time.
func (s *Store) restoreAll(ctx context.Context, sc *scanState, opts *CheckOptions) error {
	byTree := make(map[world.ID][]world.ID)
	for _, id := range sortedIDs(sc.snaps) {
		if !sc.badSnaps[id] {
			byTree[sc.snaps[id].Tree] = append(byTree[sc.snaps[id].Tree], id)
		}
	}
	if len(byTree) == 0 {
		return nil
	}
	trees := sortedIDs(byTree)
	scratch, err := os.MkdirTemp(opts.Scratch, "wildawm-check-*")
	if err != nil {
		return fmt.Errorf("scratch directory: %w", err)
	}
	defer func() {
		makeWritable(scratch)
		os.RemoveAll(scratch)
	}()
	type result struct {
		hash       world.ID
		restoreErr error
		hashErr    error
	}
	results := make([]result, len(trees))
	work := make(chan int)
	var wg sync.WaitGroup
	workers := opts.Parallel
	if workers < 1 {
		workers = 2
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				r := &results[i]
				dir := scratchDir(scratch, i)
				if r.restoreErr = os.Mkdir(dir, 0o700); r.restoreErr == nil {
					r.restoreErr = s.restoreTree(ctx, trees[i], dir, false)
				}
				if r.restoreErr == nil && opts.Hash != nil {
					r.hash, r.hashErr = opts.Hash(ctx, dir)
				}
				makeWritable(dir)
				os.RemoveAll(dir)
			}
		}()
	}
	for i := range trees {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	for i, tree := range trees {
		r := results[i]
		sc.restored++
		if r.restoreErr == nil && opts.Hash != nil && r.hashErr == nil {
			sc.hashed++
		}
		for _, id := range byTree[tree] {
			sn := sc.snaps[id]
			switch {
			case r.restoreErr != nil:
				sc.fail("snapshot", id.String(), world.ID{}, fmt.Errorf("%w: tree %s: %w", ErrRestore, tree.Short(), hideDir(r.restoreErr, scratchDir(scratch, i))))
			case opts.Hash == nil || sn.WorldHash.IsZero():
			case r.hashErr != nil:
				sc.fail("snapshot", id.String(), world.ID{}, fmt.Errorf("%w: its checkout does not hash: %w", ErrWorldHashMismatch, hideDir(r.hashErr, scratchDir(scratch, i))))
			case r.hash != sn.WorldHash:
				sc.fail("snapshot", id.String(), world.ID{}, fmt.Errorf("%w: recorded %s, its checkout hashes to %s", ErrWorldHashMismatch, sn.WorldHash.Short(), r.hash.Short()))
			}
		}
	}
	return nil
}

// scratchDir is where tree i of restoreAll is restored.
func scratchDir(scratch string, i int) string { return filepath.Join(scratch, strconv.Itoa(i)) }

// hideDir drops the scratch directory from err's message.
func hideDir(err error, dir string) error {
	msg := strings.ReplaceAll(err.Error(), dir+"/", "")
	if msg == err.Error() {
		return err
	}
	return &prefixless{msg: strings.ReplaceAll(msg, dir, "."), err: err}
}

// locKey names one copy of a blob.
type locKey struct {
	Blob world.ID
	Pack world.ID
}

// scanState is what scan learns about the store.
type scanState struct {
	snaps       map[world.ID]*Snapshot
	indexes     map[string]*index  // index files that verify
	indexSize   map[string]int64   // sizes of all index files
	packs       map[world.ID]int64 // pack files with ID names, and their sizes
	badPacks    map[string]int64   // pack files whose names are not IDs
	packIndexes map[world.ID][]string
	locs        map[world.ID][]blobLoc // copies in existing packs, by pack ID
	badLocs     map[locKey]error       // copies that failed to verify, and why
	// incomplete is set when a snapshot record or tree could not be read:
	// what is referenced is then unknown, so nothing counts as garbage.
	incomplete bool
	referenced map[world.ID]BlobType
	tmp        []File
	// badSnaps are snapshots whose trees or blobs scan found damaged;
	// Check does not restore them.
	badSnaps         map[world.ID]bool
	restored, hashed int

	errs    []Problem
	garbage []Problem
	gbytes  int64
}

func (sc *scanState) fail(object, name string, pack world.ID, err error) {
	sc.errs = append(sc.errs, Problem{Object: object, Name: name, Pack: pack, Err: err})
}

func (sc *scanState) junk(object, name string, pack world.ID, size int64, err error) {
	sc.garbage = append(sc.garbage, Problem{Object: object, Name: name, Pack: pack, Err: err})
	sc.gbytes += size
}

func (sc *scanState) report() *CheckReport {
	r := &CheckReport{
		Snapshots: len(sc.snaps), Indexes: len(sc.indexes), Packs: len(sc.packs), Blobs: len(sc.locs),
		Errors: sc.errs, Garbage: sc.garbage, GarbageBytes: sc.gbytes,
		Incomplete: sc.incomplete,
		Restored:   sc.restored, Hashed: sc.hashed,
	}
	return r
}

// scan inventories the store. With readPacks it reads every pack in full
// and verifies every blob copy; without, it reads only the tree blobs it
// walks.
func (s *Store) scan(ctx context.Context, readPacks bool) (*scanState, error) {
	sc := &scanState{
		snaps:       make(map[world.ID]*Snapshot),
		indexes:     make(map[string]*index),
		indexSize:   make(map[string]int64),
		packs:       make(map[world.ID]int64),
		badPacks:    make(map[string]int64),
		packIndexes: make(map[world.ID][]string),
		locs:        make(map[world.ID][]blobLoc),
		badLocs:     make(map[locKey]error),
		referenced:  make(map[world.ID]BlobType),
		badSnaps:    make(map[world.ID]bool),
	}

	// Snapshot records.
	snapFiles, err := s.be.List(ctx, SnapshotFile)
	if err != nil {
		return nil, err
	}
	for _, f := range snapFiles {
		id, err := world.ParseID(f.Name)
		if err != nil || id.String() != f.Name {
			sc.fail("snapshot", f.Name, world.ID{}, ErrBadName)
			continue
		}
		sn, err := s.loadSnapshot(ctx, id)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			sc.fail("snapshot", f.Name, world.ID{}, unwrapPrefix(err))
			sc.incomplete = true
			continue
		}
		sc.snaps[id] = sn
	}

	// Pack files.
	packFiles, err := s.be.List(ctx, PackFile)
	if err != nil {
		return nil, err
	}
	for _, f := range packFiles {
		id, err := world.ParseID(f.Name)
		if err != nil || id.String() != f.Name {
			sc.badPacks[f.Name] = f.Size
			sc.junk("pack", f.Name, world.ID{}, f.Size, ErrBadName)
			continue
		}
		sc.packs[id] = f.Size
	}

	// Index files.
	indexFiles, err := s.be.List(ctx, IndexFile)
	if err != nil {
		return nil, err
	}
	for _, f := range indexFiles {
		sc.indexSize[f.Name] = f.Size
		ix, err := s.loadIndex(ctx, f.Name)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			sc.fail("index", f.Name, world.ID{}, unwrapPrefix(err))
			sc.incomplete = true
			continue
		}
		sc.indexes[f.Name] = ix
		sc.packIndexes[ix.Pack] = append(sc.packIndexes[ix.Pack], f.Name)
		if _, ok := sc.packs[ix.Pack]; !ok {
			continue // judged below, once we know what is referenced
		}
		for _, e := range ix.Blobs {
			sc.locs[e.ID] = append(sc.locs[e.ID], blobLoc{Pack: ix.Pack, Type: e.Type, Offset: e.Offset, Length: e.Length})
		}
	}
	for _, locs := range sc.locs {
		slices.SortFunc(locs, func(a, b blobLoc) int {
			return cmp.Or(strings.Compare(a.Pack.String(), b.Pack.String()), cmp.Compare(a.Offset, b.Offset))
		})
	}

	// Pack contents.
	for _, id := range sortedIDs(sc.packs) {
		if len(sc.packIndexes[id]) == 0 {
			if sc.incomplete {
				// Perhaps the damaged index file was this pack's.
				sc.fail("pack", id.String(), world.ID{}, fmt.Errorf("%w (an index file is damaged)", ErrNotIndexed))
			} else {
				sc.junk("pack", id.String(), world.ID{}, sc.packs[id], ErrNotIndexed)
			}
			continue
		}
		if readPacks {
			if err := s.checkPack(ctx, sc, id); err != nil {
				return nil, err
			}
		}
	}

	// Reachability.
	for _, id := range sortedIDs(sc.snaps) {
		sn := sc.snaps[id]
		if !sn.Parent.IsZero() {
			if _, ok := sc.snaps[sn.Parent]; !ok && !slices.ContainsFunc(sc.errs, func(p Problem) bool {
				return p.Object == "snapshot" && p.Name == sn.Parent.String()
			}) {
				sc.fail("snapshot", id.String(), world.ID{}, fmt.Errorf("%w: %s", ErrParentMissing, sn.Parent.Short()))
			}
		}
		before := len(sc.errs)
		if err := s.walkTree(ctx, sc, id, sn.Tree, ""); err != nil {
			return nil, err
		}
		sc.badSnaps[id] = len(sc.errs) > before
	}

	// Index files whose pack is gone: an error if a snapshot needs one of
	// their blobs and no other copy exists, else garbage.
	for _, name := range slices.Sorted(maps.Keys(sc.indexes)) {
		ix := sc.indexes[name]
		if _, ok := sc.packs[ix.Pack]; ok {
			continue
		}
		needed := slices.ContainsFunc(ix.Blobs, func(e indexEntry) bool {
			_, ref := sc.referenced[e.ID]
			return ref && len(sc.locs[e.ID]) == 0
		})
		err := fmt.Errorf("%w: %s", ErrPackMissing, ix.Pack.Short())
		if needed || sc.incomplete {
			sc.fail("index", name, world.ID{}, err)
		} else {
			sc.junk("index", name, world.ID{}, sc.indexSize[name], err)
		}
	}

	if !sc.incomplete {
		sc.findUnreferenced()
	}

	// Leftovers in tmp/.
	ents, err := os.ReadDir(filepath.Join(s.dir, tmpDir))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		var size int64
		if info, err := e.Info(); err == nil {
			size = info.Size()
		}
		sc.tmp = append(sc.tmp, File{Name: e.Name(), Size: size})
		sc.junk("tmp", e.Name(), world.ID{}, size, errors.New("leftover of an interrupted write"))
	}
	return sc, nil
}

// checkPack reads pack id in full, verifies it against its name and every
// blob its index files list.
func (s *Store) checkPack(ctx context.Context, sc *scanState, id world.ID) error {
	data, err := s.be.Load(ctx, PackFile, id.String(), 0, -1)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sc.fail("pack", id.String(), world.ID{}, err)
		return nil
	}
	if err := id.Verify(data); err != nil {
		sc.fail("pack", id.String(), world.ID{}, err)
	}
	for _, name := range sc.packIndexes[id] {
		for _, e := range sc.indexes[name].Blobs {
			key := locKey{Blob: e.ID, Pack: id}
			if e.Offset+e.Length > int64(len(data)) {
				err := fmt.Errorf("extends to byte %d of a %d-byte pack: %w", e.Offset+e.Length, len(data), io.ErrUnexpectedEOF)
				sc.badLocs[key] = err
				sc.fail("blob", e.ID.String(), id, err)
				continue
			}
			if err := e.ID.Verify(data[e.Offset : e.Offset+e.Length]); err != nil {
				sc.badLocs[key] = err
				sc.fail("blob", e.ID.String(), id, err)
			}
		}
	}
	return nil
}

// readScanned returns blob id from the first copy that verifies.
func (s *Store) readScanned(ctx context.Context, sc *scanState, id world.ID, t BlobType) ([]byte, error) {
	var first error
	for _, l := range sc.locs[id] {
		if err := sc.badLocs[locKey{id, l.Pack}]; err != nil {
			if first == nil {
				first = &BlobError{Blob: id, Pack: l.Pack, Err: err}
			}
			continue
		}
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
		sc.badLocs[locKey{id, l.Pack}] = err
		if first == nil {
			first = err
		}
	}
	if first == nil {
		first = &BlobError{Blob: id, Err: ErrBlobMissing}
	}
	return nil, first
}

// walkTree marks tree id and everything below it as referenced, reporting
// what is missing or corrupt. Trees already walked are skipped.
func (s *Store) walkTree(ctx context.Context, sc *scanState, snap, id world.ID, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if _, done := sc.referenced[id]; done {
		return nil
	}
	sc.referenced[id] = TreeBlob
	where := "snapshot " + snap.Short() + ": " + world.QuoteName("/"+dir)
	b, err := s.readScanned(ctx, sc, id, TreeBlob)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		sc.fail("tree", id.String(), world.ID{}, fmt.Errorf("%s: %w", where, err))
		sc.incomplete = true
		return nil
	}
	var t Tree
	if err = json.Unmarshal(b, &t); err == nil {
		err = t.validate()
	}
	if err != nil {
		sc.fail("tree", id.String(), world.ID{}, fmt.Errorf("%s: %w", where, err))
		sc.incomplete = true
		return nil
	}
	for _, n := range t.Entries {
		p := path.Join(dir, n.Name)
		switch n.Type {
		case NodeDir:
			if err := s.walkTree(ctx, sc, snap, n.Subtree, p); err != nil {
				return err
			}
		case NodeFile:
			for _, c := range n.Chunks {
				if _, done := sc.referenced[c]; done {
					continue
				}
				sc.referenced[c] = DataBlob
				if !slices.ContainsFunc(sc.locs[c], func(l blobLoc) bool { return sc.badLocs[locKey{c, l.Pack}] == nil }) {
					var cause error = ErrBlobMissing
					if len(sc.locs[c]) > 0 {
						cause = sc.badLocs[locKey{c, sc.locs[c][0].Pack}]
					}
					sc.fail("blob", c.String(), world.ID{}, fmt.Errorf("snapshot %s: %s: %w", snap.Short(), world.QuoteName("/"+p), cause))
				}
			}
		}
	}
	return nil
}

// unwrapPrefix drops the "snapshot X: " / "index X: " prefix our loaders add,
// since a Problem names the object itself.
func unwrapPrefix(err error) error {
	msg := err.Error()
	if i := strings.Index(msg, ": "); i >= 0 {
		return &prefixless{msg: msg[i+2:], err: err}
	}
	return err
}

type prefixless struct {
	msg string
	err error
}

func (p *prefixless) Error() string { return p.msg }
func (p *prefixless) Unwrap() error { return p.err }

func sortedIDs[V any](m map[world.ID]V) []world.ID {
	ids := make([]world.ID, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b world.ID) int { return strings.Compare(a.String(), b.String()) })
	return ids
}

// findUnreferenced lists blob copies GC would drop as garbage, summed per
// pack: unreferenced blobs and all but the first copy of referenced ones.
func (sc *scanState) findUnreferenced() {
	type waste struct {
		n     int
		bytes int64
	}
	perPack := make(map[world.ID]*waste)
	for id, locs := range sc.locs {
		for i, l := range locs {
			if _, ref := sc.referenced[id]; ref && i == 0 {
				continue // the first copy is the one GC keeps
			}
			w := perPack[l.Pack]
			if w == nil {
				w = &waste{}
				perPack[l.Pack] = w
			}
			w.n++
			w.bytes += l.Length
		}
	}
	for _, p := range sortedIDs(perPack) {
		w := perPack[p]
		sc.junk("pack", p.String(), world.ID{}, w.bytes, fmt.Errorf("%d blobs (%d bytes) %w", w.n, w.bytes, ErrUnreferenced))
	}

}
