package pool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// RateDir holds a task's re-ratings, one directory per agent
// (gate/rate/SLUG/): each finished rollout's record (r1.json .. rK.json
// hint-free, h1.json .. hK.json hinted) and trajectory (ID.trajectory.json),
// the harness failures (infra.json) and the rating (rating.json).
const RateDir = "gate/rate"

// Files of one agent's rating of a task, in its directory under RateDir.
const (
	RatingFile    = "rating.json"
	RateInfraFile = "infra.json"
)

// RateAgent is the agent a pool is re-rated with.
type RateAgent struct {
	// Name is what every figure of the rating names as its source, as
	// Table 4 does: "model qwen3-8b (wildawm harness)".
	Name string
	// Slug names the agent's directory under RateDir of each task (a name,
	// world.NameRule): a rerun with the same slug resumes.
	Slug string
	// Endpoint is the agent's model server, for the errors.
	Endpoint string
	// Config says how the agent acts (harness, budgets); the rating keeps it.
	Config string
	// Policy makes a fresh policy for one rollout.
	Policy func() rollout.Policy
}

// Rating is one agent's rating of a task's difficulty (pool rate): K
// hint-free and K hinted rollouts, the level of the hint-free successes in
// Levels. The gate's own rating stays the entry's Difficulty.
type Rating struct {
	Agent    string `json:"agent"`
	Slug     string `json:"slug"`
	Endpoint string `json:"endpoint,omitempty"`
	Config   string `json:"config,omitempty"`
	// K is the number of hint-free rollouts, and of hinted ones.
	K int `json:"k"`
	// Levels are the difficulty levels over K hint-free successes
	// (gate.Config.ScaleTo of the configured ones).
	Levels   []gate.DifficultyLevel `json:"levels"`
	Level    string                 `json:"level"`
	HintFree int                    `json:"hint_free_successes"`
	WithHint int                    `json:"with_hint_successes"`
	// InfraRetries counts the attempts whose harness failed (the model
	// server, an instance) and that were retried in a fresh instance:
	// they count for nothing.
	InfraRetries int `json:"infrastructure_retries"`
	// RatedAt is when the rating was complete (the caller's clock).
	RatedAt time.Time `json:"rated_at"`
}

// RateRecord is one finished rollout of a rating, gate/rate/SLUG/ID.json.
type RateRecord struct {
	ID     string   `json:"id"`
	Hint   bool     `json:"hint"`
	Agent  string   `json:"agent"`
	Policy string   `json:"policy"`
	Final  world.ID `json:"final,omitzero"`
	Answer string   `json:"answer,omitempty"`
	// Fault: the agent made its final world or answer unverifiable (V 0).
	Fault       string    `json:"fault,omitempty"`
	Trajectory  string    `json:"trajectory"` // relative to the task directory
	Outcome     string    `json:"outcome"`
	Failure     string    `json:"failure,omitempty"`
	Error       string    `json:"error,omitempty"`
	Attempts    int       `json:"attempts"`
	InfraErrors []string  `json:"infra_errors,omitempty"`
	Steps       int       `json:"steps"`
	V           int       `json:"v"`
	Passed      int       `json:"passed"`
	Total       int       `json:"total"`
	Verifier    string    `json:"verifier"`
	WallMS      float64   `json:"wall_ms"`
	At          time.Time `json:"at"`
}

// InfraEvent is a rollout whose harness failed in every attempt: kept in
// infra.json, never counted as the task's failure.
type InfraEvent struct {
	Rollout  string    `json:"rollout"`
	At       time.Time `json:"at"`
	Attempts int       `json:"attempts"`
	Errors   []string  `json:"errors"`
}

// InfraError ends a rating whose rollout's harness failed in every
// attempt (rollout.MaxAttempts, each after the model client's own
// retries): nothing of it was counted, the finished rollouts are kept.
type InfraError struct {
	Task, Rollout string
	Agent         string
	Endpoint      string
	Attempts      int
	Last          string
	// Infra is the infra.json the failure is recorded in.
	Infra string
}

