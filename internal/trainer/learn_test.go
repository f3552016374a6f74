package trainer

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/policy/observe"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// TestLearnRaisesSuccess is the offline learning check: the softmax policy
// trained through the service on live instances by the GRPO objective
// succeeds more often after a few steps than at the start, and does the
// reference's steps more often in every context its tasks use.
func TestLearnRaisesSuccess(t *testing.T) {
	f := fixture(t)
	s := open(t, f, Options{})
	curve, final, err := Learn(context.Background(), s, LearnOptions{Steps: 8, Tasks: 3, G: 4, Progress: func(p LearnPoint) {
		t.Logf("step %d: success %d/%d reward %.3f rollouts %d ready %d p_do %v %.0fms", p.Step, p.BaseSuccesses, p.BaseRollouts, p.MeanReward, p.Rollouts, p.Ready, p.PDo, p.WallMS)
	}})
	if err != nil {
		t.Fatal(err)
	}
	rate := func(pts []LearnPoint) float64 {
		n, k := 0, 0
		for _, p := range pts {
			n += p.BaseRollouts
			k += p.BaseSuccesses
		}
		return float64(k) / float64(n)
	}
	first, last := rate(curve[:3]), rate(curve[len(curve)-3:])
	if last < first+0.15 {
		t.Errorf("success over the first 3 steps %.2f, over the last 3 %.2f: the policy did not learn", first, last)
	}
	start := policy.DefaultSoftmaxParams()
	for _, c := range []int{0, 1, 2} { // gui, mcp, cli: the contexts the fixture's references use
		p0 := softmax(start.Logits[c])[0]
		p1 := softmax(final.Logits[c])[0]
		if p1 <= p0 {
			t.Errorf("context %s: P(do) %.3f -> %.3f", policy.SoftmaxContexts[c], p0, p1)
		}
	}
}

func softmax(z []float64) []float64 { return (&rl.Tabular{Logits: [][]float64{z}}).Probs(0) }

// TestObserveNeverReadsReference runs the observation policy, as the
// service's registry builds it, on each fixture task and on a copy of it
// whose reference completion and answer are blanked: it must act (it
// reads the observations, not the reference) and take exactly the same
// actions. The policy's package is held to task.Public by
// observe.TestNoReference.
func TestObserveNeverReadsReference(t *testing.T) {
	f := fixture(t)
	t.Parallel()
	ctx := context.Background()
	mk := DefaultPolicies()[PolicyObserve]
	for fam, tk := range f.Tasks {
		blank := *tk
		blank.Reference, blank.Answer = nil, ""
		var acts [2][]string
		for i, tt := range []*task.Task{tk, &blank} {
			p, err := mk(tt, 0, 7, nil)
			if err != nil {
				t.Fatal(err)
			}
			res, err := f.Env.Run(ctx, tt, rollout.Spec{ID: fmt.Sprintf("blank-%d", i), Policy: p})
			if err != nil {
				t.Fatal(err)
			}
			for _, st := range res.Trajectory.Steps {
				args, _ := json.Marshal(st.Args)
				// Each instance serves its sites on ports of its own.
				acts[i] = append(acts[i], st.Tool+" "+portRE.ReplaceAllString(string(args), "127.0.0.1:PORT"))
			}
			if i == 0 {
				checkObserveTokens(t, res.Trajectory)
			}
		}
		if len(acts[1]) < 5 {
			t.Errorf("%s: with the reference blanked the policy took %d actions", fam, len(acts[1]))
		}
		if !slices.Equal(acts[0], acts[1]) {
			t.Errorf("%s: the actions differ with the reference blanked:\n%q\n%q", fam, acts[0], acts[1])
		}
	}
}

var portRE = regexp.MustCompile(`127\.0\.0\.1:\d+`)

