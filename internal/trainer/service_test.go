package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

var shared pooltest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

// fixture is the package's pool: every task in the rl split.
func fixture(t testing.TB) *pooltest.Fixture {
	t.Helper()
	f := shared.Get(t)
	if _, err := os.Stat(filepath.Join(f.Dir, pool.File)); err != nil {
		f.WritePool(t, nil)
	}
	return f
}

// open starts a service on the fixture with its own state directory.
func open(t *testing.T, f *pooltest.Fixture, opts Options) *Service {
	t.Helper()
	opts.Dir = f.Dir
	if opts.StateDir == "" {
		opts.StateDir = t.TempDir()
	}
	if opts.Env == nil {
		opts.Env = func(*task.Task) (Rollouts, error) { return f.Env, nil }
	}
	if opts.Parallel == 0 {
		opts.Parallel = 3
	}
	s, err := Open(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	return s
}

// checkBatch checks the invariants every batch keeps: exactly G distinct
// rollouts per ready group, each with segments 0..n-1 carrying one
// advantage, the advantage being the rollout's over the pool of K, masks
// and logprobs aligned, L_j the sum of the masks.
func checkBatch(t *testing.T, b *Batch) {
	t.Helper()
	if b.Version != SchemaVersion || b.Status != StatusDone {
		t.Fatalf("batch %s: version %d status %s %s", b.ID, b.Version, b.Status, b.Error)
	}
	g := b.Request.G
	ready := 0
	for _, gr := range b.Groups {
		if gr.State != rl.Ready.String() {
			if len(gr.Selected) != 0 {
				t.Errorf("group %d (%s) is %s but has a selection", gr.Index, gr.TaskID, gr.State)
			}
			continue
		}
		ready++
		var outs []rl.Outcome
		for _, r := range gr.Rewards {
			outs = append(outs, rl.Outcome{Reward: r, FormatFailure: r == rl.FormatFailureReward})
		}
		adv, mu, sigma := rl.Advantages(outs)
		if math.Abs(mu-gr.Mu) > 1e-12 || math.Abs(sigma-gr.Sigma) > 1e-12 || gr.K != len(gr.Rewards) {
			t.Errorf("group %d: mu %v sigma %v K %d, recomputed %v %v", gr.Index, gr.Mu, gr.Sigma, gr.K, mu, sigma)
		}
		want := min(g, gr.K)
		if len(gr.Selected) != want {
			t.Errorf("group %d: %d selected of K=%d, want %d", gr.Index, len(gr.Selected), gr.K, want)
		}
		type traj struct {
			segs  []int
			count int
			adv   float64
			mask  int
			l     int
		}
		trajs := map[string]*traj{}
		for _, s := range b.Samples {
			if s.GroupIndex != gr.Index {
				continue
			}
			tr := trajs[s.RolloutID]
			if tr == nil {
				tr = &traj{count: s.SegmentCount, adv: s.Advantage, l: s.TrajectoryTrainableTokens}
				trajs[s.RolloutID] = tr
				i := slices.Index(gr.Slots, s.Slot)
				if i < 0 || math.Abs(adv[i]-s.Advantage) > 1e-12 || gr.Rewards[i] != s.Reward {
					t.Errorf("rollout %s: advantage %v reward %v, pool says %v %v", s.RolloutID, s.Advantage, s.Reward, adv, gr.Rewards)
				}
			}
			tr.segs = append(tr.segs, s.SegmentIndex)
			if s.Advantage != tr.adv || s.SegmentCount != tr.count {
				t.Errorf("rollout %s: segments disagree on advantage or count", s.RolloutID)
			}
			if len(s.LossMask) != len(s.ResponseTokenIDs) || len(s.RolloutLogprobs) != len(s.ResponseTokenIDs) {
				t.Errorf("rollout %s segment %d: lengths %d %d %d", s.RolloutID, s.SegmentIndex, len(s.ResponseTokenIDs), len(s.LossMask), len(s.RolloutLogprobs))
			}
			for i, m := range s.LossMask {
				tr.mask += m
				if m == 0 && s.RolloutLogprobs[i] != 0 {
					t.Errorf("rollout %s: logprob under mask 0", s.RolloutID)
				}
			}
		}
		if len(trajs) != want {
			t.Errorf("group %d: %d trajectories in the samples, want %d", gr.Index, len(trajs), want)
		}
		for id, tr := range trajs {
			if !slices.Equal(tr.segs, seq(tr.count)) {
				t.Errorf("rollout %s: segments %v of %d", id, tr.segs, tr.count)
			}
			if tr.mask != tr.l {
				t.Errorf("rollout %s: L_j %d, masks sum to %d", id, tr.l, tr.mask)
			}
		}
	}
	if ready != b.Stats.Ready {
		t.Errorf("%d ready groups, stats say %d", ready, b.Stats.Ready)
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

// TestBatchOnInstances: the scripted replay ensemble through the whole
// service on live instances: a valid batch, saved with the state; a
// repeated request returns it without a rollout; a service reopened on
// the same directory continues from the saved kappas.
func TestBatchOnInstances(t *testing.T) {
	f := fixture(t)
	state := t.TempDir()
	var runs atomic.Int64
	s := open(t, f, Options{StateDir: state})
	req := Request{Step: 1, Tasks: 3, G: 2, Policy: PolicyReplayEnsemble, Seed: 5}
	b, err := s.Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	if len(b.Groups) != 3 || b.Stats.Rollouts < 6 {
		t.Fatalf("groups %d rollouts %d: %+v", len(b.Groups), b.Stats.Rollouts, b.Stats)
	}
	if b.Tokens {
		t.Errorf("a scripted policy's batch says it has tokens")
	}
	for _, smp := range b.Samples {
		if !strings.HasPrefix(smp.Policy, "scripted:") || smp.TrajectoryTrainableTokens != 0 || smp.LossWeight != 0 {
			t.Errorf("scripted sample %+v", smp)
		}
	}
	saved, err := loadBatch(filepath.Join(state, "batches", "step-000001.json"))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(saved.Groups) != fmt.Sprint(b.Groups) {
		t.Errorf("saved batch differs")
	}
	st, err := s.LoadState(1)
	if err != nil || st.Step != 1 || len(st.Kappa) != 3 {
		t.Fatalf("state after step 1: %+v %v", st, err)
	}
	for _, gr := range b.Groups {
		if st.Kappa[gr.TaskID] != gr.NextKappa {
			t.Errorf("%s: saved kappa %v, group's next %v", gr.TaskID, st.Kappa[gr.TaskID], gr.NextKappa)
		}
	}
	// Same request again: the saved batch, no rollout run.
	s.Close(context.Background())
	s2 := open(t, f, Options{StateDir: state, Rollout: func(context.Context, RolloutJob) (*RolloutResult, error) {
		runs.Add(1)
		return nil, fmt.Errorf("no rollout expected")
	}})
	again, err := s2.Batch(context.Background(), req)
	if err != nil || runs.Load() != 0 || fmt.Sprint(again.Samples) != fmt.Sprint(b.Samples) {
		t.Fatalf("repeated step: err %v, %d rollouts run", err, runs.Load())
	}
	other := req
	other.G = 3
	if _, _, err := s2.Submit(other); err == nil || !strings.Contains(err.Error(), "already requested") {
		t.Fatalf("a different request for a done step: %v", err)
	}
	// Step 2 on the reopened service starts from step 1's kappas.
	s2.Close(context.Background())
	var kappas []float64
	s3 := open(t, f, Options{StateDir: state, Parallel: 1})
	req2 := req
	req2.Step = 2
	b2, err := s3.Batch(context.Background(), req2)
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b2)
	for _, gr := range b2.Groups {
		kappas = append(kappas, gr.Kappa)
		if gr.Kappa != st.Kappa[gr.TaskID] {
			t.Errorf("step 2 %s: kappa %v, step 1 left %v", gr.TaskID, gr.Kappa, st.Kappa[gr.TaskID])
		}
		if gr.Launched < (rl.Config{G: 2}).Launch(gr.Kappa) {
			t.Errorf("step 2 %s: launched %d with kappa %v", gr.TaskID, gr.Launched, gr.Kappa)
		}
	}
	t.Logf("step 1: %+v; step 2 kappas %v", b.Stats, kappas)
}

// scripted is an instant rollout with a reward per slot, for the
// scheduler's behaviour through the service.
func scripted(rewards func(task string, slot int) float64, ran *atomic.Int64) func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
	return func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		if ran != nil {
			ran.Add(1)
		}
		r := rewards(j.TaskID, j.Slot)
		res := &RolloutResult{RolloutID: j.RolloutID, Policy: "scripted:test", Outcome: rollout.OutcomeDone, Reward: r, V: r == 1,
			FormatFailure: r == rl.FormatFailureReward}
		res.Trajectory = newTestTrajectory(j)
		return res, ctx.Err()
	}
}

