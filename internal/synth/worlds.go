package synth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/validate"
	"github.com/wildawm/wildawm/internal/world"
)

// MaxRevisions is how many times a persona or a day is revised after its
// gate or check fails.
const MaxRevisions = 2

// Backend runs the model-driven stages. Procedural is the offline default;
// the llm backend asks an OpenAI-compatible model.
type Backend interface {
	// Name is "procedural" or "llm:MODEL".
	Name() string
	// Persona drafts a persona for r.
	Persona(ctx context.Context, g *persona.Grounding, r persona.Request) (*persona.Persona, error)
	// Plan writes one day's plan.
	Plan(ctx context.Context, job *PlanJob) (*Day, error)
	// Implement turns the day's plan into its delta.
	Implement(ctx context.Context, job *ImplJob) (*ImplResult, error)
}

// Procedural is the seeded, offline backend.
type Procedural struct {
	Planner *Planner
}

// Name implements Backend.
func (p *Procedural) Name() string { return "procedural" }

// Persona implements Backend.
func (p *Procedural) Persona(_ context.Context, g *persona.Grounding, r persona.Request) (*persona.Persona, error) {
	return persona.Generate(g, r)
}

// Plan implements Backend.
func (p *Procedural) Plan(_ context.Context, job *PlanJob) (*Day, error) { return p.Planner.Plan(job) }

// Implement implements Backend.
func (p *Procedural) Implement(_ context.Context, job *ImplJob) (*ImplResult, error) {
	return Implement(p.Planner.Skills, p.Planner.Definitions, job)
}

// Run is one world-synthesis run over a directory of artifacts:
//
//	DIR/personas/ID/bible.json             the persona
//	DIR/personas/ID/day-NN/plan.json       the day's plan
//	DIR/personas/ID/day-NN/delta.json      its delta
//	DIR/personas/ID/day-NN/report.json     its five-layer report (every attempt's)
//	DIR/personas/ID/day-NN/state.json      the ledger after it
//	DIR/personas/ID/day-NN/done.json       written last: the accepted state
//	DIR/personas.json                      the persona stage's verdicts
//	DIR/store, DIR/library                 the snapshot store, the shared definitions
//
// A rerun skips every day whose done.json holds the key of the same
// inputs, so an interrupted run resumes where it stopped.
type Run struct {
	Dir       string
	planner   *Planner
	Store     *store.Store
	Backend   Backend
	Checker   *validate.Checker
	Grounding *persona.Grounding
	Defs      Definitions
	CatalogID world.ID
	Seed      uint64
	Log       *slog.Logger
	// Progress, when set, is told after every accepted or failed day.
	Progress func(Progress)

	states, failed, forgot atomic.Int64
	total                  atomic.Int64
	start                  time.Time
	mu                     sync.Mutex // serialises Progress
}

// SetIdentities makes the identity check reserve the names of ps.
func (r *Run) SetIdentities(ps []*persona.Persona) { r.Checker.Identities = persona.NewIdentities(ps) }

// Forgotten is how many rejected candidates were snapshotted and dropped:
// a store gc reclaims their blobs.
func (r *Run) Forgotten() int64 { return r.forgot.Load() }

// Planner returns the run's procedural planner (its skill library).
func (r *Run) Planner() *Planner { return r.planner }

// Progress is the run's state after one day.
type Progress struct {
	Persona  string        `json:"persona"`
	Day      int           `json:"day"`
	OK       bool          `json:"ok"`
	Resumed  bool          `json:"resumed"`
	States   int64         `json:"states"`
	Failed   int64         `json:"failed"`
	Total    int64         `json:"total"`
	Elapsed  time.Duration `json:"elapsed"`
	Attempts int           `json:"attempts"`
}

// Done is a day's done.json: the accepted state and the key of the inputs
// it was made from.
type Done struct {
	Key      world.ID `json:"key"`
	Snapshot world.ID `json:"snapshot"`
	Hash     world.ID `json:"hash"`
	Attempts int      `json:"attempts"`
	// Stats measure the state (for stats worlds).
	Stats *validate.Stats `json:"stats,omitempty"`
	// Complete is set when all five layers ran (live health included).
	Complete bool `json:"complete"`
}

// PersonaVerdict is one persona draft's diversity-gate outcome.
type PersonaVerdict struct {
	Index    int      `json:"index"`
	Revision int      `json:"revision"`
	ID       string   `json:"id"`
	OK       bool     `json:"ok"`
	Reasons  []string `json:"reasons,omitempty"`
}

