package policy

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// ErrorModel is how a scripted agent gets a reference completion wrong.
// Each chance applies to every step, drawn from a generator seeded by the
// policy's seed, its name and the task: the same rollout makes the same
// mistakes every time, and two variants make different ones.
type ErrorModel struct {
	// Slip is the chance that a step's argument is wrong: a number off by
	// one, an identifier with a changed character, a text cut short.
	Slip float64 `json:"slip,omitempty"`
	// Skip is the chance that a step is left out.
	Skip float64 `json:"skip,omitempty"`
	// Quit is the chance that the agent gives up at a step.
	Quit float64 `json:"quit,omitempty"`
	// Avoid lists interfaces the agent never uses: their steps are left
	// out (an agent that sticks to the shell).
	Avoid []string `json:"avoid,omitempty"`
	// HintFactor divides Slip, Skip and Quit in a hinted rollout (the hint
	// helps); 0 means 1.
	HintFactor float64 `json:"hint_factor,omitempty"`
}

// Replay is a scripted agent for any task with a reference completion: it
// performs the reference's steps through the harness, as an offline
// stand-in for an agent, with the mistakes of its error model. With the
// zero ErrorModel it is the oracle. It is a script, never a model: its
// trajectories say "scripted:replay-NAME".
type Replay struct {
	name   string
	steps  []task.Step
	Errors ErrorModel
	Seed   uint64
	// expected is the task's expected answer, said when every step went
	// through unchanged.
	expected string
}

// NewReplay is the replay of t's reference completion under errs.
func NewReplay(name string, t *task.Task, errs ErrorModel, seed uint64) *Replay {
	return &Replay{name: name, steps: slices.Clone(t.Reference), Errors: errs, Seed: seed, expected: t.Answer}
}

// Name implements rollout.Policy.
func (r *Replay) Name() string { return "scripted:replay-" + r.name }

// Run implements rollout.Policy: the reference's steps in order, each as
// the error model lets it through. A step the world rejects is an error
// the replay cannot get past (it has no other plan); the answer is the
// task's expected one when the replay got every step through unchanged,
// else the answer of a rollout that did not quite do the task.
func (r *Replay) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	h := fnv.New64a()
	// The hint is part of the draw: a hinted rollout and a hint-free one
	// of the same variant are two attempts, not one attempt twice.
	fmt.Fprintf(h, "%s\x00%s\x00%d\x00%t", r.name, t.ID, r.Seed, t.Hint != "")
	rng := rand.New(rand.NewPCG(h.Sum64(), 0x9e3779b97f4a7c15))
	factor := 1.0
	if t.Hint != "" && r.Errors.HintFactor > 0 {
		factor = r.Errors.HintFactor
	}
	chance := func(p float64) bool { return p > 0 && rng.Float64() < p/factor }
	clean := true
	for i, s := range r.steps {
		if slices.Contains(r.Errors.Avoid, s.Interface) {
			clean = false
			continue
		}
		if chance(r.Errors.Quit) {
			return "", fmt.Errorf("%w at step %d of %d", ErrStopped, i+1, len(r.steps))
		}
		if chance(r.Errors.Skip) {
			clean = false
			continue
		}
		args := s.Args
		if chance(r.Errors.Slip) {
			var changed bool
			args, changed = slip(rng, s.Args)
			clean = clean && !changed
		}
		if err := env.Do(ctx, s.Tool, args); err != nil {
			if ctx.Err() != nil {
				return "", ctx.Err()
			}
			return "", fmt.Errorf("step %d (%s): %w", i+1, s.Tool, err)
		}
	}
	return r.answer(env, clean), nil
}

// answer is what the replay says at the end.
func (r *Replay) answer(env *agent.Env, clean bool) string {
	if a := r.expected; a != "" && clean {
		return a
	}
	return fmt.Sprintf("Done: %d steps.", len(env.Traj.Steps))
}

