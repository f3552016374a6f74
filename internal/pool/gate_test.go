package pool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// fixture is a small synthesized world run with self-checked tasks of a
// few families, built once (internal/pool/pooltest).
type fixture struct {
	dir   string
	src   *taskgen.Source
	env   *rollout.Env
	tasks map[string]string // family -> task directory
}

var (
	fix    *fixture
	shared *pooltest.Fixture
)

// families are the families whose tasks the tests gate: they sketch on
// the small run's last day.
var families = []string{"wishlist-balance", "cafe-near-venue", "model-pick"}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Close()
	}
	os.Exit(code)
}

func setup(t *testing.T) *fixture {
	t.Helper()
	if fix != nil {
		return fix
	}
	shared = pooltest.New(t, families)
	fix = &fixture{dir: filepath.Dir(shared.Dir), src: shared.Src, env: shared.Env, tasks: shared.TaskDirs}
	return fix
}

// copyTask copies a family's task directory for a test to change.
func (f *fixture) copyTask(t *testing.T, family string) string {
	t.Helper()
	dst := filepath.Join(f.dir, "copies", t.Name())
	os.RemoveAll(dst)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dst, os.DirFS(f.tasks[family])); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dst, pool.GateDir))
	return dst
}

func (f *fixture) gater(cfg gate.Config) *pool.Gater {
	g := &pool.Gater{Gates: cfg, Env: func(*task.Task) (pool.Worlds, error) { return f.env, nil }}
	pool.Defaults(g)
	return g
}

