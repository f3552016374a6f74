package reset

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// OverlayReset selects how an overlay instance is reset.
type OverlayReset int

const (
	// ResetClear (the default, and the fastest measured): keep the tmpfs,
	// unmount the overlay, delete the upper and work directories (a reset
	// follows a few writes, so they hold little), mount the overlay again.
	ResetClear OverlayReset = iota
	// ResetRemount: unmount the overlay and the tmpfs, which drops every
	// change at once whatever its size, then mount both again. One more
	// unmount and mount per reset: ~0.05-0.1 ms slower at p50 on the
	// reference machine, and its tail is longer.
	ResetRemount
)

// Overlay is the "overlay" strategy: per instance, a size-limited tmpfs is
// mounted at DIR.rw holding the overlay's upper and work directories, and an
// overlayfs is mounted at DIR with lowerdir=lower. Every write lands in the
// tmpfs (a file is copied up on its first open for writing), so lower is
// safe from any writer, root included, and appends and in-place edits just
// work. It needs root (CAP_SYS_ADMIN) and overlayfs; New fails with
// ErrUnavailable otherwise.
//
// Changes live in memory: they count against the tmpfs size (Size) and
// inode count (Inodes) and the machine's RAM, and are lost on Reset, Close
// or a crash, as they should be. Both mounts are nosuid and nodev: a
// set-user-ID file or a device node written into an instance is inert.
type Overlay struct {
	// Size of the tmpfs holding the changes, as tmpfs's size= option;
	// "" means "256m".
	Size string
	// Inodes caps the files, directories and links the tmpfs holding the
	// changes may hold, as tmpfs's nr_inodes= option; 0 means
	// DefaultInodes. Size alone does not bound them: empty files take no
	// blocks, yet each costs kernel memory. A writer past the cap gets
	// ENOSPC ("No space left on device"), as past Size. Every home file
	// chowned for the sandbox (metacopy) and every file written or
	// deleted (a whiteout) takes one.
	Inodes int
	// Reset is how Reset works; the zero value is ResetClear.
	Reset OverlayReset
}

// DefaultInodes is Overlay.Inodes's default.
const DefaultInodes = 100_000

// check validates the options.
func (s *Overlay) check() error {
	if s.Inodes < 0 {
		return fmt.Errorf("overlay: field Inodes: %d is negative: give a count of at least 1, or 0 for the default %d", s.Inodes, DefaultInodes)
	}
	return nil
}

// Name implements Strategy: "overlay", or "overlay-remount" with
// ResetRemount.
func (s *Overlay) Name() string {
	if s.Reset == ResetRemount {
		return "overlay-remount"
	}
	return "overlay"
}

// New implements Strategy. It creates dir and dir+".rw".
func (s *Overlay) New(ctx context.Context, lower, dir string) (Instance, error) {
	if err := checkNew(ctx, lower, dir); err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	if err := s.check(); err != nil {
		return nil, err
	}
	if uid := os.Geteuid(); uid != 0 {
		return nil, fmt.Errorf("overlay: %w: mounting needs root, running as uid %d", ErrUnavailable, uid)
	}
	lower, err := filepath.Abs(lower)
	if err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	if dir, err = filepath.Abs(dir); err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	rw := dir + ".rw"
	// Paths with ',' or ':' are fine: the layers reach the mount options
	// as descriptors (layerOpts).
	fi, err := os.Stat(lower)
	if err != nil {
		return nil, fmt.Errorf("overlay: %w", err)
	}
	size := s.Size
	if size == "" {
		size = "256m"
	}
	inodes := s.Inodes
	if inodes == 0 {
		inodes = DefaultInodes
	}
	in := &overlayInstance{
		dir:       dir,
		rw:        rw,
		upper:     filepath.Join(rw, "upper"),
		work:      filepath.Join(rw, "work"),
		rootMode:  fi.Mode(),
		tmpfsOpts: "size=" + size + ",nr_inodes=" + strconv.Itoa(inodes) + ",mode=0700",
		mode:      s.Reset,
	}
	in.lower = lower
	for _, d := range []string{dir, rw} {
		if err := os.Mkdir(d, 0o700); err != nil {
			in.cleanup()
			return nil, fmt.Errorf("overlay: %w", err)
		}
	}
	if err := in.mountTmpfs(); err != nil {
		in.cleanup()
		return nil, err
	}
	if err := in.mountOverlay(); err != nil {
		in.cleanup()
		return nil, err
	}
	in.tmpfsUp, in.ovlUp = true, true
	return in, nil
}

type overlayInstance struct {
	dir, rw, upper, work string
	lower                string
	rootMode             os.FileMode
	tmpfsOpts            string
	mode                 OverlayReset
	noMetacopy           bool // the kernel refused metacopy=on

	mu             sync.Mutex
	tmpfsUp, ovlUp bool
	closed         bool
}

func (in *overlayInstance) Dir() string { return in.dir }

func (in *overlayInstance) mountTmpfs() error {
	if err := unix.Mount("tmpfs", in.rw, "tmpfs", mountFlags, in.tmpfsOpts); err != nil {
		return fmt.Errorf("overlay: mount tmpfs at %s: %w", in.rw, mountErr(err))
	}
	return in.makeUpper()
}

// makeUpper creates empty upper and work directories; upper carries lower's
// root mode, since the merged root shows upper's.
func (in *overlayInstance) makeUpper() error {
	for _, d := range []string{in.upper, in.work} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("overlay: %w", err)
		}
	}
	if err := chmod(in.upper, in.rootMode); err != nil {
		return fmt.Errorf("overlay: %w", err)
	}
	return nil
}

