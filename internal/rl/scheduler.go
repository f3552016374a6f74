package rl

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Config is the adaptive rollout scheduler's shape. Its zero value is the
// paper's setup: G = 4, C = 8, kappa_max = 3.
type Config struct {
	G        int     // base rollouts per task and rollouts returned per ready task; 0 means 4
	C        int     // rollouts per added chunk; 0 means 8
	KappaMax float64 // the largest kappa; 0 means 3
}

// Defaults of Config's zero fields.
const (
	DefaultG        = 4
	DefaultC        = 8
	DefaultKappaMax = 3.0
)

func (c Config) withDefaults() Config {
	if c.G <= 0 {
		c.G = DefaultG
	}
	if c.C <= 0 {
		c.C = DefaultC
	}
	if c.KappaMax <= 0 {
		c.KappaMax = DefaultKappaMax
	}
	return c
}

// Max is the most rollouts a task may launch in one step: kappa_max*G
// (rounded down, and never below G).
func (c Config) Max() int {
	c = c.withDefaults()
	return max(c.G, int(math.Floor(c.KappaMax*float64(c.G))))
}

// Launch is how many rollouts a task with multiplier kappa launches at the
// start of a step: n = min(kappa_max*G, G + C*(floor(kappa + 1/2) - 1)),
// never below G. A kappa of 0 (a task never sampled) is read as 1.
func (c Config) Launch(kappa float64) int {
	c = c.withDefaults()
	if kappa <= 0 {
		kappa = 1
	}
	n := c.G + c.C*(int(math.Floor(kappa+0.5))-1)
	return min(c.Max(), max(c.G, n))
}

// Update is the task's kappa after a step that ended in state s with a
// finished pool of k rollouts: mastered -> 1; ready -> 0.2*kappa +
// 0.8*ceil(k/G); exhausted -> kappa_max. A step still Running leaves kappa
// as it was. A kappa of 0 is read as 1.
func (c Config) Update(kappa float64, s State, k int) float64 {
	c = c.withDefaults()
	if kappa <= 0 {
		kappa = 1
	}
	switch s {
	case Mastered:
		return 1
	case Ready:
		return 0.2*kappa + 0.8*math.Ceil(float64(k)/float64(c.G))
	case Exhausted:
		return c.KappaMax
	}
	return kappa
}

// State is where a task's group stands in a step.
type State int

const (
	Running   State = iota // rollouts still to finish before the next decision
	Mastered               // all G base rollouts succeeded: dropped from the step
	Ready                  // >= 2 distinct rewards, or all format failures: trained on
	Exhausted              // kappa_max*G launched and finished without either: dropped
)

