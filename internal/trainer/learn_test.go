package trainer

import (
	"context"
	"testing"

	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rl"
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
