package rl

// FormatFailureReward is the reward of a rollout that failed on format
// (a tool call that cannot be parsed; the rollout stops there).
const FormatFailureReward = -1.0

// PartialWeight is the weight of the checklist in the reward: 0.1/N per
// satisfied criterion.
const PartialWeight = 0.1

// Reward is the paper's reward of one rollout: -1 on a format failure,
// otherwise min(1, V + (0.1/N) * sum_i v_i), where V is the verifier's
// verdict and checks are the N criteria v_i. With no criteria (N = 0) the
// partial term is 0 and the reward is V.
func Reward(formatFailure, v bool, checks []bool) float64 {
	if formatFailure {
		return FormatFailureReward
	}
	r := 0.0
	if v {
		r = 1
	}
	if n := len(checks); n > 0 {
		sat := 0
		for _, c := range checks {
			if c {
				sat++
			}
		}
		r += PartialWeight / float64(n) * float64(sat)
	}
	return min(1, r)
}

// Succeeded reports whether a reward is that of a rollout the verifier
// passed. The partial term is at most 0.1, so r = 1 exactly when V = 1.
func Succeeded(r float64) bool { return r >= 1 }
