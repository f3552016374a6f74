package eval

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/world"
)

// Version is the version of eval.json this build writes and reads.
const Version = 1

// File is the report's name in the output directory.
const File = "eval.json"

// Agent is who acts in an evaluation.
type Agent struct {
	// Name is the policy's name as its trajectories say it:
	// "scripted:NAME" for a scripted policy, "model:NAME" for a model.
	Name string
	// Policy is the policy of rollout index (1..K) of c. The K rollouts of
	// a case must be free to differ: a scripted replay takes the index
	// into its seed; a model samples.
	Policy func(c Case, index int) (rollout.Policy, error)
	// Config says what else makes the agent what it is (its seed, harness,
	// endpoint, budgets): a resumed evaluation must have the same.
	Config string
}

// Scripted reports whether a scripted policy acts (never a model).
func (a Agent) Scripted() bool { return strings.HasPrefix(a.Name, "scripted:") }

// Options configure Run. Zero values mean the defaults.
type Options struct {
	Adapter Adapter
	Agent   Agent
	// K is the number of rollouts per case (>= 1).
	K int
	// Parallel is the number of rollouts at a time (default 1).
	Parallel int
	// Out is the output directory: eval.json and trajectories/.
	Out string
	// Budgets are the step budgets of the solve rate (nil: DefaultBudgets).
	Budgets []int
	// Browser names the browser the rollouts drive the websites with
	// ("chromium", or "http" for internal/browser/fake): eval.json records
	// it, and a rerun with another browser is refused rather than mixing
	// the two's results.
	Browser string
	// Progress, if set, is told of each finished rollout; Clock, if set,
	// gives it the time left (world.ETA).
	Progress func(format string, args ...any)
	Clock    world.Clock
}

// Record is one finished rollout.
type Record struct {
	Task string `json:"task"`
	// Index is the rollout's number, 1..K.
	Index  int    `json:"index"`
	Policy string `json:"policy"`
	// V is 1 when the benchmark's judge passed; Passed of Total criteria.
	V      int `json:"v"`
	Passed int `json:"passed"`
	Total  int `json:"total"`
	Observation
	Outcome string `json:"outcome"`
	// Failure is the trajectory's failure class ("" when V passed).
	Failure string `json:"failure,omitempty"`
	Error   string `json:"error,omitempty"`
	// Fault says how the agent made its world or answer unverifiable
	// (agent.Trajectory.Fault): V 0, failure "agent", counted.
	Fault  string  `json:"fault,omitempty"`
	WallMS float64 `json:"wall_ms"`
	// Trajectory is the trajectory's file, relative to the output
	// directory.
	Trajectory string `json:"trajectory"`
}

// Counted reports whether the rollout enters the rates: it ended without
// an infrastructure or set-up failure (a format failure is the agent's and
// counts as failed).
func (r Record) Counted() bool { return r.Failure != agent.FailInfra && r.Failure != agent.FailSetup }

// Solved reports whether the rollout counted and its judge passed it.
func (r Record) Solved() bool { return r.Counted() && r.V == 1 }

// Report is eval.json.
type Report struct {
	Version   int    `json:"version"`
	Benchmark string `json:"benchmark"`
	// Agent is the policy's name; Scripted is true when it is a scripted
	// policy, never a model.
	Agent       string `json:"agent"`
	AgentConfig string `json:"agent_config,omitempty"`
	Scripted    bool   `json:"scripted"`
	// Browser is the browser every rollout drove the websites with
	// (Options.Browser).
	Browser string `json:"browser,omitempty"`
	K       int    `json:"k"`
	Budgets []int  `json:"budgets"`
	// Complete is true once every case has K rollouts.
	Complete bool         `json:"complete"`
	Rollouts []Record     `json:"rollouts"`
	Tasks    []TaskResult `json:"tasks"`
	Overall  Overall      `json:"overall"`
}

// Load reads an eval.json, checking its version.
func Load(path string) (*Report, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Report
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", path, err)
	}
	if r.Version != Version {
		return nil, fmt.Errorf("eval: %s: field version: got %d, this build reads %d", path, r.Version, Version)
	}
	for i, rec := range r.Rollouts {
		if err := rec.check(); err != nil {
			return nil, fmt.Errorf("eval: %s: rollouts[%d] (task %s, rollout %d): %w: the file was edited or is damaged; move it away, or give another --out, to run the evaluation afresh", path, i, rec.Task, rec.Index, err)
		}
	}
	return &r, nil
}