func (e *InfraError) Error() string {
	server := ""
	if e.Endpoint != "" {
		server = " (its model server " + e.Endpoint + ")"
	}
	return fmt.Sprintf("pool rate: rollout %s of task %s: the harness of %s%s failed in all %d attempts: %s; "+
		"nothing of it was counted as the task's failure, every finished rollout is kept and the failure is recorded in %s: "+
		"start or fix the model server (the error says how), then run the same command again to continue where it stopped",
		e.Rollout, e.Task, e.Agent, server, e.Attempts, e.Last, e.Infra)
}

// RateProgress is one step of a rating, for the caller's progress lines.
type RateProgress struct {
	// Done of Total rollouts are finished, Kept of them read back.
	Done, Total, Kept int
	Task, Rollout     string
	// V is the finished rollout's verdict (-1 for a read-back one).
	V int
	// Rated is set when the rollout completed its task's rating.
	Rated *Rating
}

// Rater re-rates the difficulty of a pool's tasks with one agent.
type Rater struct {
	// Env is the rollout environment for a task's persona.
	Env   func(t *task.Task) (Worlds, error)
	Agent RateAgent
	// K is the hint-free rollouts per task, and the hinted ones.
	K int
	// Levels are the difficulty levels over K hint-free rollouts:
	// Levels.HintFree must be K (gate.Config.ScaleTo).
	Levels gate.Config
	// Split rates only that split's tasks ("" all).
	Split string
	// Parallel is the rollouts at a time (0: 1).
	Parallel int
	// Clock dates the records and the ratings; the core reads no other.
	Clock    world.Clock
	Progress func(RateProgress)

	mu sync.Mutex // the pool's index, the infra files, the progress
}

// rateJob is one rollout of a task's rating.
type rateJob struct {
	e    int // the entry's index in the pool
	dir  string
	t    *task.Task
	id   string
	hint bool
}

// RateIDs are the rollouts of a rating of k: r1..rk hint-free, h1..hk
// hinted. A rating with a larger k reuses the smaller one's rollouts.
func RateIDs(k int) []string {
	var ids []string
	for i := 1; i <= k; i++ {
		ids = append(ids, fmt.Sprintf("r%d", i))
	}
	for i := 1; i <= k; i++ {
		ids = append(ids, fmt.Sprintf("h%d", i))
	}
	return ids
}

func (r *Rater) check() error {
	var bad []string
	if r.K < 1 {
		bad = append(bad, fmt.Sprintf("K %d: rate with at least 1 hint-free and 1 hinted rollout per task", r.K))
	}
	if err := r.Levels.Validate(); err != nil {
		bad = append(bad, "Levels: "+err.Error())
	} else if h := r.Levels.WithDefaults().HintFree; h != r.K {
		bad = append(bad, fmt.Sprintf("Levels: defined over %d hint-free rollouts, K is %d: scale them (gate.Config.ScaleTo)", h, r.K))
	}
	if err := world.CheckName("", "agent slug", r.Agent.Slug); err != nil {
		bad = append(bad, err.Error())
	}
	if r.Agent.Name == "" || r.Agent.Policy == nil {
		bad = append(bad, "Agent: a rating needs the agent's name and policy")
	}
	if r.Env == nil || r.Clock == nil {
		bad = append(bad, "Env and Clock are required")
	}
	if len(bad) > 0 {
		return fmt.Errorf("pool rate: %s", strings.Join(bad, "; "))
	}
	return nil
}

