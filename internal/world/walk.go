package world

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"golang.org/x/sys/unix"
)

// Limits of what a walk of a world directory covers (docs/world.md). Entries
// beyond them are skipped and recorded, never an error: an agent can create
// them in its own home, and the snapshot, hash and diff of its instance must
// still work.
const (
	// MaxWalkDepth is the most components a path relative to the world
	// root may have ("home/a/b" has 3).
	MaxWalkDepth = 128
	// MaxWalkPath is the longest path relative to the world root, in bytes.
	// It keeps every stored path well below PATH_MAX wherever the world is
	// checked out.
	MaxWalkPath = 2048
	// MaxWalkFileSize is the largest regular file a walk reads, in bytes:
	// a snapshot holds a file in memory, and a sparse file costs no space
	// to make however large it claims to be.
	MaxWalkFileSize = 1 << 30
	// MaxWalkBytes is the most bytes of regular files one walk hands out
	// from one top-level directory of the world (home/, db/): files past
	// it (in walk order) are left out. A live world's files
	// live on a size-capped tmpfs, so only sparse files, which claim bytes
	// they do not hold, reach it: an agent's thousands of 1 GiB sparse
	// files cost a snapshot at most this much reading.
	MaxWalkBytes = 4 << 30
	// MaxSkipEntries is how many skipped entries a SkipList keeps; it
	// counts all of them.
	MaxSkipEntries = 100
	// walkRetries is how often an entry that changes while it is read is
	// read again before it is skipped.
	walkRetries = 3
)

// ErrChanged is wrapped by the errors of Entry.ReadAll and Entry.CopyTo when
// a file changed while it was read. Returned by a WalkFunc for a file entry,
// it makes Walk read the entry again, and skip it after a few attempts.
var ErrChanged = errors.New("changed while it was read")

// Entry kinds a walk reports.
const (
	EntryFile    = "file"
	EntryDir     = "dir"
	EntrySymlink = "symlink"
	// EntryDirEnd follows the entries of a directory (post-order).
	EntryDirEnd = "dir-end"
)

// Skipped is an entry a walk left out, and why.
type Skipped struct {
	Path   string `json:"path"` // relative to the world root, slash separated
	Reason string `json:"reason"`
}

// SkipList is what a walk left out: the first MaxSkipEntries entries in walk
// order, and how many in all.
type SkipList struct {
	Count   int       `json:"count"`
	Entries []Skipped `json:"entries"`
}

// Add records one skipped entry.
func (l *SkipList) Add(path, reason string) {
	l.Count++
	if len(l.Entries) < MaxSkipEntries {
		l.Entries = append(l.Entries, Skipped{Path: path, Reason: reason})
	}
}

// Empty reports whether nothing was skipped.
func (l *SkipList) Empty() bool { return l == nil || l.Count == 0 }

// Err is nil when nothing was skipped, else an error naming the first
// skipped entry, for callers that accept no skip.
func (l *SkipList) Err() error {
	if l.Empty() {
		return nil
	}
	s := l.Entries[0]
	if l.Count == 1 {
		return fmt.Errorf("%s: %s", QuoteName(s.Path), s.Reason)
	}
	return fmt.Errorf("%s: %s (and %d more skipped entries)", QuoteName(s.Path), s.Reason, l.Count-1)
}

// Entry is one entry of a walk.
type Entry struct {
	Kind  string      // EntryFile, EntryDir, EntrySymlink, EntryDirEnd
	Path  string      // relative to the world root, slash separated
	Name  string      // last element of Path
	Depth int         // components of Path
	Perm  fs.FileMode // permission bits (0 for symlinks)
	// Size is a file's size when it was opened, a symlink's target length.
	Size   int64
	Target string // symlink target
	// File is a regular file opened without following symlinks and checked
	// to be the file the directory listed; read it with ReadAll or CopyTo.
	// It is closed when the WalkFunc returns.
	File *os.File
	st   unix.Stat_t
}

// ReadAll reads the whole file of a file entry. It fails with ErrChanged
// when the file changes (size, times) while it is read.
func (e *Entry) ReadAll() ([]byte, error) {
	b := make([]byte, 0, e.Size)
	w := bufWriter{b: b}
	if err := e.CopyTo(&w, nil); err != nil {
		return nil, err
	}
	return w.b, nil
}

type bufWriter struct{ b []byte }

func (w *bufWriter) Write(p []byte) (int, error) { w.b = append(w.b, p...); return len(p), nil }

