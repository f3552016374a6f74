package observe

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/wildawm/wildawm/internal/rl"
)

// The policy's token vocabulary. A decision is written as TokDecide, then
// per candidate TokCand and its features' tokens (FeatureToken), and is
// answered by ChoiceToken(i), the candidate taken: so a decision's tokens
// hold everything its log-probability and gradient need, and a trainer
// recomputes both from the batch's samples alone.
const (
	TokBOS    = 1
	TokDecide = 2
	TokCand   = 3
	tokChoice = 16
	tokFeat   = 1024
	// MaxCandidates bounds a decision's candidates.
	MaxCandidates = tokFeat - tokChoice
	// DefaultDim is the number of hashed features (weights).
	DefaultDim = 1 << 14
	// MaxDim bounds Params.Dim.
	MaxDim = 1 << 20
)

// ChoiceToken is the token of candidate i's choice.
func ChoiceToken(i int) int { return tokChoice + i }

// FeatureToken is the token of hashed feature index f.
func FeatureToken(f int) int { return tokFeat + f }

// hash is a feature's index among dim.
func hash(feature string, dim int) int {
	h := fnv.New64a()
	h.Write([]byte(feature))
	return int(h.Sum64() % uint64(dim))
}

// Params are the policy's parameters as JSON (a rollout service's
// policy_params): the weights of its hashed features, sparse (an absent
// index weighs 0).
type Params struct {
	Version string          `json:"version,omitempty"`
	Dim     int             `json:"dim"`
	Weights map[int]float64 `json:"weights"`
	// MaxActions bounds a rollout's actions (default DefaultMaxActions).
	MaxActions int `json:"max_actions,omitempty"`
}

// DefaultMaxActions is a rollout's default action budget.
const DefaultMaxActions = 24

// MaxActionsLimit bounds Params.MaxActions.
const MaxActionsLimit = 256

// Priors are the starting weights of DefaultParams, by feature name: an
// agent's generic habits, no task's: do not stop at once, do not repeat an
// action or reopen a page, prefer what shares words with the instruction,
// type into a field the value seen next to a word like the field's name
// (a "password" after "password") or seen on the same site's line.
var Priors = map[string]float64{
	"k:stop":  -3,
	"rep":     -2,
	"visited": -1,
	"ov1":     1,
	"ov2":     2,
	"ov3":     3,
	"vmatch":  2.5,
	"vsite":   1.5,
	"vinstr":  0.5,
	"vused":   -0.5,
}

// DefaultParams are Priors over DefaultDim features.
func DefaultParams() Params {
	p := Params{Version: "init", Dim: DefaultDim, Weights: map[int]float64{}}
	for name, w := range Priors {
		p.Weights[hash(name, p.Dim)] += w
	}
	return p
}

// Model is the log-linear scorer: a candidate's score is the sum of its
// features' weights, and a decision draws from the softmax of its
// candidates' scores.
type Model struct {
	W []float64
}

// Dim is the number of features.
func (m *Model) Dim() int { return len(m.W) }

// NewModel is p's weights, dense; an error names the field and the fix.
func NewModel(p Params) (*Model, error) {
	if p.Dim < 1 || p.Dim > MaxDim {
		return nil, fmt.Errorf("observe policy_params: dim %d: give 1..%d hashed features (default %d)", p.Dim, MaxDim, DefaultDim)
	}
	if p.MaxActions < 0 || p.MaxActions > MaxActionsLimit {
		return nil, fmt.Errorf("observe policy_params: max_actions %d: give 1..%d, or leave it out for %d", p.MaxActions, MaxActionsLimit, DefaultMaxActions)
	}
	m := &Model{W: make([]float64, p.Dim)}
	for i, w := range p.Weights {
		if i < 0 || i >= p.Dim {
			return nil, fmt.Errorf("observe policy_params: weights[%d]: index outside 0..%d (dim): give indices below dim", i, p.Dim-1)
		}
		if math.IsNaN(w) || math.IsInf(w, 0) {
			return nil, fmt.Errorf("observe policy_params: weights[%d] is %v: give finite weights", i, w)
		}
		m.W[i] = w
	}
	return m, nil
}

// ParseParams reads policy_params (empty: DefaultParams).
func ParseParams(raw json.RawMessage) (Params, *Model, error) {
	p := DefaultParams()
	if len(raw) > 0 {
		p = Params{}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			return p, nil, fmt.Errorf("observe policy_params: %w: give {\"dim\": %d, \"weights\": {\"INDEX\": WEIGHT, ...}, \"version\": \"...\"}", err, DefaultDim)
		}
	}
	m, err := NewModel(p)
	return p, m, err
}

// Params are the model's weights as Params (zero weights left out).
func (m *Model) Params(version string, maxActions int) Params {
	p := Params{Version: version, Dim: len(m.W), Weights: map[int]float64{}, MaxActions: maxActions}
	for i, w := range m.W {
		if w != 0 {
			p.Weights[i] = w
		}
	}
	return p
}

// Clone is a deep copy.
func (m *Model) Clone() *Model { return &Model{W: slices.Clone(m.W)} }

