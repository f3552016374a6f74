package attack

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// namesDir is the directory of A's home the names attacks fill (and empty
// after).
const namesDir = "names-attack"

// namesAttacks: an agent names its files so that its final world cannot be
// restored (two names stored as one) or restores to another hash (a name
// stored renamed), or so that a diff's lines lie. Every name a Linux file
// can hold must round-trip through snapshot, store, checkout, hash, diff and
// store check.
func namesAttacks(f *fixture) []attack {
	return []attack{
		{
			name: "invalid-utf8-siblings", category: "names",
			action:  "create home files x\\xff and x\\xfe (names differing only in invalid UTF-8), then snapshot the world into a store, check it out and check the store",
			contain: "both stored apart: the checkout holds both names and hashes as recorded, store check (restore and hash) is clean",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return namesRoundTrip(ctx, f, map[string]string{"x\xff": "one", "x\xfe": "two"})
			},
		},
		{
			name: "invalid-utf8-name", category: "names",
			action:  "create one home file whose name is not UTF-8 in a directory whose name is not either, and a symlink whose target is not",
			contain: "stored exactly: the checkout's hash equals the recorded one, nothing renamed",
			try: func(ctx context.Context, f *fixture) (string, error) {
				return namesRoundTrip(ctx, f, map[string]string{"d\xc3/f\xe9.txt": "data", "l\xfe": "->t\xff"})
			},
		},
		{
			name: "nasty-names", category: "names",
			action:  "create a file for every name of world.NastyNames (newlines, backslashes, quotes, control characters, leading dashes, bidi overrides, 255 bytes of 0xff, U+FFFD beside 0xff)",
			contain: "every name round-trips through snapshot, checkout, hash, diff and store check",
			try: func(ctx context.Context, f *fixture) (string, error) {
				files := map[string]string{}
				for _, n := range world.NastyNames() {
					files[n] = n
				}
				return namesRoundTrip(ctx, f, files)
			},
		},
		{
			name: "diff-forged-line", category: "names",
			action:  "name a home file \"x\\nfile - notes (file, 3 bytes)\" so that the diff's text shows a deletion that did not happen",
			contain: "the diff's text has one line for the file, its name quoted; its JSON names it exactly",
			try: func(ctx context.Context, f *fixture) (string, error) {
				forged := "x\nfile - notes (file, 3 bytes)"
				if err := makeNames(ctx, f, map[string]string{forged: "abc"}); err != nil {
					return "", err
				}
				defer cleanNames(ctx, f)
				d, err := state.Compare(ctx, f.lower, f.a.Dir())
				if err != nil {
					return "", fmt.Errorf("diff: %w", err)
				}
				var txt strings.Builder
				if err := d.WriteText(&txt); err != nil {
					return "", err
				}
				if strings.Contains(txt.String(), "\nfile - notes (file, 3 bytes)") {
					return txt.String(), errors.New("the diff's text shows the forged deletion as a line of its own")
				}
				want := namesDir + "/" + forged
				if !slices.ContainsFunc(d.Files, func(c state.FileChange) bool { return c.Path == want && c.Change == state.Added }) {
					return txt.String(), fmt.Errorf("the diff does not list %q as added", want)
				}
				q := world.QuoteName(want)
				return "text line: file + " + q, nil
			},
		},
	}
}

// makeNames creates files (name -> content, or "->target" for a symlink)
// under A's home/namesDir from A's shell, each name made byte by byte.
func makeNames(ctx context.Context, f *fixture, files map[string]string) error {
	var cmd strings.Builder
	fmt.Fprintf(&cmd, "set -e; cd ~; rm -rf %s; mkdir %s; cd %s; ", namesDir, namesDir, namesDir)
	for _, name := range slices.Sorted(maps.Keys(files)) {
		content := files[name]
		// n=$(printf ...X); n=${n%X} keeps a trailing newline.
		fmt.Fprintf(&cmd, "n=$(printf '%sX'); n=${n%%X}; ", octal(name))
		if strings.Contains(name, "/") {
			cmd.WriteString("mkdir -p -- \"$(dirname -- \"$n\")\"; ")
		}
		if target, ok := strings.CutPrefix(content, "->"); ok {
			fmt.Fprintf(&cmd, "t=$(printf '%sX'); ln -s -- \"${t%%X}\" \"$n\"; ", octal(target))
		} else {
			fmt.Fprintf(&cmd, "printf '%s' > \"$n\"; ", octal(content))
		}
	}
	cmd.WriteString("true")
	res, err := run(ctx, f.a, cmd.String())
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("making the names failed: exit %d: %s", res.ExitCode, lastLine(res.Stderr))
	}
	return nil
}

func cleanNames(ctx context.Context, f *fixture) {
	run(ctx, f.a, "rm -rf ~/"+namesDir)
}

// octal is s as a printf format of octal escapes, byte by byte.
func octal(s string) string {
	var b strings.Builder
	for i := range len(s) {
		fmt.Fprintf(&b, "\\%03o", s[i])
	}
	return b.String()
}

// namesRoundTrip makes files in A's home, snapshots A's world into a store
// of its own (the fixture's must not change), checks the snapshot out and
// requires: every name back exactly, the checkout's hash the recorded one,
// an empty diff between A and the checkout, and a clean store check that
// restored and hashed the snapshot.
func namesRoundTrip(ctx context.Context, f *fixture, files map[string]string) (string, error) {
	if err := makeNames(ctx, f, files); err != nil {
		return "", err
	}
	defer cleanNames(ctx, f)
	tmp, err := os.MkdirTemp("", "names-attack-*")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	st, err := store.Init(filepath.Join(tmp, "store"))
	if err != nil {
		return "", err
	}
	defer st.Close()
	sum, err := state.Summarize(ctx, f.a.Dir())
	if err != nil {
		return "", fmt.Errorf("hash A: %w", err)
	}
	id, err := st.Snapshot(ctx, f.a.Dir(), store.Meta{Kind: store.KindWorld, WorldHash: sum.Hash, Persona: "attacker"})
	if err != nil {
		// Names are stored, never refused (docs/world.md, "Names").
		return "", fmt.Errorf("snapshot: %w", err)
	}
	co := filepath.Join(tmp, "co")
	if err := st.Checkout(ctx, id, co); err != nil {
		return "", fmt.Errorf("the snapshot succeeded, its checkout fails: %w", err)
	}
	got, err := state.Hash(ctx, co)
	if err != nil {
		return "", fmt.Errorf("hash the checkout: %w", err)
	}
	if got != sum.Hash {
		return "", fmt.Errorf("the checkout hashes to %s, the snapshot recorded %s", got.Short(), sum.Hash.Short())
	}
	for name := range files {
		if _, err := os.Lstat(filepath.Join(co, "home", namesDir, name)); err != nil {
			return "", fmt.Errorf("the checkout lacks %s: %w", world.QuoteName(name), err)
		}
	}
	d, err := state.Compare(ctx, f.a.Dir(), co)
	if err != nil {
		return "", fmt.Errorf("diff A and the checkout: %w", err)
	}
	if !d.Empty() {
		return "", fmt.Errorf("A and its checkout differ: %s", d.First())
	}
	rep, err := st.CheckWith(ctx, &store.CheckOptions{Hash: state.Hash})
	if err != nil {
		return "", fmt.Errorf("store check: %w", err)
	}
	if !rep.OK() || rep.Hashed != 1 {
		return "", fmt.Errorf("store check (hashed %d): %s", rep.Hashed, rep)
	}
	return fmt.Sprintf("%d names stored apart; checkout hash %s = recorded; store check restored and hashed it, clean", len(files), got.Short()), nil
}
