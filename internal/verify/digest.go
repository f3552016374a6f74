package verify

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/wildawm/wildawm/internal/state"
)

// Digest returns the SHA-256 (hex) of every file under dir by slash-separated
// relative path; a symlink is digested as its target ("symlink:" prefix).
// The counterfactual probe compares digests taken before and after.
func Digest(dir string) (map[string]string, error) {
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256([]byte(target))
			out[rel] = "symlink:" + hex.EncodeToString(sum[:])
		case t.IsRegular():
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			out[rel] = hex.EncodeToString(h.Sum(nil))
		default:
			return fmt.Errorf("%s: unsupported file type %s", rel, t)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("digest %s: %w", dir, err)
	}
	return out, nil
}

// DigestChanges lists what differs between two digests, sorted by path:
// "added PATH", "changed PATH", "removed PATH". Empty means unchanged.
func DigestChanges(before, after map[string]string) []string {
	var out []string
	for _, p := range slices.Sorted(mapKeys(before, after)) {
		b, inB := before[p]
		a, inA := after[p]
		switch {
		case !inB:
			out = append(out, "added "+p)
		case !inA:
			out = append(out, "removed "+p)
		case a != b:
			out = append(out, "changed "+p)
		}
	}
	return out
}

func mapKeys(ms ...map[string]string) func(func(string) bool) {
	return func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, m := range ms {
			for k := range m {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}
}

// CopyDir copies the directory tree src to dst, which must not exist: files
// with their modes, directories and symlinks.
func CopyDir(ctx context.Context, src, dst string) error {
	if err := state.Copy(ctx, src, dst); err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	return nil
}
