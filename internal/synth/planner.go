package synth

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/world"
)

// PlanJob is the day-plan stage's input: everything the plan of one day
// depends on, so it is a unit of work a queue can carry. Its key is the
// hash of its JSON.
type PlanJob struct {
	Persona persona.Persona `json:"persona"`
	Day     int             `json:"day"`
	// State is the ledger after the day before (nil on day 0).
	State *skill.State `json:"state"`
	Seed  uint64       `json:"seed"`
	// Attempt is 0, then 1 and 2 for revisions after a failed check.
	Attempt int `json:"attempt"`
	// Avoid are skills a revision must not use (the failed events').
	Avoid []string `json:"avoid,omitempty"`
	// Feedback are the failed check's problems (the llm backend reads them).
	Feedback    []string                    `json:"feedback,omitempty"`
	Definitions map[string]skill.Definition `json:"definitions,omitempty"`
}

// ImplJob is the day-implementation stage's input.
type ImplJob struct {
	Persona persona.Persona `json:"persona"`
	Plan    Day             `json:"plan"`
	State   *skill.State    `json:"state"`
	// Catalog is set on day 0: the catalog the world references.
	Catalog world.ID `json:"catalog,omitzero"`
	// Parent is the parent state's snapshot (zero on day 0); ParentDir
	// where it is checked out for an implementer that reads the live
	// world (not part of the job's identity).
	Parent    world.ID `json:"parent,omitzero"`
	ParentDir string   `json:"-"`
}

// ImplResult is the day-implementation stage's output: the delta and the
// ledger after it.
type ImplResult struct {
	Delta *delta.Delta `json:"delta"`
	State *skill.State `json:"state"`
}

// Key is a job's idempotency key: the hash of its JSON.
func Key(job any) (world.ID, error) {
	b, err := json.Marshal(job)
	if err != nil {
		return world.ID{}, err
	}
	return world.Hash(b), nil
}

// Planner is the procedural day planner: seeded, offline.
type Planner struct {
	Skills      *skill.Library
	Catalog     *skill.Catalog
	Definitions Definitions
}

// Events per day, beyond setup.
const (
	minEvents = 6
	maxEvents = 12
)