func (s State) String() string {
	switch s {
	case Running:
		return "running"
	case Mastered:
		return "mastered"
	case Ready:
		return "ready"
	case Exhausted:
		return "exhausted"
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// Outcome is a finished rollout as the scheduler sees it.
type Outcome struct {
	Reward        float64
	FormatFailure bool
}

// ErrSlot is returned by Group.Record for a slot that was not launched or
// was already recorded.
var ErrSlot = errors.New("rl: bad rollout slot")

// Action is what a Group asks of its caller after a Record.
type Action struct {
	State   State // the group's state after the record
	Launch  int   // new slots to launch now: the last Launch slots below Launched()
	Cancel  []int // launched, unfinished slots to cancel (once, at the decision)
	Dropped bool  // the record came after the decision and is not in the pool
}

// Group is one task's rollouts in one step. Slots are numbered in launch
// order: slots [0, G) are the base rollouts, then chunks of C up to
// kappa_max*G. The group decides at checkpoints, when every slot of the
// base and of each chunk so far has finished (a rollout of a later chunk
// may finish first; it waits for its checkpoint).
//
// PAPER.md says "after each chunk" without saying which rollouts the
// decision reads when more were launched than the chunks finished so far;
// Group decides on the finished prefix up to the checkpoint, and the pool
// of K it keeps is that prefix: a rollout of a later chunk that happened
// to finish before the decision is cancelled work, not counted. So the
// decision, K and the next kappa do not depend on the finishing order. In
// the worked example's second step the 4 base rollouts differ, the 8
// others are cancelled (finished or not) and K = 4, kappa 1.32, as
// PAPER.md gives.
type Group struct {
	cfg        Config
	kappa      float64
	launched   int
	done       []bool
	outcomes   []Outcome
	checkpoint int
	state      State
	pool       []int
}

// NewGroup starts a task's group for a step with the task's kappa; the
// caller launches slots [0, Launched()).
func NewGroup(cfg Config, kappa float64) *Group {
	cfg = cfg.withDefaults()
	if kappa <= 0 {
		kappa = 1
	}
	n := cfg.Launch(kappa)
	return &Group{
		cfg:        cfg,
		kappa:      kappa,
		launched:   n,
		done:       make([]bool, n),
		outcomes:   make([]Outcome, n),
		checkpoint: cfg.G,
	}
}

// Launched is the number of slots launched so far.
func (g *Group) Launched() int { return g.launched }

// State is the group's state.
func (g *Group) State() State { return g.state }

// Kappa is the kappa the task came into the step with.
func (g *Group) Kappa() float64 { return g.kappa }

// NextKappa is the task's kappa for its next sample (Config.Update).
func (g *Group) NextKappa() float64 { return g.cfg.Update(g.kappa, g.state, len(g.pool)) }

// Pool is the prefix of slots the group decided on, in slot order; nil
// while Running. K is its length.
func (g *Group) Pool() []int { return slices.Clone(g.pool) }

// Outcomes is the outcomes of Pool, in the same order.
func (g *Group) Outcomes() []Outcome {
	out := make([]Outcome, len(g.pool))
	for i, s := range g.pool {
		out[i] = g.outcomes[s]
	}
	return out
}

// Select is Select over the group's pool with its G: indices into Pool and
// Outcomes.
func (g *Group) Select(rng *rand.Rand) []int { return Select(g.Outcomes(), g.cfg.G, rng) }

// Record files the outcome of a finished slot and returns what to do next.
// A record after the decision (a cancelled rollout that finished anyway)
// is dropped, not an error.
func (g *Group) Record(slot int, o Outcome) (Action, error) {
	if slot < 0 || slot >= g.launched {
		return Action{State: g.state}, fmt.Errorf("rl: record slot %d of %d launched: %w", slot, g.launched, ErrSlot)
	}
	if g.done[slot] {
		return Action{State: g.state}, fmt.Errorf("rl: record slot %d twice: %w", slot, ErrSlot)
	}
	g.done[slot] = true
	g.outcomes[slot] = o
	if g.state != Running {
		return Action{State: g.state, Dropped: true}, nil
	}
	var act Action
	for g.state == Running {
		b := g.checkpoint
		if slices.Contains(g.done[:b], false) {
			break
		}
		if s, ok := g.decide(b); ok {
			g.finish(s, b, &act)
			break
		}
		if b >= g.cfg.Max() {
			g.finish(Exhausted, b, &act)
			break
		}
		nb := min(g.cfg.Max(), b+g.cfg.C)
		if g.launched < nb {
			act.Launch += nb - g.launched
			g.done = append(g.done, make([]bool, nb-g.launched)...)
			g.outcomes = append(g.outcomes, make([]Outcome, nb-g.launched)...)
			g.launched = nb
		}
		g.checkpoint = nb
	}
	act.State = g.state
	return act, nil
}

// decide reads the finished prefix [0, b).
func (g *Group) decide(b int) (State, bool) {
	mastered := true
	for _, o := range g.outcomes[:g.cfg.G] {
		if o.FormatFailure || !Succeeded(o.Reward) {
			mastered = false
			break
		}
	}
	if mastered {
		return Mastered, true
	}
	allFormat := true
	distinct := false
	for _, o := range g.outcomes[:b] {
		if !o.FormatFailure {
			allFormat = false
		}
		if o.Reward != g.outcomes[0].Reward {
			distinct = true
		}
	}
	if distinct || allFormat {
		return Ready, true
	}
	return Running, false
}

// finish decides on the prefix [0, b): it is the pool; the launched
// slots after it that have not finished are cancelled, and those that
// have are left out.
func (g *Group) finish(s State, b int, act *Action) {
	g.state = s
	g.pool = make([]int, b)
	for i := range b {
		g.pool[i] = i
	}
	for i := b; i < g.launched; i++ {
		if !g.done[i] {
			act.Cancel = append(act.Cancel, i)
		}
	}
}