// check holds a read record to what a run writes: a resumed evaluation
// keeps only rollouts it could have written itself.
func (r *Record) check() error {
	switch {
	case r.Task == "":
		return errors.New("field task: empty")
	case !world.ValidName(r.Task):
		return world.CheckName("", "task", r.Task)
	case r.Index < 1:
		return fmt.Errorf("field index: %d, rollouts count from 1", r.Index)
	case r.V != 0 && r.V != 1:
		return fmt.Errorf("field v: %d, a verdict is 0 or 1", r.V)
	case r.Total < 0 || r.Passed < 0 || r.Passed > r.Total:
		return fmt.Errorf("fields passed, total: %d of %d, want 0 <= passed <= total", r.Passed, r.Total)
	case r.Steps < 0 || r.Switches < 0 || r.GUISteps < 0 || r.ActTurns < 0 || r.LongTurns < 0 || r.LongTurns > r.ActTurns:
		return fmt.Errorf("fields steps, switches, gui_steps, act_turns, long_turns: %d, %d, %d, %d, %d, want counts (long_turns <= act_turns)", r.Steps, r.Switches, r.GUISteps, r.ActTurns, r.LongTurns)
	case !(r.WallMS >= 0) || math.IsInf(r.WallMS, 0):
		return fmt.Errorf("field wall_ms: %v, want a duration >= 0", r.WallMS)
	case !filepath.IsLocal(r.Trajectory):
		return fmt.Errorf("field trajectory: %q, want a file under the output directory", r.Trajectory)
	}
	return nil
}

// save writes the report atomically.
func (r *Report) save(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: encode report: %w", err)
	}
	return world.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// Run evaluates the agent on the adapter's cases: K rollouts of each,
// Parallel at a time, each trajectory saved under Out/trajectories/ and
// eval.json rewritten after every rollout, so that a run stopped half-way
// resumes where it stopped: a rerun with the same Out keeps the finished
// rollouts (all but infrastructure failures, which run again) and runs only
// the rest. An agent's failure is a value in the report; the error is for a
// cancelled ctx, a benchmark that cannot run, or bad options.
func Run(ctx context.Context, o Options) (*Report, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	budgets := o.Budgets
	if budgets == nil {
		budgets = DefaultBudgets
	}
	cases, err := o.Adapter.Cases(ctx)
	if err != nil {
		return nil, err
	}
	order := map[string]int{}
	for i, c := range cases {
		if _, dup := order[c.ID]; dup {
			return nil, fmt.Errorf("eval: benchmark %s lists case %s twice", o.Adapter.Name(), c.ID)
		}
		order[c.ID] = i
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("eval: --out: %w", err)
	}
	path := filepath.Join(o.Out, File)
	rep := &Report{Version: Version, Benchmark: o.Adapter.Name(), Agent: o.Agent.Name, AgentConfig: o.Agent.Config, Scripted: o.Agent.Scripted(), Browser: o.Browser, K: o.K, Budgets: budgets, Rollouts: []Record{}}
	done := map[string]bool{}
	prev, err := Load(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("%w (move it away or give another --out)", err)
	case prev.Benchmark != rep.Benchmark || prev.Agent != rep.Agent:
		return nil, fmt.Errorf("eval: --out %s holds an evaluation of %s on %s: give another --out to evaluate %s on %s", o.Out, prev.Agent, prev.Benchmark, rep.Agent, rep.Benchmark)
	case prev.AgentConfig != rep.AgentConfig:
		return nil, fmt.Errorf("eval: --out %s holds an evaluation of %s with %q, not %q: give another --out, or the same options", o.Out, rep.Agent, prev.AgentConfig, rep.AgentConfig)
	case prev.Browser != rep.Browser && len(prev.Rollouts) > 0:
		was := prev.Browser
		if was == "" {
			was = "a browser it does not record"
		}
		return nil, fmt.Errorf("eval: --out %s holds %d rollouts driven by %s, and this run drives the websites with %s: results of two browsers do not mix; give another --out, or the same browser", o.Out, len(prev.Rollouts), was, browserName(rep.Browser))
	default:
		for _, r := range prev.Rollouts {
			_, known := order[r.Task]
			if !known || r.Index < 1 || r.Index > o.K || r.Failure == agent.FailInfra || done[key(r.Task, r.Index)] {
				continue
			}
			if _, err := os.Stat(filepath.Join(o.Out, r.Trajectory)); err != nil {
				continue
			}
			done[key(r.Task, r.Index)] = true
			rep.Rollouts = append(rep.Rollouts, r)
		}
	}
	type job struct {
		c     Case
		index int
	}
	var jobs []job
	for _, c := range cases {
		for i := 1; i <= o.K; i++ {
			if !done[key(c.ID, i)] {
				jobs = append(jobs, job{c, i})
			}
		}
	}
	o.progress("eval: %s on %s: %d cases x %d rollouts, %d to run, %d kept from %s", rep.Agent, rep.Benchmark, len(cases), o.K, len(jobs), len(rep.Rollouts), path)
	var eta *world.ETA
	if o.Clock != nil {
		eta = world.NewETA(o.Clock, 0)
	}
	ran := 0

	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var mu sync.Mutex
	finish := func() error {
		slices.SortFunc(rep.Rollouts, func(a, b Record) int {
			return cmp.Or(cmp.Compare(order[a.Task], order[b.Task]), cmp.Compare(a.Index, b.Index))
		})
		rep.Tasks, rep.Overall = Summarize(cases, rep.Rollouts, o.K, budgets)
		rep.Complete = len(rep.Rollouts) == len(cases)*o.K
		return rep.save(path)
	}
	if err := finish(); err != nil {
		return nil, err
	}
	ch := make(chan job)
	var wg sync.WaitGroup
	for range max(1, min(o.Parallel, len(jobs))) {
		wg.Go(func() {
			for j := range ch {
				r, err := o.one(ctx, j.c, j.index)
				if err != nil {
					cancel(err)
					continue
				}
				mu.Lock()
				ran++
				left := ""
				if eta != nil {
					left = eta.String(ran, len(jobs))
				}
				o.report(r, fmt.Sprintf("%d/%d", ran, len(jobs)), left)
				rep.Rollouts = append(rep.Rollouts, *r)
				err = finish()
				mu.Unlock()
				if err != nil {
					cancel(err)
				}
			}
		})
	}
feed:
	for _, j := range jobs {
		select {
		case ch <- j:
		case <-ctx.Done():
			break feed
		}
	}
	close(ch)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return nil, err
	}
	return rep, nil
}

