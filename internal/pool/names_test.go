package pool

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestLoadPoolRefusesPathNames: a pool.json whose entry names a directory
// or id outside the tasks directory ("../../etc") is refused on load,
// naming the file, the field and the rule, before any export or serve
// could join it into a path (Export removes and replaces its entries).
func TestLoadPoolRefusesPathNames(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, dir, 4, 0)
	p, err := Build(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ field, set string }{{"dir", "../../etc"}, {"id", "../x"}, {"dir", "a/b"}} {
		q := *p
		q.Tasks = append([]Entry(nil), p.Tasks...)
		if c.field == "dir" {
			q.Tasks[1].Dir = c.set
		} else {
			q.Tasks[1].ID = c.set
		}
		path := filepath.Join(dir, "bad-pool.json")
		if err := q.Save(path); err != nil {
			t.Fatal(err)
		}
		_, err := LoadPool(path)
		var ne *world.NameError
		if !errors.As(err, &ne) {
			t.Fatalf("%s %q: %v, want a *world.NameError", c.field, c.set, err)
		}
		if want := "tasks[1]." + c.field; !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), path) {
			t.Errorf("%s %q: %q does not name %s and the file", c.field, c.set, err, want)
		}
		os.Remove(path)
	}
}
