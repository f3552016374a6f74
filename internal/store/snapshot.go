package store

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// SnapshotVersion is the version of snapshot records this code writes.
const SnapshotVersion = 1

// Snapshot kinds.
const (
	KindWorld   = "world"
	KindCatalog = "catalog"
)

// Snapshot is a snapshot record. Its ID is the hash of its canonical JSON.
type Snapshot struct {
	Version   int      `json:"version"`
	Kind      string   `json:"kind"`
	Tree      world.ID `json:"tree"`
	Parent    world.ID `json:"parent"`
	WorldHash world.ID `json:"world_hash"`
	Persona   string   `json:"persona"`
	Day       int      `json:"day"`
	Catalog   world.ID `json:"catalog"`
	// Skipped lists what the snapshot left out of the directory (fifos,
	// sockets, devices, entries past world.MaxWalkDepth or
	// world.MaxWalkPath, files that kept changing while read), with the
	// reason. Omitted when nothing was, so such records keep their IDs.
	Skipped world.SkipList `json:"skipped,omitzero"`
}

// Meta is what the caller says about a snapshot besides its content.
type Meta struct {
	Kind      string   // KindWorld or KindCatalog
	Parent    world.ID // zero if none; else must be in the store
	WorldHash world.ID // logical content hash, computed by the caller
	Persona   string
	Day       int
	Catalog   world.ID
}

// Node types in a tree.
const (
	NodeFile    = "file"
	NodeDir     = "dir"
	NodeSymlink = "symlink"
)

// Tree is one directory: its entries sorted by name. It is stored as a tree
// blob of canonical JSON.
type Tree struct {
	Entries []Node `json:"entries"`
}

// Node is one entry of a Tree. Name and Target are the exact bytes of the
// name and the symlink's target, whatever they are; in JSON a name that is
// not valid UTF-8 goes as world.SplitName says (docs/store.md, "Names").
type Node struct {
	Name    string
	Type    string
	Mode    uint32 // permission bits only
	Size    int64
	Chunks  IDList   // files
	Subtree world.ID // dirs
	Target  string   // symlinks
}

// nodeJSON is the JSON form of a Node. For names and targets that are valid
// UTF-8 it is the form trees had before names were encoded, so their IDs
// are unchanged.
type nodeJSON struct {
	Name         string   `json:"name"`
	NameBase64   []byte   `json:"name_base64,omitempty"`
	Type         string   `json:"type"`
	Mode         uint32   `json:"mode"`
	Size         int64    `json:"size"`
	Chunks       IDList   `json:"chunks,omitempty"`
	Subtree      world.ID `json:"subtree,omitzero"`
	Target       string   `json:"target,omitempty"`
	TargetBase64 []byte   `json:"target_base64,omitempty"`
}

// MarshalJSON encodes the node with its name and target exact.
func (n Node) MarshalJSON() ([]byte, error) {
	j := nodeJSON{Type: n.Type, Mode: n.Mode, Size: n.Size, Chunks: n.Chunks, Subtree: n.Subtree}
	j.Name, j.NameBase64 = world.SplitName(n.Name)
	j.Target, j.TargetBase64 = world.SplitName(n.Target)
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON wrote, and the trees of stores
// written before names were encoded (which never hold a _base64 field).
func (n *Node) UnmarshalJSON(b []byte) error {
	var j nodeJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	name, err := world.JoinName("name", j.Name, j.NameBase64)
	if err != nil {
		return err
	}
	target, err := world.JoinName("target", j.Target, j.TargetBase64)
	if err != nil {
		return fmt.Errorf("entry %s: %w", world.QuoteName(name), err)
	}
	*n = Node{Name: name, Type: j.Type, Mode: j.Mode, Size: j.Size, Chunks: j.Chunks, Subtree: j.Subtree, Target: target}
	return nil
}

// IDList is a file's chunk list. It encodes in JSON as one base64 string of
// the concatenated 32-byte IDs (43 bytes per chunk instead of 67 as a list of
// hex strings): trees are rewritten whenever a file changes, so their size is
// the store's overhead over the unique content.
type IDList []world.ID

// MarshalJSON encodes the list as base64 of the concatenated IDs.
func (l IDList) MarshalJSON() ([]byte, error) {
	raw := make([]byte, 0, len(l)*len(world.ID{}))
	for _, id := range l {
		raw = append(raw, id[:]...)
	}
	return json.Marshal(base64.StdEncoding.EncodeToString(raw))
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (l *IDList) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("chunk list: %w", err)
	}
	raw, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return fmt.Errorf("chunk list: %w", err)
	}
	if len(raw)%len(world.ID{}) != 0 {
		return fmt.Errorf("chunk list: %d bytes is not a whole number of IDs", len(raw))
	}
	out := make(IDList, len(raw)/len(world.ID{}))
	for i := range out {
		copy(out[i][:], raw[i*len(world.ID{}):])
	}
	*l = out
	return nil
}

