package policy

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// RatedByShortcut names the shortcut ensemble wherever a figure it
// produced is printed (pool.json's rated_by, stats, Table 4).
const RatedByShortcut = "shortcut"

// Shortcuts are the shortcut agents, one per kind of fact, in the order
// the ensemble runs them: the agent that acts without reading, the one
// that guesses instead of running the script, the one that takes the
// distractor at a decision.
func Shortcuts() []ShortcutKind {
	return []ShortcutKind{
		{Name: "unread", Kind: task.FactRead, Mistake: "acts without reading: uses a plausible wrong value for every fact read through an interface"},
		{Name: "guess", Kind: task.FactOutput, Mistake: "skips the computing step and guesses its output"},
		{Name: "distractor", Kind: task.FactChoice, Mistake: "takes the distractor at every decision"},
	}
}

// ShortcutKind is one shortcut agent: the kind of fact it gets wrong.
type ShortcutKind struct {
	Name    string
	Kind    string
	Mistake string
}

// Shortcut is a scripted agent that performs a task's reference
// completion except at the facts of one kind (task.Fact), where it makes
// the plausible mistake its kind names: at a read or an output it leaves
// the step out and uses the fact's Wrong value from then on; at a choice
// it takes Wrong from that step on. Given the hint, it takes no shortcut
// at a fact the hint points at (Fact.Cue): the hint is what it acts on.
// Its outcome is a function of the task alone (no seed, no chance): a
// task defeats the agent when one of the facts of its kind matters to
// the verifier. It is a script, never a model: its trajectories say
// "scripted:shortcut-NAME".
type Shortcut struct {
	ShortcutKind
	steps    []task.Step
	expected string
}

// NewShortcut is the shortcut agent sk on t.
func NewShortcut(t *task.Task, sk ShortcutKind) *Shortcut {
	return &Shortcut{ShortcutKind: sk, steps: t.Reference, expected: t.Answer}
}

// Name implements rollout.Policy.
func (s *Shortcut) Name() string { return "scripted:shortcut-" + s.ShortcutKind.Name }

// Run implements rollout.Policy.
func (s *Shortcut) Run(ctx context.Context, env *agent.Env, pub task.Public) (string, error) {
	taken := func(f task.Fact) bool { return f.Kind == s.Kind && !f.Cued(pub.Hint) }
	return runMistaken(ctx, env, s.steps, s.expected, taken, func(int, task.Step) bool { return false })
}

// runMistaken performs steps, leaving out those skip selects, and at each
// fact taken selects makes its mistake: a choice's Wrong from its own
// step on, a read's or an output's from the next step on (the step
// itself, reading or computing, is left out). A fact declared at a step
// skip leaves out is unknown to the agent: its Wrong applies too. The
// answer is the expected one with every mistake applied.
func runMistaken(ctx context.Context, env *agent.Env, steps []task.Step, expected string, taken func(task.Fact) bool, skip func(int, task.Step) bool) (string, error) {
	var subs []task.Form
	apply := func(args map[string]any) map[string]any {
		args, _ = task.SubstituteAll(args, subs)
		return args
	}
	for i, st := range steps {
		leave := skip(i, st)
		var later []task.Form
		for _, f := range st.Facts {
			switch {
			case leave:
				later = append(later, f.Subs()...)
			case !taken(f):
			case f.Kind == task.FactChoice:
				subs = append(subs, f.Subs()...)
			default:
				leave = true
				later = append(later, f.Subs()...)
			}
		}
		if !leave {
			if err := env.Do(ctx, st.Tool, apply(st.Args)); err != nil {
				if ctx.Err() != nil {
					return "", ctx.Err()
				}
				return "", fmt.Errorf("step %d (%s): %w", i+1, st.Tool, err)
			}
		}
		subs = append(subs, later...)
	}
	if expected == "" {
		return fmt.Sprintf("Done: %d steps.", len(env.Traj.Steps)), nil
	}
	return task.ReplaceAll(expected, subs), nil
}

// ShortcutEnsemble is the offline ensemble for any task whose reference
// declares its facts: the shortcut agents hint-free (r1-r3), then the same
// agents given the hint (r4-r6). It ignores seed: the same task gets the
// same rollouts, and so the same level, with any seed.
func ShortcutEnsemble(t *task.Task, _ uint64) []rollout.Spec {
	var specs []rollout.Spec
	for _, hint := range []bool{false, true} {
		for _, sk := range Shortcuts() {
			specs = append(specs, rollout.Spec{ID: fmt.Sprintf("r%d", len(specs)+1), Policy: NewShortcut(t, sk), Hint: hint})
		}
	}
	return specs
}
