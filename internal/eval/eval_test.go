package eval

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// The package's tests share one pool fixture (built on first use).
var shared pooltest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func fixture(t *testing.T) *pooltest.Fixture {
	t.Helper()
	return shared.Get(t)
}

// replayAgent is a scripted replay of each case's reference under errs,
// seeded by the rollout's index.
func replayAgent(name string, errs policy.ErrorModel) Agent {
	return Agent{Name: "scripted:replay-" + name, Policy: func(c Case, index int) (rollout.Policy, error) {
		return policy.NewReplay(name, c.Task, errs, uint64(index)), nil
	}}
}

// counting wraps an adapter and counts the rollouts it runs.
type counting struct {
	Adapter
	runs atomic.Int32
}

func (c *counting) Run(ctx context.Context, cs Case, spec rollout.Spec) (*Judged, error) {
	c.runs.Add(1)
	return c.Adapter.Run(ctx, cs, spec)
}

// TestSplitEndToEnd runs the val split of a real pool: the oracle replay
// solves every task in every rollout (pass@k and pass^k 1), an agent that
// avoids every interface solves none (0): the evaluation can disagree. A
// rerun with the same output directory and a larger k runs only the new
// rollouts; another agent on it is refused.
func TestSplitEndToEnd(t *testing.T) {
	f := fixture(t)
	f.WritePool(t, func(string) string { return pool.SplitVal })
	ctx := context.Background()
	split := &Split{Dir: f.Dir, Env: func(*task.Task) (Rollouts, error) { return f.Env, nil }}

	out := filepath.Join(t.TempDir(), "oracle")
	ad := &counting{Adapter: split}
	rep, err := Run(ctx, Options{Adapter: ad, Agent: replayAgent("oracle", policy.ErrorModel{}), K: 2, Parallel: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if ad.runs.Load() != 6 || len(rep.Rollouts) != 6 || !rep.Complete || !rep.Scripted || rep.Benchmark != "val" {
		t.Fatalf("oracle, k=2: %d runs, %d records, complete %t, scripted %t", ad.runs.Load(), len(rep.Rollouts), rep.Complete, rep.Scripted)
	}
	before := map[string]float64{}
	for _, r := range rep.Rollouts {
		before[key(r.Task, r.Index)] = r.WallMS
	}
	rep, err = Run(ctx, Options{Adapter: ad, Agent: replayAgent("oracle", policy.ErrorModel{}), K: 3, Parallel: 2, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if ad.runs.Load() != 9 || len(rep.Rollouts) != 9 {
		t.Fatalf("resumed with k=3: %d runs in all (want 6 + 3), %d records", ad.runs.Load(), len(rep.Rollouts))
	}
	for _, r := range rep.Rollouts {
		if w, ok := before[key(r.Task, r.Index)]; ok && w != r.WallMS {
			t.Errorf("%s rollout %d ran again on resume", r.Task, r.Index)
		}
		if r.V != 1 || r.Failure != "" || r.Steps == 0 || len(r.Interfaces) == 0 || r.Policy != "scripted:replay-oracle" {
			t.Errorf("oracle record %+v", r)
		}
		tr, err := agent.LoadTrajectory(filepath.Join(out, r.Trajectory))
		if err != nil || tr.TaskID != r.Task || len(tr.Steps) != r.Steps {
			t.Errorf("trajectory %s: %v", r.Trajectory, err)
		}
	}
	o := rep.Overall
	if len(o.PassAt) != 3 || o.PassAt[0].Value != 1 || o.PassAt[2].Value != 1 || o.PassHat[2].Value != 1 || o.AllPassed != 1 || o.PassAt[2].Tasks != 3 {
		t.Fatalf("oracle figures: %+v", o.Group)
	}
	if b := o.Behaviour; b.Episodes != 9 || b.InterfacesPerEpisode < 1 || b.Steps == 0 || b.ModelEpisodes != 0 || len(b.Solved) != 2 {
		t.Fatalf("oracle behaviour: %+v", b)
	}
	saved, err := Load(filepath.Join(out, File))
	if err != nil || len(saved.Rollouts) != 9 || saved.Overall.PassAt[0].Value != 1 {
		t.Fatalf("eval.json: %v", err)
	}
	_, err = Run(ctx, Options{Adapter: split, Agent: replayAgent("careful", policy.ErrorModel{}), K: 3, Out: out})
	if err == nil || !strings.Contains(err.Error(), "another --out") {
		t.Fatalf("another agent on the same --out: %v", err)
	}

	none := replayAgent("avoid-all", policy.ErrorModel{Avoid: []string{task.GUI, task.MCP, task.CLI, agent.File}})
	rep, err = Run(ctx, Options{Adapter: split, Agent: none, K: 3, Parallel: 2, Out: filepath.Join(t.TempDir(), "none")})
	if err != nil {
		t.Fatal(err)
	}
	o = rep.Overall
	if o.Counted != 9 || o.PassAt[0].Value != 0 || o.PassAt[2].Value != 0 || o.PassHat[0].Value != 0 || o.AllPassed != 0 {
		t.Fatalf("an agent that does nothing: %+v (counted %d)", o.Group, o.Counted)
	}
	for _, r := range rep.Rollouts {
		if r.V != 0 || r.Failure != agent.FailAgent || r.Steps != 0 || r.Total == 0 {
			t.Errorf("record %+v", r)
		}
	}
	for _, row := range rep.Tasks {
		if row.N != 3 || row.C != 0 || row.MeanCriteria >= 1 {
			t.Errorf("row %+v", row)
		}
	}
}

// TestSplitEmpty: an empty split says how to build one.
func TestSplitEmpty(t *testing.T) {
	f := fixture(t)
	f.WritePool(t, nil) // every task in rl
	_, err := (&Split{Dir: f.Dir}).Cases(context.Background())
	if err == nil || !strings.Contains(err.Error(), "val split") || !strings.Contains(err.Error(), "wildawm pool run") || !strings.Contains(err.Error(), "pool split") {
		t.Fatalf("an empty val split: %v", err)
	}
	_, err = (&Split{Dir: t.TempDir()}).Cases(context.Background())
	if err == nil || !strings.Contains(err.Error(), "wildawm pool run") {
		t.Fatalf("no pool: %v", err)
	}
}

// fake is an in-memory benchmark: case IDs, and each rollout's judged
// outcome by case and index.
type fake struct {
	ids   []string
	judge func(id string, index int) (v int, outcome string)
	runs  atomic.Int32
}

func (f *fake) Name() string { return "fake" }

func (f *fake) Cases(context.Context) ([]Case, error) {
	var out []Case
	for _, id := range f.ids {
		out = append(out, Case{ID: id, Task: &task.Task{ID: id}})
	}
	return out, nil
}

func (f *fake) Run(ctx context.Context, c Case, spec rollout.Spec) (*Judged, error) {
	f.runs.Add(1)
	index, err := strconv.Atoi(strings.TrimPrefix(spec.ID, "eval-"))
	if err != nil {
		return nil, err
	}
	v, outcome := f.judge(c.ID, index)
	tr := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: c.ID, Rollout: spec.ID, Policy: spec.Policy.Name(), Outcome: outcome,
		Steps: []agent.Step{{Interface: agent.GUI}, {Interface: agent.CLI}}}
	tr.Classify(v == 1)
	return &Judged{Trajectory: tr, V: v, Passed: v, Total: 1}, nil
}

type named string

func (n named) Name() string { return string(n) }
func (n named) Run(context.Context, *agent.Env, task.Public) (string, error) {
	return "", nil
}

// TestRunResumesInfra: an infrastructure failure is left out of the rates
// and runs again on resume; a policy that says it is someone else is an
// error (a script is never reported as a model); bad options name the fix.
func TestRunResumesInfra(t *testing.T) {
	ctx := context.Background()
	fails := true
	b := &fake{ids: []string{"a", "b"}, judge: func(id string, i int) (int, string) {
		if id == "b" && i == 2 && fails {
			return 0, agent.OutcomeInfra
		}
		return 1, agent.OutcomeDone
	}}
	ag := Agent{Name: "scripted:x", Policy: func(Case, int) (rollout.Policy, error) { return named("scripted:x"), nil }}
	out := t.TempDir()
	rep, err := Run(ctx, Options{Adapter: b, Agent: ag, K: 3, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall.Infra != 1 || rep.Overall.Counted != 5 || rep.Tasks[1].N != 2 || rep.Overall.PassAt[2].Tasks != 1 || rep.Overall.PassAt[0].Value != 1 {
		t.Fatalf("with an infrastructure failure: %+v", rep.Overall)
	}
	fails = false
	rep, err = Run(ctx, Options{Adapter: b, Agent: ag, K: 3, Out: out})
	if err != nil {
		t.Fatal(err)
	}
	if b.runs.Load() != 7 || rep.Overall.Infra != 0 || rep.Overall.Counted != 6 || !rep.Complete {
		t.Fatalf("resumed: %d runs (want 6 + 1), %+v", b.runs.Load(), rep.Overall)
	}
	liar := Agent{Name: "model:m", Policy: func(Case, int) (rollout.Policy, error) { return named("scripted:x"), nil }}
	if _, err := Run(ctx, Options{Adapter: b, Agent: liar, K: 1, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "ran as scripted:x") {
		t.Fatalf("a script under a model's name: %v", err)
	}
	broken := Agent{Name: "scripted:y", Policy: func(Case, int) (rollout.Policy, error) { return nil, errors.New("no reference") }}
	if _, err := Run(ctx, Options{Adapter: b, Agent: broken, K: 2, Parallel: 2, Out: t.TempDir()}); err == nil || !strings.Contains(err.Error(), "no reference") {
		t.Fatalf("an agent that cannot act: %v", err)
	}
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{Adapter: b, Agent: ag, K: 0, Out: out}, "-k 0"},
		{Options{Adapter: b, Agent: ag, K: 1}, "--out"},
		{Options{Adapter: b, Agent: ag, K: 1, Out: out, Budgets: []int{0}}, "--budgets"},
		{Options{Adapter: b, K: 1, Out: out}, "--agent"},
	} {
		if _, err := Run(ctx, c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %s", c.o, err, c.want)
		}
	}
}

// TestResumeRefusesTamperedRollouts: an eval.json whose rollout holds what
// no run writes (a verdict of 5, more criteria passed than there are, a
// trajectory outside the output directory) is refused on resume, naming
// the rollout, the field and the fix, and left as it was; it used to be
// kept and counted.
func TestResumeRefusesTamperedRollouts(t *testing.T) {
	ctx := context.Background()
	b := &fake{ids: []string{"a"}, judge: func(string, int) (int, string) { return 0, agent.OutcomeDone }}
	ag := Agent{Name: "scripted:x", Policy: func(Case, int) (rollout.Policy, error) { return named("scripted:x"), nil }}
	for _, c := range []struct{ from, to, want string }{
		{`"v": 0`, `"v": 5`, "rollouts[0] (task a, rollout 1): field v: 5"},
		{`"passed": 0`, `"passed": 7`, "fields passed, total: 7 of 1"},
		{`"trajectory": "trajectories/a/r1.json"`, `"trajectory": "../../etc/passwd"`, "field trajectory"},
		{`"task": "a"`, `"task": "../a"`, `field task: "../a" is not a valid name`},
	} {
		out := t.TempDir()
		if _, err := Run(ctx, Options{Adapter: b, Agent: ag, K: 1, Out: out}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(out, File)
		data, _ := os.ReadFile(path)
		if !bytes.Contains(data, []byte(c.from)) {
			t.Fatalf("eval.json has no %s:\n%s", c.from, data)
		}
		bad := bytes.Replace(data, []byte(c.from), []byte(c.to), 1)
		os.WriteFile(path, bad, 0o644)
		_, err := Run(ctx, Options{Adapter: b, Agent: ag, K: 1, Out: out})
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "give another --out") {
			t.Errorf("%s: %v, want a refusal naming %q and the fix", c.to, err, c.want)
		}
		if now, _ := os.ReadFile(path); !bytes.Equal(now, bad) {
			t.Errorf("%s: the refused eval.json was rewritten", c.to)
		}
	}
}