// checkObserveTokens builds a trajectory's segment samples as the service
// does and checks that the tokens alone give back every decision with the
// log-probability the rollout sampled it with.
func checkObserveTokens(t *testing.T, tr *agent.Trajectory) {
	t.Helper()
	b := &Batch{}
	smps, breaks := samples(&RolloutResult{RolloutID: "r", Trajectory: tr}, 4, 1)
	if breaks != 0 {
		t.Errorf("%d prefix breaks: each action's segment must start at a marked cut", breaks)
	}
	for _, s := range smps {
		s.Advantage = 1
		b.Samples = append(b.Samples, s)
	}
	_, m, err := observe.ParseParams(nil)
	if err != nil {
		t.Fatal(err)
	}
	_, st, err := m.TrainStep(tokenSamples(b), 0)
	if err != nil {
		t.Fatal(err)
	}
	if st.Decisions != len(tr.Turns) || st.Decisions == 0 {
		t.Errorf("%d decisions read back from the samples, the trajectory has %d turns", st.Decisions, len(tr.Turns))
	}
	if st.MaxLogprobGap > 1e-9 {
		t.Errorf("the log-probabilities recomputed from the tokens differ from the rollout's by up to %g", st.MaxLogprobGap)
	}
}

// TestLearnObserveControl is the observation policy's learning check
// through the service, trained and frozen side by side on the same tasks
// and seeds: both see the same step 1 (same parameters), the control's
// weights never move, and every point counts the G base rollouts of each
// group. (On this fixture's tasks the policy earns no reward, so nothing
// is learned: docs/BENCHMARKS.md has the run on a pool where it can.)
func TestLearnObserveControl(t *testing.T) {
	f := fixture(t)
	t.Parallel()
	var curves [2][]LearnPoint
	var finals [2]*observe.Params
	// One after the other: the two services would name their rollouts'
	// instances alike in the fixture's one work directory.
	for i, frozen := range []bool{false, true} {
		s := open(t, f, Options{Parallel: 3})
		var err error
		curves[i], finals[i], err = LearnObserve(context.Background(), s, LearnOptions{Steps: 2, Tasks: 3, G: 2, Seed: 5, Frozen: frozen})
		if err != nil {
			t.Fatalf("run %d: %v", i, err)
		}
	}
	for i, c := range curves {
		if len(c) != 2 {
			t.Fatalf("run %d: %d points", i, len(c))
		}
		for _, p := range c {
			if p.BaseRollouts != 3*2 || p.Observe == nil {
				t.Errorf("run %d step %d: %d base rollouts, stats %v", i, p.Step, p.BaseRollouts, p.Observe)
			}
			t.Logf("run %d step %d: success %d/%d reward %.3f rollouts %d ready %d %+v", i, p.Step, p.BaseSuccesses, p.BaseRollouts, p.MeanReward, p.Rollouts, p.Ready, *p.Observe)
		}
	}
	if a, b := curves[0][0], curves[1][0]; a.BaseSuccesses != b.BaseSuccesses || a.MeanReward != b.MeanReward || a.Rollouts != b.Rollouts {
		t.Errorf("step 1 differs between the runs: %+v, %+v", a, b)
	}
	def := observe.DefaultParams()
	if !maps.Equal(finals[1].Weights, def.Weights) {
		t.Errorf("the control's weights moved: %d weights, the start has %d", len(finals[1].Weights), len(def.Weights))
	}
}

func TestLearnRejectsTheOtherPolicy(t *testing.T) {
	if _, _, err := Learn(context.Background(), nil, LearnOptions{Policy: PolicyObserve}); err == nil || !strings.Contains(err.Error(), "LearnObserve") {
		t.Errorf("Learn of %s: %v", PolicyObserve, err)
	}
	if _, _, err := LearnObserve(context.Background(), nil, LearnOptions{Policy: PolicySoftmax}); err == nil || !strings.Contains(err.Error(), "use Learn") {
		t.Errorf("LearnObserve of %s: %v", PolicySoftmax, err)
	}
	if _, _, err := LearnObserve(context.Background(), nil, LearnOptions{ObserveParams: &observe.Params{Dim: 0}}); err == nil || !strings.Contains(err.Error(), "dim 0") {
		t.Errorf("LearnObserve with dim 0: %v", err)
	}
}