func validName(name string) bool {
	return name != "" && name != "." && name != ".." && len(name) <= world.MaxNameLen && !strings.ContainsAny(name, "/\x00")
}

// validate checks what checkout relies on: valid, unique, sorted names and
// fields that fit the node type.
func (t *Tree) validate() error {
	for i, n := range t.Entries {
		if !validName(n.Name) {
			return fmt.Errorf("invalid entry name %s", world.QuoteName(n.Name))
		}
		if i > 0 && t.Entries[i-1].Name >= n.Name {
			return fmt.Errorf("entries not sorted or not unique at %s", world.QuoteName(n.Name))
		}
		if n.Mode&^uint32(fs.ModePerm) != 0 {
			return fmt.Errorf("entry %s: mode %o has bits besides permissions", world.QuoteName(n.Name), n.Mode)
		}
		switch n.Type {
		case NodeFile:
		case NodeDir:
			if n.Subtree.IsZero() {
				return fmt.Errorf("dir %s has no subtree", world.QuoteName(n.Name))
			}
		case NodeSymlink:
		default:
			return fmt.Errorf("entry %s: unknown type %q", world.QuoteName(n.Name), n.Type)
		}
	}
	return nil
}

// Snapshot stores the directory tree at dir and records it with meta. It
// returns the snapshot's ID. Storing the same content with the same meta
// again returns the same ID and writes nothing.
//
// It reads dir as world.Walk does: it never follows a symlink below dir nor
// opens anything but regular files and directories, so an entry swapped
// while it runs cannot pull in a file from outside dir. Regular files,
// directories and symlinks are stored; what world.Walk leaves out (fifos,
// sockets, devices, entries past its depth and path limits, files that kept
// changing) is listed in the record's Skipped, never an error. Modes keep
// permission bits only; times and owners are not recorded. Errors name
// paths relative to dir, never dir itself: the runtime hands them to agents.
func (s *Store) Snapshot(ctx context.Context, dir string, meta Meta) (world.ID, error) {
	var zero world.ID
	if meta.Kind != KindWorld && meta.Kind != KindCatalog {
		return zero, fmt.Errorf("snapshot: kind %q: want %q or %q", meta.Kind, KindWorld, KindCatalog)
	}
	if meta.Day < 0 {
		return zero, fmt.Errorf("snapshot: day %d: must be >= 0", meta.Day)
	}
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	defer unlock()
	if !meta.Parent.IsZero() {
		if _, err := s.Load(meta.Parent); err != nil {
			return zero, fmt.Errorf("snapshot: parent: %w", err)
		}
	}
	if err := s.refreshIndex(ctx); err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	w := &packWriter{s: s, ctx: ctx, pending: make(map[world.ID]bool), known: s.hasBlob, onIndex: s.addIndex}
	st, err := os.Lstat(dir)
	if err != nil {
		return zero, fmt.Errorf("snapshot: directory: %w", unwrapPath(err))
	}
	if !st.IsDir() {
		return zero, errors.New("snapshot: not a directory")
	}
	root, skipped, err := w.storeDir(dir)
	if err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	if err := w.finish(); err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	rec := Snapshot{
		Version:   SnapshotVersion,
		Kind:      meta.Kind,
		Tree:      root,
		Parent:    meta.Parent,
		WorldHash: meta.WorldHash,
		Persona:   meta.Persona,
		Day:       meta.Day,
		Catalog:   meta.Catalog,
		Skipped:   *skipped,
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	id := world.Hash(b)
	if old, err := s.be.Load(ctx, SnapshotFile, id.String(), 0, -1); err == nil && id.Verify(old) == nil {
		return id, nil // already stored
	}
	if err := s.be.Save(ctx, SnapshotFile, id.String(), b); err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	s.fire("snapshot")
	return id, nil
}

// unwrapPath drops the path of an *fs.PathError (a host path).
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	return err
}

func (s *Store) fire(event string) {
	if s.hook != nil {
		s.hook(event)
	}
}

