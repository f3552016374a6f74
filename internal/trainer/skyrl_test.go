package trainer_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/trainer"
)

// skyrlValidate restates SkyRL's checks of a step-wise generator output
// (NovaSky-AI/SkyRL a9564572, skyrl/train/utils/trainer_utils.py:
// validate_generator_output and _validate_step_wise_fields) and returns
// each row's advantage as the step-wise branch of
// RayPPOTrainer.compute_advantages_and_returns (skyrl/train/trainer.py)
// broadcasts it: trajectory of row i = cumsum of is_last_step shifted by
// one, its value the last step's token rewards (with an estimator that
// passes the value through).
func skyrlValidate(t *testing.T, o *trainer.SkyRLStepwise) []float64 {
	t.Helper()
	n := len(o.ResponseIDs)
	if n == 0 || len(o.PromptTokenIDs) != n {
		t.Fatalf("responses %d, prompts %d", n, len(o.PromptTokenIDs))
	}
	for name, l := range map[string]int{"loss_masks": len(o.LossMasks), "rewards": len(o.Rewards), "rollout_logprobs": len(o.RolloutLogprobs),
		"stop_reasons": len(o.StopReasons), "trajectory_ids": len(o.TrajectoryIDs), "is_last_step": len(o.IsLastStep)} {
		if l != n {
			t.Errorf("%s has %d entries, response_ids %d", name, l, n)
		}
	}
	for i := range n {
		if len(o.LossMasks[i]) != len(o.ResponseIDs[i]) || len(o.Rewards[i]) != len(o.ResponseIDs[i]) || len(o.RolloutLogprobs[i]) != len(o.ResponseIDs[i]) {
			t.Errorf("row %d: response %d, mask %d, rewards %d, logprobs %d", i, len(o.ResponseIDs[i]), len(o.LossMasks[i]), len(o.Rewards[i]), len(o.RolloutLogprobs[i]))
		}
	}
	if !o.IsLastStep[n-1] {
		t.Error("is_last_step[-1] must be True")
	}
	key := func(i int) string {
		return fmt.Sprintf("%s_%d", o.TrajectoryIDs[i].InstanceID, o.TrajectoryIDs[i].RepetitionID)
	}
	seen := map[string]bool{}
	for i := range n {
		if i > 0 && key(i) != key(i-1) {
			seen[key(i-1)] = true
			if seen[key(i)] {
				t.Errorf("non-contiguous trajectory %s at %d", key(i), i)
			}
		}
		if i+1 < n && (key(i) != key(i+1)) != o.IsLastStep[i] {
			t.Errorf("row %d: is_last_step %v at a boundary %v", i, o.IsLastStep[i], key(i) != key(i+1))
		}
	}
	var values []float64
	for i := range n {
		if o.IsLastStep[i] {
			sum := 0.0
			for _, r := range o.Rewards[i] {
				sum += r
			}
			values = append(values, sum)
		}
	}
	adv := make([]float64, n)
	traj := 0
	for i := range n {
		adv[i] = values[traj]
		if o.IsLastStep[i] {
			traj++
		}
	}
	return adv
}

// skyrlBatch is a done batch of 2 groups x G=2 with 1 to 3 segments per
// trajectory, its samples in a shuffled order.
func skyrlBatch() *trainer.Batch {
	b := &trainer.Batch{Version: 1, ID: "step-000003", Step: 3, Status: trainer.StatusDone, Tokens: true}
	segs := [][]int{{2, 1}, {3, 1}}
	tok := 100
	for g := range 2 {
		for j := range 2 {
			count := segs[g][j]
			for s := range count {
				n := 2 + s
				smp := trainer.Sample{Version: 1, Step: 3, TaskID: fmt.Sprintf("task-%d", g), GroupIndex: g, TrajectoryIndex: j,
					RolloutID: fmt.Sprintf("r-%d-%d", g, j), SegmentIndex: s, SegmentCount: count, PromptTokenIDs: []int{1, 2},
					Advantage: float64(10*g+j) - 4.5, Reward: float64(j), FinishReason: "tool_calls"}
				for k := range n {
					smp.ResponseTokenIDs = append(smp.ResponseTokenIDs, tok)
					smp.LossMask = append(smp.LossMask, k%2)
					smp.RolloutLogprobs = append(smp.RolloutLogprobs, -float64(k%2)/2)
					tok++
				}
				if s == count-1 {
					smp.FinishReason = "stop"
				}
				b.Samples = append(b.Samples, smp)
			}
		}
	}
	// The trainer must not rely on the service's order.
	for i, j := 0, len(b.Samples)-1; i < j; i, j = i+1, j-1 {
		b.Samples[i], b.Samples[j] = b.Samples[j], b.Samples[i]
	}
	return b
}

