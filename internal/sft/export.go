package sft

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Teacher makes the policy of one live attempt (from 1) at a task: a
// model through the harness, or a script.
type Teacher func(t *task.Task, attempt int) (rollout.Policy, error)

// Rollouts is what a live export runs its teacher's rollouts through:
// each in a fresh instance of the task's initial world, then verified (a
// *rollout.Env).
type Rollouts interface {
	Run(ctx context.Context, t *task.Task, spec rollout.Spec) (*rollout.Result, error)
	// Judge scores a finished rollout, its trajectory's fault included
	// (rollout.Env.Judge).
	Judge(ctx context.Context, t *task.Task, verifierDir string, res *rollout.Result) (*verify.Result, error)
}

// Exporter writes the SFT data of a pool's sft split.
type Exporter struct {
	Pool *pool.Pool
	// Split is the split exported (default "sft").
	Split string
	// Source is SourceGate (the default) or SourceLive.
	Source string
	// Teacher is the live source's policy of each attempt.
	Teacher Teacher
	// Env is the rollout environment of each task (its persona's worlds):
	// the live source's teacher runs there, and every script (a gate
	// rollout's or a live one's) is replayed there through the harness.
	Env func(t *task.Task) (Rollouts, error)
	// Attempts bounds the live rollouts of a task (default 1): the first
	// that V passes is the task's teacher trajectory.
	Attempts int
	// MaxTokens is the segment limit (default DefaultMaxTokens).
	MaxTokens int
	// ContextTokens, MaxTurns and CompletionTokens are the harness's
	// budgets in a script's replay (defaults DefaultContextTokens,
	// DefaultMaxTurns and agent.DefaultMaxTokens); a model teacher's are
	// its own Harness's.
	ContextTokens, MaxTurns, CompletionTokens int
	// TrajectoryDir, when set, keeps each rollout the export runs in
	// TrajectoryDir/TASK-ID/ROLLOUT.json.
	TrajectoryDir string
	// Progress, if set, hears one line per task; Clock, if set, gives it
	// the time left (world.ETA).
	Progress func(format string, args ...any)
	Clock    world.Clock
}

// Summary is what an export did.
type Summary struct {
	Tasks       int `json:"tasks"`
	WithTeacher int `json:"tasks_with_teacher"`
	Segments    int `json:"segments_written"`
	// Replayed counts tasks whose teacher is a script replayed through the
	// harness.
	Replayed       int `json:"tasks_replayed_through_harness"`
	Dropped        int `json:"segments_dropped_for_length"`
	WithoutSuccess int `json:"tasks_without_success"`
	// Empty counts tasks whose teacher trajectory had every segment over
	// the limit (a teacher, no record).
	Empty int `json:"tasks_all_segments_dropped"`
	// Failed lists the tasks without a success and why, by task id.
	Failed map[string]string `json:"failed,omitempty"`
}

// NothingError is an export that would write no segment: every task
// without a successful teacher trajectory, or every segment over the
// length limit. Nothing is written.
type NothingError struct {
	Summary Summary
	Out     string
}

func (e *NothingError) Error() string {
	s := e.Summary
	msg := fmt.Sprintf("sft: no segment to write, so %s is left as it was: %d tasks, %d without a successful teacher trajectory, %d whose every segment is over the length limit", e.Out, s.Tasks, s.WithoutSuccess, s.Empty)
	for _, id := range slices.Sorted(maps.Keys(s.Failed)) {
		msg += fmt.Sprintf(" (the first: %s: %s)", id, s.Failed[id])
		break
	}
	switch {
	case s.WithoutSuccess > 0:
		msg += "; with --from live, check the teacher's server (the progress above says why each task failed) and run again"
	case s.Empty > 0:
		msg += "; raise --max-tokens"
	}
	return msg
}

// String is the summary for stderr.
func (s Summary) String() string {
	return fmt.Sprintf("sft: %d tasks, %d with a teacher trajectory, %d without a success; %d segments written, %d dropped for length (%d tasks lost every segment)",
		s.Tasks, s.WithTeacher, s.WithoutSuccess, s.Segments, s.Dropped, s.Empty)
}