// Rate rates every task of p (of r.Split) with r.Agent: K hint-free and K
// hinted rollouts each, in fresh instances, each scored by the task's
// verifier, the level of the hint-free successes in r.Levels. Each
// finished rollout is stored at once (atomically) under the task's
// gate/rate/SLUG/, so a rerun runs only what is missing; each completed
// rating goes to rating.json there and into p's entry (Ratings), and p is
// saved to index. A rollout whose harness failed in every attempt ends the
// rating with an *InfraError, counted for nothing; a cancelled ctx ends it
// with ctx's error. Either way every finished rollout is kept.
func (r *Rater) Rate(ctx context.Context, p *Pool, index string) ([]Rating, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	var jobs []rateJob
	left := map[int]int{} // rollouts to run, by entry
	var pending []int     // entries whose every rollout is stored
	kept, total := 0, 0
	for i, e := range p.Tasks {
		if r.Split != "" && e.Split != r.Split {
			continue
		}
		dir := p.TaskDir(e)
		t, err := task.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("pool rate: task %s: %w", e.ID, err)
		}
		if t.ID != e.ID {
			return nil, fmt.Errorf("pool rate: %s holds task %s, the index says %s: rebuild the index (wildawm pool split --dir RUN)", dir, t.ID, e.ID)
		}
		for _, id := range RateIDs(r.K) {
			total++
			rec, err := r.readRecord(dir, id)
			if err != nil {
				return nil, err
			}
			if rec != nil {
				kept++
				continue
			}
			jobs = append(jobs, rateJob{e: i, dir: dir, t: t, id: id, hint: id[0] == 'h'})
			left[i]++
		}
		if left[i] == 0 {
			pending = append(pending, i)
		}
	}
	if total == 0 {
		return nil, fmt.Errorf("pool rate: no task to rate in %s (split %q)", index, r.Split)
	}
	var ratings []Rating
	done := kept
	r.progress(RateProgress{Done: done, Total: total, Kept: kept, V: -1})
	for _, i := range pending {
		rt, err := r.finish(p, i, index)
		if err != nil {
			return nil, err
		}
		ratings = append(ratings, *rt)
		r.progress(RateProgress{Done: done, Total: total, Kept: kept, Task: p.Tasks[i].ID, V: -1, Rated: rt})
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(r.Parallel, 1))
	for _, j := range jobs {
		g.Go(func() error {
			if gctx.Err() != nil {
				return gctx.Err()
			}
			rec, err := r.run(gctx, j)
			if err != nil {
				return err
			}
			r.mu.Lock()
			done++
			left[j.e]--
			ev := RateProgress{Done: done, Total: total, Kept: kept, Task: j.t.ID, Rollout: j.id, V: rec.V}
			var ferr error
			if left[j.e] == 0 {
				var rt *Rating
				if rt, ferr = r.finishLocked(p, j.e, index); rt != nil {
					ratings = append(ratings, *rt)
					ev.Rated = rt
				}
			}
			r.mu.Unlock()
			r.progress(ev)
			return ferr
		})
	}
	if err := g.Wait(); err != nil {
		// The first failure, not the cancellation it caused in the others.
		return ratings, err
	}
	if ctx.Err() != nil {
		return ratings, ctx.Err()
	}
	slices.SortFunc(ratings, func(a, b Rating) int { return strings.Compare(a.Slug, b.Slug) })
	return ratings, nil
}

func (r *Rater) progress(ev RateProgress) {
	if r.Progress != nil {
		r.Progress(ev)
	}
}

func (r *Rater) agentDir(taskDir string) string {
	return filepath.Join(taskDir, RateDir, r.Agent.Slug)
}

// readRecord reads a stored rollout of the rating; nil when there is none.
func (r *Rater) readRecord(taskDir, id string) (*RateRecord, error) {
	path := filepath.Join(r.agentDir(taskDir), id+".json")
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("pool rate: %w", err)
	}
	var rec RateRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, fmt.Errorf("pool rate: %s: %w (remove it to run that rollout again)", path, err)
	}
	if rec.ID != id || rec.Agent != r.Agent.Name {
		return nil, fmt.Errorf("pool rate: %s is rollout %s of agent %q, not %s of %q: the directory %s belongs to another agent (remove it, or rate under another name)",
			path, rec.ID, rec.Agent, id, r.Agent.Name, r.agentDir(taskDir))
	}
	return &rec, nil
}

