package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/task"
)

// Softmax is a learnable policy over the scripted replay's decision
// points, for the offline learning check (docs/rl.md): at each step of the
// task's reference completion it draws one of SoftmaxActions from a
// softmax whose context is the step's interface (rl.Tabular, one row per
// interface of SoftmaxContexts). It is neither a script with fixed
// behaviour nor a model: its trajectories say "learned:softmax", and it
// records each decision as a turn of token ids and logprobs (the context
// token, then the action token; rl.TabularOK before the next context after
// a step done or skipped: a step the world rejects ends the rollout), so
// its rollouts become segment samples as a model's do.
type Softmax struct {
	Table *rl.Tabular
	// Version names the parameters (the turns' weight version).
	Version string
	Seed    uint64
	steps   []task.Step
	answer  string
}

// SoftmaxContexts are the decision contexts: the step's interface.
var SoftmaxContexts = []string{task.GUI, task.MCP, task.CLI, agent.File}

// SoftmaxActions are the decisions at a step: do it as the reference
// does, do it with a slipped argument, skip it, or stop.
var SoftmaxActions = []string{"do", "slip", "skip", "stop"}

// SoftmaxParams are Softmax's parameters as JSON (a rollout service's
// policy_params).
type SoftmaxParams struct {
	Logits  [][]float64 `json:"logits"`
	Version string      `json:"version,omitempty"`
}

// DefaultSoftmaxParams start the policy doing the reference's step with
// probability 0.80 in every context, slipping or skipping it 0.08 each and
// stopping 0.04: a weak agent on tasks of a dozen steps.
func DefaultSoftmaxParams() SoftmaxParams {
	row := []float64{3, 0.7, 0.7, 0}
	p := SoftmaxParams{Version: "init"}
	for range SoftmaxContexts {
		p.Logits = append(p.Logits, slices.Clone(row))
	}
	return p
}

// NewSoftmax is the policy for t with params (nil or empty: the defaults).
func NewSoftmax(t *task.Task, params json.RawMessage, seed uint64) (*Softmax, error) {
	p := DefaultSoftmaxParams()
	if len(params) > 0 {
		p = SoftmaxParams{}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, fmt.Errorf("softmax policy_params: %w: give {\"logits\": [[...], ...], \"version\": \"...\"}", err)
		}
	}
	tab := &rl.Tabular{Logits: p.Logits}
	if err := tab.Validate(); err != nil {
		return nil, fmt.Errorf("softmax policy_params: %w", err)
	}
	if len(tab.Logits) != len(SoftmaxContexts) || len(tab.Logits[0]) != len(SoftmaxActions) {
		return nil, fmt.Errorf("softmax policy_params: logits are %dx%d: give %d rows (%v) of %d (%v)",
			len(tab.Logits), len(tab.Logits[0]), len(SoftmaxContexts), SoftmaxContexts, len(SoftmaxActions), SoftmaxActions)
	}
	return &Softmax{Table: tab, Version: p.Version, Seed: seed, steps: slices.Clone(t.Reference), answer: t.Answer}, nil
}

// Name implements rollout.Policy.
func (s *Softmax) Name() string { return "learned:softmax" }

// Run implements rollout.Policy.
func (s *Softmax) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	h := fnv.New64a()
	fmt.Fprintf(h, "softmax\x00%s\x00%d", t.ID, s.Seed)
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x2545f4914f6cdd1d))
	held := []int{rl.TabularBOS}
	// One segment: every turn's prompt extends the last (no compaction).
	defer func() {
		if n := len(env.Traj.Turns); n > 0 {
			env.Traj.Segments = []agent.Segment{{Index: 0, FirstTurn: 1, LastTurn: n, Reason: "start"}}
		}
	}()
	clean := true
	for i, st := range s.steps {
		c := slices.Index(SoftmaxContexts, st.Interface)
		if c < 0 {
			c = slices.Index(SoftmaxContexts, task.CLI)
		}
		prompt := append(slices.Clone(held), rl.TabularContextToken(c))
		a, lp := s.Table.Sample(c, rng)
		env.Traj.Turns = append(env.Traj.Turns, agent.Turn{Index: len(env.Traj.Turns) + 1, Kind: "act", Messages: len(prompt),
			Content: SoftmaxActions[a] + " " + st.Tool, FinishReason: "stop", PromptTokens: len(prompt), CompletionTokens: 1,
			PromptTokenIDs: prompt, CompletionTokenIDs: []int{rl.TabularActionToken(a)}, Logprobs: []float64{lp}, WeightVersion: s.Version})
		held = append(prompt, rl.TabularActionToken(a))
		switch SoftmaxActions[a] {
		case "stop":
			return "", fmt.Errorf("%w at step %d of %d", ErrStopped, i+1, len(s.steps))
		case "skip":
			clean = false
		default:
			args := st.Args
			if SoftmaxActions[a] == "slip" {
				var changed bool
				args, changed = slip(rng, st.Args)
				clean = clean && !changed
			}
			env.At(len(env.Traj.Turns), "")
			if err := env.Do(ctx, st.Tool, args); err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", fmt.Errorf("step %d (%s): %w", i+1, st.Tool, err)
			}
		}
		held = append(held, rl.TabularOK)
	}
	if clean && s.answer != "" {
		return s.answer, nil
	}
	return fmt.Sprintf("Done: %d steps.", len(env.Traj.Steps)), nil
}