// Plan writes one day's plan. Setup events (databases and accounts the
// roadmap asks for today) come first; then events drawn with weights:
// skills of the arcs running today, skills not used yet, and skills that
// touch the persona's least-used sites and services (coverage pressure
// from the histograms of the days before) weigh more. Each event is drawn
// against the ledger of the events before it, so replies follow messages
// and returns follow orders.
func (pl *Planner) Plan(job *PlanJob) (*Day, error) {
	p := &job.Persona
	st := job.State
	if st == nil {
		st = skill.NewState()
	}
	b := skill.NewBuilder(p)
	b.State = st.Clone()
	b.Definitions = pl.Definitions.Library
	b.Begin(job.Day, skill.Clock(job.Day))
	// Each persona draws its own stream: the seed mixed with its id.
	h := world.Hash([]byte(p.ID))
	rng := rand.New(rand.NewPCG(job.Seed^binary.LittleEndian.Uint64(h[:8]), uint64(job.Day)<<4|uint64(job.Attempt)))
	day := &Day{Day: job.Day, Clock: skill.Clock(job.Day), Events: []skill.Event{}}
	draw := func() *skill.Draw {
		return &skill.Draw{Persona: p, Day: job.Day, Rand: rng, Catalog: pl.Catalog, State: b.State, Definitions: job.Definitions}
	}
	// add proposes one event of sk and emits it into the scratch builder,
	// so the next proposal sees it. A skill that has nothing to do is no
	// error.
	add := func(sk *skill.Skill) (bool, error) {
		params, err := sk.Propose(draw())
		if errors.Is(err, skill.ErrSkip) {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		if err := sk.Emit(b, params); err != nil {
			return false, fmt.Errorf("day %d: the proposed %s does not emit: %w", job.Day, sk.Name, err)
		}
		b.State.Used[sk.Name]++
		day.Events = append(day.Events, skill.Event{Skill: sk.Name, Params: params})
		return true, nil
	}
	var setup, events []*skill.Skill
	for _, n := range pl.Skills.Names() {
		sk, _ := pl.Skills.Lookup(n)
		switch {
		case !sk.Proposable() || slices.Contains(job.Avoid, n):
		case sk.Setup:
			setup = append(setup, sk)
		default:
			events = append(events, sk)
		}
	}
	// Setup until nothing is left to set up (each proposes one database or
	// account at a time).
	for progress := true; progress; {
		progress = false
		for _, sk := range setup {
			ok, err := add(sk)
			if err != nil {
				return nil, err
			}
			progress = progress || ok
		}
	}
	want := minEvents + rng.IntN(maxEvents-minEvents+1)
	usage := histogram(p, pl.Skills, b.State.Used)
	weights := make([]float64, len(events))
	for i, sk := range events {
		weights[i] = weight(p, sk, job.Day, b.State.Used[sk.Name], usage)
	}
	for tries := 0; len(day.Events) < want+countSetup(day, setup) && tries < 4*len(events); tries++ {
		i := pickWeighted(rng, weights)
		if i < 0 {
			break
		}
		weights[i] = 0 // one use of a skill per day
		ok, err := add(events[i])
		if err != nil {
			return nil, err
		}
		_ = ok
	}
	return day, nil
}

func countSetup(d *Day, setup []*skill.Skill) int {
	n := 0
	for _, ev := range d.Events {
		for _, s := range setup {
			if s.Name == ev.Skill {
				n++
			}
		}
	}
	return n
}

// histogram counts, for each site and service, the events so far that
// touched it.
func histogram(p *persona.Persona, lib *skill.Library, used map[string]int) map[string]int {
	h := map[string]int{}
	for _, s := range append(slices.Clone(p.Sites), p.Services...) {
		h[s] = 0
	}
	for name, n := range used {
		sk, err := lib.Lookup(name)
		if err != nil {
			continue
		}
		for _, s := range append(slices.Clone(sk.Sites), sk.Services...) {
			h[s] += n
		}
	}
	return h
}

// weight is a skill's chance today: base 1; 4 more when an arc running
// today draws on it; up to 2 more the less it was used; up to 3 more when
// it touches one of the persona's least-used sites or services; 0 when it
// touches no site or service the persona has and writes no file.
func weight(p *persona.Persona, sk *skill.Skill, day, used int, usage map[string]int) float64 {
	touches := append(slices.Clone(sk.Sites), sk.Services...)
	mine := 0
	least := -1.0
	for _, s := range touches {
		n, ok := usage[s]
		if !ok {
			continue
		}
		mine++
		if v := 3.0 / float64(1+n); v > least {
			least = v
		}
	}
	if len(touches) > 0 && mine == 0 {
		return 0
	}
	w := 1.0 + 2.0/float64(1+used)
	if least > 0 {
		w += least
	}
	for _, a := range p.Arcs {
		if a.From <= day && day <= a.To && slices.Contains(a.Skills, sk.Name) {
			w += 4
		}
	}
	return w
}

func pickWeighted(rng *rand.Rand, w []float64) int {
	total := 0.0
	for _, x := range w {
		total += x
	}
	if total <= 0 {
		return -1
	}
	r := rng.Float64() * total
	for i, x := range w {
		if r < x {
			return i
		}
		r -= x
	}
	for i := len(w) - 1; i >= 0; i-- {
		if w[i] > 0 {
			return i
		}
	}
	return -1
}

// Implement turns a day's plan into its delta with the ledger of the days
// before, and returns the ledger after it.
func Implement(lib *skill.Library, defs Definitions, job *ImplJob) (*ImplResult, error) {
	st := job.State
	if st == nil {
		st = skill.NewState()
	}
	b := skill.NewBuilder(&job.Persona)
	b.State = st.Clone()
	b.Definitions = defs.Library
	d, err := EmitDay(b, job.Plan, lib)
	if err != nil {
		return nil, err
	}
	if job.Plan.Day == 0 {
		d.Catalog = job.Catalog
	}
	return &ImplResult{Delta: d, State: b.State}, nil
}
