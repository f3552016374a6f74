package taskgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// Job is one unit of task synthesis, as plain data: a family's sketches
// on one world state, each through the diversity gate and authored.
type Job struct {
	Persona  string   `json:"persona"`
	Day      int      `json:"day"`
	Snapshot world.ID `json:"snapshot"`
	Family   string   `json:"family"`
	Seed     uint64   `json:"seed"`
}

// Result is what a job produced.
type Result struct {
	Job      Job        `json:"job"`
	Sketches int        `json:"sketches"`
	Tasks    []Produced `json:"tasks,omitempty"`
	// Dropped are the sketches the diversity gate kept out; Rejected the
	// tasks the self-check failed.
	Dropped  []Produced `json:"dropped,omitempty"`
	Rejected []Produced `json:"rejected,omitempty"`
	// SketchFailed is why the sketch agent proposed nothing: its model
	// failed (after every retry). A rerun runs the session again.
	SketchFailed string `json:"sketch_failed,omitempty"`
}

// Produced is one sketch's fate.
type Produced struct {
	ID      string  `json:"id"`
	Persona string  `json:"persona"`
	Dir     string  `json:"dir,omitempty"`
	Sketch  Sketch  `json:"sketch"`
	Verdict Verdict `json:"diversity"`
	// Check is the self-check's result, when it ran.
	Check *Check `json:"check,omitempty"`
	// Author names the AuthorBackend that wrote the task ("" for the
	// sketch's family); Problem says why the llm author wrote none.
	Author  string `json:"author,omitempty"`
	Problem string `json:"problem,omitempty"`
}

// SketchFile is the sketch and its diversity verdict, beside task.json.
const SketchFile = "sketch.json"

// AuthorFailed begins the problem of a sketch whose author model failed
// (its server, after every retry): a rerun authors it again.
const AuthorFailed = "the author failed (a rerun tries again): "

// EmbeddingsFailed begins the problem of a sketch the diversity gate could
// not embed because the embedding model's server failed (after every
// retry): a rerun gates it again.
const EmbeddingsFailed = "the embedding model failed (a rerun tries again): "

// embedOutage reports whether err is the embedding model's server failing
// after its retries: no reply, a 429 or a 5xx, a reply cut mid-way. A
// reply that came whole but is unusable (a NaN), or a server not set up
// for the stage, is no outage: a rerun would meet it again.
func embedOutage(ctx context.Context, err error) bool {
	return ctx.Err() == nil && !errors.Is(err, ErrBadEmbedding) && model.IsOutage(err)
}

// Synth runs jobs against a source into Out/<task id>/.
type Synth struct {
	Source    *Source
	Out       string
	Diversity *Diversity
	// Check, when set, gives the rollout environment (live instances, a
	// browser) for a persona, and every written task is self-checked in it
	// (CheckTask); a task that fails is removed and counted as rejected.
	Check func(p *persona.Persona) *rollout.Env
	// SketchBackend, when set, proposes the sketches instead of the
	// families (the llm sketch agent, NewLLMSketcher): Jobs makes one job
	// a state, of family LLMFamily. AuthorBackend, when set, writes every
	// sketch's task instead of its family (the llm author, NewLLMAuthor),
	// after the diversity gate; a sketch it cannot write is rejected with
	// the problem. nil means the procedural families, the default.
	SketchBackend SketchBackend
	AuthorBackend AuthorBackend
}

// Jobs lists a job for every family on every state that matches keep (nil:
// all), seeded from seed, in a fixed order.
func (s *Synth) Jobs(fams []Family, keep func(State) bool, seed uint64) []Job {
	var out []Job
	for _, st := range s.Source.States {
		if keep != nil && !keep(st) {
			continue
		}
		if s.SketchBackend != nil {
			out = append(out, Job{Persona: st.Persona.ID, Day: st.Day, Snapshot: st.Snapshot, Family: LLMFamily, Seed: jobSeed(seed, st, LLMFamily)})
			continue
		}
		for _, f := range fams {
			out = append(out, Job{Persona: st.Persona.ID, Day: st.Day, Snapshot: st.Snapshot, Family: f.Name(), Seed: jobSeed(seed, st, f.Name())})
		}
	}
	return out
}

func jobSeed(seed uint64, st State, family string) uint64 {
	h := fnv.New64a()
	fmt.Fprintf(h, "%d\x00%s\x00%d\x00%s", seed, st.Persona.ID, st.Day, family)
	return h.Sum64()
}

