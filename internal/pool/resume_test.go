package pool_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// TestResumeKeepsEarlierEvidence: a rerun never destroys a task's earlier
// outcome and gate evidence. A gated task whose revision renamed its
// script (as the reviser does) is self-checked as it now stands and
// kept, evidence untouched; a revised task the rerun's self-check rejects
// leaves, but its directory with the evidence is kept as a version; and
// a gate directory the gater cannot read back is kept as a version before
// the task is gated again.
func TestResumeKeepsEarlierEvidence(t *testing.T) {
	f := setup(t)
	ctx := context.Background()
	const family = "wishlist-balance"
	src := f.tasks[family]
	out := filepath.Join(f.dir, "resume", t.Name())
	os.RemoveAll(out)
	dir := filepath.Join(out, filepath.Base(src))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		t.Fatal(err)
	}
	// The earlier run's gate evidence, and a revision that renamed the
	// verifier's script.
	evidence := filepath.Join(dir, pool.OutcomeFile)
	os.MkdirAll(filepath.Dir(evidence), 0o755)
	if err := os.WriteFile(evidence, []byte(`{"version":1,"task_id":"earlier","accepted":false}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	renamed := ""
	edit(t, dir, func(tk *task.Task) {
		for i, c := range tk.Verifier.Criteria {
			if c.Kind == task.KindScript && renamed == "" {
				renamed = strings.TrimSuffix(c.Script, ".py") + "_r1.py"
				if err := os.Rename(filepath.Join(dir, "verifier", c.Script), filepath.Join(dir, "verifier", renamed)); err != nil {
					t.Fatal(err)
				}
				tk.Verifier.Criteria[i].Script = renamed
			}
		}
	}, nil)
	if renamed == "" {
		t.Fatalf("the %s task has no script criterion to rename", family)
	}
	fam, err := taskgen.Lookup(family)
	if err != nil {
		t.Fatal(err)
	}
	last := f.src.States[len(f.src.States)-1]
	rerun := func() *taskgen.Result {
		t.Helper()
		s := &taskgen.Synth{Source: f.src, Out: out, Diversity: &taskgen.Diversity{}, Check: func(*persona.Persona) *rollout.Env { return f.env }}
		if _, err := s.Resume(ctx); err != nil {
			t.Fatal(err)
		}
		// The job that wrote the task (pooltest's seed).
		rs, err := s.Run(ctx, s.Jobs([]taskgen.Family{fam}, func(st taskgen.State) bool { return st.Day == last.Day }, 1), 1, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			for _, p := range append(r.Tasks, r.Rejected...) {
				if p.ID == filepath.Base(dir) {
					return r
				}
			}
		}
		t.Fatalf("the rerun did not reach %s", filepath.Base(dir))
		return nil
	}
	r := rerun()
	if len(r.Tasks) != 1 || len(r.Rejected) != 0 {
		t.Fatalf("the revised task on a rerun: %d kept, rejected %+v", len(r.Tasks), r.Rejected)
	}
	if b, err := os.ReadFile(evidence); err != nil || !strings.Contains(string(b), `"earlier"`) {
		t.Fatalf("the rerun lost the gate evidence: %q, %v", b, err)
	}
	if tk, err := task.Load(dir); err != nil || !strings.Contains(string(mustJSON(t, tk.Verifier)), renamed) {
		t.Fatalf("the rerun rewrote the revised task: %v", err)
	}

	// A revision the rerun's self-check rejects: the task leaves, its
	// evidence stays as a version.
	if err := os.WriteFile(filepath.Join(dir, "verifier", renamed), []byte("from _verify_sdk import result\nresult(False, \"broken\")\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	edit(t, dir, func(tk *task.Task) { tk.Rationale += " (revised again)" }, nil)
	r = rerun()
	if len(r.Rejected) != 1 {
		t.Fatalf("a revision that fails the self-check: rejected %+v, kept %d", r.Rejected, len(r.Tasks))
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the rejected task's directory stayed: %v", err)
	}
	vs, err := taskgen.Versions(dir)
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Why, "self-check rejected") {
		t.Fatalf("versions %+v, %v: want the rejected task kept, saying why", vs, err)
	}
	kept := filepath.Join(out, taskgen.VersionsDir, filepath.Base(dir), "1")
	if b, err := os.ReadFile(filepath.Join(kept, pool.OutcomeFile)); err != nil || !strings.Contains(string(b), `"earlier"`) {
		t.Errorf("the version lost the gate evidence: %q, %v", b, err)
	}
	if _, err := task.Load(kept); err != nil {
		t.Errorf("the version's task does not load: %v", err)
	}

	// A gate directory the gater cannot read back (an outcome of another
	// version): kept as a version, then the task is gated again.
	regate := f.copyTask(t, "cafe-near-venue")
	os.MkdirAll(filepath.Join(regate, pool.GateDir), 0o755)
	stale := []byte(`{"version":999,"task_id":"` + filepath.Base(regate) + `"}` + "\n")
	if err := os.WriteFile(filepath.Join(regate, pool.OutcomeFile), stale, 0o644); err != nil {
		t.Fatal(err)
	}
	o, err := f.gater(gate.Config{}).Do(ctx, pool.Job{TaskDir: regate, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if back, err := pool.LoadOutcome(regate); err != nil || back.TaskID != o.TaskID {
		t.Fatalf("the task gated again has no outcome: %v", err)
	}
	vs, err = taskgen.Versions(regate)
	if err != nil || len(vs) != 1 || !strings.Contains(vs[0].Why, "gated again") {
		t.Fatalf("versions %+v, %v: want the earlier gate directory kept", vs, err)
	}
	if b, err := os.ReadFile(filepath.Join(filepath.Dir(regate), taskgen.VersionsDir, filepath.Base(regate), "1", pool.OutcomeFile)); err != nil || string(b) != string(stale) {
		t.Errorf("the kept version's outcome is %q (%v), want the earlier one", b, err)
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
