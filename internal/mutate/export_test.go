package mutate

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckFresh runs Check the way it ran before issue 15: every mutation on
// a fresh copy of W_ref, every criterion computed.
func CheckFresh(ctx context.Context, in Input) (*Result, error) {
	in.fresh = true
	return Check(ctx, in)
}

// CheckUndone runs Check holding the working copy to equal W_ref after
// every mutation is undone.
func CheckUndone(ctx context.Context, in Input) (*Result, error) {
	in.undone = func(dir string) error { return sameTree(in.Solved, dir) }
	return Check(ctx, in)
}

// CloneWorld is cloneWorld, for the benchmarks.
var CloneWorld = cloneWorld

// sameTree reports how the trees at a and b differ: their paths, types,
// modes, file contents and symlink targets.
func sameTree(a, b string) error {
	ta, err := tree(a)
	if err != nil {
		return err
	}
	tb, err := tree(b)
	if err != nil {
		return err
	}
	for p, v := range ta {
		if w, ok := tb[p]; !ok {
			return fmt.Errorf("%s: missing from %s", p, b)
		} else if !bytes.Equal(v, w) {
			return fmt.Errorf("%s differs between %s and %s", p, a, b)
		}
	}
	for p := range tb {
		if _, ok := ta[p]; !ok {
			return fmt.Errorf("%s: not in %s", p, a)
		}
	}
	return nil
}

func tree(root string) (map[string][]byte, error) {
	out := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := []byte(fi.Mode().String() + "\n")
		switch {
		case rel == ".":
			v = nil // the copy's root is opened to every uid
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v = append(v, b...)
		case fi.Mode().Type() == fs.ModeSymlink:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			v = append(v, t...)
		}
		out[rel] = v
		return nil
	})
	return out, err
}