// Personas runs the persona stage: n personas, each drafted and judged by
// the diversity gate with at most MaxRevisions revisions; days gives each
// persona's number of days. A draft that fails every revision is skipped
// and the next index tried. The bibles go to DIR/personas/ID/bible.json.
func (r *Run) Personas(ctx context.Context, n int, days func(i int) int, name string) ([]*persona.Persona, []PersonaVerdict, error) {
	earlier, verdicts, next, err := r.donePersonas(n, r.Backend.Name())
	if err != nil {
		return nil, nil, err
	}
	if len(earlier) == n {
		return earlier, verdicts, nil // an earlier run's: resume with them
	}
	// An earlier run stopped part-way (a failed model call, a kill): its
	// accepted personas stand, and the drafts go on from where it was.
	var gate persona.Gate
	for _, p := range earlier {
		gate.Accept(p)
	}
	save := func(next int) error {
		return writeJSON(filepath.Join(r.Dir, "personas.json"), personaStage{Backend: r.Backend.Name(), Seed: r.Seed, N: n, Next: next, Verdicts: verdicts})
	}
	for i := next; len(gate.Accepted()) < n; i++ {
		if i > 4*n+8 {
			return nil, verdicts, fmt.Errorf("synth: only %d of %d personas passed the diversity gate after %d drafts", len(gate.Accepted()), n, i)
		}
		if err := ctx.Err(); err != nil {
			return nil, verdicts, err
		}
		req := persona.Request{Seed: r.Seed, Index: i, Days: days(len(gate.Accepted())), Name: name}
		req.Avoid.Names = map[string]bool{}
		for _, a := range gate.Accepted() {
			for k := range persona.Reserved(a) {
				req.Avoid.Names[k] = true
			}
		}
		for rev := 0; rev <= MaxRevisions; rev++ {
			req.Revision = rev
			p, err := r.Backend.Persona(ctx, r.Grounding, req)
			if err != nil {
				kept := len(gate.Accepted())
				return nil, verdicts, fmt.Errorf("synth: persona draft %d (revision %d): %w; the %d personas accepted before it are kept (%s): run the same command again to resume from this draft", i, rev, err, kept, filepath.Join(r.Dir, "personas.json"))
			}
			if err := p.Validate(true); err != nil {
				verdicts = append(verdicts, PersonaVerdict{Index: i, Revision: rev, ID: p.ID, Reasons: []string{err.Error()}})
				continue
			}
			v := gate.Judge(p)
			verdicts = append(verdicts, PersonaVerdict{Index: i, Revision: rev, ID: p.ID, OK: v.OK, Reasons: v.Reasons})
			if v.OK {
				gate.Accept(p)
				// Kept at once: a later draft's failure loses nothing.
				if err := writeJSON(filepath.Join(r.Dir, "personas", p.ID, "bible.json"), p); err != nil {
					return nil, verdicts, err
				}
				if err := save(i + 1); err != nil {
					return nil, verdicts, err
				}
				break
			}
			names := req.Avoid.Names
			req.Avoid = v.Avoid
			for k := range names {
				req.Avoid.Names[k] = true
			}
		}
	}
	return gate.Accepted(), verdicts, nil
}

// personaStage is personas.json: the persona stage's verdicts, written
// after the bibles.
type personaStage struct {
	Backend string `json:"backend"`
	Seed    uint64 `json:"seed"`
	N       int    `json:"personas"`
	// Next is the index of the next draft, while fewer than N personas
	// are accepted (a run that stopped part-way resumes there).
	Next     int              `json:"next,omitempty"`
	Verdicts []PersonaVerdict `json:"verdicts"`
}

