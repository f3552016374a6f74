package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
)

// The clipped surrogate's bounds and the entropy bonus of the paper's loss
// (PAPER.md "Loss"): ratio clipped to [1-ClipLow, 1+ClipHigh], entropy
// weight EntropyCoef, no KL term.
const (
	ClipLow     = 0.2
	ClipHigh    = 0.28
	EntropyCoef = 0.001
)

// Surrogate is the clipped policy-gradient objective of one token with
// probability ratio ratio (new over rollout) and advantage adv:
// min(ratio*adv, clip(ratio, 1-ClipLow, 1+ClipHigh)*adv). It reports too
// whether the gradient flows (the unclipped branch is the minimum).
func Surrogate(ratio, adv float64) (obj float64, flows bool) {
	clipped := min(max(ratio, 1-ClipLow), 1+ClipHigh)
	a, b := ratio*adv, clipped*adv
	if a <= b {
		return a, true
	}
	return b, false
}

// Tabular is a learnable softmax policy small enough to train without a
// GPU: a table of logits, one row per context, one column per action. It
// is the offline stand-in for a language model in the learning check: it
// writes its decisions as tokens (TabularContextToken before each
// decision, TabularActionToken as the decision), so its rollouts become
// segment samples like a model's, and TrainStep learns from those samples
// with the paper's objective.
type Tabular struct {
	// Logits[c][a] is action a's logit in context c.
	Logits [][]float64 `json:"logits"`
}

// Token ids of the tabular policy's vocabulary. A context token precedes
// each decision; TabularOK follows each decision the rollout goes on after.
const (
	TabularBOS = 1
	TabularOK  = 2
	tabularCtx = 16
	tabularAct = 256
	tabularMax = 240 // contexts and actions each
)

// TabularContextToken is context c's token id.
func TabularContextToken(c int) int { return tabularCtx + c }

// TabularActionToken is action a's token id.
func TabularActionToken(a int) int { return tabularAct + a }

// Validate checks the table's shape: at least one context, the same number
// (at least two) of actions in each, finite logits.
func (p *Tabular) Validate() error {
	if len(p.Logits) == 0 || len(p.Logits) > tabularMax {
		return fmt.Errorf("rl: tabular policy: logits: %d contexts, give 1..%d rows", len(p.Logits), tabularMax)
	}
	n := len(p.Logits[0])
	if n < 2 || n > tabularMax {
		return fmt.Errorf("rl: tabular policy: logits[0]: %d actions, give 2..%d columns", n, tabularMax)
	}
	for c, row := range p.Logits {
		if len(row) != n {
			return fmt.Errorf("rl: tabular policy: logits[%d] has %d actions, logits[0] %d: every row needs the same", c, len(row), n)
		}
		for a, z := range row {
			if math.IsNaN(z) || math.IsInf(z, 0) {
				return fmt.Errorf("rl: tabular policy: logits[%d][%d] is %v: give finite logits", c, a, z)
			}
		}
	}
	return nil
}

// Clone is a deep copy.
func (p *Tabular) Clone() *Tabular {
	q := &Tabular{Logits: make([][]float64, len(p.Logits))}
	for i, row := range p.Logits {
		q.Logits[i] = append([]float64(nil), row...)
	}
	return q
}

// Probs is the softmax of context c's row.
func (p *Tabular) Probs(c int) []float64 {
	row := p.Logits[c]
	m := math.Inf(-1)
	for _, z := range row {
		m = max(m, z)
	}
	out := make([]float64, len(row))
	sum := 0.0
	for i, z := range row {
		out[i] = math.Exp(z - m)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// Sample draws an action in context c and returns it with its log
// probability.
func (p *Tabular) Sample(c int, rng *rand.Rand) (int, float64) {
	pr := p.Probs(c)
	u := rng.Float64()
	for a, q := range pr {
		if u < q {
			return a, math.Log(q)
		}
		u -= q
	}
	a := len(pr) - 1
	return a, math.Log(pr[a])
}

// TokenSample is what TrainStep reads of a segment sample.
type TokenSample struct {
	PromptIDs   []int
	ResponseIDs []int
	LossMask    []int
	Logprobs    []float64 // the rollout's, per response token
	Advantage   float64
	Weight      float64 // per trainable token
}

// ErrNotTabular is returned for a trainable token that is not one of the
// tabular policy's decisions (an action token after a context token).
var ErrNotTabular = errors.New("rl: a trainable token is not a tabular decision")

// TrainStep takes one gradient-ascent step of size lr on the weighted
// clipped surrogate plus the entropy bonus over the samples' trainable
// tokens, and returns the objective before the step. The context of a
// decision is the token before it.
func (p *Tabular) TrainStep(samples []TokenSample, lr float64) (float64, error) {
	grad := make([][]float64, len(p.Logits))
	for i := range grad {
		grad[i] = make([]float64, len(p.Logits[i]))
	}
	obj := 0.0
	for si, s := range samples {
		if len(s.LossMask) != len(s.ResponseIDs) || len(s.Logprobs) != len(s.ResponseIDs) {
			return 0, fmt.Errorf("rl: sample %d: response, loss mask and logprobs differ in length", si)
		}
		for i, m := range s.LossMask {
			if m == 0 {
				continue
			}
			prev := 0
			if i > 0 {
				prev = s.ResponseIDs[i-1]
			} else if len(s.PromptIDs) > 0 {
				prev = s.PromptIDs[len(s.PromptIDs)-1]
			}
			c, a := prev-tabularCtx, s.ResponseIDs[i]-tabularAct
			if c < 0 || c >= len(p.Logits) || a < 0 || a >= len(p.Logits[c]) {
				return 0, fmt.Errorf("sample %d token %d (%d after %d): %w", si, i, s.ResponseIDs[i], prev, ErrNotTabular)
			}
			pr := p.Probs(c)
			ratio := math.Exp(math.Log(pr[a]) - s.Logprobs[i])
			o, flows := Surrogate(ratio, s.Advantage)
			h := 0.0
			for _, q := range pr {
				if q > 0 {
					h -= q * math.Log(q)
				}
			}
			obj += s.Weight * (o + EntropyCoef*h)
			for j, q := range pr {
				g := 0.0
				if flows {
					ind := 0.0
					if j == a {
						ind = 1
					}
					g = s.Advantage * ratio * (ind - q)
				}
				if q > 0 {
					g += EntropyCoef * -q * (math.Log(q) + h)
				}
				grad[c][j] += s.Weight * g
			}
		}
	}
	for c := range grad {
		for j := range grad[c] {
			p.Logits[c][j] += lr * grad[c][j]
		}
	}
	return obj, nil
}
