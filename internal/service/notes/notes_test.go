package notes

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose notes database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{WorldDir: filepath.Dir(filepath.Dir(path)), Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

// TestSynthesis applies god-mode operations to a world without a notes
// database and reads the result through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ops, err := InsertOps(
		Seed{Notebook: "Work", Title: "Q2 plan", Body: "# Q2\n\n- launch", Pinned: true, Links: []string{"docs/q2.md", "https://example.com/okr"}, CreatedAt: at},
		Seed{ExtID: "n-2", Notebook: "Work", Title: "Retro", Body: "Went well; it's fine.", CreatedAt: at, UpdatedAt: at.Add(time.Hour)},
		Seed{Notebook: "Home", Title: "Plumber", CreatedAt: at},
	)
	if err != nil {
		t.Fatal(err)
	}
	link, err := LinkOp("n-2", "docs/retro.md")
	if err != nil {
		t.Fatal(err)
	}
	body := "Went well; it's fine.\nAction: fix CI; 'now' is fine."
	up, err := UpdateOp("n-2", nil, &body, at.Add(2*time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	nb, err := NotebookOp("Archive")
	if err != nil {
		t.Fatal(err)
	}
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z",
		Ops: append(append([]delta.Op{CreateOp(), nb}, ops...), link, up, PinOp("plumber", true))}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst, DBName)))
	books := servicetest.Call[ListNotebooksOut](t, cs, "list_notebooks", nil)
	if want := []NotebookSummary{{"Archive", 0}, {"Home", 1}, {"Work", 2}}; !reflect.DeepEqual(books.Notebooks, want) {
		t.Errorf("notebooks = %+v", books.Notebooks)
	}
	list := servicetest.Call[ListNotesOut](t, cs, "list_notes", nil)
	if got := noteIDs(list.Notes); !slices.Equal(got, []string{"plumber", "q2-plan", "n-2"}) {
		t.Errorf("notes = %v", got)
	}
	retro := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "n-2"})
	if retro.Body != body || retro.UpdatedAt != "2026-03-02 10:00:00" || retro.CreatedAt != "2026-03-02 08:00:00" || !slices.Equal(retro.Links, []string{"docs/retro.md"}) {
		t.Errorf("retro = %+v", retro)
	}
	q2 := servicetest.Call[Note](t, cs, "read_note", map[string]any{"note": "q2-plan"})
	if !q2.Pinned || !slices.Equal(q2.Links, []string{"docs/q2.md", "https://example.com/okr"}) {
		t.Errorf("q2 = %+v", q2)
	}
	// The tools continue from the synthesized state.
	if cr := servicetest.Call[CreateNoteOut](t, cs, "create_note", map[string]any{"notebook": "work", "title": "Q2 plan"}); cr.Note.Note != "q2-plan-2" || cr.CreatedNotebook {
		t.Errorf("create after synthesis = %+v", cr)
	}

	for _, bad := range [][]Seed{
		{{Notebook: "", Title: "T", CreatedAt: at}},
		{{Notebook: "W", Title: "", CreatedAt: at}},
		{{Notebook: "W", Title: "T"}},
		{{Notebook: "W", Title: "T", CreatedAt: at, UpdatedAt: at.Add(-time.Hour)}},
		{{Notebook: "W", Title: "T", CreatedAt: at, Links: []string{"/abs"}}},
		{{Notebook: "W", Title: "T", CreatedAt: at}, {Notebook: "W", Title: "t", CreatedAt: at}},
		{{Notebook: "W", Title: "two\nlines", CreatedAt: at}},
		{{Notebook: "W", Title: "T", Body: "bell \a", CreatedAt: at}},
		{{Notebook: "W", Title: "T", CreatedAt: at, Links: []string{"ftp://files.example/x"}}},
	} {
		if _, err := InsertOps(bad...); err == nil {
			t.Errorf("InsertOps(%+v): no error", bad)
		}
	}
	if _, err := UpdateOp("x", nil, nil, at); err == nil {
		t.Error("UpdateOp without changes: no error")
	}
	empty := " "
	if _, err := UpdateOp("x", &empty, nil, at); err == nil {
		t.Error("UpdateOp with an empty title: no error")
	}
}

