package attack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/scratch"
	"github.com/wildawm/wildawm/internal/site/calc"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/web"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/world"
)

// hygieneAttacks are what a careless user or a crash leaves for the next
// start: a killed predecessor's mounts, an edited file whose id is a path,
// a form sent twice.
func hygieneAttacks(f *fixture) []attack {
	return []attack{
		{
			name: "mounts left by a killed predecessor", category: "hygiene",
			action:  "leave a dead process's work root (a PID beyond pid_max, no lock) holding two stacked tmpfs mounts, beside a live root of this process with a mount; start as every long-lived command does (scratch.Claim)",
			contain: "the dead root's mounts are unmounted and the root removed; the live root and its mount stay",
			try: func(ctx context.Context, f *fixture) (string, error) {
				parent, err := os.MkdirTemp(f.runDir, "hygiene-")
				if err != nil {
					return "", err
				}
				defer os.RemoveAll(parent)
				const prefix = "attack-"
				live, _, err := scratch.Claim(parent, prefix)
				if err != nil {
					return "", err
				}
				liveMount := filepath.Join(live.Dir(), "i1")
				dead := filepath.Join(parent, prefix+"999999999-killed")
				inst := filepath.Join(dead, "instances", "i1")
				var mounted []string
				defer func() {
					for _, m := range append([]string{liveMount}, mounted...) {
						unix.Unmount(m, unix.MNT_DETACH)
					}
					live.Release()
				}()
				for _, d := range []string{liveMount, inst, filepath.Join(inst, "below")} {
					if err := os.MkdirAll(d, 0o755); err != nil {
						return "", err
					}
					if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=1m"); err != nil {
						return "", err
					}
					if d != liveMount {
						mounted = append(mounted, d)
					}
				}
				mine, _, err := scratch.Claim(parent, prefix)
				if err != nil {
					return "", err
				}
				defer mine.Release()
				if m, _ := scratch.MountsUnder(dead); len(m) > 0 {
					return "", fmt.Errorf("%d mounts left under the dead root: %v", len(m), m)
				}
				if _, err := os.Stat(dead); !errors.Is(err, os.ErrNotExist) {
					return "", fmt.Errorf("the dead root is still there: %v", err)
				}
				if m, _ := scratch.MountsUnder(live.Dir()); len(m) != 1 {
					return "", fmt.Errorf("the live root has %d mounts, want its 1", len(m))
				}
				return "the dead root's 2 mounts unmounted and the root removed; the live root's mount kept", nil
			},
		},
		{
			name: "a persona bible whose id is a path", category: "hygiene",
			action:  "grow a persona, edit its bible.json's id to \"../../etc\", resume the run",
			contain: "the resume refuses with a *world.NameError naming the file and the field; nothing is written in the run or beside it",
			try: func(ctx context.Context, f *fixture) (string, error) {
				root, err := os.MkdirTemp(f.runDir, "bible-")
				if err != nil {
					return "", err
				}
				defer os.RemoveAll(root)
				dir := filepath.Join(root, "a", "run")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return "", err
				}
				if err := os.Symlink(f.p.Env.CatalogDir, filepath.Join(dir, "catalog")); err != nil {
					return "", err
				}
				days := func(int) int { return 1 }
				personas := func() ([]string, error) {
					r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: dir, Seed: 5})
					if err != nil {
						return nil, err
					}
					defer closeRun()
					ps, _, err := r.Personas(ctx, 1, days, "")
					var ids []string
					for _, p := range ps {
						ids = append(ids, p.ID)
					}
					return ids, err
				}
				ids, err := personas()
				if err != nil || len(ids) != 1 {
					return "", fmt.Errorf("grow a persona: %v %v", ids, err)
				}
				path := filepath.Join(dir, "personas", ids[0], "bible.json")
				b, err := os.ReadFile(path)
				if err != nil {
					return "", err
				}
				bad := bytes.Replace(b, []byte(`"id": "`+ids[0]+`"`), []byte(`"id": "../../etc"`), 1)
				if bytes.Equal(bad, b) {
					return "", fmt.Errorf("no id %q in %s", ids[0], path)
				}
				if err := os.WriteFile(path, bad, 0o644); err != nil {
					return "", err
				}
				before := listTree(root)
				_, err = personas()
				var ne *world.NameError
				if !errors.As(err, &ne) || !strings.Contains(err.Error(), "bible.json") || !strings.Contains(err.Error(), "field id") {
					return "", fmt.Errorf("resume with id ../../etc: %v, want a *world.NameError naming bible.json and field id", err)
				}
				if after := listTree(root); after != before {
					return "", fmt.Errorf("the refused resume changed files:\nbefore:%s\nafter:%s", before, after)
				}
				return "refused with a *world.NameError naming personas/ID/bible.json, field id and the rule; nothing written", nil
			},
		},
		{
			name: "the same calculation kept twice", category: "hygiene",
			action:  "on the calc site over a world with the schema synthesis gives it (its natural key), keep one calculation twice, as a double click does",
			contain: "the second is refused with a 4xx that says why and changes nothing; never a 500",
			try: func(ctx context.Context, f *fixture) (string, error) {
				dir := kit.MakeTestWorld(f.tb, filepath.Join(f.tb.TempDir(), "calc-world"), calc.Spec())
				s, err := kit.New(calc.Spec(), kit.Options{WorldDir: dir, CatalogDir: f.p.Env.CatalogDir})
				if err != nil {
					return "", err
				}
				defer s.Close()
				keep := func() error {
					return s.Do(ctx, "keep", kit.TestUser, "", map[string]string{"query": "12.5 km in mi"}, "2026-01-05 09:30:00")
				}
				if err := keep(); err != nil {
					return "", fmt.Errorf("the first keep: %w", err)
				}
				before, err := state.Hash(ctx, dir)
				if err != nil {
					return "", err
				}
				err = keep()
				var we *web.Error
				if !errors.As(err, &we) || we.Status < 400 || we.Status >= 500 {
					return "", fmt.Errorf("the second keep: %v, want a 4xx that says why", err)
				}
				if after, _ := state.Hash(ctx, dir); after != before {
					return "", errors.New("the refused keep changed the world")
				}
				return fmt.Sprintf("refused with %d: %s", we.Status, we.Error()), nil
			},
		},
	}
}

// listTree lists every path below root with its size and mode, one a line
// (the catalog link is not followed).
func listTree(root string) string {
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			fmt.Fprintf(&b, "\n%s: %v", p, err)
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		fi, _ := d.Info()
		if fi != nil {
			fmt.Fprintf(&b, "\n%s %v %d", rel, fi.Mode(), fi.Size())
		}
		return nil
	})
	return b.String()
}