// CopyTo copies the file of a file entry to w, reading exactly Size bytes
// (buf, if not nil, is the copy buffer). It fails with ErrChanged when the
// file turns out longer or shorter, or its size or times change while it is
// read.
func (e *Entry) CopyTo(w io.Writer, buf []byte) error {
	if e.Kind != EntryFile || e.File == nil {
		return fmt.Errorf("%s: not a file", QuoteName(e.Path))
	}
	if buf == nil {
		buf = make([]byte, 32<<10)
	}
	n, err := io.CopyBuffer(w, io.LimitReader(e.File, e.Size), buf)
	if err != nil {
		return fmt.Errorf("read %s: %w", QuoteName(e.Path), err)
	}
	var one [1]byte
	extra, _ := e.File.Read(one[:])
	var after unix.Stat_t
	if err := unix.Fstat(int(e.File.Fd()), &after); err != nil {
		return &fs.PathError{Op: "stat", Path: QuoteName(e.Path), Err: err}
	}
	if n != e.Size || extra != 0 || after.Size != e.st.Size || after.Mtim != e.st.Mtim || after.Ctim != e.st.Ctim {
		return fmt.Errorf("read %s: %w", QuoteName(e.Path), ErrChanged)
	}
	return nil
}

// WalkFunc is called for each entry of a walk. An error stops the walk,
// except ErrChanged for a file entry: Walk then reads the entry again (so fn
// must undo what it did with it) and skips it after a few attempts.
type WalkFunc func(e *Entry) error

// Walk visits the tree below root/sub (below root when sub is ""), not that
// directory itself: for each directory its entries sorted by name, each
// directory's entries right after it and followed by an EntryDirEnd, the
// order of filepath.WalkDir. A missing sub is an empty tree.
//
// Walk never follows a symlink below root and never opens anything but
// regular files and directories: every entry is opened relative to its
// parent's descriptor with O_NOFOLLOW, and the opened descriptor is checked
// to be the same file (device and inode) of the same type the directory
// listed, so an entry swapped for a symlink or a fifo while the walk runs is
// never followed or opened. It holds one descriptor per directory level,
// so it works at any depth PATH_MAX could not name.
//
// Entries it does not report are listed in the returned SkipList with a
// reason: fifos, sockets and devices; entries more than MaxWalkDepth levels
// deep or with a path longer than MaxWalkPath (a directory with everything
// below it); files larger than MaxWalkFileSize, or past MaxWalkBytes in
// all; entries that kept changing
// while they were read. Errors name
// paths relative to root, never root itself, quoted by QuoteName. Names are
// any bytes a Linux name holds; Entry.Path and Entry.Name keep them exact.
func Walk(ctx context.Context, root, sub string, fn WalkFunc) (*SkipList, error) {
	skips := &SkipList{}
	rootFd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return skips, &fs.PathError{Op: "open", Path: ".", Err: err}
	}
	w := &walker{ctx: ctx, fn: fn, skips: skips}
	defer func() {
		for _, f := range w.stack {
			f.dir.Close()
		}
	}()
	start := os.NewFile(uintptr(rootFd), ".")
	if sub != "" {
		fd, err := unix.Openat(rootFd, sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		start.Close()
		if errors.Is(err, unix.ENOENT) {
			return skips, nil
		}
		if err != nil {
			return skips, &fs.PathError{Op: "open", Path: QuoteName(sub), Err: err}
		}
		start = os.NewFile(uintptr(fd), sub)
	}
	rel := sub
	if err := w.push(start, rel, depthOf(rel)); err != nil {
		return skips, err
	}
	return skips, w.run()
}

func depthOf(rel string) int {
	if rel == "" {
		return 0
	}
	n := 1
	for i := range len(rel) {
		if rel[i] == '/' {
			n++
		}
	}
	return n
}

type frame struct {
	dir   *os.File
	path  string
	depth int
	names []string
	next  int
	root  bool
}

type walker struct {
	ctx   context.Context
	fn    WalkFunc
	skips *SkipList
	stack []*frame
	bytes map[string]int64 // regular files' bytes handed out so far, by top-level directory
}

func (w *walker) push(dir *os.File, rel string, depth int) error {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		dir.Close()
		return &fs.PathError{Op: "read directory", Path: QuoteName(relOrDot(rel)), Err: unwrapPathErr(err)}
	}
	slices.Sort(names)
	w.stack = append(w.stack, &frame{dir: dir, path: rel, depth: depth, names: names, root: len(w.stack) == 0})
	return nil
}

func relOrDot(rel string) string {
	if rel == "" {
		return "."
	}
	return rel
}