// TestSeedOps pins the delta operations of a seed, an update and a pin:
// worlds synthesized from them, and so their hashes, depend on every byte.
func TestSeedOps(t *testing.T) {
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	seed, err := InsertOps(Seed{Notebook: " Work ", Title: " Q2 plan ", Body: "# Q2\n\n- launch\r\n\tx", Pinned: true,
		Links: []string{" docs/q2.md ", "https://example.com/okr"}, CreatedAt: at})
	if err != nil {
		t.Fatal(err)
	}
	title := " New "
	up, err := UpdateOp("n-2", &title, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	got, err := json.Marshal(append(seed, up, PinOp("n-2", true)))
	if err != nil {
		t.Fatal(err)
	}
	want := `[{"op":"db.insert","db":"notes","table":"notebooks","key":{"name":"Work"}},` +
		`{"op":"db.insert","db":"notes","table":"notes","key":{"ext_id":"q2-plan"},"values":{"body":"# Q2\n\n- launch\r\n\tx","created_at":"2026-03-02 08:00:00","notebook_id":{"ref":{"table":"notebooks","key":{"name":"Work"},"column":"id"}},"pinned":1,"title":"Q2 plan","updated_at":"2026-03-02 08:00:00"}},` +
		`{"op":"db.insert","db":"notes","table":"note_links","key":{"note_id":{"ref":{"table":"notes","key":{"ext_id":"q2-plan"},"column":"id"}},"target":"docs/q2.md"}},` +
		`{"op":"db.insert","db":"notes","table":"note_links","key":{"note_id":{"ref":{"table":"notes","key":{"ext_id":"q2-plan"},"column":"id"}},"target":"https://example.com/okr"}},` +
		`{"op":"db.update","db":"notes","table":"notes","key":{"ext_id":"n-2"},"set":{"title":"New","updated_at":"2026-03-02 08:00:00"}},` +
		`{"op":"db.update","db":"notes","table":"notes","key":{"ext_id":"n-2"},"set":{"pinned":1}}]`
	if string(got) != want {
		t.Errorf("delta operations:\n got  %s\n want %s", got, want)
	}
}

// TestLint: every SQL text of the tools and the resource prepares against
// the schema, and the example calls run.
func TestLint(t *testing.T) {
	r, err := engine.Lint(t.Context(), Compiled())
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range r.Problems {
		t.Error(p)
	}
}

func TestTargets(t *testing.T) {
	for _, ok := range []string{"a.md", "docs/plan.md", "My Docs/plan v2.md", "http://example.com", "https://example.com/a#b"} {
		if _, err := checkTarget(ok); err != nil {
			t.Errorf("checkTarget(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{".", "..", "./a", "a/", "/a", "a/./b", "mailto:x@y.z://", "https://exa mple.com", "file:///etc/passwd"} {
		if _, err := checkTarget(bad); err == nil {
			t.Errorf("checkTarget(%q) ok", bad)
		}
	}
}

// The tools' results as the tests read them.
type (
	NotebookSummary struct {
		Notebook string `json:"notebook"`
		Notes    int    `json:"notes"`
	}
	ListNotebooksOut struct {
		Notebooks []NotebookSummary `json:"notebooks"`
	}
	NoteSummary struct {
		Note string `json:"note"`
	}
	ListNotesOut struct {
		Notes []NoteSummary `json:"notes"`
	}
	Note struct {
		Note      string   `json:"note"`
		Body      string   `json:"body"`
		Pinned    bool     `json:"pinned"`
		Links     []string `json:"links"`
		CreatedAt string   `json:"created_at"`
		UpdatedAt string   `json:"updated_at"`
	}
	CreateNoteOut struct {
		Note            Note `json:"note"`
		CreatedNotebook bool `json:"created_notebook"`
	}
)

func noteIDs(ns []NoteSummary) []string {
	ids := make([]string, len(ns))
	for i, n := range ns {
		ids[i] = n.Note
	}
	return ids
}