// donePersonas returns the personas an earlier persona stage of this run
// accepted (same backend, seed and count), in the order it accepted them,
// its verdicts, and where its drafts stopped (all n accepted: done). An id
// in personas.json or a bible that is not a name (world.NameRule), or a
// bible not in its id's directory, is an error: resuming must not write a
// world where such an id points.
func (r *Run) donePersonas(n int, backend string) ([]*persona.Persona, []PersonaVerdict, int, error) {
	var st personaStage
	file := filepath.Join(r.Dir, "personas.json")
	if readJSON(file, &st) != nil || st.Backend != backend || st.Seed != r.Seed || st.N != n {
		return nil, nil, 0, nil
	}
	var out []*persona.Persona
	for i, v := range st.Verdicts {
		if !v.OK {
			continue
		}
		if err := world.CheckName(file, fmt.Sprintf("verdicts[%d].id", i), v.ID); err != nil {
			return nil, nil, 0, fmt.Errorf("synth: %w", err)
		}
		p, err := r.LoadPersona(v.ID)
		var ne *world.NameError
		if errors.As(err, &ne) || errors.Is(err, ErrMisplacedBible) {
			return nil, nil, 0, err
		}
		if err != nil {
			return nil, nil, 0, nil // start again
		}
		out = append(out, p)
	}
	if len(out) < n && st.Next == 0 {
		return nil, nil, 0, nil // no record of where it stopped: start again
	}
	return out, st.Verdicts, st.Next, nil
}

// DayFailedError is a day that failed its five-layer check after every
// revision: the persona's world ends the day before (Report says why).
type DayFailedError struct {
	Persona  string
	Day      int
	Attempts int
	Report   string
	Problems []string
}

func (e *DayFailedError) Error() string {
	msg := fmt.Sprintf("synth: %s day %d failed its check in all %d attempts, so the world ends at day %d (%s)", e.Persona, e.Day, e.Attempts, e.Day-1, e.Report)
	if len(e.Problems) > 0 {
		msg += ": " + strings.Join(e.Problems[:min(3, len(e.Problems))], "; ")
	}
	return msg
}

