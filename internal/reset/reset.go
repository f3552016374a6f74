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
)

// A Strategy materialises a read-only lower world directory into writable
// instances.
type Strategy interface {
	// Name is a short, stable name ("overlay", "hardlink", "copy", "cp", ...).
	Name() string
	// New creates an instance at dir whose content equals lower. dir must not
	// exist; its parent must. lower is never modified.
	New(ctx context.Context, lower, dir string) (Instance, error)
}

// An Instance is a writable copy of a lower directory.
type Instance interface {
	// Dir is the writable world directory, or "" for a component that
	// materialises no directory (sqlite-deserialize).
	Dir() string
	// Reset discards every change made in the instance since New or the last
	// Reset: afterwards the instance equals lower again.
	Reset(ctx context.Context) error
	// Close removes the instance (and unmounts what it mounted).
	Close(ctx context.Context) error
}

// A LinkBreaker is an Instance whose files may share storage with lower (the
// hardlink farm). BreakLink replaces the file at rel (slash separated,
// relative to Dir) by a private copy so that an in-place write cannot reach
// lower. It is a no-op for files that are already private.
type LinkBreaker interface {
	BreakLink(rel string) error
}

// Sentinel errors callers branch on.
var (
	// ErrUnavailable: the strategy cannot run here (not root, no overlayfs,
	// lower and dir on different file systems). The wrapping error names
	// the reason; callers fall back to another strategy.
	ErrUnavailable = errors.New("strategy unavailable")
	// ErrNotSealed: a lower file that the hardlink strategy would link still
	// has a write permission bit. See Hardlink.Seal.
	ErrNotSealed = errors.New("lower is not sealed read-only")
	// ErrClosed: the instance was closed.
	ErrClosed = errors.New("instance closed")
)

// Writable makes the file rel of inst private to the instance, so that it may
// be written in place, and returns its absolute path. rel is slash separated
// and relative to inst.Dir(). For strategies without shared storage it only
// resolves the path. Every in-place write into an instance should go through
// Writable or OpenWritable: that is what keeps a hardlink farm's lower intact.
func Writable(inst Instance, rel string) (string, error) {
	if inst.Dir() == "" {
		return "", fmt.Errorf("writable %s: instance has no directory", rel)
	}
	clean, err := cleanRel(rel)
	if err != nil {
		return "", err
	}
	if lb, ok := inst.(LinkBreaker); ok {
		if err := lb.BreakLink(clean); err != nil {
			return "", err
		}
	}
	return filepath.Join(inst.Dir(), filepath.FromSlash(clean)), nil
}

// OpenWritable opens the file rel of inst for reading and writing, creating it
// (mode 0644) when absent, after making it private with Writable. A file that
// had no owner write bit gains it: the caller asked to write.
func OpenWritable(inst Instance, rel string) (*os.File, error) {
	p, err := Writable(inst, rel)
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("open writable: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("open writable: %w", err)
	}
	if fi.Mode().Perm()&0o200 == 0 {
		if err := f.Chmod(fi.Mode().Perm() | 0o200); err != nil {
			f.Close()
			return nil, fmt.Errorf("open writable: %w", err)
		}
	}
	return f, nil
}

// cleanRel validates a slash-separated path relative to an instance root.
func cleanRel(rel string) (string, error) {
	switch {
	case rel == "":
		return "", fmt.Errorf("path is empty: give a path relative to the world, e.g. \"home/notes.md\"")
	case strings.ContainsRune(rel, 0), strings.Contains(rel, `\`):
		return "", fmt.Errorf("path %q contains a NUL byte or a backslash", rel)
	case path.IsAbs(rel):
		return "", fmt.Errorf("path %q is absolute: paths are relative to the world", rel)
	}
	clean := path.Clean(rel)
	if clean == "." || clean == ".." || strings.HasPrefix(clean, "../") {
		return "", fmt.Errorf("path %q leaves the world directory", rel)
	}
	return clean, nil
}

// checkNew validates the arguments every Strategy.New receives.
func checkNew(ctx context.Context, lower, dir string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	fi, err := os.Stat(lower)
	if err != nil {
		return fmt.Errorf("lower: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("lower %s is not a directory", lower)
	}
	if _, err := os.Lstat(dir); err == nil {
		return fmt.Errorf("instance dir %s already exists: give a path that does not exist", dir)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("instance dir: %w", err)
	}
	return nil
}