// unwrapPathErr drops the path an *os.File method put into its error (the
// file's name is already relative, but Walk builds its own PathError).
func unwrapPathErr(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func (w *walker) run() error {
	for len(w.stack) > 0 {
		if err := w.ctx.Err(); err != nil {
			return err
		}
		f := w.stack[len(w.stack)-1]
		if f.next == len(f.names) {
			w.stack = w.stack[:len(w.stack)-1]
			f.dir.Close()
			if !f.root {
				if err := w.fn(&Entry{Kind: EntryDirEnd, Path: f.path, Name: path.Base(f.path), Depth: f.depth}); err != nil {
					return err
				}
			}
			continue
		}
		name := f.names[f.next]
		f.next++
		if err := w.entry(f, name); err != nil {
			return err
		}
	}
	return nil
}

// entry visits one name of directory f, reading it again when it changes
// under the walk.
func (w *walker) entry(f *frame, name string) error {
	rel := name
	if f.path != "" {
		rel = f.path + "/" + name
	}
	depth := f.depth + 1
	switch {
	case depth > MaxWalkDepth:
		w.skips.Add(rel, fmt.Sprintf("more than %d levels deep (counted from the world root); left out with everything below it", MaxWalkDepth))
		return nil
	case len(rel) > MaxWalkPath:
		w.skips.Add(rel, fmt.Sprintf("path longer than %d bytes; left out with everything below it", MaxWalkPath))
		return nil
	}
	dirFd := int(f.dir.Fd())
	for range walkRetries {
		e := &Entry{Path: rel, Name: name, Depth: depth}
		if err := unix.Fstatat(dirFd, name, &e.st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			if errors.Is(err, unix.ENOENT) {
				return nil // removed since the directory was read
			}
			return &fs.PathError{Op: "stat", Path: QuoteName(rel), Err: err}
		}
		e.Perm = fs.FileMode(e.st.Mode) & fs.ModePerm
		e.Size = e.st.Size
		var err error
		switch e.st.Mode & unix.S_IFMT {
		case unix.S_IFREG:
			if e.st.Size > MaxWalkFileSize {
				w.skips.Add(rel, fmt.Sprintf("file of %d bytes, larger than %d MiB", e.st.Size, MaxWalkFileSize>>20))
				return nil
			}
			// The budget is kept per top-level directory, so a walk of
			// home alone (the hash's) and a walk of the whole world (the
			// store's) leave out the same files of home.
			top, _, _ := strings.Cut(rel, "/")
			if w.bytes[top]+e.st.Size > MaxWalkBytes {
				w.skips.Add(rel, fmt.Sprintf("file of %d bytes past the walk's budget of %d GiB of files in %s/", e.st.Size, MaxWalkBytes>>30, top))
				return nil
			}
			err = w.file(dirFd, e)
			if err == nil {
				if w.bytes == nil {
					w.bytes = map[string]int64{}
				}
				w.bytes[top] += e.st.Size
			}
		case unix.S_IFDIR:
			err = w.dir(dirFd, e)
		case unix.S_IFLNK:
			err = w.symlink(dirFd, e)
		default:
			w.skips.Add(rel, fileKind(e.st.Mode)+": only regular files, directories and symlinks are stored, hashed and compared")
			return nil
		}
		if !errors.Is(err, ErrChanged) {
			return err
		}
	}
	w.skips.Add(rel, fmt.Sprintf("%s %d times in a row (a command was still writing it)", ErrChanged, walkRetries))
	return nil
}

// open opens e relative to dirFd without following a symlink and checks it
// is still the file Fstatat saw.
func open(dirFd int, e *Entry, flags int) (*os.File, error) {
	fd, err := unix.Openat(dirFd, e.Name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	switch {
	case errors.Is(err, unix.ELOOP), errors.Is(err, unix.ENOENT), errors.Is(err, unix.ENOTDIR), errors.Is(err, unix.ENXIO):
		return nil, ErrChanged // now a symlink, gone, or no longer the kind it was
	case err != nil:
		return nil, &fs.PathError{Op: "open", Path: QuoteName(e.Path), Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "stat", Path: QuoteName(e.Path), Err: err}
	}
	if st.Dev != e.st.Dev || st.Ino != e.st.Ino || st.Mode&unix.S_IFMT != e.st.Mode&unix.S_IFMT || st.Size > MaxWalkFileSize {
		unix.Close(fd)
		return nil, ErrChanged
	}
	e.st = st
	e.Perm = fs.FileMode(st.Mode) & fs.ModePerm
	e.Size = st.Size
	return os.NewFile(uintptr(fd), e.Path), nil
}

func (w *walker) file(dirFd int, e *Entry) error {
	f, err := open(dirFd, e, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	e.Kind, e.File = EntryFile, f
	return w.fn(e)
}

func (w *walker) dir(dirFd int, e *Entry) error {
	f, err := open(dirFd, e, unix.O_DIRECTORY)
	if err != nil {
		return err
	}
	e.Kind = EntryDir
	if err := w.fn(e); err != nil {
		f.Close()
		return err
	}
	return w.push(f, e.Path, e.Depth)
}

func (w *walker) symlink(dirFd int, e *Entry) error {
	buf := make([]byte, 256)
	for {
		n, err := unix.Readlinkat(dirFd, e.Name, buf)
		switch {
		case errors.Is(err, unix.EINVAL), errors.Is(err, unix.ENOENT):
			return ErrChanged // no longer a symlink, or gone
		case err != nil:
			return &fs.PathError{Op: "readlink", Path: QuoteName(e.Path), Err: err}
		case n < len(buf):
			e.Kind, e.Target, e.Size, e.Perm = EntrySymlink, string(buf[:n]), int64(n), 0
			return w.fn(e)
		}
		buf = make([]byte, 2*len(buf))
	}
}

func fileKind(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFIFO:
		return "fifo"
	case unix.S_IFSOCK:
		return "socket"
	case unix.S_IFCHR:
		return "character device"
	case unix.S_IFBLK:
		return "block device"
	}
	return fmt.Sprintf("file of type %#o", mode&unix.S_IFMT)
}
