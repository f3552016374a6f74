package trainer

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
)

// SkyRLStepwise is a batch in the form of SkyRL's GeneratorOutput for
// step-wise training (generator.step_wise_trajectories=true), field for
// field as NovaSky-AI/SkyRL a9564572 names them in
// skyrl/train/generators/base.py: one entry per wildawm segment, the
// segments of a trajectory adjacent and in order, is_last_step on each
// trajectory's last, per-token rewards. docs/segment.md, "Other trainers".
type SkyRLStepwise struct {
	PromptTokenIDs  [][]int           `json:"prompt_token_ids"`
	ResponseIDs     [][]int           `json:"response_ids"`
	Rewards         [][]float64       `json:"rewards"`
	LossMasks       [][]int           `json:"loss_masks"`
	StopReasons     []string          `json:"stop_reasons"`
	RolloutLogprobs [][]float64       `json:"rollout_logprobs"`
	TrajectoryIDs   []SkyRLTrajectory `json:"trajectory_ids"`
	IsLastStep      []bool            `json:"is_last_step"`
	// RolloutMetrics is SkyRL's free-form rollout_metrics.
	RolloutMetrics map[string]float64 `json:"rollout_metrics"`
}

// SkyRLTrajectory is SkyRL's TrajectoryID: the group's instance (SkyRL
// groups by instance_id for GRPO) and the repetition within it.
type SkyRLTrajectory struct {
	InstanceID   string `json:"instance_id"`
	RepetitionID int    `json:"repetition_id"`
}

// SkyRLOptions configure ToSkyRL; the zero value puts in the advantage.
type SkyRLOptions struct {
	// Reward puts each rollout's reward r_j at its last token, for
	// SkyRL's own outcome estimator (grpo, rloo, maxrl) to normalise over
	// the G returned. Unset, the value is wildawm's advantage over the
	// group's whole pool of K, for an estimator registered to pass it
	// through unchanged.
	Reward bool
}

// ToSkyRL maps a done batch's samples to SkyRL's step-wise generator
// output. SkyRL broadcasts the last step's scalar to every step of a
// trajectory, so the value sits at the last token of each trajectory's
// last segment and every other reward is 0. What does not survive: L_j,
// the rollout's trainable tokens over all its segments (SkyRL reduces each
// step as its own sequence; no field carries loss_weight).
func ToSkyRL(b *Batch, o SkyRLOptions) (*SkyRLStepwise, error) {
	switch {
	case b == nil:
		return nil, errors.New("skyrl: no batch")
	case b.Status != StatusDone:
		return nil, fmt.Errorf("skyrl: batch %s is %s, not done: wait for it", b.ID, b.Status)
	case !b.Tokens:
		return nil, fmt.Errorf("skyrl: batch %s has no token ids (a scripted policy ran): nothing to train on", b.ID)
	case len(b.Samples) == 0:
		return nil, fmt.Errorf("skyrl: batch %s has no samples (no ready group): SkyRL's validate_generator_output refuses an empty output; skip the step", b.ID)
	}
	ss := slices.Clone(b.Samples)
	slices.SortStableFunc(ss, func(x, y Sample) int {
		return cmp.Or(cmp.Compare(x.GroupIndex, y.GroupIndex), cmp.Compare(x.TrajectoryIndex, y.TrajectoryIndex), cmp.Compare(x.SegmentIndex, y.SegmentIndex))
	})
	out := &SkyRLStepwise{RolloutMetrics: map[string]float64{"wildawm/prefix_breaks": float64(b.Stats.PrefixBreaks), "wildawm/staleness": float64(b.Stats.Staleness)}}
	for i, s := range ss {
		where := fmt.Sprintf("skyrl: sample of rollout %s segment %d", s.RolloutID, s.SegmentIndex)
		n := len(s.ResponseTokenIDs)
		switch {
		case n == 0:
			return nil, fmt.Errorf("%s: no response tokens: SkyRL needs the last token to carry the value", where)
		case len(s.LossMask) != n || len(s.RolloutLogprobs) != n:
			return nil, fmt.Errorf("%s: response_token_ids, loss_mask and rollout_logprobs differ in length (%d, %d, %d)", where, n, len(s.LossMask), len(s.RolloutLogprobs))
		}
		// Each trajectory's segments 0..count-1, each once, adjacent.
		want := 0
		if i > 0 && ss[i-1].RolloutID == s.RolloutID {
			want = ss[i-1].SegmentIndex + 1
		}
		if s.SegmentIndex != want || s.SegmentIndex >= s.SegmentCount {
			return nil, fmt.Errorf("%s: segment %d of %d where %d was due: a trajectory's segments must come 0..count-1", where, s.SegmentIndex, s.SegmentCount, want)
		}
		last := s.SegmentIndex == s.SegmentCount-1
		if !last && (i+1 == len(ss) || ss[i+1].RolloutID != s.RolloutID) {
			return nil, fmt.Errorf("%s: the trajectory stops at segment %d of %d", where, s.SegmentIndex, s.SegmentCount)
		}
		rewards := make([]float64, n)
		if last {
			rewards[n-1] = s.Advantage
			if o.Reward {
				rewards[n-1] = s.Reward
			}
		}
		out.PromptTokenIDs = append(out.PromptTokenIDs, s.PromptTokenIDs)
		out.ResponseIDs = append(out.ResponseIDs, s.ResponseTokenIDs)
		out.Rewards = append(out.Rewards, rewards)
		out.LossMasks = append(out.LossMasks, s.LossMask)
		out.StopReasons = append(out.StopReasons, s.FinishReason)
		out.RolloutLogprobs = append(out.RolloutLogprobs, s.RolloutLogprobs)
		out.TrajectoryIDs = append(out.TrajectoryIDs, SkyRLTrajectory{InstanceID: fmt.Sprintf("%s/%d/%s", b.ID, s.GroupIndex, s.TaskID), RepetitionID: s.TrajectoryIndex})
		out.IsLastStep = append(out.IsLastStep, last)
	}
	return out, nil
}
