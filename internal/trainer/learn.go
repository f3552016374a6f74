package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/policy/observe"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// PolicyObserve is the observation-driven learnable policy of the
// learning check (observe.Policy).
const PolicyObserve = observe.Name

// observePolicy is PolicyObserve's factory: it gives the policy its
// parameters and seed, never the task (the policy sees the task's public
// part only, through the rollout).
func observePolicy(_ *task.Task, _ int, seed uint64, params json.RawMessage) (rollout.Policy, error) {
	return observe.New(params, seed)
}

// LearnOptions configure the offline learning check.
type LearnOptions struct {
	// Steps is how many train steps (default 30); Tasks and G each step's
	// (default 4 and 4); LR the step size (default 4). Frozen skips the
	// updates: the control run, whose curve shows what the policy does
	// without learning.
	Steps  int     `json:"steps"`
	Tasks  int     `json:"tasks"`
	G      int     `json:"g"`
	LR     float64 `json:"lr"`
	Seed   uint64  `json:"seed"`
	Frozen bool    `json:"frozen,omitempty"`
	// Params are the starting parameters (nil: policy.DefaultSoftmaxParams).
	Params *policy.SoftmaxParams `json:"params,omitempty"`
	// Policy is the policy trained: PolicySoftmax (the default) or
	// PolicyObserve, whose starting parameters are ObserveParams (nil:
	// observe.DefaultParams).
	Policy        string          `json:"policy,omitempty"`
	ObserveParams *observe.Params `json:"-"`
	// Progress gets each step's point.
	Progress func(LearnPoint) `json:"-"`
}

// LearnPoint is one train step of the learning check.
type LearnPoint struct {
	Step int `json:"step"`
	// BaseRollouts and BaseSuccesses are the G base rollouts of every
	// group the step sampled (they always run): the policy's success rate
	// before the step's update, unbiased by the adaptive scheduler's extra
	// rollouts on hard tasks.
	BaseRollouts  int     `json:"base_rollouts"`
	BaseSuccesses int     `json:"base_successes"`
	SuccessRate   float64 `json:"success_rate"`
	MeanReward    float64 `json:"mean_reward"`
	// Rollouts ran in all; Ready groups trained on.
	Rollouts int `json:"rollouts"`
	Ready    int `json:"ready"`
	// Objective is the surrogate before the update; PDo the probability
	// of doing the reference's step, by context, after it.
	Objective float64            `json:"objective"`
	PDo       map[string]float64 `json:"p_do,omitempty"`
	WallMS    float64            `json:"wall_ms"`
	// Observe is the observation policy's step: its decisions trained on,
	// their entropy, and how far the log-probabilities it recomputed from
	// the samples' tokens were from the rollouts' (0: on policy).
	Observe *observe.StepStats `json:"observe,omitempty"`
}

// Learn is the offline learning check (docs/rl.md): the learnable softmax
// policy (policy.Softmax) trained by wildawm's own GRPO objective
// (rl.Tabular.TrainStep on the batches' segment samples, with their
// advantages and loss weights) through the service, on live instances,
// step by step. It returns the learning curve and the final parameters.
func Learn(ctx context.Context, s *Service, o LearnOptions) ([]LearnPoint, *policy.SoftmaxParams, error) {
	if o.Policy != "" && o.Policy != PolicySoftmax {
		return nil, nil, fmt.Errorf("trainer: Learn trains %s, not %q: use LearnObserve for %s", PolicySoftmax, o.Policy, PolicyObserve)
	}
	o.Steps = cmpOr(o.Steps, 30)
	o.Tasks = min(cmpOr(o.Tasks, 4), s.Tasks())
	o.G = cmpOr(o.G, 4)
	if o.LR == 0 {
		o.LR = 4
	}
	params := policy.DefaultSoftmaxParams()
	if o.Params != nil {
		params = *o.Params
	}
	tab := &rl.Tabular{Logits: params.Logits}
	if err := tab.Validate(); err != nil {
		return nil, nil, err
	}
	tab = tab.Clone()
	var curve []LearnPoint
	for step := 1; step <= o.Steps; step++ {
		params := policy.SoftmaxParams{Logits: tab.Logits, Version: fmt.Sprintf("learn-%d", step)}
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, nil, err
		}
		b, err := s.Batch(ctx, Request{Step: step, Tasks: o.Tasks, G: o.G, Policy: PolicySoftmax, PolicyParams: raw, Seed: cmpOr(o.Seed, 1)})
		if errors.Is(err, ErrConflict) {
			return curve, &params, fmt.Errorf("step %d: the state directory holds an earlier learning run with other options: remove it, or give another one (--state): %w", step, err)
		}
		if err != nil {
			return curve, &params, err
		}
		pt := basePoint(b, o.G)
		ts := tokenSamples(b)
		lr := o.LR
		if o.Frozen {
			lr = 0
		}
		if pt.Objective, err = tab.TrainStep(ts, lr); err != nil {
			return curve, &params, fmt.Errorf("step %d: %w", step, err)
		}
		pt.PDo = map[string]float64{}
		for c, name := range policy.SoftmaxContexts {
			pt.PDo[name] = tab.Probs(c)[slices.Index(policy.SoftmaxActions, "do")]
		}
		curve = append(curve, pt)
		if o.Progress != nil {
			o.Progress(pt)
		}
	}
	final := policy.SoftmaxParams{Logits: tab.Logits, Version: fmt.Sprintf("learn-%d", o.Steps)}
	return curve, &final, nil
}