// Do runs one job. A task already written by an earlier run (its
// sketch.json the same) is kept, not authored again, so a run resumes.
func (s *Synth) Do(ctx context.Context, j Job) (*Result, error) {
	return s.do(ctx, j, func() func() { return func() {} })
}

// do runs a job; turn waits for the job's turn at the diversity gate and
// returns the function that ends it, so that jobs run in parallel reach the
// gate in their order and a run keeps the same tasks however many workers
// it has.
func (s *Synth) do(ctx context.Context, j Job, turn func() func()) (*Result, error) {
	var fam Family
	switch {
	case j.Family != LLMFamily:
		f, err := Lookup(j.Family)
		if err != nil {
			return nil, err
		}
		fam = f
	case s.SketchBackend == nil:
		return nil, fmt.Errorf("taskgen: job %s day %d is the llm sketch agent's, but the synthesis has no SketchBackend", j.Persona, j.Day)
	case s.AuthorBackend == nil:
		return nil, fmt.Errorf("taskgen: the llm sketch agent's sketches are family-free: they need an AuthorBackend (the llm author)")
	}
	st, ok := s.state(j)
	if !ok {
		return nil, fmt.Errorf("taskgen: job %s day %d: no such state in the source", j.Persona, j.Day)
	}
	w, err := s.Source.World(ctx, st)
	if err != nil {
		return nil, err
	}
	var sks []Sketch
	if fam != nil {
		sks, err = fam.Sketch(w, rand.New(rand.NewPCG(j.Seed, 0x5eed)))
	} else {
		sks, err = s.SketchBackend.Sketch(ctx, j, st, w)
		var me *model.Error
		if err != nil && ctx.Err() == nil && errors.As(err, &me) && !errors.Is(err, model.ErrServerConfig) {
			// The sketch model's outage is this job's loss, not the
			// run's end: the tasks written stay, and a rerun runs the
			// session again (a failed session is not kept).
			return &Result{Job: j, SketchFailed: err.Error()}, nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("taskgen: %s on %s day %d: sketch: %w", j.Family, j.Persona, j.Day, err)
	}
	res := &Result{Job: j, Sketches: len(sks)}
	drafts := make([]*Draft, len(sks))
	ids := make([]string, len(sks))
	for i, sk := range sks {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if s.AuthorBackend != nil {
			ids[i] = TaskID(j.Persona, LLMTaskID(sk)) // authored after the gate
			continue
		}
		d, err := fam.Author(w, sk)
		if err != nil {
			return nil, fmt.Errorf("taskgen: %s on %s day %d: author %q: %w", j.Family, j.Persona, j.Day, sk.Title, err)
		}
		d.Task.ID = TaskID(j.Persona, d.Task.ID)
		CompleteSubtasks(d.Task)
		drafts[i], ids[i] = d, d.Task.ID
	}
	// The gate, in the job's turn.
	end := turn()
	var keep []Produced
	var keepDrafts []*Draft
	for i, sk := range sks {
		p := Produced{ID: ids[i], Persona: j.Persona, Sketch: sk}
		if d := drafts[i]; d != nil {
			// Dates against the world's clock and calendar, before the
			// diversity gate reserves the sketch.
			if err := CheckCalendar(w, d.Task); err != nil {
				p.Problem = err.Error()
				res.Rejected = append(res.Rejected, p)
				continue
			}
			// A draft its family got wrong on this world (a fact whose
			// mistake changes nothing here) is this sketch's rejection,
			// never the run's end.
			if err := d.Task.Validate(); err != nil {
				p.Problem = "the family's draft is not a valid task: " + err.Error()
				res.Rejected = append(res.Rejected, p)
				continue
			}
		}
		v, err := s.Diversity.Reserve(ctx, p.ID, j.Persona, sk)
		if errors.Is(err, ErrIDClash) {
			p.Problem = err.Error()
			res.Rejected = append(res.Rejected, p)
			continue
		}
		if embedOutage(ctx, err) {
			// This sketch's loss, not the run's end: the tasks written
			// stay, and a rerun gates it again.
			p.Problem = EmbeddingsFailed + err.Error()
			res.Rejected = append(res.Rejected, p)
			continue
		}
		if err != nil {
			end()
			return nil, err
		}
		p.Verdict = v
		if !v.Keep {
			res.Dropped = append(res.Dropped, p)
			continue
		}
		p.Dir = filepath.Join(s.Out, p.ID)
		keep, keepDrafts = append(keep, p), append(keepDrafts, drafts[i])
	}
	end()
	if s.AuthorBackend != nil {
		var err error
		if keep, keepDrafts, err = s.authorKept(ctx, w, keep, res); err != nil {
			return nil, err
		}
	}
	for i, p := range keep {
		earlier, err := s.write(p, keepDrafts[i])
		if err != nil {
			for _, q := range keep[i:] {
				s.Diversity.Release(q.ID)
			}
			return nil, err
		}
		if s.Check != nil {
			c, err := s.check(ctx, s.Check(st.Persona), p, keepDrafts[i])
			if err != nil {
				for _, q := range keep[i:] {
					s.Diversity.Release(q.ID)
				}
				return nil, fmt.Errorf("taskgen: self-check %s: %w", p.ID, err)
			}
			p.Check = c
			if !c.OK {
				s.Diversity.Release(p.ID)
				if earlier {
					// An earlier run's task, with what it decided: kept.
					if _, err := KeepVersion(p.Dir, "a rerun's self-check rejected it: "+c.Problem); err != nil {
						return nil, fmt.Errorf("taskgen: %s: %w", p.ID, err)
					}
				}
				if err := os.RemoveAll(p.Dir); err != nil {
					return nil, fmt.Errorf("taskgen: remove rejected task %s: %w", p.ID, err)
				}
				res.Rejected = append(res.Rejected, p)
				continue
			}
		}
		s.Diversity.Accept(p.ID)
		res.Tasks = append(res.Tasks, p)
	}
	return res, nil
}

// authorKept has the AuthorBackend write the kept sketches' tasks; a
// sketch it cannot write (an AuthorError) is released and rejected with
// the problem.
func (s *Synth) authorKept(ctx context.Context, w *World, keep []Produced, res *Result) ([]Produced, []*Draft, error) {
	var out []Produced
	var drafts []*Draft
	for i, p := range keep {
		p.Author = s.AuthorBackend.Name()
		d, err := earlierDraft(p)
		if d == nil && err == nil {
			d, err = s.AuthorBackend.Author(ctx, w, p.Sketch, "")
		}
		var ae *AuthorError
		switch {
		case errors.As(err, &ae):
			s.Diversity.Release(p.ID)
			p.Problem = ae.Error()
			res.Rejected = append(res.Rejected, p)
			continue
		case err != nil && ctx.Err() == nil && !errors.Is(err, model.ErrServerConfig):
			// The author's model failed (its server, after every retry):
			// this sketch's rejection, not the run's end; the tasks written
			// stay, and a rerun authors it again.
			s.Diversity.Release(p.ID)
			p.Problem = AuthorFailed + err.Error()
			res.Rejected = append(res.Rejected, p)
			continue
		case err != nil:
			for _, q := range keep[i:] {
				s.Diversity.Release(q.ID)
			}
			for _, q := range out {
				s.Diversity.Release(q.ID)
			}
			return nil, nil, fmt.Errorf("taskgen: author %q: %w", p.Sketch.Title, err)
		}
		d.Task.ID = p.ID
		if err := d.Task.Validate(); err != nil {
			// A draft its author got wrong on this world (a fact whose
			// mistake changes nothing here) is this sketch's rejection,
			// never the run's end.
			s.Diversity.Release(p.ID)
			p.Problem = "the author's draft is not a valid task: " + err.Error()
			res.Rejected = append(res.Rejected, p)
			continue
		}
		out, drafts = append(out, p), append(drafts, d)
	}
	return out, drafts, nil
}

func (s *Synth) state(j Job) (State, bool) {
	for _, st := range s.Source.States {
		if st.Persona.ID == j.Persona && st.Day == j.Day && st.Snapshot == j.Snapshot {
			return st, true
		}
	}
	return State{}, false
}

// write saves a draft unless the same sketch's task is there already;
// earlier says it was (the directory is an earlier run's). A directory of
// another sketch with an earlier run's decisions in it is kept as a
// version (KeepVersion) before the draft replaces it.
func (s *Synth) write(p Produced, d *Draft) (earlier bool, err error) {
	sb, err := json.MarshalIndent(p, "", "  ")
	if err != nil {
		return false, err
	}
	sb = append(sb, '\n')
	if old, err := os.ReadFile(filepath.Join(p.Dir, SketchFile)); err == nil {
		// The same sketch written by an earlier run stays as it is, with
		// what later stages added beside it (the self-check, the gates):
		// only the diversity verdict differs on a rerun, which now counts
		// the task as kept.
		var was Produced
		if json.Unmarshal(old, &was) == nil && was.ID == p.ID && was.Author == p.Author && reflect.DeepEqual(was.Sketch, p.Sketch) {
			if _, err := task.Load(p.Dir); err == nil {
				return true, nil
			}
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return false, err
	}
	if HasEvidence(p.Dir) {
		if _, err := KeepVersion(p.Dir, "written again from another sketch"); err != nil {
			return false, fmt.Errorf("taskgen: %s: %w", p.ID, err)
		}
	}
	if err := d.Save(p.Dir); err != nil {
		return false, fmt.Errorf("taskgen: save %s: %w", p.ID, err)
	}
	return false, world.WriteFileAtomic(filepath.Join(p.Dir, SketchFile), sb, 0o644)
}

// check runs the self-check of a written task, once: a check.json of an
// earlier run for the same task.json stands.
func (s *Synth) check(ctx context.Context, env *rollout.Env, p Produced, d *Draft) (*Check, error) {
	tb, err := os.ReadFile(filepath.Join(p.Dir, task.File))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(p.Dir, CheckFile)
	var old struct {
		Task world.ID `json:"task"`
		*Check
	}
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &old) == nil && old.Task == world.Hash(tb) && old.Check != nil && old.OK {
		return old.Check, nil
	}
	// The task as it stands in its directory: a later stage (a gate's
	// revision) may have rewritten it and its scripts since d was drafted.
	t, err := task.Load(p.Dir)
	if err != nil {
		return nil, err
	}
	cur := *d
	cur.Task = t
	c, err := CheckTask(ctx, env, &cur, p.Dir)
	if err != nil {
		return nil, err
	}
	b, _ := json.MarshalIndent(struct {
		Task world.ID `json:"task"`
		*Check
	}{world.Hash(tb), c}, "", "  ")
	return c, world.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// TaskID is a task's ID within a run: the persona's ID and the family's
// (the family's alone when it names the persona), at most task.MaxIDLen
// bytes (a longer one ends in a hash of the whole).
func TaskID(persona, id string) string {
	full := persona + "-" + id
	if strings.Contains(id, persona) {
		full = id // the family's ID names the persona already
	}
	if len(full) <= task.MaxIDLen {
		return full
	}
	h := fnv.New32a()
	h.Write([]byte(full))
	suffix := fmt.Sprintf("-%08x", h.Sum32())
	return strings.TrimRight(full[:task.MaxIDLen-len(suffix)], "-") + suffix
}

// Resume counts the tasks an earlier run wrote under Out as accepted, so
// that a rerun keeps them and drops what duplicates them.
func (s *Synth) Resume(ctx context.Context) (int, error) {
	paths, err := filepath.Glob(filepath.Join(s.Out, "*", SketchFile))
	if err != nil {
		return 0, err
	}
	n := 0
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			return n, err
		}
		var p Produced
		if err := json.Unmarshal(b, &p); err != nil {
			return n, fmt.Errorf("taskgen: %s: %w", path, err)
		}
		if _, err := task.Load(filepath.Dir(path)); err != nil {
			continue // half written: it will be written again
		}
		if err := s.Diversity.Keep(ctx, p.ID, p.Persona, p.Sketch); err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// Run runs jobs, parallel at a time; progress is called after each job.
// Results are in the jobs' order.
func (s *Synth) Run(ctx context.Context, jobs []Job, parallel int, progress func(done int, r *Result)) ([]*Result, error) {
	out := make([]*Result, len(jobs))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	var mu sync.Mutex
	done := 0
	// Jobs take the diversity gate in their order.
	var turnMu sync.Mutex
	cond := sync.NewCond(&turnMu)
	next := 0
	for i, j := range jobs {
		g.Go(func() error {
			took := false
			turn := func() func() {
				turnMu.Lock()
				for next != i && gctx.Err() == nil {
					cond.Wait()
				}
				took = true
				return func() {
					next++
					cond.Broadcast()
					turnMu.Unlock()
				}
			}
			r, err := s.do(gctx, j, turn)
			if !took {
				// The job ended before its turn: pass it on.
				turnMu.Lock()
				for next != i && gctx.Err() == nil {
					cond.Wait()
				}
				next++
				cond.Broadcast()
				turnMu.Unlock()
			}
			if err != nil {
				return err
			}
			out[i] = r
			mu.Lock()
			done++
			if progress != nil {
				progress(done, r)
			}
			mu.Unlock()
			return nil
		})
	}
	return out, g.Wait()
}
