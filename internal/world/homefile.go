package world

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// What host code finds at a home path an agent named, when it is not a
// regular file it may read. Each is wrapped, with ErrAgentFault, by the
// *HomeFileError of OpenHomeFile, ReadHomeFile and OpenHomeDir.
var (
	// ErrNotRegular: a fifo, socket, device or directory.
	ErrNotRegular = errors.New("not a regular file")
	// ErrLink: a symlink, which the opener does not follow.
	ErrLink = errors.New("a symlink")
	// ErrTooLarge: a file larger than the caller's bound.
	ErrTooLarge = errors.New("larger than the bound")
	// ErrBusy: a file another process holds a lease on; an open would wait
	// for the lease to be broken.
	ErrBusy = errors.New("held by another process")
)

// HomeFileError is why a home path could not be opened, in words an agent
// can act on: Path is the path it gave, Err one of ErrNotRegular, ErrLink,
// ErrTooLarge, ErrBusy (each also ErrAgentFault), fs.ErrNotExist, or the
// system's error.
type HomeFileError struct {
	Path string
	// What is the sentence after Path: "is a fifo, not a regular file".
	What string
	Err  error
}

func (e *HomeFileError) Error() string { return e.Path + " " + e.What }

// Unwrap returns Err, and ErrAgentFault when the agent made the path so.
func (e *HomeFileError) Unwrap() []error {
	switch e.Err {
	case ErrNotRegular, ErrLink, ErrTooLarge, ErrBusy:
		return []error{e.Err, ErrAgentFault}
	}
	return []error{e.Err}
}

// HomeOpen says how OpenHomeFile opens a file. The zero value follows no
// symlink and bounds nothing.
type HomeOpen struct {
	// MaxSize refuses a file larger than this many bytes (0: no bound).
	MaxSize int64
	// FollowInside follows symlinks whose targets stay inside home
	// (resolved by os.Root, one component at a time, never leaving it),
	// for readers whose format says a path's symlinks are followed (the
	// verifier's file criteria). Without it any symlink is refused.
	FollowInside bool
}

// OpenHomeFile opens the regular file rel (slash separated, relative to the
// directory home) for reading, the one way host code opens a file an agent
// could have shaped (docs/SECURITY.md):
//
//   - every component is opened relative to its parent's descriptor with
//     O_NOFOLLOW, so a symlink anywhere in rel is refused (ErrLink), never
//     followed, even one swapped in while it opens (with FollowInside, os.Root
//     follows the links that stay inside home);
//   - the file is opened O_NONBLOCK, so a fifo, or a file another process
//     holds a lease on, cannot hold the open, and O_NOCTTY;
//   - the descriptor is then fstat'ed: anything but a regular file is
//     refused (ErrNotRegular, "x is a fifo, not a regular file"), and so is
//     one larger than o.MaxSize (ErrTooLarge), before a byte is read.
//
// The file's size can still grow after the check: read it through
// ReadHomeFile, or with a bound of your own.
func OpenHomeFile(home, rel string, o HomeOpen) (*os.File, fs.FileInfo, error) {
	clean, err := CleanHomePath(rel)
	if err != nil {
		return nil, nil, err
	}
	const flags = unix.O_RDONLY | unix.O_NONBLOCK | unix.O_NOCTTY | unix.O_CLOEXEC
	var f *os.File
	if o.FollowInside {
		root, err := os.OpenRoot(home)
		if err != nil {
			return nil, nil, fmt.Errorf("open home: %w", err)
		}
		f, err = root.OpenFile(clean, flags, 0)
		root.Close()
		if err != nil {
			return nil, nil, homeErr(rel, err)
		}
	} else {
		dir, base, err := openParent(home, rel, clean)
		if err != nil {
			return nil, nil, err
		}
		// What is not a regular file is not even opened (a device's open
		// could act), unless it is swapped in after this look: then the
		// fstat below refuses it.
		var st unix.Stat_t
		if err := unix.Fstatat(dir, base, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil && st.Mode&unix.S_IFMT != unix.S_IFREG {
			err := notRegular(rel, st.Mode)
			linkTarget(err, dir, base)
			unix.Close(dir)
			return nil, nil, err
		}
		fd, err := unix.Openat(dir, base, flags|unix.O_NOFOLLOW, 0)
		if err != nil {
			err := homeErr(rel, err)
			linkTarget(err, dir, base)
			unix.Close(dir)
			return nil, nil, err
		}
		unix.Close(dir)
		f = os.NewFile(uintptr(fd), clean)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, homeErr(rel, err)
	}
	if !st.Mode().IsRegular() {
		f.Close()
		sys, _ := st.Sys().(*syscall.Stat_t)
		if sys == nil {
			return nil, nil, &HomeFileError{Path: rel, What: "is not a regular file", Err: ErrNotRegular}
		}
		return nil, nil, notRegular(rel, sys.Mode)
	}
	if o.MaxSize > 0 && st.Size() > o.MaxSize {
		f.Close()
		return nil, nil, tooLarge(rel, st.Size(), o.MaxSize)
	}
	return f, st, nil
}

// ReadHomeFile reads the regular file rel of home, opened by OpenHomeFile,
// refusing one of more than o.MaxSize bytes (which must be set) however it
// grows while it is read.
func ReadHomeFile(home, rel string, o HomeOpen) ([]byte, error) {
	if o.MaxSize <= 0 {
		return nil, fmt.Errorf("read %s: no bound on its size", rel)
	}
	f, st, err := OpenHomeFile(home, rel, o)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, 0, min(st.Size(), o.MaxSize)+1)
	w := bufWriter{b: b}
	if _, err := io.Copy(&w, io.LimitReader(f, o.MaxSize+1)); err != nil {
		return nil, homeErr(rel, err)
	}
	if int64(len(w.b)) > o.MaxSize {
		return nil, tooLarge(rel, int64(len(w.b)), o.MaxSize)
	}
	return w.b, nil
}

