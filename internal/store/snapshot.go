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
	"path/filepath"
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

// Node is one entry of a Tree.
type Node struct {
	Name    string   `json:"name"`
	Type    string   `json:"type"`
	Mode    uint32   `json:"mode"` // permission bits only
	Size    int64    `json:"size"`
	Chunks  IDList   `json:"chunks,omitempty"` // files
	Subtree world.ID `json:"subtree,omitzero"` // dirs
	Target  string   `json:"target,omitempty"` // symlinks
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
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\x00")
}

// validate checks what checkout relies on: valid, unique, sorted names and
// fields that fit the node type.
func (t *Tree) validate() error {
	for i, n := range t.Entries {
		if !validName(n.Name) {
			return fmt.Errorf("invalid entry name %q", n.Name)
		}
		if i > 0 && t.Entries[i-1].Name >= n.Name {
			return fmt.Errorf("entries not sorted or not unique at %q", n.Name)
		}
		if n.Mode&^uint32(fs.ModePerm) != 0 {
			return fmt.Errorf("entry %q: mode %o has bits besides permissions", n.Name, n.Mode)
		}
		switch n.Type {
		case NodeFile:
		case NodeDir:
			if n.Subtree.IsZero() {
				return fmt.Errorf("dir %q has no subtree", n.Name)
			}
		case NodeSymlink:
		default:
			return fmt.Errorf("entry %q: unknown type %q", n.Name, n.Type)
		}
	}
	return nil
}

// Snapshot stores the directory tree at dir and records it with meta. It
// returns the snapshot's ID. Storing the same content with the same meta
// again returns the same ID and writes nothing.
//
// Only regular files, directories and symlinks may appear under dir; for
// anything else Snapshot fails naming the path. Modes keep permission bits
// only; times and owners are not recorded.
func (s *Store) Snapshot(ctx context.Context, dir string, meta Meta) (world.ID, error) {
	var zero world.ID
	if meta.Kind != KindWorld && meta.Kind != KindCatalog {
		return zero, fmt.Errorf("snapshot %s: kind %q: want %q or %q", dir, meta.Kind, KindWorld, KindCatalog)
	}
	if meta.Day < 0 {
		return zero, fmt.Errorf("snapshot %s: day %d: must be >= 0", dir, meta.Day)
	}
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	defer unlock()
	if !meta.Parent.IsZero() {
		if _, err := s.Load(meta.Parent); err != nil {
			return zero, fmt.Errorf("snapshot %s: parent: %w", dir, err)
		}
	}
	if err := s.refreshIndex(ctx); err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	w := &packWriter{s: s, ctx: ctx, pending: make(map[world.ID]bool), known: s.hasBlob, onIndex: s.addIndex}
	st, err := os.Lstat(dir)
	if err != nil {
		return zero, fmt.Errorf("snapshot: %w", err)
	}
	if !st.IsDir() {
		return zero, fmt.Errorf("snapshot %s: not a directory", dir)
	}
	root, err := w.storeDir(dir)
	if err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	if err := w.finish(); err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
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
	}
	b, err := json.Marshal(rec)
	if err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	id := world.Hash(b)
	if old, err := s.be.Load(ctx, SnapshotFile, id.String(), 0, -1); err == nil && id.Verify(old) == nil {
		return id, nil // already stored
	}
	if err := s.be.Save(ctx, SnapshotFile, id.String(), b); err != nil {
		return zero, fmt.Errorf("snapshot %s: %w", dir, err)
	}
	s.fire("snapshot")
	return id, nil
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

// storeDir stores the directory at path and returns its tree's ID.
func (w *packWriter) storeDir(path string) (world.ID, error) {
	if err := w.ctx.Err(); err != nil {
		return world.ID{}, err
	}
	ents, err := os.ReadDir(path)
	if err != nil {
		return world.ID{}, err
	}
	tree := Tree{Entries: []Node{}}
	for _, e := range ents { // sorted by name
		p := filepath.Join(path, e.Name())
		info, err := os.Lstat(p)
		if err != nil {
			return world.ID{}, err
		}
		n := Node{Name: e.Name(), Mode: uint32(info.Mode().Perm())}
		switch typ := info.Mode().Type(); {
		case typ == 0:
			n.Type = NodeFile
			data, err := os.ReadFile(p)
			if err != nil {
				return world.ID{}, err
			}
			n.Size = int64(len(data))
			for _, c := range Chunks(data) {
				id, err := w.add(DataBlob, c)
				if err != nil {
					return world.ID{}, err
				}
				n.Chunks = append(n.Chunks, id)
			}
		case typ == fs.ModeDir:
			n.Type = NodeDir
			if n.Subtree, err = w.storeDir(p); err != nil {
				return world.ID{}, err
			}
		case typ == fs.ModeSymlink:
			n.Type = NodeSymlink
			n.Mode = 0 // symlink permissions mean nothing on Linux
			if n.Target, err = os.Readlink(p); err != nil {
				return world.ID{}, err
			}
			n.Size = int64(len(n.Target))
		default:
			return world.ID{}, &UnsupportedFileError{Path: p, Mode: info.Mode()}
		}
		tree.Entries = append(tree.Entries, n)
	}
	if !slices.IsSortedFunc(tree.Entries, func(a, b Node) int { return strings.Compare(a.Name, b.Name) }) {
		return world.ID{}, errors.New("internal error: directory entries not sorted")
	}
	b, err := json.Marshal(tree)
	if err != nil {
		return world.ID{}, err
	}
	return w.add(TreeBlob, b)
}

// UnsupportedFileError reports a file Snapshot cannot store (a device,
// socket, fifo, ...).
type UnsupportedFileError struct {
	Path string
	Mode fs.FileMode
}

func (e *UnsupportedFileError) Error() string {
	return fmt.Sprintf("%s: unsupported file type %s: only regular files, directories and symlinks can be stored", e.Path, fileKind(e.Mode))
}

func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "fifo"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	case m&fs.ModeIrregular != 0:
		return "irregular file"
	}
	return m.Type().String()
}