// Worlds grows every persona's world to its last day, parallel personas
// at a time. It returns the first error of the harness; a day that fails
// its check after every revision ends that persona's world there (its
// report says why, the progress counts it failed) and is no error of the
// run.
func (r *Run) Worlds(ctx context.Context, ps []*persona.Persona, parallel int) error {
	r.start = time.Now()
	r.Checker.Identities = persona.NewIdentities(ps)
	for _, p := range ps {
		r.total.Add(int64(p.Days))
	}
	if parallel < 1 {
		parallel = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sem := make(chan struct{}, parallel)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
	)
	for _, p := range ps {
		sem <- struct{}{}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			var dayFailed *DayFailedError
			if err := r.World(ctx, p, p.Days-1); err != nil && !errors.As(err, &dayFailed) {
				mu.Lock()
				if first == nil {
					first = err
					cancel()
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if first != nil {
		return first
	}
	return ctx.Err()
}

// World grows p's world from day 0 to day last (resuming after the last
// done day) and returns when it is done, failed or interrupted: a day
// that failed its check is a *DayFailedError.
func (r *Run) World(ctx context.Context, p *persona.Persona, last int) error {
	pdir := filepath.Join(r.Dir, "personas", p.ID)
	work := filepath.Join(r.Dir, "work", p.ID)
	r.mu.Lock()
	if r.start.IsZero() {
		// World called alone (syn world, prebake): its days are the run.
		r.start = time.Now()
		r.total.Add(int64(last + 1))
	}
	r.mu.Unlock()
	var (
		parentDir  string
		parentSnap world.ID
		prevHash   world.ID
		st         = skill.NewState()
	)
	for day := 0; day <= last; day++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		ddir := filepath.Join(pdir, fmt.Sprintf("day-%02d", day))
		job := &PlanJob{Persona: *p, Day: day, State: st, Seed: r.Seed, Definitions: r.Defs.ByName}
		key, err := Key(struct {
			Job     *PlanJob
			Backend string
			Catalog world.ID
		}{job, r.Backend.Name(), r.CatalogID})
		if err != nil {
			return err
		}
		var done Done
		// A done day is skipped unless it was checked without live health
		// and this run has a runtime for it.
		if readJSON(filepath.Join(ddir, "done.json"), &done) == nil && done.Key == key && (done.Complete || r.Checker.Env == nil) {
			next := skill.NewState()
			if err := readJSON(filepath.Join(ddir, "state.json"), next); err != nil {
				return fmt.Errorf("synth: %s: %w", ddir, err)
			}
			st, parentSnap, prevHash = next, done.Snapshot, done.Hash
			parentDir = "" // checked out below when a later day needs it
			r.report(Progress{Persona: p.ID, Day: day, OK: true, Resumed: true, Attempts: done.Attempts})
			continue
		}
		if parentDir == "" && day > 0 {
			// Resumed: the parent world comes from the store.
			parentDir = filepath.Join(work, fmt.Sprintf("day-%02d", day-1))
			// A directory left by an interrupted run is the parent only if
			// it is the accepted state.
			if !sameState(ctx, parentDir, prevHash) {
				os.RemoveAll(parentDir)
				if err := r.Store.Checkout(ctx, parentSnap, parentDir); err != nil {
					return fmt.Errorf("synth: %s day %d: parent: %w", p.ID, day-1, err)
				}
			}
		}
		dir := filepath.Join(work, fmt.Sprintf("day-%02d", day))
		os.RemoveAll(dir)
		var reports []*validate.Report
		var accepted *ImplResult
		var plan *Day
		for attempt := 0; attempt <= MaxRevisions; attempt++ {
			job.Attempt = attempt
			plan, err = r.Backend.Plan(ctx, job)
			if err != nil {
				return fmt.Errorf("synth: %s day %d plan: %w", p.ID, day, err)
			}
			res, err := r.Backend.Implement(ctx, &ImplJob{Persona: *p, Plan: *plan, State: st, Catalog: r.CatalogID, Parent: parentSnap, ParentDir: parentDir})
			if err != nil {
				return fmt.Errorf("synth: %s day %d implement: %w", p.ID, day, err)
			}
			rep, err := r.Checker.Check(ctx, validate.Input{Persona: p, Delta: res.Delta, Events: plan.Events, ParentDir: parentDir, ParentSnap: parentSnap, Dir: dir, Day: day})
			if err != nil {
				return err
			}
			reports = append(reports, rep)
			if rep.Forgot {
				r.forgot.Add(1)
			}
			if err := writeDay(ddir, plan, res.Delta, reports); err != nil {
				return err
			}
			if rep.OK {
				accepted = res
				break
			}
			// Revise: leave out the skills of the events the problems name,
			// and hand the problems to the planner.
			job.Feedback = rep.Problems()
			for _, i := range rep.Events {
				if i < len(plan.Events) && !slices.Contains(job.Avoid, plan.Events[i].Skill) {
					job.Avoid = append(job.Avoid, plan.Events[i].Skill)
				}
			}
			r.log().Info("day failed its check", "persona", p.ID, "day", day, "attempt", attempt, "problems", rep.Problems())
		}
		if accepted == nil {
			r.failed.Add(1)
			r.report(Progress{Persona: p.ID, Day: day, Attempts: len(reports)})
			return &DayFailedError{Persona: p.ID, Day: day, Attempts: len(reports), Report: filepath.Join(ddir, "report.json"), Problems: reports[len(reports)-1].Problems()}
		}
		last := reports[len(reports)-1]
		if err := writeJSON(filepath.Join(ddir, "state.json"), accepted.State); err != nil {
			return err
		}
		if err := writeJSON(filepath.Join(ddir, "done.json"), Done{Key: key, Snapshot: last.Snapshot, Hash: last.Hash, Attempts: len(reports), Stats: last.Stats, Complete: last.Complete}); err != nil {
			return err
		}
		if parentDir != "" {
			os.RemoveAll(parentDir)
		}
		st, parentDir, parentSnap, prevHash = accepted.State, dir, last.Snapshot, last.Hash
		r.states.Add(1)
		r.report(Progress{Persona: p.ID, Day: day, OK: true, Attempts: len(reports)})
	}
	if parentDir != "" {
		os.RemoveAll(parentDir)
	}
	return nil
}

func (r *Run) report(p Progress) {
	if p.Resumed {
		r.states.Add(1)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	p.States, p.Failed, p.Total, p.Elapsed = r.states.Load(), r.failed.Load(), r.total.Load(), time.Since(r.start)
	if r.Progress != nil {
		r.Progress(p)
	}
}

// sameState reports whether dir holds a world with content hash want.
func sameState(ctx context.Context, dir string, want world.ID) bool {
	if _, err := os.Stat(filepath.Join(dir, world.ManifestFile)); err != nil {
		return false
	}
	sum, err := state.Summarize(ctx, dir)
	return err == nil && sum.Hash == want
}

func (r *Run) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func writeDay(dir string, plan *Day, d *delta.Delta, reports []*validate.Report) error {
	if err := writeJSON(filepath.Join(dir, "plan.json"), plan); err != nil {
		return err
	}
	b, err := d.Encode()
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(dir, "delta.json"), b); err != nil {
		return err
	}
	return writeJSON(filepath.Join(dir, "report.json"), reports)
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return writeAtomic(path, append(b, '\n'))
}

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}