// probs are the softmax of the candidates' scores.
func (m *Model) probs(cands [][]int) []float64 {
	out := make([]float64, len(cands))
	hi := math.Inf(-1)
	for i, fs := range cands {
		for _, f := range fs {
			out[i] += m.W[f]
		}
		hi = max(hi, out[i])
	}
	sum := 0.0
	for i := range out {
		out[i] = math.Exp(out[i] - hi)
		sum += out[i]
	}
	for i := range out {
		out[i] /= sum
	}
	return out
}

// sample draws a candidate and returns it with its log-probability.
func (m *Model) sample(cands [][]int, rng *rand.Rand) (int, float64) {
	pr := m.probs(cands)
	u := rng.Float64()
	for i, q := range pr {
		if u < q {
			return i, math.Log(q)
		}
		u -= q
	}
	i := len(pr) - 1
	return i, math.Log(pr[i])
}

// ErrNotObserve is returned for a trainable token that is not one of this
// policy's decisions.
var ErrNotObserve = errors.New("observe: a trainable token is not a decision of the observation policy")

// decision is one decision read back from a sample's tokens.
type decision struct {
	cands  [][]int
	choice int
	lp     float64 // the rollout's
}

// decisions reads the decisions of a sample: each trainable token is a
// choice, answering the candidates written since the last TokDecide.
func decisions(s rl.TokenSample, dim int) ([]decision, error) {
	if len(s.LossMask) != len(s.ResponseIDs) || len(s.Logprobs) != len(s.ResponseIDs) {
		return nil, errors.New("observe: response, loss mask and logprobs differ in length")
	}
	seq := append(slices.Clone(s.PromptIDs), s.ResponseIDs...)
	off := len(s.PromptIDs)
	var out []decision
	for i, mk := range s.LossMask {
		if mk == 0 {
			continue
		}
		j := off + i
		d := -1
		for k := j - 1; k >= 0; k-- {
			if seq[k] == TokDecide {
				d = k
				break
			}
		}
		if d < 0 {
			return nil, fmt.Errorf("token %d (%d): no decision before it: %w", i, seq[j], ErrNotObserve)
		}
		var cands [][]int
		for _, t := range seq[d+1 : j] {
			switch {
			case t == TokCand:
				cands = append(cands, nil)
			case t >= tokFeat && t < tokFeat+dim && len(cands) > 0:
				cands[len(cands)-1] = append(cands[len(cands)-1], t-tokFeat)
			default:
				return nil, fmt.Errorf("token %d: %d inside the decision at %d is neither a candidate mark nor a feature below dim %d: %w", i, t, d, dim, ErrNotObserve)
			}
		}
		a := seq[j] - tokChoice
		if a < 0 || a >= len(cands) {
			return nil, fmt.Errorf("token %d: choice %d of %d candidates: %w", i, seq[j], len(cands), ErrNotObserve)
		}
		out = append(out, decision{cands: cands, choice: a, lp: s.Logprobs[i]})
	}
	return out, nil
}

// StepStats describe one TrainStep.
type StepStats struct {
	// Decisions is how many trainable decisions the samples held;
	// MaxLogprobGap the largest difference between a decision's
	// log-probability under the weights before the step and the rollout's
	// (0 on policy: the tokens carry all the gradient needs).
	Decisions     int     `json:"decisions"`
	MaxLogprobGap float64 `json:"max_logprob_gap"`
	// Entropy is the mean entropy of the decisions' distributions before
	// the step.
	Entropy float64 `json:"entropy"`
}

// TrainStep takes one gradient-ascent step of size lr on wildawm's GRPO
// objective (rl.Surrogate: the clipped ratio times the advantage, weighted
// per trainable token, plus rl.EntropyCoef times the entropy) over the
// samples' decisions, and returns the objective before the step. The
// gradient of a decision's log-probability is its chosen candidate's
// features minus their expectation under the softmax.
func (m *Model) TrainStep(samples []rl.TokenSample, lr float64) (float64, StepStats, error) {
	grad := make([]float64, len(m.W))
	obj := 0.0
	var st StepStats
	for si, s := range samples {
		ds, err := decisions(s, len(m.W))
		if err != nil {
			return 0, st, fmt.Errorf("sample %d: %w", si, err)
		}
		for _, d := range ds {
			pr := m.probs(d.cands)
			lp := math.Log(pr[d.choice])
			st.Decisions++
			st.MaxLogprobGap = max(st.MaxLogprobGap, math.Abs(lp-d.lp))
			ratio := math.Exp(lp - d.lp)
			o, flows := rl.Surrogate(ratio, s.Advantage)
			h := 0.0
			for _, q := range pr {
				if q > 0 {
					h -= q * math.Log(q)
				}
			}
			st.Entropy += h
			obj += s.Weight * (o + rl.EntropyCoef*h)
			for c, q := range pr {
				g := 0.0
				if flows {
					ind := 0.0
					if c == d.choice {
						ind = 1
					}
					g = s.Advantage * ratio * (ind - q)
				}
				if q > 0 {
					g += rl.EntropyCoef * -q * (math.Log(q) + h)
				}
				for _, f := range d.cands[c] {
					grad[f] += s.Weight * g
				}
			}
		}
	}
	if st.Decisions > 0 {
		st.Entropy /= float64(st.Decisions)
	}
	for i, g := range grad {
		m.W[i] += lr * g
	}
	return obj, st, nil
}