// run runs, scores and stores one rollout.
func (r *Rater) run(ctx context.Context, j rateJob) (*RateRecord, error) {
	env, err := r.Env(j.t)
	if err != nil {
		return nil, fmt.Errorf("pool rate: task %s: %w", j.t.ID, err)
	}
	res, err := env.Run(ctx, j.t, rollout.Spec{ID: "rate-" + r.Agent.Slug + "-" + j.id, Policy: r.Agent.Policy(), Hint: j.hint})
	if err != nil {
		return nil, fmt.Errorf("pool rate: task %s rollout %s: %w", j.t.ID, j.id, err)
	}
	tr := res.Trajectory
	adir := r.agentDir(j.dir)
	switch tr.Outcome {
	case rollout.OutcomeInfra:
		path := filepath.Join(adir, RateInfraFile)
		if err := r.recordInfra(path, InfraEvent{Rollout: j.id, At: r.Clock.Now(), Attempts: tr.Attempts, Errors: tr.InfraErrors}); err != nil {
			return nil, err
		}
		last := tr.Error
		if n := len(tr.InfraErrors); n > 0 {
			last = tr.InfraErrors[n-1]
		}
		return nil, &InfraError{Task: j.t.ID, Rollout: j.id, Agent: r.Agent.Name, Endpoint: r.Agent.Endpoint, Attempts: tr.Attempts, Last: last, Infra: path}
	case rollout.OutcomeSetup:
		return nil, fmt.Errorf("pool rate: task %s rollout %s: its initial world cannot be made (%s): rate the pool with the run it was built from (--dir), whose store holds the task's snapshot", j.t.ID, j.id, tr.Error)
	}
	vr, err := env.Judge(ctx, j.t, filepath.Join(j.dir, "verifier"), res)
	if err != nil {
		return nil, fmt.Errorf("pool rate: verify task %s rollout %s: %w", j.t.ID, j.id, err)
	}
	tr.Classify(vr.V == 1)
	rel := filepath.Join(RateDir, r.Agent.Slug, j.id+".trajectory.json")
	if err := os.MkdirAll(adir, 0o755); err != nil {
		return nil, err
	}
	if err := tr.Save(filepath.Join(j.dir, rel)); err != nil {
		return nil, err
	}
	rec := &RateRecord{ID: j.id, Hint: j.hint, Agent: r.Agent.Name, Policy: tr.Policy, Final: res.Final, Answer: tr.Answer, Fault: tr.Fault,
		Trajectory: rel, Outcome: tr.Outcome, Failure: tr.Failure, Error: tr.Error, Attempts: tr.Attempts, InfraErrors: tr.InfraErrors,
		Steps: len(tr.Steps), V: vr.V, Passed: vr.Passed, Total: vr.Total, Verifier: vr.Summary(), WallMS: ms(res.Wall), At: r.Clock.Now()}
	// The record last: its presence says the rollout is finished.
	if err := saveJSON(filepath.Join(adir, j.id+".json"), rec); err != nil {
		return nil, err
	}
	return rec, nil
}

// recordInfra appends ev to the infra file at path.
func (r *Rater) recordInfra(path string, ev InfraEvent) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var evs []InfraEvent
	if b, err := os.ReadFile(path); err == nil {
		if err := json.Unmarshal(b, &evs); err != nil {
			return fmt.Errorf("pool rate: %s: %w", path, err)
		}
	}
	return saveJSON(path, append(evs, ev))
}

func (r *Rater) finish(p *Pool, i int, index string) (*Rating, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.finishLocked(p, i, index)
}

// finishLocked derives entry i's rating from its stored rollouts, writes
// rating.json (kept as it is, date and all, when nothing changed) and
// saves the index with it.
func (r *Rater) finishLocked(p *Pool, i int, index string) (*Rating, error) {
	e := &p.Tasks[i]
	dir := p.TaskDir(*e)
	rt := Rating{Agent: r.Agent.Name, Slug: r.Agent.Slug, Endpoint: r.Agent.Endpoint, Config: r.Agent.Config, K: r.K, Levels: r.Levels.WithDefaults().Levels}
	for _, id := range RateIDs(r.K) {
		rec, err := r.readRecord(dir, id)
		if err != nil {
			return nil, err
		}
		if rec == nil {
			return nil, fmt.Errorf("pool rate: task %s: rollout %s is not stored", e.ID, id)
		}
		rt.InfraRetries += len(rec.InfraErrors)
		if rec.V == 1 {
			if rec.Hint {
				rt.WithHint++
			} else {
				rt.HintFree++
			}
		}
	}
	rt.Level = r.Levels.Level(rt.HintFree)
	path := filepath.Join(r.agentDir(dir), RatingFile)
	if old, err := readRating(path); err == nil && sameRating(*old, rt) {
		rt.RatedAt = old.RatedAt
	} else {
		rt.RatedAt = r.Clock.Now()
		if err := saveJSON(path, rt); err != nil {
			return nil, err
		}
	}
	e.Ratings = withRating(e.Ratings, rt)
	if err := p.Save(index); err != nil {
		return nil, err
	}
	return &rt, nil
}

