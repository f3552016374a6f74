package reset

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// Hardlink is the "hardlink" strategy: a hardlink farm. Directories are
// recreated, files are hard links to lower, except the files Copy selects
// (by default everything under db/: sites and services write SQLite databases
// in place), which are private copies made at New and at every Reset.
//
// # Copy-on-write safety
//
// A hard link shares its inode, data and metadata with lower, so a write in
// place through the link IS a write to lower. The strategy protects lower
// like this:
//
//   - New refuses a lower whose linked files carry any write bit
//     (ErrNotSealed); Seal makes them read-only (a-w) once, when the state
//     is checked out. Lower should be owned by root (or any uid other than
//     the sandboxed processes').
//   - Writes through this package's API are copy-on-write: Writable,
//     OpenWritable and Instance.BreakLink replace the link by a private copy
//     (copy to a temporary file in the same directory + rename) before the
//     caller writes. The copy gets lower's mode plus u+w.
//   - SQLite databases are never linked (see Copy), so a site or service
//     writing its database in place touches only the instance's copy.
//   - Replacing a file (write a temp file + rename, as world.WriteFileAtomic
//     does), unlinking, renaming and creating files all change only the
//     instance's directories, never lower: they are safe without the API.
//
// What is NOT protected:
//
//   - A process with CAP_DAC_OVERRIDE (root, and root inside a sandbox
//     that keeps that capability) ignores the 0444 mode: `echo >> file` or
//     an open(O_WRONLY) on a linked file writes straight into lower. Such
//     processes must go through OpenWritable, or use the overlay strategy.
//   - chmod, chown, utimes, setxattr on a linked file change lower's inode
//     (the owner of the file may chmod u+w and then write: hence lower must
//     not be owned by the sandboxed uid).
//   - An unprivileged process that is not the owner gets EACCES on an
//     in-place write (`echo >> file`, opening for writing). That is safe,
//     but it breaks legitimate appends and in-place edits by tools that do
//     not write-temp-and-rename: run those against the overlay or copy
//     strategy, or call BreakLink first.
type Hardlink struct {
	// Copy reports whether the lower file rel (slash separated) must be
	// copied instead of linked. nil means: everything under db/.
	Copy func(rel string) bool
	// Workers copying files in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Name implements Strategy.
func (*Hardlink) Name() string { return "hardlink" }

func (s *Hardlink) copies(rel string) bool {
	rel = filepath.ToSlash(rel)
	if s.Copy != nil {
		return s.Copy(rel)
	}
	return strings.HasPrefix(rel, world.DBDir+"/")
}

// Seal removes every write bit from the lower files the strategy would link,
// so that an unprivileged process cannot write them through a link. Run it
// once on a fresh checkout, before the first New. The files to copy keep
// their modes.
func (s *Hardlink) Seal(ctx context.Context, lower string) error {
	t, err := scanTree(ctx, lower)
	if err != nil {
		return fmt.Errorf("hardlink: seal: %w", err)
	}
	for _, f := range t.files {
		if s.copies(f.rel) || f.mode&0o222 == 0 {
			continue
		}
		if err := chmod(filepath.Join(lower, f.rel), f.mode&^0o222); err != nil {
			return fmt.Errorf("hardlink: seal: %w", err)
		}
	}
	return nil
}

// New implements Strategy. It fails with ErrNotSealed when a file to link is
// writable, and with ErrUnavailable when lower and dir are on different
// file systems.
func (s *Hardlink) New(ctx context.Context, lower, dir string) (Instance, error) {
	if err := checkNew(ctx, lower, dir); err != nil {
		return nil, fmt.Errorf("hardlink: %w", err)
	}
	t, err := scanTree(ctx, lower)
	if err != nil {
		return nil, fmt.Errorf("hardlink: %w", err)
	}
	for _, f := range t.files {
		if !s.copies(f.rel) && f.mode&0o222 != 0 {
			return nil, fmt.Errorf("hardlink: %s has mode %v: %w (call Hardlink.Seal on the checkout)",
				filepath.Join(lower, f.rel), f.mode, ErrNotSealed)
		}
	}
	in := &HardlinkInstance{treeInstance: treeInstance{name: "hardlink", dir: dir}}
	in.fill = func(ctx context.Context) error {
		return t.materialise(ctx, dir, s.Workers, func(src, dst string, n node) error {
			if s.copies(n.rel) {
				return copyFile(src, dst, n.mode, n.size)
			}
			err := os.Link(src, dst)
			if errors.Is(err, syscall.EXDEV) {
				return fmt.Errorf("%w: lower %s and instance %s are on different file systems: hard links need one", ErrUnavailable, lower, dir)
			}
			return err
		})
	}
	if err := in.fill(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("hardlink: new %s: %w", dir, err)
	}
	return in, nil
}

// HardlinkInstance is an instance of the hardlink strategy. Write in place
// only after BreakLink (or through OpenWritable / Writable).
type HardlinkInstance struct {
	treeInstance
	breakMu sync.Mutex
}

// BreakLink implements LinkBreaker: when rel is a regular file sharing its
// inode with another name (lower), it is replaced by a private copy with
// lower's mode plus u+w. Directories, symlinks, missing and private files
// are left alone.
func (in *HardlinkInstance) BreakLink(rel string) error {
	clean, err := cleanRel(rel)
	if err != nil {
		return fmt.Errorf("hardlink: break link: %w", err)
	}
	in.breakMu.Lock()
	defer in.breakMu.Unlock()
	p := filepath.Join(in.dir, filepath.FromSlash(clean))
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return nil
		}
		return fmt.Errorf("hardlink: break link %s: %w", rel, &fs.PathError{Op: "lstat", Path: p, Err: err})
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG || st.Nlink <= 1 {
		return nil
	}
	mode := fs.FileMode(st.Mode&0o777) | 0o200
	if st.Mode&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	tmp := filepath.Join(filepath.Dir(p), ".breaklink-"+path.Base(clean))
	os.Remove(tmp) // a leftover of a crash
	if err := copyFile(p, tmp, mode, st.Size); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("hardlink: break link %s: %w", rel, err)
	}
	if err := os.Rename(tmp, p); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("hardlink: break link %s: %w", rel, err)
	}
	return nil
}

// OpenWritable is OpenWritable(in, rel).
func (in *HardlinkInstance) OpenWritable(rel string) (*os.File, error) {
	return OpenWritable(in, rel)
}
