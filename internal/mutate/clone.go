package mutate

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wildawm/wildawm/internal/state"
)

// cloneWorld makes dst a private copy of the world at src. The copy's
// directories are opened to every uid (0755) so a sandboxed runner reaches
// it; its files keep their modes.
func cloneWorld(ctx context.Context, src, dst string) error {
	if err := state.Copy(ctx, src, dst); err != nil {
		return err
	}
	return os.Chmod(dst, 0o755)
}

// unshare makes sure writing p cannot write another file: a file with
// other hard links is replaced by a copy of its own.
func unshare(p string) error {
	fi, err := os.Lstat(p)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || st.Nlink <= 1 {
		return nil
	}
	tmp := p + ".mutate-tmp"
	if err := copyFile(p, tmp); err != nil {
		return err
	}
	return os.Rename(tmp, p)
}

// copyFile copies the regular file src to dst (created, with src's mode).
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	fi, err := in.Stat()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fi.Mode().Perm())
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// restoreFile makes dst what src is: a copy of the regular file, the
// same symlink, or absent. A directory at src is left alone (no mutation
// writes one).
func restoreFile(src, dst string) error {
	fi, statErr := os.Lstat(src)
	if statErr != nil && !errors.Is(statErr, fs.ErrNotExist) {
		return statErr
	}
	if statErr == nil && fi.IsDir() {
		return nil
	}
	if err := os.Remove(dst); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	switch {
	case statErr != nil:
		return nil // src does not exist
	case fi.Mode().IsRegular():
		return copyFile(src, dst)
	case fi.Mode().Type() == fs.ModeSymlink:
		target, err := os.Readlink(src)
		if err != nil {
			return err
		}
		return os.Symlink(target, dst)
	}
	return fmt.Errorf("%s: neither a file nor a symlink", src)
}

// hasSymlink reports whether the tree at dir holds a symlink; a missing
// dir holds none.
func hasSymlink(dir string) (bool, error) {
	found := false
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			found = true
			return filepath.SkipAll
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return found, err
}