// sameRating compares two ratings but for their dates.
func sameRating(a, b Rating) bool {
	a.RatedAt, b.RatedAt = time.Time{}, time.Time{}
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// withRating is rs with rt in place of the same agent's rating, by slug.
func withRating(rs []Rating, rt Rating) []Rating {
	rs = slices.DeleteFunc(slices.Clone(rs), func(o Rating) bool { return o.Slug == rt.Slug })
	rs = append(rs, rt)
	slices.SortFunc(rs, func(a, b Rating) int { return strings.Compare(a.Slug, b.Slug) })
	return rs
}

func readRating(path string) (*Rating, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var rt Rating
	if err := json.Unmarshal(b, &rt); err != nil {
		return nil, fmt.Errorf("pool: %s: %w", path, err)
	}
	return &rt, nil
}

// Ratings reads every agent's rating of the task at dir
// (gate/rate/*/rating.json), by slug: what Build indexes, so that
// rebuilding the index keeps them.
func Ratings(dir string) ([]Rating, error) {
	paths, err := filepath.Glob(filepath.Join(dir, RateDir, "*", RatingFile))
	if err != nil {
		return nil, err
	}
	var out []Rating
	for _, p := range paths {
		rt, err := readRating(p)
		if err != nil {
			return nil, err
		}
		out = withRating(out, *rt)
	}
	return out, nil
}

// AgentFigures are one re-rating agent's figures over the pool's tasks it
// rated (pool rate).
type AgentFigures struct {
	Agent string
	// Tasks rated; KMin and KMax the hint-free rollouts per task.
	Tasks, KMin, KMax int
	// Levels counts the tasks by level (gate.TooEasy among them).
	Levels map[string]int
	// HintFree and WithHint are success rates over the agent's rollouts.
	HintFree, WithHint float64
}

// AddRatings adds the figures of every agent that re-rated p's tasks
// (their entries' Ratings), by agent name.
func (s *Stats) AddRatings(p *Pool) {
	by := map[string]*AgentFigures{}
	hf, wh, n := map[string]int{}, map[string]int{}, map[string]int{}
	for _, e := range p.Tasks {
		for _, rt := range e.Ratings {
			a := by[rt.Agent]
			if a == nil {
				a = &AgentFigures{Agent: rt.Agent, KMin: rt.K, KMax: rt.K, Levels: map[string]int{}}
				by[rt.Agent] = a
			}
			a.Tasks++
			a.KMin, a.KMax = min(a.KMin, rt.K), max(a.KMax, rt.K)
			a.Levels[rt.Level]++
			hf[rt.Agent] += rt.HintFree
			wh[rt.Agent] += rt.WithHint
			n[rt.Agent] += rt.K
		}
	}
	s.Rerated = nil
	for _, name := range sortedKeys(by) {
		a := by[name]
		if n[name] > 0 {
			a.HintFree = float64(hf[name]) / float64(n[name])
			a.WithHint = float64(wh[name]) / float64(n[name])
		}
		s.Rerated = append(s.Rerated, *a)
	}
}

// rows are the figures' rows of Table 4, each naming the agent.
func (a AgentFigures) rows() [][3]string {
	k := fmt.Sprint(a.KMin)
	if a.KMax != a.KMin {
		k = fmt.Sprintf("%d..%d", a.KMin, a.KMax)
	}
	var levels []string
	for _, name := range sortedKeys(a.Levels) {
		levels = append(levels, fmt.Sprintf("%s %d", name, a.Levels[name]))
	}
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	return [][3]string{
		{fmt.Sprintf("re-rated by %s (pool rate, k = %s): tasks; levels", a.Agent, k), fmt.Sprintf("%d; %s", a.Tasks, strings.Join(levels, ", ")), "273 / 68 (models)"},
		{"success without hint (" + a.Agent + ")", pct(a.HintFree), "21.3% (models)"},
		{"success with hint (" + a.Agent + ")", pct(a.WithHint), "45.6% (models)"},
	}
}