// slip returns args with one argument made wrong, and whether anything
// changed (selectors are left alone: a wrong one only fails the step).
func slip(rng *rand.Rand, args map[string]any) (map[string]any, bool) {
	var keys []string
	for k, v := range args {
		if k == "selector" {
			continue
		}
		switch v.(type) {
		case string, json.Number, float64, int:
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return args, false
	}
	slices.Sort(keys)
	k := keys[rng.IntN(len(keys))]
	out := make(map[string]any, len(args))
	for kk, v := range args {
		out[kk] = v
	}
	switch v := args[k].(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil {
			out[k] = json.Number(strconv.FormatInt(n+1, 10))
		} else if f, err := v.Float64(); err == nil {
			out[k] = json.Number(strconv.FormatFloat(f*1.1, 'f', -1, 64))
		}
	case float64:
		out[k] = v + 1
	case int:
		out[k] = v + 1
	case string:
		out[k] = slipString(rng, v)
	}
	return out, true
}

// slipString gets a text wrong: a number in it off by one, else an
// identifier's last character changed, else prose cut short.
func slipString(rng *rand.Rand, s string) string {
	if n, err := strconv.Atoi(s); err == nil {
		return strconv.Itoa(n + 1)
	}
	if !strings.ContainsAny(s, " \n") && s != "" {
		last := s[len(s)-1]
		repl := byte('0' + rng.IntN(10))
		if last >= '0' && last <= '9' {
			repl = '0' + (last-'0'+1+byte(rng.IntN(8)))%10
		} else if repl == last {
			repl = 'x'
		}
		return s[:len(s)-1] + string(repl)
	}
	words := strings.Fields(s)
	if len(words) < 2 {
		return s + "?"
	}
	return strings.Join(words[:len(words)/2], " ")
}

// ReplayVariant is one member of a replay ensemble.
type ReplayVariant struct {
	Name   string
	Errors ErrorModel
}

// ReplayVariants are the offline ensemble's agents, strongest first: the
// oracle, a careful agent, a sloppy one, one that sticks to the shell and
// the files, and one that often gives up.
func ReplayVariants() []ReplayVariant {
	return []ReplayVariant{
		{"oracle", ErrorModel{}},
		{"careful", ErrorModel{Slip: 0.02, Skip: 0.01, HintFactor: 2}},
		{"sloppy", ErrorModel{Slip: 0.08, Skip: 0.04, Quit: 0.01, HintFactor: 2}},
		{"cli-only", ErrorModel{Avoid: []string{task.GUI, task.MCP}}},
		{"quitter", ErrorModel{Slip: 0.03, Quit: 0.06, HintFactor: 1.5}},
	}
}

// Variant is the named replay variant's error model.
func Variant(name string) (ErrorModel, bool) {
	for _, v := range ReplayVariants() {
		if v.Name == name {
			return v.Errors, true
		}
	}
	return ErrorModel{}, false
}

// ReplayEnsemble is the offline ensemble for any task with a reference
// completion: six rollouts, the careful, sloppy and quitter variants three
// times without the hint and three times with it (never the oracle, which
// would solve every task; never cli-only, which cannot solve an XAI task
// and so would hold every task's hint-free successes below three: the
// difficulty gate could never find one too easy), seeded by seed.
func ReplayEnsemble(t *task.Task, seed uint64) []rollout.Spec {
	pick := func(id, name string, hint bool) rollout.Spec {
		errs, _ := Variant(name)
		r := NewReplay(name, t, errs, seed)
		return rollout.Spec{ID: id, Policy: r, Hint: hint}
	}
	return []rollout.Spec{
		pick("r1", "careful", false), pick("r2", "sloppy", false), pick("r3", "quitter", false),
		pick("r4", "careful", true), pick("r5", "sloppy", true), pick("r6", "quitter", true),
	}
}

// ReplayWithout is the reference completion replayed without any step of
// interface in, and no other mistake, except that what the left-out steps
// read, computed or chose is unknown to it (their facts' Wrong values
// apply): the check that a declared interface is indispensable (its V
// must be 0). A reference that inlines into a later step data it read
// through in, without declaring the fact, passes this check wrongly:
// taskgen's suite refuses such references.
func ReplayWithout(t *task.Task, in string) rollout.Policy {
	return leavingOut(t, "without-"+in, func(_ int, s task.Step) bool { return s.Interface == in })
}

// ReplayWithoutStep is the reference completion replayed without its
// step i (0-based), knowing nothing that step read, computed or chose:
// the effects check, which leaves out each step that may change the world
// in turn and wants V to notice.
func ReplayWithoutStep(t *task.Task, i int) rollout.Policy {
	return leavingOut(t, fmt.Sprintf("without-step-%d", i+1), func(j int, _ task.Step) bool { return j == i })
}

// leftOut is the reference completion without the steps skip selects,
// and without what they told.
type leftOut struct {
	name     string
	skip     func(int, task.Step) bool
	steps    []task.Step
	expected string
}

func leavingOut(t *task.Task, name string, skip func(int, task.Step) bool) rollout.Policy {
	return &leftOut{name: name, skip: skip, steps: slices.Clone(t.Reference), expected: t.Answer}
}

func (l *leftOut) Name() string { return "scripted:replay-" + l.name }

func (l *leftOut) Run(ctx context.Context, env *agent.Env, _ task.Public) (string, error) {
	return runMistaken(ctx, env, l.steps, l.expected, func(task.Fact) bool { return false }, l.skip)
}

// ReplayOracle is the reference completion replayed without mistakes.
func ReplayOracle(t *task.Task) *Replay {
	return NewReplay("oracle", t, ErrorModel{}, 0)
}