// TestToSkyRL: the output passes SkyRL's step-wise validation, every row
// of a trajectory gets the trajectory's advantage by SkyRL's broadcast,
// the value sits at the last token of the last step only, and with
// Reward the value is r_j.
func TestToSkyRL(t *testing.T) {
	b := skyrlBatch()
	o, err := trainer.ToSkyRL(b, trainer.SkyRLOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(o.ResponseIDs) != len(b.Samples) {
		t.Fatalf("%d rows for %d samples", len(o.ResponseIDs), len(b.Samples))
	}
	adv := skyrlValidate(t, o)
	byTokens := map[int]trainer.Sample{}
	for _, s := range b.Samples {
		byTokens[s.ResponseTokenIDs[0]] = s
	}
	for i, ids := range o.ResponseIDs {
		s := byTokens[ids[0]]
		if adv[i] != s.Advantage {
			t.Errorf("row %d (rollout %s segment %d): broadcast advantage %v, want %v", i, s.RolloutID, s.SegmentIndex, adv[i], s.Advantage)
		}
		for k, r := range o.Rewards[i] {
			if r != 0 && !(o.IsLastStep[i] && k == len(ids)-1) {
				t.Errorf("row %d token %d: reward %v off the last token of the last step", i, k, r)
			}
		}
		if fmt.Sprint(o.LossMasks[i]) != fmt.Sprint(s.LossMask) || o.TrajectoryIDs[i].RepetitionID != s.TrajectoryIndex || !strings.Contains(o.TrajectoryIDs[i].InstanceID, s.TaskID) {
			t.Errorf("row %d: mask %v id %+v for sample %+v", i, o.LossMasks[i], o.TrajectoryIDs[i], s)
		}
	}
	raw, err := json.Marshal(o)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{`"prompt_token_ids"`, `"response_ids"`, `"loss_masks"`, `"rollout_logprobs"`, `"is_last_step"`, `"trajectory_ids":[{"instance_id"`, `"repetition_id"`, `"stop_reasons"`} {
		if !strings.Contains(string(raw), f) {
			t.Errorf("JSON lacks %s", f)
		}
	}
	o, err = trainer.ToSkyRL(b, trainer.SkyRLOptions{Reward: true})
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range skyrlValidate(t, o) {
		if want := byTokens[o.ResponseIDs[i][0]].Reward; v != want {
			t.Errorf("row %d: reward %v, want %v", i, v, want)
		}
	}
}

// TestToSkyRLRefuses batches SkyRL cannot train on, and a trajectory whose
// segments are not 0..count-1.
func TestToSkyRLRefuses(t *testing.T) {
	for name, edit := range map[string]func(b *trainer.Batch){
		"running":  func(b *trainer.Batch) { b.Status = trainer.StatusRunning },
		"scripted": func(b *trainer.Batch) { b.Tokens = false },
		"empty":    func(b *trainer.Batch) { b.Samples = nil },
		"no response": func(b *trainer.Batch) {
			b.Samples[0].ResponseTokenIDs, b.Samples[0].LossMask, b.Samples[0].RolloutLogprobs = nil, nil, nil
		},
		"ragged": func(b *trainer.Batch) { b.Samples[0].LossMask = b.Samples[0].LossMask[1:] },
		"missing segment": func(b *trainer.Batch) {
			b.Samples = slices.DeleteFunc(b.Samples, func(s trainer.Sample) bool { return s.SegmentCount == 3 && s.SegmentIndex == 1 })
		},
		"missing last": func(b *trainer.Batch) {
			b.Samples = slices.DeleteFunc(b.Samples, func(s trainer.Sample) bool { return s.SegmentCount == 3 && s.SegmentIndex == 2 })
		},
		"twice": func(b *trainer.Batch) { b.Samples = append(b.Samples, b.Samples[0]) },
	} {
		b := skyrlBatch()
		edit(b)
		if _, err := trainer.ToSkyRL(b, trainer.SkyRLOptions{}); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if _, err := trainer.ToSkyRL(nil, trainer.SkyRLOptions{}); err == nil {
		t.Error("nil batch accepted")
	}
}
