package pool

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/task"
)

// fakeOutcomes writes n accepted and m rejected outcomes with task.json
// files under dir.
func fakeOutcomes(t *testing.T, dir string, n, m int) {
	t.Helper()
	for i := range n + m {
		id := fmt.Sprintf("task-%03d", i)
		d := filepath.Join(dir, id)
		tk := task.TestTask(t)
		tk.ID = id
		if err := tk.Save(d); err != nil {
			t.Fatal(err)
		}
		o := &Outcome{Version: OutcomeVersion, TaskID: id, Family: "fam", Persona: "p", Accepted: i < n, PaperAccepted: i < n,
			Direct: i%2 == 0, Difficulty: "hard", Report: &gate.Report{TaskID: id, Passed: i < n}}
		if err := saveJSON(filepath.Join(d, OutcomeFile), o); err != nil {
			t.Fatal(err)
		}
	}
}

func TestBuildSplitsInThePapersProportions(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, dir, 341, 5)
	p, err := Build(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if p.Gated != 346 || len(p.Tasks) != 341 {
		t.Fatalf("gated %d, pool %d; want 346, 341", p.Gated, len(p.Tasks))
	}
	if p.Counts[SplitSFT] != 100 || p.Counts[SplitRL] != 208 || p.Counts[SplitVal] != 33 {
		t.Fatalf("counts %v, want the paper's 100/208/33", p.Counts)
	}
	// Deterministic, and a task keeps its split when others are added
	// (beyond the counts moving).
	q, err := Build(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range p.Tasks {
		if !reflect.DeepEqual(p.Tasks[i], q.Tasks[i]) {
			t.Fatalf("task %d differs between two builds: %+v vs %+v", i, p.Tasks[i], q.Tasks[i])
		}
	}
}

func TestBuildRoundsSmallPools(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, dir, 10, 0)
	p, err := Build(dir, map[string]int{SplitSFT: 1, SplitRL: 1, SplitVal: 1})
	if err != nil {
		t.Fatal(err)
	}
	sum := p.Counts[SplitSFT] + p.Counts[SplitRL] + p.Counts[SplitVal]
	if sum != 10 || p.Counts[SplitSFT] < 3 || p.Counts[SplitRL] < 3 || p.Counts[SplitVal] < 3 {
		t.Fatalf("counts %v: want 10 dealt 4/3/3 in some order", p.Counts)
	}
	for _, e := range p.Tasks {
		if e.Split == "" {
			t.Fatalf("task %s has no split", e.ID)
		}
	}
}

func TestBuildRefusesBadProportions(t *testing.T) {
	dir := t.TempDir()
	for _, props := range []map[string]int{{"test": 1}, {SplitSFT: -1, SplitRL: 2}, {SplitSFT: 0}} {
		if _, err := Build(dir, props); err == nil {
			t.Errorf("proportions %v: no error", props)
		}
	}
}

func TestExportCopiesOneSplit(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, dir, 12, 0)
	p, err := Build(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	n, err := p.Export(t.Context(), SplitRL, out)
	if err != nil {
		t.Fatal(err)
	}
	if n != p.Counts[SplitRL] || n == 0 {
		t.Fatalf("exported %d, rl has %d", n, p.Counts[SplitRL])
	}
	q, err := LoadPool(filepath.Join(out, "pool.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range q.Tasks {
		if e.Split != SplitRL {
			t.Fatalf("exported %s of split %s", e.ID, e.Split)
		}
		if _, err := task.Load(filepath.Join(out, e.Dir)); err != nil {
			t.Fatalf("exported task %s does not load: %v", e.ID, err)
		}
		if _, err := LoadOutcome(filepath.Join(out, e.Dir)); err != nil {
			t.Fatalf("exported task %s has no outcome: %v", e.ID, err)
		}
	}
	if _, err := p.Export(t.Context(), "nope", out); err == nil {
		t.Fatal("an empty split exported without an error")
	}
}

func TestSwitchesAndRevisits(t *testing.T) {
	mk := func(ifs ...string) *task.Task {
		tk := &task.Task{}
		for i, in := range ifs {
			tk.Subtasks = append(tk.Subtasks, task.Subtask{ID: fmt.Sprint(i), Interface: in})
		}
		return tk
	}
	for _, c := range []struct {
		ifs     []string
		n       int
		revisit bool
	}{
		{[]string{task.MCP, task.GUI, task.CLI, task.GUI}, 3, true},
		{[]string{task.MCP, task.MCP, task.GUI, task.CLI}, 2, false},
		{[]string{task.GUI}, 0, false},
		{[]string{task.CLI, task.GUI, task.CLI, task.MCP, task.CLI}, 4, true},
	} {
		n, rv := Switches(mk(c.ifs...))
		if n != c.n || rv != c.revisit {
			t.Errorf("%v: %d switches, revisit %v; want %d, %v", c.ifs, n, rv, c.n, c.revisit)
		}
	}
	// A support sub-task (finding a login) counts for nothing: without it
	// MCP, GUI, CLI has 2 switches and no revisit; with it counted, the
	// CLI before the GUI would make 3 and a revisit.
	tk := mk(task.MCP, task.CLI, task.GUI, task.CLI)
	tk.Subtasks[1].Support = true
	if n, rv := Switches(tk); n != 2 || rv {
		t.Errorf("with a support sub-task: %d switches, revisit %v; want 2, false", n, rv)
	}
}

func TestComputeAgreementAndKappa(t *testing.T) {
	// 10 judged rollouts: V and the judge agree on 4 passes and 4 failures
	// and disagree on 2: agreement 0.8; kappa (0.8 - 0.5) / 0.5 = 0.6.
	o := &Outcome{TaskID: "t", Family: "f", Persona: "p", Accepted: true, Difficulty: "hard", Report: &gate.Report{Passed: true}}
	for i := range 10 {
		r := RolloutRecord{ID: fmt.Sprint(i), Policy: "scripted:replay-careful", Outcome: "done", Final: [32]byte{1}, Hint: i%2 == 1}
		switch {
		case i < 4:
			r.V, r.VLLM, r.VAgent = 1, gate.Completed, gate.Completed
		case i < 8:
			r.V, r.VLLM, r.VAgent = 0, gate.Failed, gate.Failed
		case i == 8:
			r.V, r.VLLM, r.VAgent = 1, gate.Failed, gate.Failed
		default:
			r.V, r.VLLM, r.VAgent = 0, gate.Completed, gate.Completed
		}
		o.Rollouts = append(o.Rollouts, r)
	}
	s := Compute([]*Outcome{o}, nil)
	a := s.Agreement["both judges"]
	if a.N != 10 || math.Abs(a.Agree-0.8) > 1e-9 || math.Abs(a.Kappa-0.6) > 1e-9 {
		t.Fatalf("agreement %+v, want n 10, 0.8, kappa 0.6", a)
	}
	if s.Accepted != 1 || s.Hard != 1 || s.SolvedByOne != 1 || s.SolvedByAll != 0 {
		t.Fatalf("stats %+v", s)
	}
	var b strings.Builder
	s.Table(&b)
	// Every figure names its source: scripted agents rated it, the
	// reference-based offline judges judged it, and a hint only scripted
	// agents had is no figure at all.
	for _, want := range []string{"| tasks accepted | 1 | 341 |", "kappa 0.60 (n = 10)", "95%, kappa 0.90 (model judges)",
		"| hard / medium (rated by scripted agents) | 1 / 0 |", "| success without hint (scripted agents) |",
		"| success with hint | not measured: scripted agents do not read the hint", "| V vs both judges (reference-based offline judges) |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("table lacks %q:\n%s", want, b.String())
		}
	}
	// Rated by a model, the hinted figure is printed, named.
	for i := range o.Rollouts {
		o.Rollouts[i].Policy = "model:qwen3-8b"
	}
	b.Reset()
	Compute([]*Outcome{o}, nil).Table(&b)
	if !strings.Contains(b.String(), "| success with hint (model qwen3-8b) | 40.0% |") || !strings.Contains(b.String(), "(rated by model qwen3-8b)") {
		t.Errorf("a model's figures are not printed with its name:\n%s", b.String())
	}
}

func TestSkillFileRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), SkillFile)
	s := &Skills{}
	s.Merge([]Lesson{{Family: "wishlist-balance", Kind: FixDropEntangled, Target: "one-order", Why: "every mutation that flips one-order also flips ordered"}})
	s.Merge([]Lesson{{Family: "wishlist-balance", Kind: FixDropEntangled, Target: "one-order", Why: "again"}, {Family: "kept-calcs", Kind: FixTighten, Target: "notes.notes", Why: "x"}})
	if err := s.Save(path); err != nil {
		t.Fatal(err)
	}
	got, err := LoadSkills(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Lessons) != 2 || got.Lessons[1].Seen != 2 || got.Lessons[1].Target != "one-order" {
		t.Fatalf("lessons %+v", got.Lessons)
	}
	if err := os.WriteFile(path, []byte("# x\n- broken lesson\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadSkills(path); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("a malformed lesson: %v, want an error naming line 2", err)
	}
	if s, err := LoadSkills(filepath.Join(t.TempDir(), "none.md")); err != nil || len(s.Lessons) != 0 {
		t.Fatalf("a missing skill file: %v %v", s, err)
	}
}

// TestLoadPoolRefusesDuplicates: an index that lists a task twice (or two
// entries naming one directory) is refused naming the task, by LoadPool
// and by Save alike: rl serve served such a pool while openenv serve
// refused it.
func TestLoadPoolRefusesDuplicates(t *testing.T) {
	dir := t.TempDir()
	fakeOutcomes(t, filepath.Join(dir, "tasks"), 2, 0)
	good := &Pool{Version: Version, TasksDir: filepath.Join(dir, "tasks"), Tasks: []Entry{
		{ID: "task-000", Dir: "task-000", Split: SplitRL}, {ID: "task-001", Dir: "task-001", Split: SplitRL}}}
	path := filepath.Join(dir, "pool", "pool.json")
	if err := good.Save(path); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadPool(path); err != nil {
		t.Fatalf("a pool without duplicates: %v", err)
	}
	for _, c := range []struct {
		entries []Entry
		want    string
	}{
		{[]Entry{{ID: "task-000", Dir: "task-000"}, {ID: "task-001", Dir: "task-001"}, {ID: "task-000", Dir: "task-000"}}, "tasks[0] and tasks[2]: task task-000 is listed twice"},
		{[]Entry{{ID: "task-000", Dir: "task-000"}, {ID: "task-001", Dir: "./task-000"}}, "tasks task-000 and task-001 name one directory"},
	} {
		bad := *good
		bad.Tasks = c.entries
		if err := bad.Save(path + ".new"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Save: %v, want %q", err, c.want)
		}
		b, _ := json.Marshal(bad)
		os.WriteFile(path, b, 0o644)
		if _, err := LoadPool(path); err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), path) {
			t.Errorf("LoadPool: %v, want %q and the path", err, c.want)
		}
	}
}
