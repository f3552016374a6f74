package cli

import (
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// TestGateWithModelFileTools: a model ensemble that reads the home
// through the harness's file tools (read_file, as real models do all the
// time) is gated: the rollouts record the file interface, and the gate
// decides (here: the model solves nothing) instead of refusing the
// candidate ("used interface file is not one of gui, mcp, cli").
func TestGateWithModelFileTools(t *testing.T) {
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fake.Turn{Content: "I read my notes and stopped there."}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_file", Arguments: `{"path":"notes/logins.md"}`}}}
	})
	dir := f.TaskDirs["model-pick"]
	_, stderr, err := run(t, t.TempDir(), "gate", "--dir", f.Dir, "--task", dir, "--fake-browser", "--max-revisions", "0",
		"--ensemble-model", srv.URL()+"#"+fake.DefaultModel)
	if err != nil && !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("gate with a model ensemble that uses read_file: %v\n%s", err, stderr)
	}
	o, err := pool.LoadOutcome(dir)
	if err != nil {
		t.Fatalf("no outcome: %v\n%s", err, stderr)
	}
	n := 0
	for _, r := range o.Rollouts {
		if r.Ensemble() && slices.Contains(r.Interfaces, "file") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d ensemble rollouts record the file interface, want 6: %+v", n, o.Rollouts)
	}
	if g, ok := o.Report.Gate("solvability"); !ok || g.Passed {
		t.Errorf("solvability %+v: the model solved nothing", g)
	}
}

// TestGateOutlivesAJudgeOutage: a judge model whose server is down does
// not end the gating: the rollouts keep their worlds, the task is rejected
// for infrastructure (never for its quality), and gating it again with the
// server back judges it, the outage's gating kept as a version.
func TestGateOutlivesAJudgeOutage(t *testing.T) {
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	var down atomic.Bool
	down.Store(true)
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if down.Load() {
			return fake.Turn{Status: 503, Error: "no healthy upstream"}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"failed","reason":"not done"}`}}}
	})
	dir := f.TaskDirs["model-pick"]
	args := []string{"gate", "--dir", f.Dir, "--task", dir, "--fake-browser", "--max-revisions", "0",
		"--judge-model", srv.URL() + "#" + fake.DefaultModel, "--model-retries", "0", "--model-backoff", "1ms"}
	_, stderr, err := run(t, t.TempDir(), args...)
	if err == nil || !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("gate with the judge's server down: %v\n%s", err, stderr)
	}
	o, err := pool.LoadOutcome(dir)
	if err != nil {
		t.Fatalf("no outcome after the outage: %v\n%s", err, stderr)
	}
	if len(o.InfraRejected()) == 0 {
		t.Fatalf("rejected by %v with the judge down; want a rejection for infrastructure", o.Report.FailedGates())
	}
	n := 0
	for _, r := range o.Rollouts {
		if r.Ensemble() && strings.Contains(r.JudgeError, "HTTP 503") {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no rollout records the judge's failure: %+v", o.Rollouts)
	}
	down.Store(false)
	run(t, t.TempDir(), args...)
	o, err = pool.LoadOutcome(dir)
	if err != nil || len(o.InfraRejected()) != 0 {
		t.Fatalf("gated again with the server back: %v, infrastructure %v", err, o.InfraRejected())
	}
	for _, r := range o.Rollouts {
		if r.Ensemble() && r.JudgeError != "" {
			t.Errorf("rollout %s still without a verdict: %s", r.ID, r.JudgeError)
		}
	}
	if kept, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), taskgen.VersionsDir, filepath.Base(dir), "*", pool.OutcomeFile)); len(kept) != 1 {
		t.Errorf("the outage's gating was not kept as a version: %v", kept)
	}
}