// teaching is a task's teacher trajectory and what it was shown.
type teaching struct {
	tr   *agent.Trajectory
	path string
	// replayOf is the script's trajectory tr replayed, when a script acted.
	replayOf string
	ctx      Context
	v        int
	passed   int
	total    int
	problem  string // why there is none
}

// Export writes out (JSONL, atomically: a temporary file renamed) with at
// most one successful teacher trajectory per task of the split, cut into
// segments.
func (x *Exporter) Export(ctx context.Context, out string) (Summary, error) {
	var sum Summary
	split := cmp.Or(x.Split, pool.SplitSFT)
	source := cmp.Or(x.Source, SourceGate)
	switch source {
	case SourceGate:
		if x.Env == nil {
			return sum, errors.New("sft: the gate source needs an Env: a script's stored steps are replayed through the harness in fresh instances")
		}
	case SourceLive:
		if x.Teacher == nil || x.Env == nil {
			return sum, errors.New("sft: the live source needs a Teacher and an Env (--teacher on the command line)")
		}
	default:
		return sum, fmt.Errorf("sft: source %q: choose %s (the gates' stored rollouts) or %s (new teacher rollouts)", source, SourceGate, SourceLive)
	}
	if x.Pool == nil {
		return sum, errors.New("sft: no pool: load DIR/" + pool.File)
	}
	es := x.Pool.Split(split)
	if len(es) == 0 {
		return sum, fmt.Errorf("sft: the pool's split %q has no tasks (splits: %v): split the pool with `wildawm pool split`", split, x.Pool.Counts)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return sum, err
	}
	f, err := os.CreateTemp(filepath.Dir(out), ".tmp-"+filepath.Base(out)+"-*")
	if err != nil {
		return sum, fmt.Errorf("sft: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	sum.Failed = map[string]string{}
	var eta *world.ETA
	if x.Clock != nil {
		eta = world.NewETA(x.Clock, 0)
	}
	// left is the count of tasks done and the time left, for Progress.
	left := func() string {
		if eta == nil {
			return fmt.Sprintf("[%d/%d]", sum.Tasks, len(es))
		}
		return fmt.Sprintf("[%d/%d, %s]", sum.Tasks, len(es), eta.String(sum.Tasks, len(es)))
	}
	for _, e := range es {
		sum.Tasks++
		dir := filepath.Join(x.Pool.TasksDir, e.Dir)
		t, err := task.Load(dir)
		if err != nil {
			return sum, fmt.Errorf("sft: task %s: %w", e.ID, err)
		}
		var tc teaching
		if source == SourceGate {
			tc, err = x.gateTeaching(ctx, dir, t)
		} else {
			tc, err = x.liveTeaching(ctx, dir, t)
		}
		if err != nil {
			return sum, fmt.Errorf("sft: task %s: %w", e.ID, err)
		}
		if tc.tr == nil {
			sum.WithoutSuccess++
			sum.Failed[e.ID] = tc.problem
			x.progress("sft: %s: no success (%s) %s", e.ID, tc.problem, left())
			continue
		}
		sum.WithTeacher++
		if tc.replayOf != "" {
			sum.Replayed++
		}
		b, err := Build(tc.tr, tc.ctx, x.MaxTokens)
		if err != nil {
			return sum, err
		}
		sum.Dropped += b.Dropped
		if len(b.Records) == 0 {
			sum.Empty++
		}
		for _, r := range b.Records {
			r.TaskID, r.Split, r.Family, r.Source, r.Trajectory, r.ReplayOf = e.ID, e.Split, e.Family, source, tc.path, tc.replayOf
			r.V, r.Passed, r.Total = tc.v, tc.passed, tc.total
			if err := Check(r); err != nil {
				return sum, fmt.Errorf("sft: task %s: %w", e.ID, err)
			}
			if err := enc.Encode(r); err != nil {
				return sum, fmt.Errorf("sft: write %s: %w", out, err)
			}
			sum.Segments++
		}
		x.progress("sft: %s: %s (%s), %d of %d segments written %s", e.ID, tc.tr.Policy, tc.tr.Rollout, len(b.Records), b.Segments, left())
	}
	if sum.Segments == 0 {
		// Nothing to train on: an error, and out (an earlier export's,
		// perhaps) is left as it was.
		return sum, &NothingError{Summary: sum, Out: out}
	}
	if err := w.Flush(); err != nil {
		return sum, fmt.Errorf("sft: write %s: %w", out, err)
	}
	if err := f.Sync(); err != nil {
		return sum, fmt.Errorf("sft: write %s: %w", out, err)
	}
	if err := f.Chmod(0o644); err != nil {
		return sum, err
	}
	if err := f.Close(); err != nil {
		return sum, fmt.Errorf("sft: write %s: %w", out, err)
	}
	if err := os.Rename(f.Name(), out); err != nil {
		return sum, fmt.Errorf("sft: %w", err)
	}
	return sum, nil
}

func (x *Exporter) progress(format string, args ...any) {
	if x.Progress != nil {
		x.Progress(format, args...)
	}
}

// siteNames is the system prompt's list for a rollout whose instance is
// gone: every registered website by its site: name, which the harness's
// browser_navigate opens whatever the instance's ports.
func siteNames() []string {
	var out []string
	for _, s := range site.All() {
		out = append(out, s.Name+" "+agent.SitePrefix+s.Name+"/")
	}
	slices.Sort(out)
	return out
}

// rank orders the stored rollouts V passed: a model's before a script's,
// hint-free before hinted.
func rank(r pool.RolloutRecord) int {
	n := 0
	if kindOf(r.Policy) != KindModel {
		n += 2
	}
	if r.Hint {
		n++
	}
	return n
}

// gateTeaching is the first stored gate rollout V passed, preferring a
// model's and a hint-free one, in the form the harness sends: a model's
// turns as they are, a script's steps replayed through the harness in a
// fresh instance and verified again (a replay V rejects, or one the
// harness cannot express, gives way to the next rollout). The
// indispensability replays (the reference without an interface) are not
// the ensemble's and never count.
func (x *Exporter) gateTeaching(ctx context.Context, dir string, t *task.Task) (teaching, error) {
	o, err := pool.LoadOutcome(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return teaching{problem: "no " + pool.OutcomeFile + ": the task was never gated; export with --from live"}, nil
	}
	if err != nil {
		return teaching{}, err
	}
	var ok []pool.RolloutRecord
	for _, r := range o.Rollouts {
		if r.V == 1 && r.Ensemble() && r.Trajectory != "" && agent.FailureOf(r.Outcome) != agent.FailFormat {
			ok = append(ok, r)
		}
	}
	if len(ok) == 0 {
		return teaching{problem: fmt.Sprintf("V passed none of the %d stored gate rollouts", len(o.Rollouts))}, nil
	}
	slices.SortStableFunc(ok, func(a, b pool.RolloutRecord) int { return rank(a) - rank(b) })
	env, err := x.Env(t)
	if err != nil {
		return teaching{}, err
	}
	var why []string
	for _, r := range ok {
		path := filepath.Join(dir, r.Trajectory)
		tr, err := agent.LoadTrajectory(path)
		if err != nil {
			return teaching{}, fmt.Errorf("gate rollout %s: %w", r.ID, err)
		}
		if tr.Policy != r.Policy {
			return teaching{}, fmt.Errorf("gate rollout %s: %s says policy %q, its trajectory %q: regate the task", r.ID, pool.OutcomeFile, r.Policy, tr.Policy)
		}
		if kindOf(tr.Policy) == KindModel {
			if len(tr.Turns) == 0 {
				why = append(why, fmt.Sprintf("%s: a model through %s, whose trajectory records no harness turns", r.ID, tr.Harness))
				continue
			}
			// The instance is gone: its tools are listed in a fresh one of
			// the same world, its websites by their site: names.
			tools, err := x.toolsOf(ctx, env, t)
			if err != nil {
				return teaching{}, err
			}
			return teaching{tr: tr, path: path, v: r.V, passed: r.Passed, total: r.Total,
				ctx: Context{Instruction: t.Instruction, Hint: t.Hint, Sites: siteNames(), Tools: tools}}, nil
		}
		tc, w, err := x.replay(ctx, env, dir, t, tr, path, "gate-"+r.ID, r.Hint)
		if err != nil {
			return teaching{}, err
		}
		if tc.tr != nil {
			return tc, nil
		}
		why = append(why, r.ID+": "+w)
	}
	return teaching{problem: fmt.Sprintf("V passed %d stored gate rollouts, none through the harness: %s", len(ok), strings.Join(why, "; "))}, nil
}

// replay performs a script's trajectory src through the harness in a fresh
// instance (Harnessed) and verifies it: the teaching when V passes, else
// why not.
func (x *Exporter) replay(ctx context.Context, env Rollouts, dir string, t *task.Task, src *agent.Trajectory, srcPath, id string, hint bool) (teaching, string, error) {
	p := &Harnessed{Source: src, ContextTokens: x.ContextTokens, MaxTurns: x.MaxTurns, MaxTokens: x.CompletionTokens}
	res, err := env.Run(ctx, t, rollout.Spec{ID: id, Policy: p, Hint: hint})
	if err != nil {
		return teaching{}, "", err
	}
	tr := res.Trajectory
	v, passed, total := 0, 0, 0
	if tr.Countable() && p.Err == nil {
		vr, err := env.Judge(ctx, t, filepath.Join(dir, "verifier"), res)
		if err != nil {
			return teaching{}, "", fmt.Errorf("verify %s: %w", id, err)
		}
		v, passed, total = vr.V, vr.Passed, vr.Total
	}
	tr.Classify(v == 1)
	path, err := x.keep(t, id, tr)
	if err != nil {
		return teaching{}, "", err
	}
	switch {
	case p.Err != nil:
		return teaching{}, "the harness cannot replay it: " + p.Err.Error(), nil
	case v != 1:
		w := fmt.Sprintf("replayed through the harness: outcome %s, V 0 (%d of %d criteria)", tr.Outcome, passed, total)
		if tr.Error != "" {
			w += ": " + tr.Error
		}
		return teaching{}, w, nil
	}
	return teaching{tr: tr, path: path, replayOf: srcPath, v: v, passed: passed, total: total,
		ctx: Context{Instruction: t.Instruction, Hint: t.Hint, Sites: p.Sites, Tools: p.Tools, Mapping: p.Mapping}}, "", nil
}

// keep saves a rollout's trajectory under TrajectoryDir and returns its
// path ("" without a TrajectoryDir).
func (x *Exporter) keep(t *task.Task, id string, tr *agent.Trajectory) (string, error) {
	if x.TrajectoryDir == "" {
		return "", nil
	}
	path := filepath.Join(x.TrajectoryDir, t.ID, id+".json")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", err
	}
	return path, tr.Save(path)
}

// lister is a rollout that lists the harness's tools and does nothing.
type lister struct{ tools []Tool }

func (l *lister) Name() string { return "scripted:list-tools" }

func (l *lister) Run(ctx context.Context, env *agent.Env, _ task.Public) (string, error) {
	defs, err := env.Tools(ctx)
	if err != nil {
		return "", err
	}
	l.tools = nil
	for _, d := range defs {
		l.tools = append(l.tools, toolOf(d.Name, d.Description, d.Parameters))
	}
	return "", rollout.ErrStopped
}

// toolsOf lists the tools the harness offers in a fresh instance of t's
// world.
func (x *Exporter) toolsOf(ctx context.Context, env Rollouts, t *task.Task) ([]Tool, error) {
	l := &lister{}
	res, err := env.Run(ctx, t, rollout.Spec{ID: "sft-tools", Policy: l})
	if err != nil {
		return nil, err
	}
	if l.tools == nil {
		return nil, fmt.Errorf("list the harness's tools in a fresh instance: %s", res.Trajectory.Error)
	}
	return l.tools, nil
}

// shown wraps a live teacher to keep what its harness showed it: the
// instance's websites and tools.
type shown struct {
	rollout.Policy
	sites []string
	tools []Tool
}

func (s *shown) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	s.sites = nil
	for _, name := range slices.Sorted(maps.Keys(env.Sites)) {
		s.sites = append(s.sites, name+" "+env.Sites[name])
	}
	defs, err := env.Tools(ctx)
	if err != nil {
		return "", err
	}
	s.tools = nil
	for _, d := range defs {
		s.tools = append(s.tools, toolOf(d.Name, d.Description, d.Parameters))
	}
	return s.Policy.Run(ctx, env, t)
}

