package synth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/validate"
	"github.com/wildawm/wildawm/internal/world"
)

// DayDir is the artifacts directory of persona id's day.
func (r *Run) DayDir(id string, day int) string {
	return filepath.Join(r.Dir, "personas", id, fmt.Sprintf("day-%02d", day))
}

// LoadPersonas reads every persona bible of the run, by id order.
func (r *Run) LoadPersonas() ([]*persona.Persona, error) {
	dirs, err := filepath.Glob(filepath.Join(r.Dir, "personas", "*", "bible.json"))
	if err != nil {
		return nil, err
	}
	var out []*persona.Persona
	for _, f := range dirs {
		p, err := readBible(f, filepath.Base(filepath.Dir(f)))
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// LoadPersona reads persona id's bible. id must be a name (world.NameRule).
func (r *Run) LoadPersona(id string) (*persona.Persona, error) {
	if err := world.CheckName("", "persona", id); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	p, err := readBible(filepath.Join(r.Dir, "personas", id, "bible.json"), id)
	if err != nil {
		if os.IsNotExist(err) {
			return nil, fmt.Errorf("no persona %q in %s: create one with wildawm syn persona, or list %s", id, r.Dir, filepath.Join(r.Dir, "personas"))
		}
		return nil, err
	}
	return p, nil
}

// ErrMisplacedBible is a bible whose id is not the name of its directory.
var ErrMisplacedBible = errors.New("the id is not the name of the bible's directory")

// readBible reads the bible at path, whose directory is named dir. Its id
// becomes the path of every artifact of the persona's world, so it must be
// a name (world.NameRule) and the directory's own: a bible edited to say
// "../../etc" is refused before anything is written.
func readBible(path, dir string) (*persona.Persona, error) {
	p := &persona.Persona{}
	if err := readJSON(path, p); err != nil {
		return nil, err
	}
	if err := world.CheckName(path, "id", p.ID); err != nil {
		return nil, fmt.Errorf("synth: %w", err)
	}
	if p.ID != dir {
		return nil, fmt.Errorf("synth: %s: field id: %w: %q is not %q: a bible lives at personas/ID/bible.json; put it back or fix the id", path, ErrMisplacedBible, p.ID, dir)
	}
	return p, nil
}

// NextPersona drafts one more persona through the diversity gate against
// the run's accepted ones, writes its bible and returns it.
func (r *Run) NextPersona(ctx context.Context, name string, days int) (*persona.Persona, []PersonaVerdict, error) {
	have, err := r.LoadPersonas()
	if err != nil {
		return nil, nil, err
	}
	var gate persona.Gate
	for _, p := range have {
		gate.Accept(p)
	}
	req := persona.Request{Seed: r.Seed, Index: len(have), Days: days, Name: name}
	var verdicts []PersonaVerdict
	for rev := 0; rev <= MaxRevisions; rev++ {
		req.Revision = rev
		if rev == 0 {
			req.Avoid = persona.Avoid{Names: map[string]bool{}}
			for _, p := range have {
				for n := range persona.Reserved(p) {
					req.Avoid.Names[n] = true
				}
			}
		}
		p, err := r.Backend.Persona(ctx, r.Grounding, req)
		if err != nil {
			return nil, verdicts, err
		}
		if err := p.Validate(true); err != nil {
			verdicts = append(verdicts, PersonaVerdict{Index: req.Index, Revision: rev, ID: p.ID, Reasons: []string{err.Error()}})
			continue
		}
		v := gate.Judge(p)
		verdicts = append(verdicts, PersonaVerdict{Index: req.Index, Revision: rev, ID: p.ID, OK: v.OK, Reasons: v.Reasons})
		if v.OK {
			return p, verdicts, writeJSON(filepath.Join(r.Dir, "personas", p.ID, "bible.json"), p)
		}
		names := req.Avoid.Names
		req.Avoid = v.Avoid
		for n := range names {
			req.Avoid.Names[n] = true
		}
	}
	return nil, verdicts, fmt.Errorf("synth: the persona draft was rejected by the diversity gate %d times: %v", MaxRevisions+1, verdicts[len(verdicts)-1].Reasons)
}

// StateBefore returns the ledger after day-1 of persona p (empty on day
// 0); day-1 must be done.
func (r *Run) StateBefore(p *persona.Persona, day int) (*skill.State, error) {
	if day == 0 {
		return skill.NewState(), nil
	}
	st := skill.NewState()
	if err := readJSON(filepath.Join(r.DayDir(p.ID, day-1), "state.json"), st); err != nil {
		return nil, fmt.Errorf("day %d of %s is not done (%v): run wildawm syn world --persona %s --to-day %d first", day-1, p.ID, err, p.ID, day-1)
	}
	return st, nil
}

// notDone refuses to redo a day that was accepted: its plan and delta are
// what its stored state was made from.
func (r *Run) notDone(p *persona.Persona, day int) error {
	if _, err := os.Stat(filepath.Join(r.DayDir(p.ID, day), "done.json")); err == nil {
		return fmt.Errorf("day %d of %s is done: its plan.json and delta.json made the stored state; check it with wildawm world validate --persona %s --day %d", day, p.ID, p.ID, day)
	}
	return nil
}

// PlanDay runs the day-plan stage for p's day and writes plan.json.
func (r *Run) PlanDay(ctx context.Context, p *persona.Persona, day int) (*Day, error) {
	if err := r.notDone(p, day); err != nil {
		return nil, err
	}
	st, err := r.StateBefore(p, day)
	if err != nil {
		return nil, err
	}
	plan, err := r.Backend.Plan(ctx, &PlanJob{Persona: *p, Day: day, State: st, Seed: r.Seed, Definitions: r.Defs.ByName})
	if err != nil {
		return nil, err
	}
	return plan, writeJSON(filepath.Join(r.DayDir(p.ID, day), "plan.json"), plan)
}

// ImplementDay runs the day-implementation stage over the day's plan.json
// (planning it first when there is none) and writes delta.json.
func (r *Run) ImplementDay(ctx context.Context, p *persona.Persona, day int) (*delta.Delta, error) {
	if err := r.notDone(p, day); err != nil {
		return nil, err
	}
	plan := &Day{}
	if err := readJSON(filepath.Join(r.DayDir(p.ID, day), "plan.json"), plan); err != nil {
		if plan, err = r.PlanDay(ctx, p, day); err != nil {
			return nil, err
		}
	}
	st, err := r.StateBefore(p, day)
	if err != nil {
		return nil, err
	}
	job := &ImplJob{Persona: *p, Plan: *plan, State: st, Catalog: r.CatalogID}
	if day > 0 {
		// The implementer reads the live parent world.
		var parent Done
		if err := readJSON(filepath.Join(r.DayDir(p.ID, day-1), "done.json"), &parent); err != nil {
			return nil, fmt.Errorf("day %d of %s is not done: %w", day-1, p.ID, err)
		}
		tmp, err := os.MkdirTemp(r.Dir, ".dayimpl-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		job.Parent, job.ParentDir = parent.Snapshot, filepath.Join(tmp, "parent")
		if err := r.Store.Checkout(ctx, parent.Snapshot, job.ParentDir); err != nil {
			return nil, err
		}
	}
	res, err := r.Backend.Implement(ctx, job)
	if err != nil {
		return nil, err
	}
	b, err := res.Delta.Encode()
	if err != nil {
		return nil, err
	}
	return res.Delta, writeAtomic(filepath.Join(r.DayDir(p.ID, day), "delta.json"), b)
}

// ValidateDay runs the five layers again on a done day from its stored
// plan and delta over its parent (checked out from the store).
func (r *Run) ValidateDay(ctx context.Context, p *persona.Persona, day int) (*validate.Report, error) {
	ddir := r.DayDir(p.ID, day)
	plan := &Day{}
	if err := readJSON(filepath.Join(ddir, "plan.json"), plan); err != nil {
		return nil, fmt.Errorf("day %d of %s has no plan: %w", day, p.ID, err)
	}
	d, err := readDelta(ddir)
	if err != nil {
		return nil, err
	}
	job := &CheckJob{Persona: *p, Day: day, Delta: d, Events: plan.Events, Recheck: true}
	if day > 0 {
		var parent Done
		if err := readJSON(filepath.Join(r.DayDir(p.ID, day-1), "done.json"), &parent); err != nil {
			return nil, fmt.Errorf("day %d of %s is not done: %w", day-1, p.ID, err)
		}
		job.Parent = parent.Snapshot
	}
	ps, err := r.LoadPersonas()
	if err != nil {
		return nil, err
	}
	r.Checker.Identities = persona.NewIdentities(ps)
	return r.Check(ctx, job)
}

// CheckJob is the check stage's input as plain data: the day's delta and
// plan over a parent named by its snapshot, so a worker with the store can
// run it. Key(job) is its idempotency key.
type CheckJob struct {
	Persona persona.Persona `json:"persona"`
	Day     int             `json:"day"`
	Delta   *delta.Delta    `json:"delta"`
	Events  []skill.Event   `json:"events"`
	// Parent is the parent state's snapshot; zero on day 0.
	Parent world.ID `json:"parent,omitzero"`
	// Recheck is set for a day accepted before (its state is kept).
	Recheck bool `json:"recheck,omitempty"`
}

// Check runs the check stage: it checks the parent out of the store into
// a scratch directory and runs the five layers; the accepted state goes
// into the store (the report names its snapshot).
func (r *Run) Check(ctx context.Context, job *CheckJob) (*validate.Report, error) {
	tmp, err := os.MkdirTemp(r.Dir, ".check-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	in := validate.Input{Persona: &job.Persona, Delta: job.Delta, Events: job.Events, Dir: filepath.Join(tmp, "world"), Day: job.Day, Recheck: job.Recheck}
	if !job.Parent.IsZero() {
		in.ParentDir, in.ParentSnap = filepath.Join(tmp, "parent"), job.Parent
		if err := r.Store.Checkout(ctx, job.Parent, in.ParentDir); err != nil {
			return nil, err
		}
	}
	return r.Checker.Check(ctx, in)
}

// Rebake is one day of a rebuild from day 0: the hash done.json records,
// the hash the store's snapshot records, and the rebuilt state's.
type Rebake struct {
	Day     int      `json:"day"`
	Stored  world.ID `json:"stored"`
	InStore world.ID `json:"in_store"`
	Rebuilt world.ID `json:"rebuilt"`
	Equal   bool     `json:"equal"`
}

// Prebake grows p's world to day last (the states are stored as it goes),
// then, with verify, rebuilds every state from day 0 by applying the
// stored deltas in order and compares each hash with the stored one.
func (r *Run) Prebake(ctx context.Context, p *persona.Persona, last int, verify bool) ([]Rebake, error) {
	if err := r.World(ctx, p, last); err != nil {
		return nil, err
	}
	var out []Rebake
	if !verify {
		return out, nil
	}
	tmp, err := os.MkdirTemp(r.Dir, ".rebake-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp)
	parent := ""
	for day := 0; day <= last; day++ {
		var done Done
		if err := readJSON(filepath.Join(r.DayDir(p.ID, day), "done.json"), &done); err != nil {
			return out, fmt.Errorf("day %d of %s is not done (it failed its check; see its report.json): %w", day, p.ID, err)
		}
		d, err := readDelta(r.DayDir(p.ID, day))
		if err != nil {
			return out, err
		}
		dir := filepath.Join(tmp, fmt.Sprintf("day-%02d", day))
		var parentSnap world.ID
		if day > 0 {
			var pd Done
			if err := readJSON(filepath.Join(r.DayDir(p.ID, day-1), "done.json"), &pd); err != nil {
				return out, err
			}
			parentSnap = pd.Snapshot
		}
		snap, err := r.Store.Load(done.Snapshot)
		if err != nil {
			return out, fmt.Errorf("day %d of %s: the stored state %s: %w", day, p.ID, done.Snapshot.Short(), err)
		}
		if err := delta.ApplyCopy(ctx, parent, dir, d, &delta.Options{Generators: r.Checker.Generators, Parent: parentSnap}); err != nil {
			return out, fmt.Errorf("rebake day %d: %w", day, err)
		}
		sum, err := state.Summarize(ctx, dir)
		if err != nil {
			return out, err
		}
		out = append(out, Rebake{Day: day, Stored: done.Hash, InStore: snap.WorldHash, Rebuilt: sum.Hash,
			Equal: sum.Hash == done.Hash && sum.Hash == snap.WorldHash})
		if parent != "" {
			os.RemoveAll(parent)
		}
		parent = dir
	}
	return out, nil
}

// readDelta reads a day directory's delta.json.
func readDelta(ddir string) (*delta.Delta, error) {
	f, err := os.Open(filepath.Join(ddir, "delta.json"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	d, err := delta.Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(ddir, "delta.json"), err)
	}
	return d, nil
}
