package eval

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

// Adapter is a benchmark: its cases and how one rollout of a case is run
// and judged. Run is called from several goroutines at once (--parallel).
type Adapter interface {
	// Name names the benchmark in the report ("val" for the in-domain
	// split); a resumed evaluation must name the same one.
	Name() string
	// Cases lists the benchmark's cases, in the report's order.
	Cases(ctx context.Context) ([]Case, error)
	// Run runs one rollout of c with spec's policy in a fresh environment
	// and judges its final state. The trajectory comes back classified
	// (agent.Trajectory.Classify); an infrastructure or set-up failure is a
	// value in it, not an error. The error is for a cancelled ctx or a
	// benchmark that cannot run or judge at all.
	Run(ctx context.Context, c Case, spec rollout.Spec) (*Judged, error)
}

// Case is one task of a benchmark.
type Case struct {
	// ID names the case, unique in its benchmark (a file name).
	ID string
	// Task is what the agent is given: the instruction (and, for a
	// scripted replay, the reference completion); the adapter holds what
	// runs and judges it.
	Task *task.Task
	// Difficulty and Family group the per-task table (optional).
	Difficulty string
	Family     string
}

// Judged is one rollout of a case, judged.
type Judged struct {
	Trajectory *agent.Trajectory
	// V is 1 when the benchmark's judge passed the final state; Passed of
	// Total criteria held (Total 0 when the judge was not run: a rollout
	// that did not count).
	V      int
	Passed int
	Total  int
}

// Rollouts is what a Split runs its rollouts through: each in a fresh
// instance of the task's initial world, then judged by the task's
// verifier (a *rollout.Env).
type Rollouts interface {
	Run(ctx context.Context, t *task.Task, spec rollout.Spec) (*rollout.Result, error)
	Judge(ctx context.Context, t *task.Task, verifierDir string, res *rollout.Result) (*verify.Result, error)
}

// Split is the in-domain adapter: one split of a task pool
// (Dir/pool/pool.json), each task run in fresh instances of its initial
// world and verified by its verifier (TASKDIR/verifier).
type Split struct {
	// Dir is the world-synthesis run the pool is in.
	Dir string
	// Split is the pool's split (default val).
	Split string
	// Env is the rollout environment of a task (the run's store, one per
	// persona).
	Env func(t *task.Task) (Rollouts, error)
	// dirs are the task directories by case ID, set by Cases.
	dirs map[string]string
}

// Name implements Adapter: the split's name.
func (s *Split) Name() string {
	if s.Split == "" {
		return pool.SplitVal
	}
	return s.Split
}

// Cases implements Adapter: the split's tasks, in the pool's order. An
// empty split is an error that says how to build one.
func (s *Split) Cases(ctx context.Context) ([]Case, error) {
	path := filepath.Join(s.Dir, pool.File)
	p, err := pool.LoadPool(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("eval: %s: no pool: build one with `wildawm pool run --dir %s` (or index gated tasks with `wildawm pool split --dir %s`)", path, s.Dir, s.Dir)
		}
		return nil, fmt.Errorf("eval: %w", err)
	}
	entries := p.Split(s.Name())
	if len(entries) == 0 {
		return nil, fmt.Errorf("eval: the %s split of %s is empty (%v): gate more tasks with `wildawm pool run --dir %s`, or deal the accepted ones again with `wildawm pool split --dir %s --proportions sft=N,rl=N,val=N`",
			s.Name(), path, p.Counts, s.Dir, s.Dir)
	}
	tasksDir := p.TasksDir // LoadPool resolved it
	s.dirs = map[string]string{}
	var out []Case
	for _, e := range entries {
		dir := filepath.Join(tasksDir, e.Dir)
		t, err := task.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("eval: pool entry %s (dir %q under tasks_dir %q): %w", e.ID, e.Dir, p.TasksDir, err)
		}
		if t.ID != e.ID {
			return nil, fmt.Errorf("eval: pool entry %s: %s holds task %s: rebuild the index with `wildawm pool split --dir %s`", e.ID, dir, t.ID, s.Dir)
		}
		if _, dup := s.dirs[t.ID]; dup {
			return nil, fmt.Errorf("eval: pool %s lists task %s twice: rebuild the index with `wildawm pool split --dir %s`", path, t.ID, s.Dir)
		}
		s.dirs[t.ID] = dir
		diff := e.Difficulty
		if diff == "" {
			diff = t.Difficulty
		}
		out = append(out, Case{ID: t.ID, Task: t, Difficulty: diff, Family: e.Family})
	}
	return out, nil
}

// Run implements Adapter: the rollout in a fresh instance, then V on its
// final world when it counts as the agent's doing.
func (s *Split) Run(ctx context.Context, c Case, spec rollout.Spec) (*Judged, error) {
	dir, ok := s.dirs[c.ID]
	if !ok {
		return nil, fmt.Errorf("eval: case %s is not in the %s split (call Cases first)", c.ID, s.Name())
	}
	env, err := s.Env(c.Task)
	if err != nil {
		return nil, err
	}
	res, err := env.Run(ctx, c.Task, spec)
	if err != nil {
		return nil, err
	}
	tr := res.Trajectory
	j := &Judged{Trajectory: tr}
	if tr.Countable() {
		// A rollout whose agent made its world or answer unverifiable is
		// judged V 0 (Judge): kept and counted as failed, never left out.
		v, err := env.Judge(ctx, c.Task, filepath.Join(dir, "verifier"), res)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			// The verifier's machinery failed (the sandbox, the store): an
			// infrastructure failure, not the agent's, run again on resume.
			tr.Outcome, tr.Failure, tr.Error = agent.OutcomeInfra, agent.FailInfra, "verify: "+err.Error()
			return j, nil
		}
		j.V, j.Passed, j.Total = v.V, v.Passed, v.Total
	}
	tr.Classify(j.V == 1)
	return j, nil
}