// WallBudget forwards the teacher's own wall budget (0: none).
func (s *shown) WallBudget() time.Duration {
	if b, ok := s.Policy.(rollout.Budgeted); ok {
		return b.WallBudget()
	}
	return 0
}

// liveTeaching runs up to Attempts teacher rollouts in fresh instances
// and keeps the first V passes. A script's attempt is replayed through
// the harness in another fresh instance, and that replay is what V judges.
func (x *Exporter) liveTeaching(ctx context.Context, dir string, t *task.Task) (teaching, error) {
	env, err := x.Env(t)
	if err != nil {
		return teaching{}, err
	}
	attempts := max(x.Attempts, 1)
	var why []string
	for a := 1; a <= attempts; a++ {
		pol, err := x.Teacher(t, a)
		if err != nil {
			return teaching{}, err
		}
		p := &shown{Policy: pol}
		id := fmt.Sprintf("sft-%d", a)
		if kindOf(pol.Name()) == KindScripted {
			id += "-script"
		}
		res, err := env.Run(ctx, t, rollout.Spec{ID: id, Policy: p})
		if err != nil {
			return teaching{}, err
		}
		tr := res.Trajectory
		if kindOf(tr.Policy) == KindScripted {
			tr.Classify(false) // not judged: its replay is
			path, err := x.keep(t, id, tr)
			if err != nil {
				return teaching{}, err
			}
			tc, w, err := x.replay(ctx, env, dir, t, tr, path, fmt.Sprintf("sft-%d", a), false)
			if err != nil {
				return teaching{}, err
			}
			if tc.tr != nil {
				return tc, nil
			}
			why = append(why, fmt.Sprintf("sft-%d: %s", a, w))
			x.progress("sft: %s: attempt %d of %d by %s failed: %s", t.ID, a, attempts, tr.Policy, w)
			continue
		}
		v, passed, total := 0, 0, 0
		if tr.Countable() {
			vr, err := env.Judge(ctx, t, filepath.Join(dir, "verifier"), res)
			if err != nil {
				return teaching{}, fmt.Errorf("verify %s: %w", id, err)
			}
			v, passed, total = vr.V, vr.Passed, vr.Total
		}
		tr.Classify(v == 1)
		path, err := x.keep(t, id, tr)
		if err != nil {
			return teaching{}, err
		}
		if v == 1 {
			return teaching{tr: tr, path: path, v: v, passed: passed, total: total,
				ctx: Context{Instruction: t.Instruction, Hint: t.Hint, Sites: p.sites, Tools: p.tools}}, nil
		}
		w := fmt.Sprintf("%s: outcome %s, V 0 (%d of %d criteria)", id, tr.Outcome, passed, total)
		if tr.Error != "" {
			w += ": " + tr.Error
		}
		why = append(why, w)
		x.progress("sft: %s: attempt %d of %d by %s failed: %s", t.ID, a, attempts, tr.Policy, w)
	}
	return teaching{problem: fmt.Sprintf("%d live attempts, none passed V: %s", attempts, why)}, nil
}
