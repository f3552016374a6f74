package judge

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/state"
)

func TestReplayJudge(t *testing.T) {
	base := []string{
		`CREATE TABLE cart (id INTEGER PRIMARY KEY, sku TEXT NOT NULL UNIQUE, qty INTEGER)`,
		`CREATE TABLE notes (id INTEGER PRIMARY KEY, ext TEXT NOT NULL UNIQUE, body TEXT)`,
		`INSERT INTO notes VALUES (1, 'n1', 'keep me')`,
	}
	world := func(extra []string, files map[string]string) string {
		return state.MakeTestWorld(t, t.TempDir(), state.TestWorld{SQL: map[string][]string{"shop": append(append([]string{}, base...), extra...)}, Files: files})
	}
	w0 := world(nil, map[string]string{"keep.txt": "k"})
	ref := world([]string{`INSERT INTO cart VALUES (1, 'RG8-1001', 2)`, `UPDATE notes SET body = 'keep me; see RG8-1001' WHERE ext = 'n1'`}, map[string]string{"keep.txt": "k", "note.md": "Ordered 2 x RG8-1001\n"})
	j := &ReplayJudge{W0: w0, Ref: ref}
	upd := `UPDATE notes SET body = 'RG8-1001' WHERE ext = 'n1'`
	cases := []struct {
		name  string
		sql   []string
		files map[string]string
		want  gate.Verdict
	}{
		{"same changes", []string{`INSERT INTO cart VALUES (5, 'RG8-1001', 2)`, `UPDATE notes SET body = 'RG8-1001 noted' WHERE ext = 'n1'`}, map[string]string{"keep.txt": "k", "note.md": "done: 2 x RG8-1001"}, gate.Completed},
		{"a change left out", []string{`INSERT INTO cart VALUES (5, 'RG8-1001', 2)`}, map[string]string{"keep.txt": "k", "note.md": "done: 2 x RG8-1001"}, gate.Failed},
		{"wrong quantity", []string{`INSERT INTO cart VALUES (1, 'RG8-1001', 3)`, upd}, map[string]string{"keep.txt": "k", "note.md": "Ordered 2 x RG8-1001"}, gate.Failed},
		{"extra row", []string{upd, `INSERT INTO cart VALUES (1, 'RG8-1001', 2)`, `INSERT INTO cart VALUES (2, 'RG8-1002', 1)`}, map[string]string{"keep.txt": "k", "note.md": "Ordered 2 x RG8-1001"}, gate.Failed},
		{"deleted a row", []string{`INSERT INTO cart VALUES (1, 'RG8-1001', 2)`, `DELETE FROM notes`}, map[string]string{"keep.txt": "k", "note.md": "Ordered 2 x RG8-1001"}, gate.Failed},
		{"deleted a file", []string{`INSERT INTO cart VALUES (1, 'RG8-1001', 2)`, upd}, map[string]string{"note.md": "Ordered 2 x RG8-1001"}, gate.Failed},
		{"note lacks the SKU", []string{`INSERT INTO cart VALUES (1, 'RG8-1001', 2)`, upd}, map[string]string{"keep.txt": "k", "note.md": "Ordered 2"}, gate.Failed},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ev, err := j.Judge(context.Background(), world(c.sql, c.files))
			if err != nil || got != c.want {
				t.Fatalf("verdict %s, want %s: %v %v", got, c.want, err, ev)
			}
		})
	}
	t.Run("symlinked note", func(t *testing.T) {
		dir := world([]string{`INSERT INTO cart VALUES (1, 'RG8-1001', 2)`}, map[string]string{"keep.txt": "k"})
		if err := os.Symlink(filepath.Join(ref, "home", "note.md"), filepath.Join(dir, "home", "note.md")); err != nil {
			t.Fatal(err)
		}
		if got, ev, err := j.Judge(context.Background(), dir); err != nil || got != gate.Failed {
			t.Fatalf("a note symlinked to the reference's passed: %s %v %v", got, ev, err)
		}
	})
}