// TestWorkedExampleThroughService: PAPER.md's worked example with instant
// rollouts, through the service's scheduling loop and saved state.
func TestWorkedExampleThroughService(t *testing.T) {
	f := fixture(t)
	var ran atomic.Int64
	step := 1
	rewards := func(id string, slot int) float64 {
		if step == 1 {
			return map[int]float64{7: 1, 10: 0.05}[slot] // the base all 0; then one 1 and one 0.05
		}
		return map[int]float64{1: 1, 2: 0.05}[slot]
	}
	state := t.TempDir()
	s := open(t, f, Options{StateDir: state, Parallel: 1, Rollout: scripted(rewards, &ran)})
	b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 1, G: 4, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	gr := b.Groups[0]
	if gr.State != "ready" || gr.K != 12 || gr.Launched != 12 || math.Abs(gr.NextKappa-2.6) > 1e-12 || ran.Load() != 12 {
		t.Fatalf("step 1: %+v, ran %d", gr, ran.Load())
	}
	if !slices.Contains(gr.Selected, 7) {
		t.Errorf("the one success is not selected: %v", gr.Selected)
	}
	step = 2
	ran.Store(0)
	b, err = s.Batch(context.Background(), Request{Step: 2, Tasks: 1, G: 4, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	gr = b.Groups[0]
	// 12 launched; with one worker the base decides before any other runs:
	// the other 8 are cancelled unrun.
	if gr.Launched != 12 || gr.K != 4 || gr.Cancelled != 8 || math.Abs(gr.NextKappa-1.32) > 1e-12 || ran.Load() != 4 {
		t.Fatalf("step 2: %+v, ran %d", gr, ran.Load())
	}
	if len(b.Samples) != 4 {
		t.Errorf("%d samples, want the 4 of the pool", len(b.Samples))
	}
}

// TestMasteredAndExhaustedDropped: a task every rollout solves and one no
// rollout tells apart are dropped from the step; kappa goes to 1 and 3.
func TestMasteredAndExhaustedDropped(t *testing.T) {
	f := fixture(t)
	p, err := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	if err != nil {
		t.Fatal(err)
	}
	ids := []string{p.Tasks[0].ID, p.Tasks[1].ID}
	s := open(t, f, Options{Rollout: scripted(func(id string, slot int) float64 {
		if id == ids[0] {
			return 1
		}
		if id == ids[1] {
			return 0.05
		}
		return map[int]float64{0: 1}[slot]
	}, nil)})
	b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 3, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	for _, gr := range b.Groups {
		want := map[string]string{ids[0]: "mastered", ids[1]: "exhausted"}[gr.TaskID]
		if want == "" {
			want = "ready"
		}
		if gr.State != want {
			t.Errorf("%s: %s, want %s", gr.TaskID, gr.State, want)
		}
		if k := map[string]float64{"mastered": 1, "exhausted": 3}[gr.State]; k != 0 && gr.NextKappa != k {
			t.Errorf("%s %s: next kappa %v", gr.TaskID, gr.State, gr.NextKappa)
		}
	}
	if b.Stats.Mastered != 1 || b.Stats.Exhausted != 1 || b.Stats.Ready != 1 || len(b.Samples) != 4 {
		t.Errorf("stats %+v, %d samples", b.Stats, len(b.Samples))
	}
}

// TestInfraAbandonsGroup: a slot whose infrastructure fails every time is
// retried, then its group is abandoned with its kappa unchanged; the
// others go on.
func TestInfraAbandonsGroup(t *testing.T) {
	f := fixture(t)
	p, _ := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	bad := p.Tasks[0].ID
	var tries atomic.Int64
	s := open(t, f, Options{Rollout: func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		if j.TaskID == bad && j.Slot == 1 {
			tries.Add(1)
			return &RolloutResult{RolloutID: j.RolloutID, Outcome: rollout.OutcomeInfra, Failure: "infra", Error: "sandbox died", Trajectory: newTestTrajectory(j)}, nil
		}
		return scripted(func(string, int) float64 { return float64(j.Slot % 2) }, nil)(ctx, j)
	}})
	b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 3, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	if tries.Load() != MaxTries || b.Stats.Abandoned != 1 || b.Stats.Retried != MaxTries-1 {
		t.Fatalf("tries %d, stats %+v", tries.Load(), b.Stats)
	}
	for _, gr := range b.Groups {
		if gr.TaskID == bad && (gr.State != "infra" || gr.NextKappa != gr.Kappa || !strings.Contains(gr.Why, "sandbox died")) {
			t.Errorf("abandoned group: %+v", gr)
		}
	}
	st, _ := s.LoadState(1)
	if _, ok := st.Kappa[bad]; ok {
		t.Errorf("an abandoned task's kappa was saved: %v", st.Kappa)
	}
}

// TestRequestErrors: every bad field is named, and nothing is computed.
func TestRequestErrors(t *testing.T) {
	f := fixture(t)
	s := open(t, f, Options{Rollout: scripted(func(string, int) float64 { return 0 }, nil)})
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Tasks: 1, Policy: PolicyReplayEnsemble}, "step"},
		{Request{Step: 1, Policy: PolicyReplayEnsemble}, "tasks"},
		{Request{Step: 1, Tasks: 1}, "engine"},
		{Request{Step: 1, Tasks: 1, G: 100, Policy: PolicyReplayEnsemble}, "g:"},
		{Request{Step: 1, Tasks: 1, Engine: "http://127.0.0.1:1#m"}, "engine"},
		{Request{Step: 1, Tasks: 1, Engine: "ollama+http://127.0.0.1:11434/v1#qwen3"}, "Ollama returns no token ids"},
		{Request{Step: 1, Tasks: 1, Engine: "http://127.0.0.1:1/v1#m", Policy: PolicyReplayEnsemble}, "policy"},
		{Request{Step: 1, Tasks: 1, Policy: "scripted:nobody"}, "not an offline policy"},
		{Request{Step: 1, Tasks: 9, Policy: PolicyReplayEnsemble}, "split has 3 tasks"},
		{Request{Step: 1, Tasks: 1, Policy: PolicySoftmax, PolicyParams: json.RawMessage(`{"logits":[[1]]}`)}, "policy_params"},
		{Request{Step: 1, Tasks: 1, Engine: "http://127.0.0.1:1/v1#m", Harness: "opencode"}, "harness"},
		{Request{Step: 1, Tasks: 1, Policy: PolicyReplayEnsemble, Sampling: Sampling{TopP: ptr(1.5)}}, "top_p"},
	} {
		_, _, err := s.Submit(c.req)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.req, err, c.want)
		}
	}
	if steps, _ := s.Steps(); len(steps) != 0 {
		t.Errorf("bad requests saved batches: %v", steps)
	}
}

func ptr[T any](v T) *T { return &v }

func newTestTrajectory(j RolloutJob) *agent.Trajectory {
	return &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: j.TaskID, Rollout: j.RolloutID, Policy: "scripted:test", Outcome: rollout.OutcomeDone}
}
