package reset

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"

	"golang.org/x/sys/unix"
)

// A tree is the result of walking lower once. lower never changes, so every
// reset replays the same tree without walking lower again.
type tree struct {
	root  string
	mode  fs.FileMode // of root itself
	dirs  []node      // parents before children
	files []node      // regular files, largest first (balances workers)
	links []node      // symlinks
	bytes int64
}

// A node is one entry of a tree.
type node struct {
	rel    string // OS-separated, relative to the tree root
	mode   fs.FileMode
	size   int64
	target string // symlinks only
}

func scanTree(ctx context.Context, root string) (*tree, error) {
	fi, err := os.Stat(root)
	if err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	t := &tree{root: root, mode: fi.Mode()}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if p == root {
			return nil
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		n := node{rel: rel, mode: info.Mode(), size: info.Size()}
		switch {
		case d.IsDir():
			t.dirs = append(t.dirs, n)
		case d.Type().IsRegular():
			t.files = append(t.files, n)
			t.bytes += n.size
		case d.Type()&fs.ModeSymlink != 0:
			if n.target, err = os.Readlink(p); err != nil {
				return err
			}
			t.links = append(t.links, n)
		default:
			return fmt.Errorf("%s: unsupported file type %v (a world holds only directories, regular files and symlinks)", p, d.Type())
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("scan %s: %w", root, err)
	}
	sort.SliceStable(t.files, func(i, j int) bool { return t.files[i].size > t.files[j].size })
	return t, nil
}

// fileOp places one regular file of a tree into dst.
type fileOp func(src, dst string, n node) error

// materialise recreates t at dst (which must not exist): directories,
// then the regular files through op on workers goroutines, then symlinks,
// then the directories' final modes (deepest first, so read-only
// directories do not block their own filling).
func (t *tree) materialise(ctx context.Context, dst string, workers int, op fileOp) error {
	if err := os.Mkdir(dst, 0o700); err != nil {
		return err
	}
	for _, d := range t.dirs {
		if err := os.Mkdir(filepath.Join(dst, d.rel), 0o700); err != nil {
			return err
		}
	}
	if err := t.eachFile(ctx, dst, workers, op); err != nil {
		return err
	}
	for _, l := range t.links {
		if err := os.Symlink(l.target, filepath.Join(dst, l.rel)); err != nil {
			return err
		}
	}
	for i := len(t.dirs) - 1; i >= 0; i-- {
		d := t.dirs[i]
		if err := chmod(filepath.Join(dst, d.rel), d.mode); err != nil {
			return err
		}
	}
	return chmod(dst, t.mode)
}

func (t *tree) eachFile(ctx context.Context, dst string, workers int, op fileOp) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(t.files))
	if workers <= 1 {
		for _, f := range t.files {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := op(filepath.Join(t.root, f.rel), filepath.Join(dst, f.rel), f); err != nil {
				return err
			}
		}
		return nil
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		next int
		errs []error
	)
	take := func() (node, bool) {
		mu.Lock()
		defer mu.Unlock()
		if next >= len(t.files) || len(errs) > 0 {
			return node{}, false
		}
		next++
		return t.files[next-1], true
	}
	for range workers {
		wg.Go(func() {
			for {
				f, ok := take()
				if !ok {
					return
				}
				err := ctx.Err()
				if err == nil {
					err = op(filepath.Join(t.root, f.rel), filepath.Join(dst, f.rel), f)
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// chmod sets the permission and special bits of a directory or file.
func chmod(p string, mode fs.FileMode) error {
	return os.Chmod(p, mode&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky))
}

// copyFile copies src to the new file dst with mode, using copy_file_range
// (in-kernel, reflinks where the file system can) and falling back to a
// user-space copy.
func copyFile(src, dst string, mode fs.FileMode, size int64) (err error) {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode.Perm())
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	if err := copyData(in, out, size); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	// The umask may have cleared bits of mode (group/other write, special).
	if mode&(0o022|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky) != 0 {
		return out.Chmod(mode & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky))
	}
	return nil
}

func copyData(in, out *os.File, size int64) error {
	inFD, outFD := int(in.Fd()), int(out.Fd())
	var done int64
	for done < size {
		n, err := unix.CopyFileRange(inFD, nil, outFD, nil, int(min(size-done, 1<<30)), 0)
		if err != nil {
			if done == 0 && (errors.Is(err, unix.EXDEV) || errors.Is(err, unix.ENOSYS) ||
				errors.Is(err, unix.EINVAL) || errors.Is(err, unix.EOPNOTSUPP)) {
				// Hide ReadFrom so io.Copy does not retry copy_file_range.
				_, err = io.Copy(struct{ io.Writer }{out}, in)
			}
			return err
		}
		if n == 0 { // lower shrank under us: it must not change, but do not spin
			return fmt.Errorf("short copy: %d of %d bytes", done, size)
		}
		done += int64(n)
	}
	return nil
}
