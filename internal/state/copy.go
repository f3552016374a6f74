package state

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/world"
)

// Copy copies the world at src to dst, which must not exist: files with
// their modes, directories and symlinks. It is the plain-copy way to make a
// scratch world; internal/reset has the fast ways. It reads src as the hash
// does (world.Walk: no symlink followed) but refuses what the hash would
// leave out, naming the entry: a copy is complete or fails.
func Copy(ctx context.Context, src, dst string) error {
	if _, err := os.Lstat(dst); err == nil {
		return fmt.Errorf("copy world: %s already exists", dst)
	}
	fi, err := os.Stat(src)
	if err != nil {
		return fmt.Errorf("copy world: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("copy world: %s is not a directory", src)
	}
	if err := os.Mkdir(dst, fi.Mode().Perm()); err != nil {
		return fmt.Errorf("copy world: %w", err)
	}
	skipped, err := world.Walk(ctx, src, "", func(e *world.Entry) error {
		target := filepath.Join(dst, filepath.FromSlash(e.Path))
		switch e.Kind {
		case world.EntryDir:
			return os.Mkdir(target, e.Perm)
		case world.EntrySymlink:
			return os.Symlink(e.Target, target)
		case world.EntryFile:
			return copyFile(e, target)
		}
		return nil
	})
	if err == nil {
		err = skipped.Err()
	}
	if err != nil {
		return fmt.Errorf("copy world: %w", err)
	}
	return nil
}

func copyFile(e *world.Entry, dst string) error {
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, e.Perm)
	if err != nil {
		return err
	}
	if err := e.CopyTo(out, nil); err != nil {
		out.Close()
		os.Remove(dst) // read again or skipped
		return err
	}
	return out.Close()
}
