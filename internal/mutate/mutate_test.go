package mutate

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

var schema = []string{
	`CREATE TABLE orders (id INTEGER PRIMARY KEY, order_no TEXT NOT NULL, sku TEXT NOT NULL, qty INTEGER NOT NULL, status TEXT NOT NULL)`,
	`CREATE UNIQUE INDEX orders_nk ON orders(order_no)`,
	`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`,
	`INSERT INTO orders (order_no, sku, qty, status) VALUES ('A-1', 'SP-100', 1, 'placed')`,
	`INSERT INTO notes (body) VALUES ('call the shop')`,
}

// testWorlds makes W0 and W_ref under dir: the reference places order A-2
// (3 of SP-200), exports the orders to ~/reports/orders.csv and writes
// ~/summary.txt.
func testWorlds(t *testing.T, dir string) (w0, wref string) {
	t.Helper()
	w0 = state.MakeTestWorld(t, filepath.Join(dir, "w0"), state.TestWorld{SQL: map[string][]string{"x": schema},
		Files: map[string]string{"readme.txt": "hello\n"}})
	wref = state.MakeTestWorld(t, filepath.Join(dir, "wref"), state.TestWorld{
		SQL: map[string][]string{"x": append(slices.Clone(schema), `INSERT INTO orders (order_no, sku, qty, status) VALUES ('A-2', 'SP-200', 3, 'placed')`)},
		Files: map[string]string{
			"readme.txt":         "hello\n",
			"reports/orders.csv": "order_no,sku,qty\nA-1,SP-100,1\nA-2,SP-200,3\n",
			"summary.txt":        "total: 4\nchecked: yes\n",
		}})
	return w0, wref
}

// testCriteria are declarative criteria of every verdict: qty and csv are
// isolated, placed and placed-again always flip together, notes already
// holds in W0, and answer is isolated by a wrong answer.
func testCriteria() []task.Criterion {
	return []task.Criterion{
		{ID: "qty", Kind: task.KindSQL, DB: "x", Query: `SELECT qty FROM orders WHERE order_no = 'A-2'`, Expect: json.RawMessage(`3`)},
		{ID: "placed", Kind: task.KindSQL, DB: "x", Query: `SELECT count(*) FROM orders WHERE status = 'placed'`, Expect: json.RawMessage(`2`)},
		{ID: "placed-again", Kind: task.KindSQL, DB: "x", Query: `SELECT count(*) FROM orders WHERE status = 'placed' AND order_no LIKE 'A-%'`, Expect: json.RawMessage(`2`)},
		{ID: "csv", Kind: task.KindCSV, Path: "reports/orders.csv", Header: []string{"order_no", "sku", "qty"}, Row: -1, Equals: map[string]string{"order_no": "A-2"}},
		{ID: "notes", Kind: task.KindSQL, DB: "x", Query: `SELECT count(*) FROM notes`, Expect: json.RawMessage(`1`)},
		{ID: "answer", Kind: task.KindAnswer, Contains: []string{"SP-200"}},
	}
}

