// Package scratch gives a process directories of its own that outlive a
// crash only until the next start: roots, each locked (flock) by the
// process that made it for as long as it lives, and Sweep, which unmounts
// and removes the roots of dead processes and never touches a live one's.
//
// Glossary:
//   - root: a directory PARENT/PREFIX PID-RANDOM made by Claim; the
//     process holds an exclusive flock on it until Release or its death
//     (the kernel drops the lock with the process, whatever killed it).
//   - dead root: one whose lock nobody holds and whose PID runs no
//     process. Everything below it is the dead process's: the overlay and
//     tmpfs mounts of its instances, bind mounts, scratch directories.
//   - Sweep: for every dead root under PARENT with PREFIX, unmount every
//     mount at or below it (read from /proc/self/mountinfo, deepest first,
//     umount2 MNT_DETACH), then remove it; a root with a mount left is kept.
//
// It imports nothing of the project. Linux only (flock, umount2).
package scratch

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// Root is a directory this process owns; Release gives it up.
type Root struct {
	dir string
	mu  sync.Mutex
	f   *os.File // holds the flock
}

// Dir is the root's absolute path.
func (r *Root) Dir() string { return r.dir }

// Report says what a Sweep removed.
type Report struct {
	// Roots is how many dead roots were removed.
	Roots int
	// Mounts is how many mounts below them were unmounted.
	Mounts int
	// Live is how many roots were left alone because their owner lives.
	Live int
}

// Claim sweeps parent's dead roots with prefix (Sweep), then makes a
// fresh root parent/PREFIX PID-RANDOM (mode 0755; parent is created) and
// locks it for this process's life or until Release.
func Claim(parent, prefix string) (*Root, Report, error) {
	rep, err := Sweep(parent, prefix)
	if err != nil {
		return nil, rep, err
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, rep, fmt.Errorf("scratch: claim: %w", err)
	}
	parent, err = canonical(parent)
	if err != nil {
		return nil, rep, fmt.Errorf("scratch: claim: %w", err)
	}
	for range 8 {
		b := make([]byte, 6)
		rand.Read(b)
		dir := filepath.Join(parent, prefix+strconv.Itoa(os.Getpid())+"-"+hex.EncodeToString(b))
		if err := os.Mkdir(dir, 0o755); err != nil {
			if errors.Is(err, os.ErrExist) {
				continue
			}
			return nil, rep, fmt.Errorf("scratch: claim: %w", err)
		}
		if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
			return nil, rep, fmt.Errorf("scratch: claim: %w", err)
		}
		f, err := os.Open(dir)
		if err != nil {
			return nil, rep, fmt.Errorf("scratch: claim: %w", err)
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			continue // a sweep of another process holds it for a moment
		}
		// Between Mkdir and Flock another process's sweep may have taken
		// the empty root for a dead one and removed it: then try again.
		if !sameFile(f, dir) {
			f.Close()
			continue
		}
		return &Root{dir: dir, f: f}, rep, nil
	}
	return nil, rep, fmt.Errorf("scratch: claim: could not make a root under %s", parent)
}

// Release unmounts whatever is still mounted below the root, removes it
// and gives up its lock. Calling it again does nothing.
func (r *Root) Release() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil {
		return nil
	}
	_, err := clear(r.dir)
	r.f.Close()
	r.f = nil
	return err
}

// Sweep removes the dead roots under parent whose names start with
// prefix: every mount below each is unmounted, deepest first, then the
// root is removed. A root whose owner lives (its lock is held, or its PID
// runs a process) is left alone. A parent that does not exist holds
// nothing.
func Sweep(parent, prefix string) (Report, error) {
	var rep Report
	if prefix == "" {
		return rep, errors.New("scratch: sweep: an empty prefix would take every directory of " + parent)
	}
	parent, err := canonical(parent)
	if errors.Is(err, os.ErrNotExist) {
		return rep, nil
	}
	if err != nil {
		return rep, fmt.Errorf("scratch: sweep: %w", err)
	}
	ents, err := os.ReadDir(parent)
	if err != nil {
		return rep, fmt.Errorf("scratch: sweep: %w", err)
	}
	var errs []error
	for _, e := range ents {
		name := e.Name()
		if !e.IsDir() || !strings.HasPrefix(name, prefix) {
			continue
		}
		pid, _, ok := strings.Cut(name[len(prefix):], "-")
		n, perr := strconv.Atoi(pid)
		if !ok || perr != nil || n <= 0 {
			continue // not a root
		}
		dir := filepath.Join(parent, name)
		f, err := os.OpenFile(dir, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_DIRECTORY, 0)
		if err != nil {
			continue // gone meanwhile, or not a directory
		}
		if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
			f.Close()
			rep.Live++ // its owner holds it (or another sweep does)
			continue
		}
		if n == os.Getpid() || alive(n) {
			// Unlocked but its PID runs: a root of an older build, or a
			// reused PID. Leave it; a later sweep takes it.
			f.Close()
			rep.Live++
			continue
		}
		mounts, err := clear(dir)
		f.Close()
		rep.Mounts += mounts
		if err != nil {
			errs = append(errs, err)
			continue
		}
		rep.Roots++
	}
	return rep, errors.Join(errs...)
}

// clear unmounts every mount at or below dir (deepest first, detached)
// and removes dir, unless a mount is left. It returns the mounts
// unmounted.
func clear(dir string) (int, error) {
	mps, err := MountsUnder(dir)
	if err != nil {
		return 0, fmt.Errorf("scratch: %w", err)
	}
	n := 0
	var errs []error
	for _, mp := range mps {
		if err := unix.Unmount(mp, unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOENT) {
			errs = append(errs, fmt.Errorf("scratch: unmount %s: %w", mp, err))
			continue
		}
		n++
	}
	if len(errs) > 0 {
		return n, errors.Join(errs...)
	}
	if left, err := MountsUnder(dir); err != nil || len(left) > 0 {
		// Never recurse into a mount: RemoveAll would walk (or empty) a
		// file system that is not the root's.
		return n, fmt.Errorf("scratch: %s still has mounts %v (%v): left in place", dir, left, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		return n, fmt.Errorf("scratch: %w", err)
	}
	return n, nil
}

// MountsUnder lists the mount points at or below dir in this process's
// mount namespace, deepest first (a mount point listed twice, stacked,
// comes twice).
func MountsUnder(dir string) ([]string, error) {
	data, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	dir = filepath.Clean(dir)
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 5 {
			continue
		}
		mp := unescape(f[4])
		if mp == dir || strings.HasPrefix(mp, dir+"/") {
			out = append(out, mp)
		}
	}
	// Deepest first; among equals, the later (stacked on top) first.
	idx := make([]int, len(out))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if d := strings.Count(out[b], "/") - strings.Count(out[a], "/"); d != 0 {
			return d
		}
		return b - a
	})
	sorted := make([]string, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted, nil
}

// unescape decodes mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// canonical is dir absolute with its symbolic links resolved, as
// mountinfo names it.
func canonical(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// sameFile reports whether f is still the directory at path.
func sameFile(f *os.File, path string) bool {
	a, err := f.Stat()
	if err != nil {
		return false
	}
	b, err := os.Lstat(path)
	return err == nil && os.SameFile(a, b)
}

// alive reports whether pid runs a process (a zombie counts as dead).
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	// comm may hold spaces and parentheses: the state follows the last ')'.
	s := string(b)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
