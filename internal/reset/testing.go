package reset

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/world"
)

// FixtureOptions shape the synthetic world WriteFixture builds; zero fields
// mean the defaults (about 15 MiB: 20 databases of 3000 rows, 60 home files
// of which 8 are binaries of 100 KiB to 1 MiB).
type FixtureOptions struct {
	DBs       int    // default 20
	Rows      int    // per database; default 3000
	HomeFiles int    // default 60, binaries included
	Binaries  int    // default 8
	Seed      uint64 // default 1
}

// WriteFixture writes a synthetic, world-shaped directory at dir (which must
// not exist): manifest.json, accounts.json, db/NAME.sqlite and home/ with
// nested text files, binaries and a symlink. The same options give the same
// bytes, except inside the SQLite files' headers.
func WriteFixture(ctx context.Context, dir string, opts *FixtureOptions) error {
	var o FixtureOptions
	if opts != nil {
		o = *opts
	}
	o.DBs = orDefault(o.DBs, 20)
	o.Rows = orDefault(o.Rows, 3000)
	o.HomeFiles = orDefault(o.HomeFiles, 60)
	o.Binaries = min(orDefault(o.Binaries, 8), o.HomeFiles)
	rng := rand.New(rand.NewPCG(orDefault(o.Seed, 1), 2))

	for _, d := range []string{dir, filepath.Join(dir, world.DBDir), filepath.Join(dir, world.HomeDir)} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
	}
	m := &world.Manifest{Version: world.ManifestVersion, Persona: "fixture", Day: 3, Clock: "2026-03-04T09:00:00Z"}
	if err := os.WriteFile(filepath.Join(dir, world.ManifestFile), m.Encode(), 0o644); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, world.AccountsFile), []byte("[]\n"), 0o644); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	for i := range o.DBs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := writeFixtureDB(ctx, world.DBPath(dir, fmt.Sprintf("site%02d", i)), o.Rows, rng); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
	}
	subdirs := []string{"", "docs", "docs/2026", "mail", "projects/alpha", "projects/beta/src", ".config/app"}
	for i := range o.HomeFiles {
		sub := subdirs[i%len(subdirs)]
		d := filepath.Join(dir, world.HomeDir, filepath.FromSlash(sub))
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		var (
			name string
			b    []byte
			mode fs.FileMode = 0o644
		)
		if i < o.Binaries {
			name = fmt.Sprintf("blob%02d.bin", i)
			b = make([]byte, 100<<10+rng.IntN(924<<10))
			for j := range b {
				b[j] = byte(rng.Uint32())
			}
		} else {
			name = fmt.Sprintf("note%02d.md", i)
			var buf bytes.Buffer
			for l := range 20 + rng.IntN(200) {
				fmt.Fprintf(&buf, "line %d of note %d: %x\n", l, i, rng.Uint64())
			}
			b = buf.Bytes()
			if i%10 == 9 {
				name, mode = fmt.Sprintf("script%02d.sh", i), 0o755
			}
		}
		if err := os.WriteFile(filepath.Join(d, name), b, mode); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
		if err := os.Chmod(filepath.Join(d, name), mode); err != nil {
			return fmt.Errorf("fixture: %w", err)
		}
	}
	if err := os.Symlink("docs/2026", filepath.Join(dir, world.HomeDir, "current")); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	if err := os.Mkdir(filepath.Join(dir, world.HomeDir, "empty"), 0o750); err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	return nil
}

func orDefault[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

func writeFixtureDB(ctx context.Context, p string, rows int, rng *rand.Rand) error {
	db, err := sql.Open("sqlite", p)
	if err != nil {
		return err
	}
	defer db.Close()
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.ExecContext(ctx, `CREATE TABLE items (id INTEGER PRIMARY KEY, title TEXT NOT NULL, body TEXT NOT NULL, price INTEGER NOT NULL);
		CREATE INDEX items_title ON items(title)`); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `INSERT INTO items (title, body, price) VALUES (?, ?, ?)`)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range rows {
		body := fmt.Sprintf("%x%x%x%x", rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64())
		if _, err := st.ExecContext(ctx, fmt.Sprintf("item %d %x", i, rng.Uint32()), body+body, rng.IntN(100000)); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	return db.Close()
}

// HashTree returns a digest of everything Diff compares under root: every
// path, type, permission bits, symlink target and file content.
func HashTree(root string) (string, error) {
	h := sha256.New()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		e, err := treeEntry(root, p, d)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%q %v %q %d\n", e.rel, e.mode, e.target, len(e.data))
		h.Write(e.data)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("hash tree: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Diff returns nil when the trees at a and b hold the same paths, types,
// permission bits, symlink targets and file bytes, and otherwise an error
// naming the first difference. Owners and times are not compared.
func Diff(a, b string) error {
	ea, err := treeEntries(a)
	if err != nil {
		return err
	}
	eb, err := treeEntries(b)
	if err != nil {
		return err
	}
	for i := range max(len(ea), len(eb)) {
		switch {
		case i >= len(ea):
			return fmt.Errorf("diff: %s only in %s", eb[i].rel, b)
		case i >= len(eb):
			return fmt.Errorf("diff: %s only in %s", ea[i].rel, a)
		case ea[i].rel != eb[i].rel:
			return fmt.Errorf("diff: %s in %s where %s has %s", ea[i].rel, a, b, eb[i].rel)
		case ea[i].mode != eb[i].mode:
			return fmt.Errorf("diff: %s: mode %v in %s, %v in %s", ea[i].rel, ea[i].mode, a, eb[i].mode, b)
		case ea[i].target != eb[i].target:
			return fmt.Errorf("diff: %s: symlink to %q in %s, %q in %s", ea[i].rel, ea[i].target, a, eb[i].target, b)
		case !bytes.Equal(ea[i].data, eb[i].data):
			return fmt.Errorf("diff: %s: content differs (%d bytes in %s, %d in %s)", ea[i].rel, len(ea[i].data), a, len(eb[i].data), b)
		}
	}
	return nil
}

type entry struct {
	rel    string
	mode   fs.FileMode
	target string
	data   []byte
}

func treeEntries(root string) ([]entry, error) {
	var es []entry
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		e, err := treeEntry(root, p, d)
		es = append(es, e)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	return es, nil
}

func treeEntry(root, p string, d fs.DirEntry) (entry, error) {
	rel, err := filepath.Rel(root, p)
	if err != nil {
		return entry{}, err
	}
	info, err := os.Lstat(p) // root may be a symlink-free dir; Lstat for the rest
	if err != nil {
		return entry{}, err
	}
	e := entry{rel: filepath.ToSlash(rel), mode: info.Mode()}
	switch {
	case info.Mode().IsRegular():
		f, err := os.Open(p)
		if err != nil {
			return e, err
		}
		defer f.Close()
		e.data, err = io.ReadAll(f)
		return e, err
	case info.Mode()&fs.ModeSymlink != 0:
		e.target, err = os.Readlink(p)
		return e, err
	}
	return e, nil
}