func notRegular(rel string, mode uint32) error {
	if mode&unix.S_IFMT == unix.S_IFLNK {
		return homeErr(rel, unix.ELOOP)
	}
	return &HomeFileError{Path: rel, What: "is " + article(mode) + ", not a regular file", Err: ErrNotRegular}
}

func tooLarge(rel string, size, limit int64) error {
	what := fmt.Sprintf("is larger than %s (%d bytes)", bytesText(limit), size)
	return &HomeFileError{Path: rel, What: what, Err: ErrTooLarge}
}

// bytesText is n in MiB when it is a whole number of them.
func bytesText(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenHomeDir opens the directory rel of home ("." for home itself) the way
// OpenHomeFile opens a file: component by component, never following a
// symlink. With mkdir set, missing directories are made (mode 0755) and
// handed to mkdir (the descriptor of each, to chown it) as they are. The
// caller closes the returned descriptor.
func OpenHomeDir(home, rel string, mkdir func(fd int) error) (int, error) {
	fd, err := unix.Open(home, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open home: %w", &fs.PathError{Op: "open", Path: home, Err: err})
	}
	if rel == "." || rel == "" {
		return fd, nil
	}
	clean, err := CleanHomePath(rel)
	if err != nil {
		unix.Close(fd)
		return -1, err
	}
	done := ""
	for _, name := range strings.Split(clean, "/") {
		done = pathJoin(done, name)
		next, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && mkdir != nil {
			if err = unix.Mkdirat(fd, name, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
				if err == nil {
					if merr := mkdir(next); merr != nil {
						unix.Close(next)
						next, err = -1, merr
					}
				}
			}
		}
		if err != nil {
			e := homeErr(done, dirErr(fd, name, err))
			linkTarget(e, fd, name)
			unix.Close(fd)
			return -1, e
		}
		unix.Close(fd)
		fd = next
	}
	return fd, nil
}

// openParent opens the directory of clean and returns it with the last
// component.
func openParent(home, rel, clean string) (int, string, error) {
	parent, base := "", clean
	if i := strings.LastIndexByte(clean, '/'); i >= 0 {
		parent, base = clean[:i], clean[i+1:]
	}
	dir, err := OpenHomeDir(home, parent, nil)
	if err != nil {
		var he *HomeFileError
		if errors.As(err, &he) && parent != "" && rel != parent {
			// Name the component and the path the agent gave.
			he.What = he.What + " (in " + rel + ")"
		}
		return -1, "", err
	}
	return dir, base, nil
}

// linkTarget names the target in err when it is a symlink's refusal, so
// that the agent can open that path instead.
func linkTarget(err error, dir int, name string) {
	var he *HomeFileError
	if !errors.As(err, &he) || he.Err != ErrLink {
		return
	}
	buf := make([]byte, 256)
	n, rerr := unix.Readlinkat(dir, name, buf)
	if rerr != nil || n == 0 {
		return
	}
	target := string(buf[:n])
	if n == len(buf) {
		target += "..."
	}
	he.What = strings.Replace(he.What, "is a symlink:", fmt.Sprintf("is a symlink (to %q):", target), 1)
}

// dirErr turns an openat of a directory component failing with ENOTDIR into
// what the entry is (O_DIRECTORY refuses a fifo before it could block).
func dirErr(dir int, name string, err error) error {
	var st unix.Stat_t
	if errors.Is(err, unix.ENOTDIR) && unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return kindErr(st.Mode)
	}
	return err
}

// kindErr is an entry of a path that is not a directory: its type bits.
type kindErr uint32

func (k kindErr) Error() string { return article(uint32(k)) }

func pathJoin(a, b string) string {
	if a == "" {
		return b
	}
	return a + "/" + b
}

// homeErr says what went wrong opening rel, in the agent's terms.
func homeErr(rel string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	var ke kindErr
	switch {
	case errors.Is(err, unix.ELOOP), errors.As(err, &ke) && uint32(ke)&unix.S_IFMT == unix.S_IFLNK:
		return &HomeFileError{Path: rel, What: "is a symlink: the file tools do not follow links; use the path it points to", Err: ErrLink}
	case errors.As(err, &ke):
		return &HomeFileError{Path: rel, What: "is " + article(uint32(ke)) + ", not a directory", Err: ErrNotRegular}
	case errors.Is(err, unix.ENOENT):
		return &HomeFileError{Path: rel, What: "does not exist", Err: fs.ErrNotExist}
	case errors.Is(err, unix.EWOULDBLOCK):
		return &HomeFileError{Path: rel, What: "is held by another process (a lease): try again later", Err: ErrBusy}
	case errors.Is(err, unix.ENXIO):
		return &HomeFileError{Path: rel, What: "is a socket or a device, not a regular file", Err: ErrNotRegular}
	case errors.Is(err, unix.EACCES), errors.Is(err, unix.EPERM):
		return &HomeFileError{Path: rel, What: "cannot be opened: permission denied", Err: fs.ErrPermission}
	case err.Error() == "path escapes from parent": // os.Root's
		return &HomeFileError{Path: rel, What: "leaves the home directory through a symlink", Err: ErrLink}
	}
	return &HomeFileError{Path: rel, What: "cannot be opened: " + err.Error(), Err: err}
}

// article names a file's type (stat's mode) with its article: "a fifo".
func article(mode uint32) string {
	switch mode & unix.S_IFMT {
	case unix.S_IFREG:
		return "a regular file"
	case unix.S_IFDIR:
		return "a directory"
	case unix.S_IFLNK:
		return "a symlink"
	}
	return "a " + fileKind(mode)
}