// basePoint is a step's point before its update: the G base rollouts of
// every group the step sampled.
func basePoint(b *Batch, g int) LearnPoint {
	pt := LearnPoint{Step: b.Step, Rollouts: b.Stats.Rollouts, Ready: b.Stats.Ready, WallMS: b.Stats.WallMS}
	sum := 0.0
	for _, gr := range b.Groups {
		for i, slot := range gr.Slots {
			if slot < g {
				pt.BaseRollouts++
				sum += gr.Rewards[i]
				if rl.Succeeded(gr.Rewards[i]) {
					pt.BaseSuccesses++
				}
			}
		}
	}
	if pt.BaseRollouts > 0 {
		pt.SuccessRate = float64(pt.BaseSuccesses) / float64(pt.BaseRollouts)
		pt.MeanReward = sum / float64(pt.BaseRollouts)
	}
	return pt
}

// tokenSamples are what a trainer reads of the batch's samples.
func tokenSamples(b *Batch) []rl.TokenSample {
	var ts []rl.TokenSample
	for _, smp := range b.Samples {
		ts = append(ts, rl.TokenSample{PromptIDs: smp.PromptTokenIDs, ResponseIDs: smp.ResponseTokenIDs, LossMask: smp.LossMask,
			Logprobs: smp.RolloutLogprobs, Advantage: smp.Advantage, Weight: smp.LossWeight})
	}
	return ts
}

// ObserveLR is LearnObserve's default step size. The loss weights divide
// each decision's gradient by the trajectory's decisions (about 50, where
// the softmax's rollouts have about 12), the step's groups and G: the step
// is larger than Learn's 4 by about that ratio, set before any run.
const ObserveLR = 50

// LearnObserve is the learning check of the observation policy
// (observe.Policy, PolicyObserve): each step asks the service for a batch
// with the current weights as policy_params, then takes one step of
// wildawm's GRPO objective (observe.Model.TrainStep: the batch's
// advantages times the gradient of the log-probability of the candidates
// the rollouts chose, recomputed from the samples' tokens alone, with the
// loss weights). Frozen (or LR 0) is the control: the same requests and
// seeds, the weights never updated. It returns the curve and the final
// parameters.
func LearnObserve(ctx context.Context, s *Service, o LearnOptions) ([]LearnPoint, *observe.Params, error) {
	if o.Policy != "" && o.Policy != PolicyObserve {
		return nil, nil, fmt.Errorf("trainer: LearnObserve trains %s, not %q: use Learn for %s", PolicyObserve, o.Policy, PolicySoftmax)
	}
	start := observe.DefaultParams()
	if o.ObserveParams != nil {
		start = *o.ObserveParams
	}
	m, err := observe.NewModel(start)
	if err != nil {
		return nil, nil, err
	}
	o.Steps = cmpOr(o.Steps, 30)
	o.Tasks = min(cmpOr(o.Tasks, 4), s.Tasks())
	o.G = cmpOr(o.G, 4)
	if o.LR == 0 && !o.Frozen {
		o.LR = ObserveLR
	}
	var curve []LearnPoint
	params := start
	for step := 1; step <= o.Steps; step++ {
		params = m.Params(fmt.Sprintf("learn-%d", step-1), start.MaxActions)
		if step == 1 {
			params.Version = cmpOr(start.Version, "init")
		}
		raw, err := json.Marshal(params)
		if err != nil {
			return nil, nil, err
		}
		b, err := s.Batch(ctx, Request{Step: step, Tasks: o.Tasks, G: o.G, Policy: PolicyObserve, PolicyParams: raw, Seed: cmpOr(o.Seed, 1)})
		if errors.Is(err, ErrConflict) {
			return curve, &params, fmt.Errorf("step %d: the state directory holds an earlier learning run with other options: remove it, or give another one (--state): %w", step, err)
		}
		if err != nil {
			return curve, &params, err
		}
		pt := basePoint(b, o.G)
		lr := o.LR
		if o.Frozen {
			lr = 0
		}
		obj, st, err := m.TrainStep(tokenSamples(b), lr)
		if err != nil {
			return curve, &params, fmt.Errorf("step %d: %w", step, err)
		}
		pt.Objective, pt.Observe = obj, &st
		curve = append(curve, pt)
		if o.Progress != nil {
			o.Progress(pt)
		}
	}
	final := m.Params(fmt.Sprintf("learn-%d", o.Steps), start.MaxActions)
	return curve, &final, nil
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}