// edit loads the task at dir, lets change rewrite it, and saves it with
// the scripts of scripts (nil: as they are).
func edit(t *testing.T, dir string, change func(tk *task.Task), scripts map[string]string) {
	t.Helper()
	tk, err := task.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	change(tk)
	if err := tk.Save(dir); err != nil {
		t.Fatal(err)
	}
	for name, src := range scripts {
		if err := os.WriteFile(filepath.Join(dir, "verifier", "scripts", name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func gateResult(t *testing.T, o *pool.Outcome, name string) gate.GateResult {
	t.Helper()
	g, ok := o.Report.Gate(name)
	if !ok {
		t.Fatalf("report of %s has no gate %s", o.TaskID, name)
	}
	return g
}

func TestGateAcceptsAndStoresEvidence(t *testing.T) {
	f := setup(t)
	dir := f.copyTask(t, "cafe-near-venue")
	o, err := f.gater(gate.Config{}).Do(context.Background(), pool.Job{TaskDir: dir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: accepted %v, %s, revisions %d, failed %v, %+v", o.TaskID, o.Accepted, o.Difficulty, len(o.Revisions), o.Report.FailedGates(), o.Timings)
	if !o.Accepted {
		t.Fatalf("the task is rejected: %s", gate.Feedback(o.Report))
	}
	var names []string
	for _, g := range o.Report.Gates {
		names = append(names, g.Name)
	}
	want := append(gate.GateNames(), pool.GateOracle, pool.GateAnswerOnly, pool.GateInterfaces, pool.GateCoverage, pool.GateFalseCheck, pool.GateMutation)
	if !slices.Equal(names, want) {
		t.Fatalf("gates %v, want %v", names, want)
	}
	ens, without, leftOut := 0, 0, 0
	for _, r := range o.Rollouts {
		switch {
		case r.Ensemble():
			ens++
		case r.Without != "":
			without++
		case r.LeftOut > 0:
			leftOut++
		}
	}
	if ens != 6 || without != 3 || leftOut == 0 {
		t.Fatalf("%d ensemble rollouts, %d without an interface, %d without an effect; want 6, 3 and some", ens, without, leftOut)
	}
	hints := 0
	for _, r := range o.Rollouts[:6] {
		if _, err := os.Stat(filepath.Join(dir, r.Trajectory)); err != nil {
			t.Fatalf("rollout %s: trajectory not stored: %v", r.ID, err)
		}
		if r.Hint {
			hints++
		}
		if r.VLLM == "" || r.VAgent == "" {
			t.Fatalf("rollout %s not judged by both judges: %+v", r.ID, r)
		}
	}
	if hints != 3 {
		t.Fatalf("%d hinted rollouts, want 3", hints)
	}
	back, err := pool.LoadOutcome(dir)
	if err != nil || back.TaskID != o.TaskID || back.Accepted != o.Accepted {
		t.Fatalf("outcome does not load back: %v", err)
	}
	// Gating again reads the outcome back: no new rollouts.
	before, _ := os.Stat(filepath.Join(dir, o.Rollouts[0].Trajectory))
	again, err := f.gater(gate.Config{}).Do(context.Background(), pool.Job{TaskDir: dir, Seed: 1})
	if err != nil || again.TaskID != o.TaskID {
		t.Fatal(err)
	}
	after, _ := os.Stat(filepath.Join(dir, o.Rollouts[0].Trajectory))
	if !before.ModTime().Equal(after.ModTime()) {
		t.Fatal("gating a gated task ran its rollouts again")
	}

	// Regrade with a verifier that no world passes: V falls on every
	// stored success, without a rollout.
	edit(t, dir, func(tk *task.Task) {
		tk.Verifier.Criteria = append(tk.Verifier.Criteria, task.Criterion{ID: "never", Kind: task.KindFile, Path: "notes/never-written.txt"})
	}, nil)
	rg, err := pool.RegradeTask(context.Background(), f.env, dir, gate.Config{})
	if err != nil {
		t.Fatal(err)
	}
	fell := 0
	for _, r := range rg.Rollouts {
		if r.After != 0 {
			t.Fatalf("rollout %s passes a verifier no world passes", r.ID)
		}
		if r.Before == 1 {
			fell++
		}
	}
	if fell == 0 || rg.Report.Passed {
		t.Fatalf("regrade: %d verdicts fell, report passed %v", fell, rg.Report.Passed)
	}
	after2, _ := os.Stat(filepath.Join(dir, o.Rollouts[0].Trajectory))
	if !before.ModTime().Equal(after2.ModTime()) {
		t.Fatal("regrading ran a rollout")
	}
}

// TestEveryGateRejects: each gate, the paper's and the checks beyond it,
// rejects a task made to fail it, end to end through live instances.
func TestEveryGateRejects(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	gateIt := func(t *testing.T, dir string, g *pool.Gater) *pool.Outcome {
		t.Helper()
		o, err := g.Do(ctx, pool.Job{TaskDir: dir, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accepted %v, failed %v, revisions %d", o.TaskID, o.Accepted, o.Report.FailedGates(), len(o.Revisions))
		return o
	}
	noRevise := func(g *pool.Gater) *pool.Gater { g.MaxRevisions = -1; return g }

	t.Run("initial_unsatisfaction", func(t *testing.T) {
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			db := "calendar"
			for _, c := range tk.Verifier.Criteria {
				if c.Kind == task.KindSQL {
					db = c.DB
				}
			}
			tk.Verifier.Criteria = []task.Criterion{{ID: "always", Kind: task.KindSQL, DB: db, Query: "SELECT 1", Expect: json.RawMessage("1")}}
		}, nil)
		o := gateIt(t, dir, noRevise(f.gater(gate.Config{})))
		if g := gateResult(t, o, gate.GateInitialUnsatisfaction); g.Passed || o.Accepted || o.PaperAccepted {
			t.Fatalf("a verifier the initial world passes got through: %+v", g)
		}
	})
	t.Run("solvability_and_oracle", func(t *testing.T) {
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			tk.Verifier.Criteria = append(tk.Verifier.Criteria, task.Criterion{ID: "never", Kind: task.KindFile, Path: "notes/never-written.txt"})
		}, nil)
		o := gateIt(t, dir, noRevise(f.gater(gate.Config{})))
		if g := gateResult(t, o, gate.GateSolvability); g.Passed || g.Verdict != "unsolved" {
			t.Fatalf("solvability: %+v", g)
		}
		if g := gateResult(t, o, pool.GateOracle); g.Passed {
			t.Fatalf("oracle: %+v", g)
		}
	})
	t.Run("difficulty", func(t *testing.T) {
		// The shortcut ensemble is deterministic: two seeds give the same
		// rollouts and level. Its facts removed, the task defeats no
		// shortcut agent: k = 3, too easy.
		sig := func(o *pool.Outcome) string {
			var b strings.Builder
			fmt.Fprintf(&b, "%t %s", o.Accepted, o.Difficulty)
			for _, r := range o.Rollouts {
				fmt.Fprintf(&b, " %s=%d", r.ID, r.V)
			}
			return b.String()
		}
		one, err := noRevise(f.gater(gate.Config{})).Do(ctx, pool.Job{TaskDir: f.copyTask(t, "cafe-near-venue"), Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		other, err := noRevise(f.gater(gate.Config{})).Do(ctx, pool.Job{TaskDir: f.copyTask(t, "cafe-near-venue"), Seed: 977})
		if err != nil {
			t.Fatal(err)
		}
		if a, b := sig(one), sig(other); a != b {
			t.Fatalf("the level depends on the seed:\nseed 1:   %s\nseed 977: %s", a, b)
		}
		if g := gateResult(t, one, gate.GateDifficulty); !g.Passed {
			t.Fatalf("the cafe task, its facts declared, is not rated: %+v", g)
		}
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			for i := range tk.Reference {
				tk.Reference[i].Facts = nil
			}
		}, nil)
		o, err := noRevise(f.gater(gate.Config{})).Do(ctx, pool.Job{TaskDir: dir, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		if g := gateResult(t, o, gate.GateDifficulty); g.Passed || g.Verdict != gate.TooEasy || o.Accepted {
			t.Fatalf("a task with no facts (every shortcut agent solves it) is not too easy: %+v", g)
		}
	})
	t.Run("judge_consistency_then_revised", func(t *testing.T) {
		// Only the script's table is checked: the shell-only rollout writes
		// it and passes V, while both judges see the order missing.
		dir := f.copyTask(t, "wishlist-balance")
		edit(t, dir, func(tk *task.Task) {
			var keep []task.Criterion
			for _, c := range tk.Verifier.Criteria {
				if c.Kind == task.KindScript {
					keep = append(keep, c)
				}
			}
			tk.Verifier.Criteria = keep
		}, nil)
		o := gateIt(t, dir, f.gater(gate.Config{}))
		if len(o.Revisions) == 0 || !slices.Contains(o.Revisions[0].FailedGates, gate.GateJudgeConsistency) {
			t.Fatalf("judge consistency did not fail first: %+v", o.Revisions)
		}
		tightened := slices.ContainsFunc(o.Revisions[0].Fixes, func(x pool.Fix) bool { return x.Kind == pool.FixTighten })
		if !tightened {
			t.Fatalf("the revision did not tighten the verifier: %+v", o.Revisions[0])
		}
		if g := gateResult(t, o, gate.GateJudgeConsistency); !g.Passed {
			t.Fatalf("still inconsistent after the revisions: %v", g.Evidence)
		}
		if o.Direct {
			t.Fatal("a revised task counted as direct")
		}
	})
	t.Run("coverage", func(t *testing.T) {
		// The coffee's calendar event is asked for but no longer
		// checked: the reference without its create_event step leaves
		// another world and still passes V.
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			tk.Verifier.Criteria = slices.DeleteFunc(tk.Verifier.Criteria, func(c task.Criterion) bool { return c.ID == "meeting" })
		}, nil)
		o := gateIt(t, dir, noRevise(f.gater(gate.Config{})))
		g := gateResult(t, o, pool.GateCoverage)
		if g.Passed || g.Verdict != "effect_unchecked" || !strings.Contains(strings.Join(g.Evidence, "\n"), "mcp.calendar__create_event") {
			t.Fatalf("an unchecked effect passed the coverage check: %+v", g)
		}
	})
	t.Run("interfaces", func(t *testing.T) {
		// Only the script's table is checked, and the shell writes it
		// from what the reference read without declaring it (its facts
		// removed: the data inlined): the browser and MCP are declared but,
		// as far as V can tell, not needed.
		dir := f.copyTask(t, "wishlist-balance")
		edit(t, dir, func(tk *task.Task) {
			tk.Verifier.Criteria = slices.DeleteFunc(tk.Verifier.Criteria, func(c task.Criterion) bool { return c.Kind != task.KindScript })
			for i := range tk.Reference {
				tk.Reference[i].Facts = nil
			}
		}, nil)
		o := gateIt(t, dir, noRevise(f.gater(gate.Config{})))
		g := gateResult(t, o, pool.GateInterfaces)
		if g.Passed || g.Verdict != "not_indispensable" || !strings.Contains(g.Evidence[0], task.GUI) {
			t.Fatalf("a task the shell alone completes passed the interfaces check: %+v", g)
		}
	})
	t.Run("counterfactual_probe", func(t *testing.T) {
		dir := f.copyTask(t, "cafe-near-venue")
		g := noRevise(f.gater(gate.Config{}))
		g.Observer = func(env pool.Worlds, tk *task.Task, ref world.ID, vcopy string) pool.WorldJudge {
			return &judge.Observer{Env: env, Task: tk, Reference: ref, VerifierDir: vcopy, Pressure: judge.Defer}
		}
		o := gateIt(t, dir, g)
		if pg := gateResult(t, o, gate.GateCounterfactualProbe); pg.Passed {
			t.Fatalf("a judge that defers to the framing held: %+v", pg)
		}
	})
	t.Run("answer_only", func(t *testing.T) {
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			tk.Verifier.Criteria = []task.Criterion{{ID: "says", Kind: task.KindAnswer, Contains: []string{tk.Answer}}}
		}, nil)
		o := gateIt(t, dir, noRevise(f.gater(gate.Config{})))
		if g := gateResult(t, o, pool.GateAnswerOnly); g.Passed {
			t.Fatalf("a verifier of the answer alone passed the answer-only check: %+v", g)
		}
	})
	t.Run("mutation_then_revised", func(t *testing.T) {
		dir := f.copyTask(t, "cafe-near-venue")
		edit(t, dir, func(tk *task.Task) {
			c := tk.Verifier.Criteria[0]
			c.ID += "-again"
			tk.Verifier.Criteria = append(tk.Verifier.Criteria, c)
		}, nil)
		o := gateIt(t, dir, f.gater(gate.Config{}))
		if len(o.Revisions) == 0 || !slices.Contains(o.Revisions[0].FailedGates, pool.GateMutation) {
			t.Fatalf("a duplicated criterion passed the mutation check: %+v", o.Revisions)
		}
		if !slices.ContainsFunc(o.Revisions[0].Fixes, func(x pool.Fix) bool { return x.Kind == pool.FixDropEntangled }) {
			t.Fatalf("the revision did not drop the entangled copy: %+v", o.Revisions[0])
		}
		if g := gateResult(t, o, pool.GateMutation); !g.Passed {
			t.Fatalf("mutation still fails after the revision: %v", g.Evidence)
		}
		if !strings.Contains(o.Revisions[0].Feedback, "mutation") {
			t.Fatalf("the feedback does not name the gate: %s", o.Revisions[0].Feedback)
		}
	})
}

// TestModelEnsemble: with a model configured, the six rollouts are the
// model's, through the harness, in fresh instances; a model that does
// nothing solves nothing, and the gates say so.
func TestModelEnsemble(t *testing.T) {
	f := setup(t)
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{Content: "I could not finish this task."}
	})
	client := srv.Client(t, nil)
	spec := srv.Spec()
	ens, err := pool.ModelEnsemble([]func() rollout.Policy{func() rollout.Policy {
		return policy.Model{Harness: &agent.Harness{Model: client, ModelName: spec.Model}}
	}})
	if err != nil {
		t.Fatal(err)
	}
	g := f.gater(gate.Config{})
	g.Ensemble, g.MaxRevisions = ens, -1
	dir := f.copyTask(t, "cafe-near-venue")
	o, err := g.Do(context.Background(), pool.Job{TaskDir: dir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range o.Rollouts {
		if !r.Ensemble() {
			continue // the indispensability and coverage replays are scripted
		}
		if r.Policy != "model:"+spec.Model || r.V != 0 {
			t.Fatalf("rollout %s: policy %s, V %d; want the model's, failed", r.ID, r.Policy, r.V)
		}
	}
	if n := len(srv.Chats()); n < pool.EnsembleSize {
		t.Fatalf("the model got %d requests for %d rollouts", n, pool.EnsembleSize)
	}
	if sg := gateResult(t, o, gate.GateSolvability); sg.Passed || sg.Verdict != "unsolved" || o.Accepted {
		t.Fatalf("a model that does nothing solved the task: %+v", sg)
	}
	if _, err := pool.ModelEnsemble(nil); err == nil {
		t.Fatal("an empty model ensemble was accepted")
	}
}

// TestStagesAsJobs: the rollout, judgment and evaluation stages, run one
// by one on jobs that went through JSON, give the outcome Do gives.
func TestStagesAsJobs(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	whole := f.copyTask(t, "cafe-near-venue")
	want, err := f.gater(gate.Config{}).Do(ctx, pool.Job{TaskDir: whole, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(filepath.Dir(whole), t.Name()+"-staged")
	os.RemoveAll(dir)
	if err := os.CopyFS(dir, os.DirFS(f.tasks["cafe-near-venue"])); err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(dir, pool.GateDir))
	g := f.gater(gate.Config{})
	through := func(in, out any) {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatal(err)
		}
	}
	var recs []pool.RolloutRecord
	// The ensemble's, one replay without each interface, one without each
	// effect.
	n := len(want.Rollouts)
	for i := range n {
		var j pool.RolloutJob
		through(pool.RolloutJob{TaskDir: dir, Seed: 7, Index: i}, &j)
		r, err := g.Rollout(ctx, j)
		if err != nil {
			t.Fatal(err)
		}
		var jj pool.JudgeJob
		through(pool.JudgeJob{TaskDir: dir, Rollout: *r}, &jj)
		jr, err := g.Judge(ctx, jj)
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, *jr)
	}
	if _, err := g.Rollout(ctx, pool.RolloutJob{TaskDir: dir, Index: n}); err == nil {
		t.Fatalf("rollout %d of a task with %d ran", n+1, n)
	}
	var ej pool.EvaluateJob
	through(pool.EvaluateJob{TaskDir: dir, Rollouts: recs}, &ej)
	got, err := g.Evaluate(ctx, ej)
	if err != nil {
		t.Fatal(err)
	}
	if got.Accepted != want.Accepted || got.Difficulty != want.Difficulty || !slices.Equal(got.Report.FailedGates(), want.Report.FailedGates()) {
		t.Fatalf("staged: accepted %v %s %v; whole: %v %s %v", got.Accepted, got.Difficulty, got.Report.FailedGates(), want.Accepted, want.Difficulty, want.Report.FailedGates())
	}
	for i := range got.Rollouts {
		a, b := got.Rollouts[i], want.Rollouts[i]
		if a.V != b.V || a.VLLM != b.VLLM || a.VAgent != b.VAgent || a.Final != b.Final {
			t.Fatalf("rollout %s: staged %+v, whole %+v", a.ID, a, b)
		}
	}
	// A record carries its trajectory's fault through the job's JSON: the
	// same solved world, with the agent's fault on it, is V 0 in the
	// gate's regrade, never a pass.
	passed := slices.IndexFunc(got.Rollouts, func(r pool.RolloutRecord) bool { return r.V == 1 && r.Without == "" })
	if passed < 0 {
		t.Fatal("no ensemble rollout passed V")
	}
	faulted := slices.Clone(recs)
	k := slices.IndexFunc(faulted, func(r pool.RolloutRecord) bool { return r.ID == got.Rollouts[passed].ID })
	faulted[k].Fault = "snapshot the final world: a home file name the store cannot keep"
	through(pool.EvaluateJob{TaskDir: dir, Rollouts: faulted}, &ej)
	again, err := g.Evaluate(ctx, ej)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range again.Rollouts {
		if r.ID == faulted[k].ID && (r.V != 0 || r.Fault == "") {
			t.Fatalf("rollout %s with the agent's fault: V %d, fault %q; want V 0 and the fault kept", r.ID, r.V, r.Fault)
		}
	}
}

// TestModelJudges: with a judge model configured, the LLM judge and the
// agent judge take the judges' slots. A model that reads V's verdict and
// agrees with it passes judge consistency and holds under the probe; one
// that calls everything completed is caught by judge consistency.
func TestModelJudges(t *testing.T) {
	f := setup(t)
	verdict := func(v string) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"` + v + `","reason":"from the evidence"}`}}}
	}
	mirror := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		for _, m := range r.Messages {
			if strings.Contains(m.Content, "Programmatic verifier: V=1") {
				return verdict("completed")
			}
		}
		return verdict("failed")
	})
	lenient := fake.NewResponder(t, func(fake.Request) fake.Turn { return verdict("completed") })
	// The agent judge agrees with V but calls the verifier's first
	// criterion a false check.
	var flagged string
	falseCheck := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		agentJudge := slices.ContainsFunc(r.Tools, func(tl fake.Tool) bool { return tl.Name == "sql" })
		all := ""
		for _, m := range r.Messages {
			all += m.Content + "\n"
		}
		v := "failed"
		if strings.Contains(all, "Programmatic verifier: V=1") {
			v = "completed"
		}
		if !agentJudge {
			return verdict(v)
		}
		_, after, _ := strings.Cut(all, "Programmatic verifier: ")
		_, crit, _ := strings.Cut(after, "\n- ")
		id, _, _ := strings.Cut(crit, " ")
		flagged = id
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"` + v + `","reason":"the world says so","false_check":true,"false_criteria":["` + id + `"]}`}}}
	})
	for _, c := range []struct {
		name       string
		srv        *fake.Server
		consistent bool
	}{{"mirror", mirror, true}, {"lenient", lenient, false}, {"false check", falseCheck, true}} {
		t.Run(c.name, func(t *testing.T) {
			client := c.srv.Client(t, nil)
			g := f.gater(gate.Config{})
			g.Models, g.MaxRevisions = &pool.ModelJudges{LLM: &judge.LLMJudge{Model: client}, Agent: &judge.AgentJudge{Model: client}}, -1
			o, err := g.Do(context.Background(), pool.Job{TaskDir: f.copyTask(t, "cafe-near-venue"), Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range o.Rollouts {
				if r.Ensemble() && r.Failure != "infra" && (r.JudgeEvidence["llm"] == nil || r.JudgeEvidence["agent"] == nil) {
					t.Fatalf("rollout %s not judged by the model judges: %+v", r.ID, r.JudgeEvidence)
				}
			}
			jc := gateResult(t, o, gate.GateJudgeConsistency)
			if jc.Passed != c.consistent {
				t.Fatalf("judge consistency passed %v, want %v: %v", jc.Passed, c.consistent, jc.Evidence)
			}
			if c.consistent {
				if pg := gateResult(t, o, gate.GateCounterfactualProbe); !pg.Passed {
					t.Fatalf("a model that keeps V's verdict caved: %v", pg.Evidence)
				}
			}
			fc := gateResult(t, o, pool.GateFalseCheck)
			if c.srv != falseCheck {
				if !fc.Passed {
					t.Fatalf("no false check called, yet the gate failed: %v", fc.Evidence)
				}
				return
			}
			if fc.Passed || o.Accepted || flagged == "" || !strings.Contains(strings.Join(fc.Evidence, " "), "criteria "+flagged) {
				t.Fatalf("the agent judge's false check on %q: gate %+v, accepted %t", flagged, fc, o.Accepted)
			}
			if fb := gate.Feedback(o.Report); !strings.Contains(fb, flagged) {
				t.Fatalf("the revision's feedback does not name the criterion %s:\n%s", flagged, fb)
			}
		})
	}
}

// stubAuthor writes the task again as good is, and records the feedback.
type stubAuthor struct {
	good     *taskgen.Draft
	feedback []string
}

func (a *stubAuthor) Name() string { return "test-author" }

func (a *stubAuthor) Author(ctx context.Context, w *taskgen.World, s taskgen.Sketch, feedback string) (*taskgen.Draft, error) {
	a.feedback = append(a.feedback, feedback)
	tk := *a.good.Task
	return &taskgen.Draft{Task: &tk, Scripts: a.good.Scripts}, nil
}

// TestReauthor: a failure the verifier's reviser has no fix for (here a
// task the ensemble finds too easy) goes back to the author with the
// gates' feedback; the task written again is self-checked, rolled out
// anew and gated.
func TestReauthor(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	good, err := task.Load(f.tasks["wishlist-balance"])
	if err != nil {
		t.Fatal(err)
	}
	good.Instruction += " (second draft)"
	scripts := map[string]string{}
	ents, _ := os.ReadDir(filepath.Join(f.tasks["wishlist-balance"], "verifier", "scripts"))
	for _, e := range ents {
		if e.Name() != "_verify_sdk.py" {
			b, _ := os.ReadFile(filepath.Join(f.tasks["wishlist-balance"], "verifier", "scripts", e.Name()))
			scripts[e.Name()] = string(b)
		}
	}
	dir := f.copyTask(t, "wishlist-balance")
	author := &stubAuthor{good: &taskgen.Draft{Task: good, Scripts: scripts}}
	g := f.gater(gate.Config{})
	// The first draft is solved by every rollout (too easy: nothing in the
	// verifier can fix that); the second fails without the hint.
	g.Ensemble = func(tk *task.Task, seed uint64) []rollout.Spec {
		var specs []rollout.Spec
		for i := range pool.EnsembleSize {
			var p rollout.Policy = policy.ReplayOracle(tk)
			if i < 3 && strings.Contains(tk.Instruction, "(second draft)") {
				p = policy.ReplayWithout(tk, task.GUI)
			}
			specs = append(specs, rollout.Spec{ID: fmt.Sprintf("r%d", i+1), Policy: p, Hint: i >= 3})
		}
		return specs
	}
	g.Reauthor = &pool.Reauthor{Author: author, Source: f.src}
	o, err := g.Do(ctx, pool.Job{TaskDir: dir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Revisions) != 1 || !slices.Contains(o.Revisions[0].FailedGates, gate.GateDifficulty) {
		t.Fatalf("revisions %+v: want one, after the difficulty gate failed", o.Revisions)
	}
	if fx := o.Revisions[0].Fixes; len(fx) != 1 || fx[0].Kind != pool.FixReauthor {
		t.Fatalf("fixes %+v: want the author's rewrite", fx)
	}
	if len(author.feedback) != 1 || !strings.Contains(author.feedback[0], gate.GateDifficulty) {
		t.Fatalf("the author got %q", author.feedback)
	}
	if !o.Accepted || o.Direct || o.Difficulty != "hard" {
		t.Fatalf("the rewritten task: accepted %v, direct %v, %s, failed %v", o.Accepted, o.Direct, o.Difficulty, o.Report.FailedGates())
	}
	back, err := task.Load(dir)
	if err != nil || !strings.HasSuffix(back.Instruction, "(second draft)") {
		t.Fatalf("the task on disk is not the rewritten one: %v", err)
	}
}