// packWriter collects the new blobs of one Snapshot (or GC) into packs.
// Packs are saved as they fill; their index files only after all packs, in
// finish.
type packWriter struct {
	s       *Store
	ctx     context.Context
	buf     bytes.Buffer
	entries []indexEntry
	pending map[world.ID]bool // blobs written by this Snapshot
	done    []index           // saved packs, awaiting their index files
	// known reports whether the store has a blob already; nil means write
	// every blob once per writer (GC copying blobs out of packs it deletes).
	known func(world.ID, BlobType) bool
	// onIndex, if set, is called for each index file finish saves.
	onIndex    func(name string, ix *index)
	indexNames []string // index files saved by finish
}

// add stores blob b of type t unless the store already has it.
func (w *packWriter) add(t BlobType, b []byte) (world.ID, error) {
	id := world.Hash(b)
	if w.pending[id] {
		return id, nil
	}
	if w.known != nil && w.known(id, t) {
		return id, nil
	}
	w.pending[id] = true
	w.entries = append(w.entries, indexEntry{ID: id, Type: t, Offset: int64(w.buf.Len()), Length: int64(len(b))})
	w.buf.Write(b)
	w.s.fire("blob")
	if w.buf.Len() >= w.s.packSize {
		return id, w.flush()
	}
	return id, nil
}

// flush saves the current pack.
func (w *packWriter) flush() error {
	if len(w.entries) == 0 {
		return nil
	}
	data := w.buf.Bytes()
	id := world.Hash(data)
	if err := w.s.be.Save(w.ctx, PackFile, id.String(), data); err != nil {
		return err
	}
	w.s.fire("pack")
	w.done = append(w.done, index{Pack: id, Blobs: w.entries})
	w.buf.Reset()
	w.entries = nil
	return nil
}

// finish saves the last pack, then the index files of all packs.
func (w *packWriter) finish() error {
	if err := w.flush(); err != nil {
		return err
	}
	for i := range w.done {
		ix := &w.done[i]
		b, err := json.Marshal(ix)
		if err != nil {
			return err
		}
		name := world.Hash(b).String()
		if err := w.s.be.Save(w.ctx, IndexFile, name, b); err != nil {
			return err
		}
		w.s.fire("index")
		w.indexNames = append(w.indexNames, name)
		if w.onIndex != nil {
			w.onIndex(name, ix)
		}
	}
	return nil
}

// storeDir stores the directory tree at dir and returns its tree's ID and
// what world.Walk left out. Trees are built bottom-up: a directory's tree is
// stored when its EntryDirEnd arrives.
func (w *packWriter) storeDir(dir string) (world.ID, *world.SkipList, error) {
	stack := []*Tree{{Entries: []Node{}}} // the trees being filled, innermost last
	skipped, err := world.Walk(w.ctx, dir, "", func(e *world.Entry) error {
		top := stack[len(stack)-1]
		n := Node{Name: e.Name, Mode: uint32(e.Perm)}
		switch e.Kind {
		case world.EntryFile:
			data, err := e.ReadAll() // before any blob is added: it may change
			if err != nil {
				return err
			}
			n.Type, n.Size = NodeFile, int64(len(data))
			for _, c := range Chunks(data) {
				id, err := w.add(DataBlob, c)
				if err != nil {
					return err
				}
				n.Chunks = append(n.Chunks, id)
			}
		case world.EntrySymlink:
			n.Type, n.Mode, n.Target, n.Size = NodeSymlink, 0, e.Target, int64(len(e.Target))
		case world.EntryDir:
			n.Type = NodeDir // Subtree set at its EntryDirEnd
			stack = append(stack, &Tree{Entries: []Node{}})
		case world.EntryDirEnd:
			id, err := w.addTree(top)
			if err != nil {
				return fmt.Errorf("%s: %w", world.QuoteName(e.Path), err)
			}
			stack = stack[:len(stack)-1]
			parent := stack[len(stack)-1]
			parent.Entries[len(parent.Entries)-1].Subtree = id
			return nil
		}
		top.Entries = append(top.Entries, n)
		return nil
	})
	if err != nil {
		return world.ID{}, skipped, err
	}
	if len(stack) != 1 {
		return world.ID{}, skipped, errors.New("internal error: unbalanced directory walk")
	}
	id, err := w.addTree(stack[0])
	return id, skipped, err
}

// addTree stores t as a tree blob.
func (w *packWriter) addTree(t *Tree) (world.ID, error) {
	if !slices.IsSortedFunc(t.Entries, func(a, b Node) int { return strings.Compare(a.Name, b.Name) }) {
		return world.ID{}, errors.New("internal error: directory entries not sorted")
	}
	b, err := json.Marshal(t)
	if err != nil {
		return world.ID{}, err
	}
	return w.add(TreeBlob, b)
}
