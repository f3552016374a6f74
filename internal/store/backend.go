package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// FileType names a kind of file a Backend keeps.
type FileType string

// The file types of a store.
const (
	PackFile     FileType = "packs"
	IndexFile    FileType = "index"
	SnapshotFile FileType = "snapshots"
)

var fileTypes = []FileType{PackFile, IndexFile, SnapshotFile}

// File is one entry of Backend.List.
type File struct {
	Name string
	Size int64
}

// Backend keeps the files of a store, by type and name. Implementations must
// be safe for concurrent use. A missing file is reported with an error that
// wraps fs.ErrNotExist; a Load past the end of a file with one that wraps
// io.ErrUnexpectedEOF.
type Backend interface {
	// Save stores data under (t, name) atomically: readers see either no file
	// or all of data, also after a crash.
	Save(ctx context.Context, t FileType, name string, data []byte) error
	// Load returns length bytes at offset; length < 0 means to the end.
	Load(ctx context.Context, t FileType, name string, offset, length int64) ([]byte, error)
	// List returns the files of type t sorted by name.
	List(ctx context.Context, t FileType) ([]File, error)
	// Remove deletes (t, name).
	Remove(ctx context.Context, t FileType, name string) error
}

func checkName(t FileType, name string) error {
	if !slices.Contains(fileTypes, t) {
		return fmt.Errorf("unknown file type %q", t)
	}
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`+"\x00") {
		return fmt.Errorf("invalid %s file name %q", t, name)
	}
	return nil
}

// dirBackend keeps files in a local directory: DIR/<type>/<name>, writing
// through DIR/tmp.
type dirBackend struct {
	dir string
	// hook, if set, is called with "tmp:<type>" after a file is complete in
	// tmp/ and before it is renamed into place (crash tests).
	hook func(event string)
}

// NewDirBackend returns a Backend that keeps files under dir, which must
// hold the subdirectories packs/, index/, snapshots/ and tmp/.
func NewDirBackend(dir string) Backend { return &dirBackend{dir: dir} }

func (b *dirBackend) path(t FileType, name string) string {
	return filepath.Join(b.dir, string(t), name)
}

func (b *dirBackend) Save(ctx context.Context, t FileType, name string, data []byte) error {
	if err := checkName(t, name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	dst := b.path(t, name)
	f, err := os.CreateTemp(filepath.Join(b.dir, "tmp"), string(t)+"-"+name+"-*")
	if err != nil {
		return fmt.Errorf("save %s: %w", dst, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("save %s: %w", dst, err)
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Chmod(0o444); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save %s: %w", dst, err)
	}
	if b.hook != nil {
		b.hook("tmp:" + string(t))
	}
	if err := os.Rename(tmp, dst); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("save %s: %w", dst, err)
	}
	return world.SyncDir(filepath.Dir(dst))
}

func (b *dirBackend) Load(ctx context.Context, t FileType, name string, offset, length int64) ([]byte, error) {
	if err := checkName(t, name); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := b.path(t, name)
	if offset < 0 {
		return nil, fmt.Errorf("load %s: negative offset %d", p, offset)
	}
	f, err := os.Open(p)
	if err != nil {
		return nil, fmt.Errorf("load: %w", err)
	}
	defer f.Close()
	if length < 0 {
		st, err := f.Stat()
		if err != nil {
			return nil, fmt.Errorf("load: %w", err)
		}
		length = max(st.Size()-offset, 0)
	}
	buf := make([]byte, length)
	n, err := f.ReadAt(buf, offset)
	if n == len(buf) {
		return buf, nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return nil, fmt.Errorf("load %s: %d bytes at offset %d: got %d: %w", p, length, offset, n, err)
}

func (b *dirBackend) List(ctx context.Context, t FileType) ([]File, error) {
	if err := checkName(t, "x"); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ents, err := os.ReadDir(filepath.Join(b.dir, string(t)))
	if err != nil {
		return nil, fmt.Errorf("list: %w", err)
	}
	files := make([]File, 0, len(ents))
	for _, e := range ents {
		if !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir
		}
		if err != nil {
			return nil, fmt.Errorf("list: %w", err)
		}
		files = append(files, File{Name: e.Name(), Size: info.Size()})
	}
	return files, nil // os.ReadDir sorts by name
}

func (b *dirBackend) Remove(ctx context.Context, t FileType, name string) error {
	if err := checkName(t, name); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := b.path(t, name)
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("remove: %w", err)
	}
	return world.SyncDir(filepath.Dir(p))
}