// snapshot maps every path under dir to its mode and content hash.
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		v := fi.Mode().String()
		if d.Type().IsRegular() {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			v += fmt.Sprintf(" %x", sha256.Sum256(b))
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func byID(r *Result) map[string]CriterionResult {
	m := map[string]CriterionResult{}
	for _, c := range r.Criteria {
		m[c.ID] = c
	}
	return m
}

func wantStatus(t *testing.T, r *Result, want map[string]string) {
	t.Helper()
	got := byID(r)
	for id, st := range want {
		if got[id].Status != st {
			t.Errorf("criterion %s: %+v, want %s", id, got[id], st)
		}
	}
}

func TestCheck(t *testing.T) {
	dir := t.TempDir()
	w0, wref := testWorlds(t, dir)
	before0, beforeRef := snapshot(t, w0), snapshot(t, wref)
	tk := task.TestTask(t, testCriteria()...)
	tk.Answer = "I ordered 3 of SP-200."
	r, err := Check(context.Background(), Input{Task: tk, Initial: w0, Solved: wref, Scratch: filepath.Join(dir, "scratch")})
	if err != nil {
		t.Fatal(err)
	}
	wantStatus(t, r, map[string]string{"qty": Isolated, "placed": Entangled, "placed-again": Entangled, "csv": Isolated, "notes": Untargeted, "answer": Isolated})
	got := byID(r)
	if !slices.Equal(got["placed"].Entangled, []string{"placed-again"}) || !slices.Equal(got["placed-again"].Entangled, []string{"placed"}) {
		t.Errorf("placed: %+v; placed-again: %+v", got["placed"], got["placed-again"])
	}
	if !got["notes"].InitialPass {
		t.Errorf("notes passes on W0: %+v", got["notes"])
	}
	if r.Passed || r.CapHit || r.Problem != "" || r.Evaluations == 0 || r.Evaluations > DefaultMaxEvaluations {
		t.Errorf("result %+v", r)
	}
	if !strings.Contains(got["qty"].Mutation, "x.orders") || !strings.Contains(got["answer"].Mutation, "answer") {
		t.Errorf("mutations: qty %q, answer %q", got["qty"].Mutation, got["answer"].Mutation)
	}
	text := strings.Join(r.Evidence, "\n")
	for _, s := range []string{"Criterion placed is entangled with placed-again", "Criterion notes is untargeted", "already passes on the initial world", "Criterion qty is isolated"} {
		if !strings.Contains(text, s) {
			t.Errorf("evidence lacks %q:\n%s", s, text)
		}
	}
	if _, err := json.Marshal(r); err != nil {
		t.Fatal(err)
	}
	if !maps(before0, snapshot(t, w0)) || !maps(beforeRef, snapshot(t, wref)) {
		t.Error("W0 or W_ref changed")
	}
	if left, _ := os.ReadDir(filepath.Join(dir, "scratch")); len(left) != 0 {
		t.Errorf("scratch left behind: %v", left)
	}
	t.Logf("%d candidates, %d evaluations, %d inapplicable\n%s", r.Candidates, r.Evaluations, r.Inapplicable, text)

	// Without the redundant pair and the vacuous criterion, the task passes.
	var kept []task.Criterion
	for _, c := range testCriteria() {
		if c.ID != "placed-again" && c.ID != "notes" {
			kept = append(kept, c)
		}
	}
	tk.Verifier.Criteria = kept
	r, err = Check(context.Background(), Input{Task: tk, Initial: w0, Solved: wref, Scratch: filepath.Join(dir, "scratch")})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Passed {
		t.Errorf("not passed: %s", strings.Join(r.Evidence, "\n"))
	}
}

func maps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestCheckCap(t *testing.T) {
	dir := t.TempDir()
	w0, wref := testWorlds(t, dir)
	tk := task.TestTask(t, testCriteria()...)
	tk.Answer = "I ordered 3 of SP-200."
	r, err := Check(context.Background(), Input{Task: tk, Initial: w0, Solved: wref, MaxEvaluations: 2})
	if err != nil {
		t.Fatal(err)
	}
	if !r.CapHit || r.Evaluations != 2 || r.Passed {
		t.Fatalf("result %+v", r)
	}
	if !strings.Contains(strings.Join(r.Evidence, "\n"), "The cap of 2 evaluations was hit") {
		t.Errorf("evidence %q", r.Evidence)
	}
	for _, c := range r.Criteria {
		if c.Status == Untargeted {
			t.Errorf("%s untargeted although the cap cut its search: %+v", c.ID, c)
		}
	}
}

func TestCheckReferenceFails(t *testing.T) {
	dir := t.TempDir()
	w0, wref := testWorlds(t, dir)
	c := testCriteria()[0]
	c.Expect = json.RawMessage(`4`)
	r, err := Check(context.Background(), Input{Task: task.TestTask(t, c), Initial: w0, Solved: wref})
	if err != nil {
		t.Fatal(err)
	}
	if r.Passed || !strings.Contains(r.Problem, "does not pass V") || r.Evaluations != 0 {
		t.Fatalf("result %+v", r)
	}
}

func TestPerturb(t *testing.T) {
	for _, tc := range []struct {
		in   any
		typ  string
		want any
	}{
		{int64(3), "INTEGER", int64(4)}, {2.5, "REAL", 3.5}, {"A-2", "TEXT", "A-3"}, {"zz", "", "za"}, {"é", "", "x"},
		{"", "TEXT", "x"}, {nil, "INTEGER", int64(1)}, {nil, "TEXT", "x"},
	} {
		if got, ok := perturb(tc.in, tc.typ); !ok || got != tc.want {
			t.Errorf("perturb(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
	lines := []string{"day,ok\n", "2026-03-04,yes\n", "total 12.50 No\n"}
	var got []string
	for _, tk := range tokens(lines) {
		got = append(got, tk.old+">"+tk.new)
	}
	if want := []string{"2026>2027", "03>04", "04>05", "yes>no", "12.50>13.50", "No>Yes"}; !slices.Equal(got, want) {
		t.Errorf("tokens %v, want %v", got, want)
	}
}

const summaryScript = `from _verify_sdk import query, read_text, result

text = read_text("summary.txt") or ""
sku = [r[0] for r in query("x", "SELECT sku FROM orders WHERE order_no = 'A-2'")]
result(text.splitlines()[:1] == ["total: 4"] and sku == ["SP-200"], f"summary {text!r}, sku {sku}")
`

// TestCheckScript adds a script criterion run in the real sandbox: the
// summary file isolates it.
func TestCheckScript(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("internal/sandbox cannot run here (apt-get install -y bubblewrap python3): %v", err)
	}
	dir, err := os.MkdirTemp("", "wildawm-mutate-test-") // the sandbox uid reads the worlds here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	w0, wref := testWorlds(t, dir)
	vdir := filepath.Join(dir, "verifier")
	if err := verify.WriteSDK(vdir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(vdir, "scripts", "summary.py"), []byte(summaryScript), 0o644); err != nil {
		t.Fatal(err)
	}
	before0, beforeRef := snapshot(t, w0), snapshot(t, wref)
	crit := append(testCriteria(), task.Criterion{ID: "summary", Kind: task.KindScript, Script: "scripts/summary.py"})
	tk := task.TestTask(t, crit...)
	tk.Answer = "I ordered 3 of SP-200."
	scratch := filepath.Join(dir, "scratch")
	os.Mkdir(scratch, 0o755)
	r, err := Check(context.Background(), Input{Task: tk, Initial: w0, Solved: wref, VerifierDir: vdir, Runner: rollout.SandboxRunner{}, Scratch: scratch})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d candidates, %d evaluations\n%s", r.Candidates, r.Evaluations, strings.Join(r.Evidence, "\n"))
	wantStatus(t, r, map[string]string{"qty": Isolated, "placed": Entangled, "csv": Isolated, "notes": Untargeted, "answer": Isolated, "summary": Isolated})
	if m := byID(r)["summary"].Mutation; !strings.Contains(m, "summary.txt") && !strings.Contains(m, "sku") {
		t.Errorf("summary isolated by %q, want a change of ~/summary.txt or of the sku", m)
	}
	if !maps(before0, snapshot(t, w0)) || !maps(beforeRef, snapshot(t, wref)) {
		t.Error("W0 or W_ref changed")
	}
}

// moreWorlds makes W0 and W_ref under dir where the reference also
// changes and deletes rows, creates a database and deletes a directory:
// every kind of mutation.
func moreWorlds(t *testing.T, dir string) (w0, wref string) {
	t.Helper()
	w0 = state.MakeTestWorld(t, filepath.Join(dir, "w0"), state.TestWorld{
		SQL:   map[string][]string{"x": append(slices.Clone(schema), `INSERT INTO orders (order_no, sku, qty, status) VALUES ('A-0', 'SP-000', 5, 'placed')`)},
		Files: map[string]string{"readme.txt": "hello\n", "old/notes.txt": "keep 1\n", "old/more/deep.txt": "x\n", "summary.txt": "total: 1\n"}})
	wref = state.MakeTestWorld(t, filepath.Join(dir, "wref"), state.TestWorld{
		SQL: map[string][]string{
			"x": append(slices.Clone(schema), `INSERT INTO orders (order_no, sku, qty, status) VALUES ('A-2', 'SP-200', 3, 'placed')`,
				`UPDATE orders SET status = 'shipped' WHERE order_no = 'A-1'`),
			"log": {`CREATE TABLE entries (id INTEGER PRIMARY KEY, msg TEXT NOT NULL)`, `INSERT INTO entries (msg) VALUES ('done')`},
		},
		Files: map[string]string{"readme.txt": "hello\n", "reports/orders.csv": "order_no,sku,qty\nA-1,SP-100,1\nA-2,SP-200,3\n", "summary.txt": "total: 4\nchecked: yes\n"}})
	return w0, wref
}

func moreCriteria() []task.Criterion {
	crit := testCriteria()
	crit[1].Expect = json.RawMessage(`1`) // A-1 was shipped
	crit[2].Expect = json.RawMessage(`1`)
	return append(crit,
		task.Criterion{ID: "shipped", Kind: task.KindSQL, DB: "x", Query: `SELECT status FROM orders WHERE order_no = 'A-1'`, Expect: json.RawMessage(`"shipped"`)},
		task.Criterion{ID: "gone", Kind: task.KindSQL, DB: "x", Query: `SELECT count(*) FROM orders WHERE order_no = 'A-0'`, Expect: json.RawMessage(`0`)},
		task.Criterion{ID: "logged", Kind: task.KindSQL, DB: "log", Query: `SELECT msg FROM entries`, Expect: json.RawMessage(`"done"`)},
		task.Criterion{ID: "no-old", Kind: task.KindFile, Path: "old", Exists: new(bool)},
		task.Criterion{ID: "summary", Kind: task.KindFile, Path: "summary.txt", Contains: []string{"total: 4"}, Changed: true},
		task.Criterion{ID: "was-there", Kind: task.KindSQL, DB: "x", World: task.Initial, Query: `SELECT count(*) FROM orders`, Expect: json.RawMessage(`2`)},
	)
}

// TestCheckSameAsFresh holds Check to the result it had when every
// mutation got a fresh copy of W_ref and every criterion was computed,
// and the working copy to equal W_ref after every mutation is undone.
func TestCheckSameAsFresh(t *testing.T) {
	dir, err := os.MkdirTemp("", "wildawm-mutate-test-") // the sandbox uid reads the worlds here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	w0, wref := testWorlds(t, filepath.Join(dir, "a"))
	m0, mref := moreWorlds(t, filepath.Join(dir, "b"))
	var scripts []task.Criterion
	var vdir string
	var runner verify.Runner
	if err := sandbox.Available(); err != nil {
		t.Logf("without the script criterion: internal/sandbox cannot run here: %v", err)
	} else {
		vdir = filepath.Join(dir, "verifier")
		if err := verify.WriteSDK(vdir); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(vdir, "scripts", "summary.py"), []byte(summaryScript), 0o644); err != nil {
			t.Fatal(err)
		}
		scripts = []task.Criterion{{ID: "script", Kind: task.KindScript, Script: "scripts/summary.py"}}
		runner = rollout.SandboxRunner{}
	}
	for _, tc := range []struct {
		name       string
		w0, wref   string
		crit       []task.Criterion
		max        int
		answer     string
		withScript bool
	}{
		{name: "declarative", w0: w0, wref: wref, crit: testCriteria()},
		{name: "cap", w0: w0, wref: wref, crit: testCriteria(), max: 3},
		{name: "every-kind", w0: m0, wref: mref, crit: moreCriteria()},
		{name: "every-kind-script", w0: m0, wref: mref, crit: moreCriteria(), withScript: true},
		{name: "every-kind-cap", w0: m0, wref: mref, crit: moreCriteria(), max: 7, withScript: true},
		{name: "no-answer-criterion", w0: m0, wref: mref, crit: moreCriteria()[:5], answer: "done"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			crit := tc.crit
			if tc.withScript {
				if scripts == nil {
					t.Skip("internal/sandbox cannot run here: apt-get install -y bubblewrap python3")
				}
				crit = append(slices.Clone(crit), scripts...)
			}
			tk := task.TestTask(t, crit...)
			tk.Answer = "I ordered 3 of SP-200."
			if tc.answer != "" {
				tk.Answer = tc.answer
			}
			before0, beforeRef := snapshot(t, tc.w0), snapshot(t, tc.wref)
			in := Input{Task: tk, Initial: tc.w0, Solved: tc.wref, VerifierDir: vdir, Runner: runner, MaxEvaluations: tc.max}
			in.Scratch = filepath.Join(dir, "scratch-old")
			old, err := CheckFresh(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			in.Scratch = filepath.Join(dir, "scratch-new")
			got, err := CheckUndone(context.Background(), in)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(old, got) {
				a, _ := json.MarshalIndent(old, "", " ")
				b, _ := json.MarshalIndent(got, "", " ")
				t.Errorf("results differ:\nfresh copies: %s\none copy: %s", a, b)
			}
			if !maps(before0, snapshot(t, tc.w0)) || !maps(beforeRef, snapshot(t, tc.wref)) {
				t.Error("W0 or W_ref changed")
			}
			if left, _ := os.ReadDir(in.Scratch); len(left) != 0 {
				t.Errorf("scratch left behind: %v", left)
			}
			if got.Problem != "" {
				t.Fatal(got.Problem)
			}
			t.Logf("%d candidates, %d evaluations, %d inapplicable, passed %v", got.Candidates, got.Evaluations, got.Inapplicable, got.Passed)
		})
	}
}

// TestUndo applies every candidate of every kind to one working copy and
// holds it to equal W_ref after each is undone.
func TestUndo(t *testing.T) {
	dir := t.TempDir()
	w0, wref := moreWorlds(t, dir)
	tk := task.TestTask(t, moreCriteria()...)
	tk.Answer = "I ordered 3 of SP-200."
	cands, err := candidates(context.Background(), w0, wref, tk)
	if err != nil {
		t.Fatal(err)
	}
	ev := &evaluator{in: Input{Task: tk, Initial: w0, Solved: wref}, scratch: dir}
	defer ev.close()
	if err := ev.copyOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, m := range cands {
		if m.answer != nil {
			kinds["answer"]++
			continue
		}
		err := m.apply(context.Background(), ev.work)
		if err != nil && !errors.Is(err, errInapplicable) {
			t.Fatalf("%s: %v", m.desc, err)
		}
		if err := ev.undo(m); err != nil {
			t.Fatalf("undo %s: %v", m.desc, err)
		}
		if err := sameTree(wref, ev.work); err != nil {
			t.Errorf("after %s: %v", m.desc, err)
		}
		kinds[strings.Fields(m.desc)[0]]++
	}
	for _, k := range []string{"deleting", "inserting", "setting", "restoring", "re-inserting", "changing", "dropping", "appending", "answer"} {
		if kinds[k] == 0 {
			t.Errorf("no %q candidate: %v", k, kinds)
		}
	}
	t.Logf("%d candidates: %v", len(cands), kinds)
}
