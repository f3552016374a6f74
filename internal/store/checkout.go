package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/world"
)

// Checkout materialises snapshot id at dst, which must not exist or be an
// empty directory. It builds the tree in a temporary sibling of dst and
// renames it into place, so a failed checkout (a corrupt blob, a cancelled
// ctx) leaves no dst behind. Every blob is verified; a corrupt one fails
// with an error wrapping world.ErrIDMismatch. The root directory gets mode
// 0755; files, directories and symlinks below it get their stored modes.
func (s *Store) Checkout(ctx context.Context, id world.ID, dst string) error {
	unlock, err := s.lock(ctx, false)
	if err != nil {
		return fmt.Errorf("checkout %s: %w", id.Short(), err)
	}
	defer unlock()
	sn, err := s.loadSnapshot(ctx, id)
	if err != nil {
		return fmt.Errorf("checkout: %w", err)
	}
	if err := s.checkoutTree(ctx, sn.Tree, dst); err != nil {
		return fmt.Errorf("checkout %s: %w", id.Short(), err)
	}
	return nil
}

// checkoutTree is Checkout of tree id, with the store locked.
func (s *Store) checkoutTree(ctx context.Context, id world.ID, dst string) (err error) {
	replaceEmpty := false
	switch st, err := os.Lstat(dst); {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return err
	case !st.IsDir():
		return fmt.Errorf("%s exists and is not a directory", dst)
	default:
		ents, err := os.ReadDir(dst)
		if err != nil {
			return err
		}
		if len(ents) > 0 {
			return fmt.Errorf("%s exists and is not empty", dst)
		}
		replaceEmpty = true
	}
	parent := filepath.Dir(filepath.Clean(dst))
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dst)+".checkout-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			makeWritable(tmp)
			os.RemoveAll(tmp)
		}
	}()
	if err := s.restoreTree(ctx, id, tmp, true); err != nil {
		return err
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if replaceEmpty {
		if err := os.Remove(dst); err != nil {
			return err
		}
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	if err := world.SyncDir(parent); err != nil {
		return err
	}
	return nil
}

// loadTree reads, verifies and validates tree blob id.
func (s *Store) loadTree(ctx context.Context, id world.ID) (*Tree, error) {
	b, err := s.readBlob(ctx, id, TreeBlob)
	if err != nil {
		return nil, fmt.Errorf("tree: %w", err)
	}
	var t Tree
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("tree %s: %w", id.Short(), err)
	}
	if err := t.validate(); err != nil {
		return nil, fmt.Errorf("tree %s: %w", id.Short(), err)
	}
	return &t, nil
}

// restoreTree writes the entries of tree id into the existing directory dir;
// durable fsyncs every file and directory written (Check's scratch restores
// need not).
func (s *Store) restoreTree(ctx context.Context, id world.ID, dir string, durable bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	t, err := s.loadTree(ctx, id)
	if err != nil {
		return err
	}
	for _, n := range t.Entries {
		p := filepath.Join(dir, n.Name)
		switch n.Type {
		case NodeFile:
			if err := s.restoreFile(ctx, n, p, durable); err != nil {
				return err
			}
		case NodeSymlink:
			if err := os.Symlink(n.Target, p); err != nil {
				return err
			}
		case NodeDir:
			if err := os.Mkdir(p, 0o700); err != nil {
				return err
			}
			if err := s.restoreTree(ctx, n.Subtree, p, durable); err != nil {
				return err
			}
			// After the contents: the stored mode may forbid writing.
			if err := os.Chmod(p, fs.FileMode(n.Mode)); err != nil {
				return err
			}
		}
	}
	if !durable {
		return nil
	}
	return world.SyncDir(dir)
}

func (s *Store) restoreFile(ctx context.Context, n Node, path string, durable bool) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	var size int64
	for _, c := range n.Chunks {
		b, err := s.readBlob(ctx, c, DataBlob)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
		size += int64(len(b))
	}
	if size != n.Size {
		return fmt.Errorf("%s: chunks hold %d bytes, tree says %d", path, size, n.Size)
	}
	if err := f.Chmod(fs.FileMode(n.Mode)); err != nil {
		return err
	}
	if durable {
		if err := f.Sync(); err != nil {
			return err
		}
	}
	return f.Close()
}

// makeWritable gives the owner write access to every directory under root,
// so a failed checkout can be removed even if it restored read-only
// directories.
func makeWritable(root string) {
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			os.Chmod(p, 0o700)
		}
		return nil
	})
}
