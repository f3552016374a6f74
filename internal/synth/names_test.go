package synth_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/world"
)

// TestResumeRefusesAPathID edits an accepted persona's id into a path
// ("../../etc", in its bible or in personas.json) and resumes the run: the
// persona stage refuses with an error naming the file, the field and the
// rule, and nothing is written, in the run or outside it.
func TestResumeRefusesAPathID(t *testing.T) {
	ctx := context.Background()
	days := func(int) int { return 2 }
	for _, c := range []struct{ name, file, field string }{
		{"bible", "bible.json", "field id"},
		{"verdicts", "personas.json", "field verdicts[0].id"},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "a", "run")
			r := openRun(t, dir, false)
			ps, _, err := r.Personas(ctx, 1, days, "")
			if err != nil {
				t.Fatal(err)
			}
			id := ps[0].ID
			path := filepath.Join(dir, "personas", id, "bible.json")
			if c.file == "personas.json" {
				path = filepath.Join(dir, "personas.json")
			}
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := bytes.Replace(b, []byte(`"id": "`+id+`"`), []byte(`"id": "../../etc"`), 1)
			if bytes.Equal(bad, b) {
				t.Fatalf("no id %q in %s", id, path)
			}
			if err := os.WriteFile(path, bad, 0o644); err != nil {
				t.Fatal(err)
			}
			r2 := openRun(t, dir, false)
			before := listTree(t, root)
			_, _, err = r2.Personas(ctx, 1, days, "")
			var ne *world.NameError
			if !errors.As(err, &ne) {
				t.Fatalf("resume with id ../../etc: %v, want a *world.NameError", err)
			}
			for _, want := range []string{c.file, c.field, "../../etc", "lower-case"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if after := listTree(t, root); after != before {
				t.Errorf("the refused resume changed files:\nbefore:%s\nafter:%s", before, after)
			}
		})
	}
}

// listTree lists every path below root, one a line.
func listTree(t *testing.T, root string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if d != nil && d.Name() == "catalog" && d.Type()&os.ModeSymlink != 0 {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		b.WriteString("\n" + rel)
		return nil
	})
	return b.String()
}

// TestMisplacedBible: a bible whose id is a valid name but not its
// directory's is refused too (it would grow another persona's world).
func TestMisplacedBible(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "run")
	r := openRun(t, dir, false)
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 2 }, "")
	if err != nil {
		t.Fatal(err)
	}
	id := ps[0].ID
	path := filepath.Join(dir, "personas", id, "bible.json")
	b, _ := os.ReadFile(path)
	if err := os.WriteFile(path, bytes.Replace(b, []byte(`"id": "`+id+`"`), []byte(`"id": "someone-else"`), 1), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := r.LoadPersona(id); !errors.Is(err, synth.ErrMisplacedBible) || !strings.Contains(err.Error(), path) {
		t.Fatalf("LoadPersona of a misplaced bible: %v, want ErrMisplacedBible naming %s", err, path)
	}
	if _, err := r.LoadPersona("../x"); err == nil {
		t.Fatal("LoadPersona(\"../x\"): no error")
	}
}
