package pool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/taskgen/casestudytest"
	"github.com/wildawm/wildawm/internal/world"
)

// TestCaseStudyThroughTheGater gates the paper's case study (the
// case-study family's task, the demo's scripted ensemble, real Chromium)
// with the one gater, checks that it is accepted for the right reason
// (hard: only the procedure that looks at the photos succeeds hint-free;
// without the photos it fails, with them it passes), then makes the
// image-ablation check, the probe and the difficulty gate reject variants
// of it, end to end through the gater's stages on the stored rollouts.
func TestCaseStudyThroughTheGater(t *testing.T) {
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, "chromium is not installed (wildawm setup installs it): "+err.Error())
	}
	ctx := context.Background()
	cs := casestudytest.New(t, "")
	t.Cleanup(cs.Close)
	gater := func() *pool.Gater {
		g := &pool.Gater{Env: func(*task.Task) (pool.Worlds, error) { return cs.Env, nil }, Progress: t.Logf,
			Ensemble: func(*task.Task, uint64) []rollout.Spec { return policy.Ensemble() }}
		pool.Defaults(g)
		return g
	}
	o, err := gater().Do(ctx, pool.Job{TaskDir: cs.TaskDir, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if !o.Accepted || o.Difficulty != "hard" {
		t.Fatalf("the case study: accepted %t, difficulty %s, failed %v:\n%s", o.Accepted, o.Difficulty, o.Report.FailedGates(), gate.Feedback(o.Report))
	}
	for _, r := range o.Rollouts {
		if r.Ensemble() && r.V == 1 && len(r.Interfaces) != 3 {
			t.Errorf("rollout %s succeeded with interfaces %v", r.ID, r.Interfaces)
		}
		if r.ID == "r2" && r.V != 0 {
			t.Errorf("the image-blind rollout r2 succeeded hint-free: the photo does not decide the task")
		}
	}
	if g := gateResult(t, o, gate.GateImageAblation); !g.Passed || g.Verdict != "image_needed" {
		t.Fatalf("image ablation: %+v", g)
	}
	if o.Report.Probe == nil || o.Report.Probe.Outcome != gate.OutcomeNotApplicable {
		t.Errorf("probe %+v, want not_applicable: the offline observer is deterministic", o.Report.Probe)
	}

	// copyCase is a copy of the gated case study's directory, its task
	// changed by edit (nil: as it is).
	copyCase := func(t *testing.T, edit func(*task.Task)) string {
		t.Helper()
		dir := filepath.Join(t.TempDir(), filepath.Base(cs.TaskDir))
		if err := os.CopyFS(dir, os.DirFS(cs.TaskDir)); err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			tk, err := task.Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			edit(tk)
			// The scripts no criterion runs any more go.
			scripts, _ := filepath.Glob(filepath.Join(dir, "verifier", "scripts", "*.py"))
			for _, path := range scripts {
				rel := "scripts/" + filepath.Base(path)
				if rel != task.SDKScript && !slices.ContainsFunc(tk.Verifier.Criteria, func(c task.Criterion) bool { return c.Script == rel }) {
					os.Remove(path)
				}
			}
			if err := tk.Save(dir); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	// evaluate gates the task at dir on recs (the accepted run's
	// rollouts, some replaced), without revisions and without the
	// mutation check (not under test here).
	evaluate := func(t *testing.T, g *pool.Gater, dir string, recs []pool.RolloutRecord) *pool.Outcome {
		t.Helper()
		g.MaxRevisions, g.Mutate = -1, nil
		o, err := g.Evaluate(ctx, pool.EvaluateJob{TaskDir: dir, Rollouts: recs, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: accepted %v, failed %v", o.TaskID, o.Accepted, o.Report.FailedGates())
		return o
	}
	// rerun runs the rollouts of indexes of the task at dir again with g,
	// in place of the accepted run's.
	rerun := func(t *testing.T, g *pool.Gater, dir string, indexes ...int) []pool.RolloutRecord {
		t.Helper()
		recs := slices.Clone(o.Rollouts)
		for _, i := range indexes {
			r, err := g.Rollout(ctx, pool.RolloutJob{TaskDir: dir, Seed: 1, Index: i})
			if err != nil {
				t.Fatal(err)
			}
			recs[i] = *r
		}
		return recs
	}
	ablation := slices.IndexFunc(o.Rollouts, func(r pool.RolloutRecord) bool { return r.Ablation == pool.AblationWithheld })
	if ablation < 0 || o.Rollouts[ablation+1].Ablation != pool.AblationShown {
		t.Fatalf("no image-ablation rollouts with their control among %d", len(o.Rollouts))
	}

	// A verifier of the shortlist and a cart of either look-alike does not
	// need the photo: the procedure without it passes V.
	t.Run("image_ablation: the image does not decide", func(t *testing.T) {
		o := evaluate(t, gater(), copyCase(t, func(tk *task.Task) {
			tk.Verifier.Criteria = slices.DeleteFunc(tk.Verifier.Criteria, func(c task.Criterion) bool { return !strings.HasPrefix(c.ID, "shortlist") })
			tk.Verifier.Criteria = append(tk.Verifier.Criteria, task.Criterion{ID: "either", Kind: task.KindSQL, DB: "shop",
				Query:  fmt.Sprintf("SELECT COUNT(*) FROM cart_items WHERE sku IN ('%s', '%s') AND qty = 2", catalog.CandidateWhite, catalog.CandidateBlack),
				Expect: json.RawMessage(`1`)})
		}), o.Rollouts)
		if g := gateResult(t, o, gate.GateImageAblation); g.Passed || g.Verdict != "image_not_needed" || o.Accepted || o.PaperAccepted {
			t.Fatalf("image_ablation on a task the image does not decide: %+v", g)
		}
	})
	// An ablation policy that fails with the photos shown too says
	// nothing about them.
	t.Run("image_ablation: an uninformative policy", func(t *testing.T) {
		g := gater()
		g.Ablation = func(*task.Task) rollout.Policy { return policy.Quitter() }
		dir := copyCase(t, nil)
		o := evaluate(t, g, dir, rerun(t, g, dir, ablation, ablation+1))
		if g := gateResult(t, o, gate.GateImageAblation); g.Passed || g.Verdict != "uninformative" || o.Accepted {
			t.Fatalf("image_ablation with a policy that cannot solve the task: %+v", g)
		}
	})
	t.Run("counterfactual_probe: a judge that edits its verifier copy", func(t *testing.T) {
		g := gater()
		g.Observer = func(env pool.Worlds, tk *task.Task, ref world.ID, vcopy string) pool.WorldJudge {
			return &judge.Observer{Env: env, Task: tk, Reference: ref, VerifierDir: vcopy, Pressure: judge.Tamper}
		}
		o := evaluate(t, g, copyCase(t, nil), o.Rollouts)
		pg := gateResult(t, o, gate.GateCounterfactualProbe)
		if pg.Passed || o.Report.Probe.Outcome != gate.OutcomeCaveFilesChanged || len(o.Report.Probe.ChangedFiles) == 0 {
			t.Fatalf("a judge that rewrites its verifier copy: %+v, probe %+v", pg, o.Report.Probe)
		}
	})
	// The one hint-free success's instance dies in every attempt: the
	// task is rejected for infrastructure, never rated by it.
	t.Run("difficulty: infrastructure is never difficulty", func(t *testing.T) {
		cs.Env.BeforePolicy = func(ctx context.Context, s rollout.Spec, attempt int, inst *runtime.Instance, sess *rollout.Session) {
			inst.Close(ctx) // the instance dies under the agent
		}
		dir := copyCase(t, nil)
		recs := rerun(t, gater(), dir, 0)
		cs.Env.BeforePolicy = nil
		if recs[0].Outcome != rollout.OutcomeInfra {
			t.Fatalf("r1 with its instance dying: outcome %s", recs[0].Outcome)
		}
		o := evaluate(t, gater(), dir, recs)
		if g := gateResult(t, o, gate.GateDifficulty); g.Passed || o.Difficulty != gate.Infrastructure || !slices.Equal(o.Report.InfraErrors, []string{"r1"}) {
			t.Fatalf("a task whose one hint-free success never ran: difficulty %s, gate %+v, infra %v", o.Difficulty, g, o.Report.InfraErrors)
		}
		if got := o.InfraRejected(); !slices.Contains(got, gate.GateDifficulty) {
			t.Fatalf("InfraRejected %v: want the difficulty gate", got)
		}
		// The next run gates it again (the rejection was the outage's),
		// the earlier gate evidence kept as a version: here the gating
		// starts, reaching the environment, instead of reading the
		// rejection back.
		reached := errors.New("the environment was asked for")
		again := &pool.Gater{Env: func(*task.Task) (pool.Worlds, error) { return nil, reached }}
		if _, err := again.Do(ctx, pool.Job{TaskDir: dir, Seed: 1}); !errors.Is(err, reached) {
			t.Fatalf("a rerun after the outage: %v; want the task gated again", err)
		}
		kept, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), taskgen.VersionsDir, filepath.Base(dir), "*", pool.OutcomeFile))
		if len(kept) != 1 {
			t.Errorf("the outage's gate evidence was not kept as a version: %v", kept)
		}
	})
}