func browserName(b string) string {
	if b == "" {
		return "an unnamed browser"
	}
	return b
}

func key(task string, index int) string { return fmt.Sprintf("%s\x00%d", task, index) }

func (o *Options) check() error {
	switch {
	case o.Adapter == nil:
		return fmt.Errorf("eval: no benchmark (Options.Adapter)")
	case o.Agent.Name == "" || o.Agent.Policy == nil:
		return fmt.Errorf("eval: no agent (Options.Agent: a name and a policy, --agent)")
	case o.K < 1:
		return fmt.Errorf("eval: -k %d: give the number of rollouts per task, 1 or more (the paper uses 8)", o.K)
	case o.Parallel < 0:
		return fmt.Errorf("eval: --parallel %d: give the rollouts at a time, 1 or more", o.Parallel)
	case o.Out == "":
		return fmt.Errorf("eval: no output directory (--out)")
	}
	for _, b := range o.Budgets {
		if b < 1 {
			return fmt.Errorf("eval: --budgets: a step budget of %d: give positive step counts, e.g. 40,120", b)
		}
	}
	return nil
}

func (o *Options) progress(format string, args ...any) {
	if o.Progress != nil {
		o.Progress(format, args...)
	}
}

// one runs, judges and saves rollout index of c.
func (o *Options) one(ctx context.Context, c Case, index int) (*Record, error) {
	pol, err := o.Agent.Policy(c, index)
	if err != nil {
		return nil, fmt.Errorf("eval: agent %s on %s: %w", o.Agent.Name, c.ID, err)
	}
	j, err := o.Adapter.Run(ctx, c, rollout.Spec{ID: fmt.Sprintf("eval-%d", index), Policy: pol})
	if err != nil {
		return nil, err
	}
	tr := j.Trajectory
	// What the report says acted is what acted: a scripted policy is never
	// reported as a model, nor one model as another.
	if tr.Policy != o.Agent.Name {
		return nil, fmt.Errorf("eval: agent %s: rollout %d of %s ran as %s", o.Agent.Name, index, c.ID, tr.Policy)
	}
	rel := filepath.Join("trajectories", c.ID, fmt.Sprintf("r%d.json", index))
	if err := os.MkdirAll(filepath.Join(o.Out, filepath.Dir(rel)), 0o755); err != nil {
		return nil, err
	}
	if err := tr.Save(filepath.Join(o.Out, rel)); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	r := &Record{Task: c.ID, Index: index, Policy: tr.Policy, V: j.V, Passed: j.Passed, Total: j.Total, Observation: Observe(tr),
		Outcome: tr.Outcome, Failure: tr.Failure, Error: tr.Error, Fault: tr.Fault, WallMS: tr.WallMS, Trajectory: rel}
	return r, nil
}

// report tells Progress of a finished rollout, the count done of this
// run's and the time left.
func (o *Options) report(r *Record, count, left string) {
	verdict := "passed"
	if !r.Solved() {
		verdict = "failed"
	}
	if r.Failure != "" {
		verdict += " (" + r.Failure + ")"
	}
	msg := fmt.Sprintf("eval: %s rollout %d/%d: V %s, %d of %d criteria, %d steps over %v, outcome %s", r.Task, r.Index, o.K, verdict, r.Passed, r.Total, r.Steps, r.Interfaces, r.Outcome)
	if r.Error != "" {
		msg += ": " + r.Error
	}
	if r.Fault != "" {
		msg += ": " + r.Fault
	}
	msg += " [" + count
	if left != "" {
		msg += ", " + left
	}
	o.progress("%s", msg+"]")
}