// mountFlags are the flags of both mounts: no set-user-ID or set-group-ID
// bits and no device nodes take effect in an instance, whoever runs them.
const mountFlags = unix.MS_NOSUID | unix.MS_NODEV

// mountOverlay mounts the overlay, with metacopy=on where the kernel has
// it: a chown or chmod then copies up only metadata, not file content (the
// runtime chowns every home for its sandbox uid after each reset).
//
// Its layers are given as /proc/self/fd/N of O_PATH descriptors, not by
// path: overlayfs prints them in /proc/PID/mountinfo as given, and every
// process that can see the mount, a sandboxed shell over the instance
// included, would read the run directory, the instance's path and the
// snapshot's id there.
func (in *overlayInstance) mountOverlay() error {
	opts, closeLayers, err := in.layerOpts()
	if err != nil {
		return err
	}
	defer closeLayers()
	if !in.noMetacopy {
		err := unix.Mount("overlay", in.dir, "overlay", mountFlags, opts+",metacopy=on")
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("overlay: mount overlay at %s: %w", in.dir, mountErr(err))
		}
		in.noMetacopy = true
	}
	if err := unix.Mount("overlay", in.dir, "overlay", mountFlags, opts); err != nil {
		return fmt.Errorf("overlay: mount overlay at %s: %w", in.dir, mountErr(err))
	}
	return nil
}

// layerOpts opens the overlay's layers (O_PATH, close-on-exec) and returns
// the mount options naming them by descriptor, and what closes them once
// mounted.
func (in *overlayInstance) layerOpts() (opts string, closeLayers func(), err error) {
	var fds []int
	closeLayers = func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}
	var b strings.Builder
	for i, l := range []struct{ key, path string }{{"lowerdir", in.lower}, {"upperdir", in.upper}, {"workdir", in.work}} {
		fd, err := unix.Open(l.path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			closeLayers()
			return "", nil, fmt.Errorf("overlay: open %s %s: %w", l.key, l.path, err)
		}
		fds = append(fds, fd)
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, "%s=/proc/self/fd/%d", l.key, fd)
	}
	return b.String(), closeLayers, nil
}

func mountErr(err error) error {
	switch {
	case errors.Is(err, unix.EPERM):
		return fmt.Errorf("%w: mount not permitted (%v): needs CAP_SYS_ADMIN in the initial user namespace", ErrUnavailable, err)
	case errors.Is(err, unix.ENODEV):
		return fmt.Errorf("%w: file system not supported by this kernel (%v): modprobe overlay", ErrUnavailable, err)
	}
	return err
}

// unmount unmounts p; a busy mount (a process has its cwd or a file open
// there) is detached instead: it disappears from the tree now and is freed
// when its last user goes.
func unmount(p string) error {
	err := unix.Unmount(p, 0)
	if errors.Is(err, unix.EBUSY) {
		err = unix.Unmount(p, unix.MNT_DETACH)
	}
	if err != nil {
		return fmt.Errorf("overlay: unmount %s: %w", p, err)
	}
	return nil
}

func (in *overlayInstance) Reset(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return fmt.Errorf("overlay: reset: %w", ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if in.ovlUp {
		if err := unmount(in.dir); err != nil {
			return err
		}
		in.ovlUp = false
	}
	switch in.mode {
	default: // ResetClear
		if !in.tmpfsUp {
			if err := in.mountTmpfs(); err != nil {
				return err
			}
			in.tmpfsUp = true
		} else {
			if err := os.RemoveAll(in.upper); err != nil {
				return fmt.Errorf("overlay: reset: %w", err)
			}
			if err := os.RemoveAll(in.work); err != nil {
				return fmt.Errorf("overlay: reset: %w", err)
			}
			if err := in.makeUpper(); err != nil {
				if !errors.Is(err, unix.ENOSPC) {
					return err
				}
				// An overlay detached lazily (unmount's EBUSY fallback)
				// can hold the removed files' inodes a while: start the
				// tmpfs afresh, as ResetRemount does.
				if err := unmount(in.rw); err != nil {
					return err
				}
				in.tmpfsUp = false
				if err := in.mountTmpfs(); err != nil {
					return err
				}
				in.tmpfsUp = true
			}
		}
	case ResetRemount:
		if in.tmpfsUp {
			if err := unmount(in.rw); err != nil {
				return err
			}
			in.tmpfsUp = false
		}
		if err := in.mountTmpfs(); err != nil {
			return err
		}
		in.tmpfsUp = true
	}
	if err := in.mountOverlay(); err != nil {
		return err
	}
	in.ovlUp = true
	return nil
}

func (in *overlayInstance) Close(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	if err := in.cleanup(); err != nil {
		return fmt.Errorf("overlay: close: %w", err)
	}
	return nil
}

// cleanup unmounts what is mounted and removes the two directories. It
// never removes a directory that is still a mount point: RemoveAll on a
// mounted overlay would walk lower's content (it would only create
// whiteouts in upper, but it is slow and pointless).
func (in *overlayInstance) cleanup() error {
	var errs []error
	if in.ovlUp || isMountPoint(in.dir) {
		if err := unmount(in.dir); err != nil {
			errs = append(errs, err)
		} else {
			in.ovlUp = false
		}
	}
	if in.tmpfsUp || isMountPoint(in.rw) {
		if err := unmount(in.rw); err != nil {
			errs = append(errs, err)
		} else {
			in.tmpfsUp = false
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	for _, d := range []string{in.dir, in.rw} {
		if err := os.RemoveAll(d); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// isMountPoint reports whether p is on a different device than its parent.
func isMountPoint(p string) bool {
	var a, b unix.Stat_t
	if unix.Lstat(p, &a) != nil || unix.Lstat(filepath.Dir(p), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}
