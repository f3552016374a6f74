package trainer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// PolicyFactory builds an offline policy for one rollout of t: slot is the
// rollout's slot in its group, seed its own seed, params the request's
// policy_params.
type PolicyFactory func(t *task.Task, slot int, seed uint64, params json.RawMessage) (rollout.Policy, error)

// Offline policies of DefaultPolicies.
const (
	PolicyReplayEnsemble = "scripted:replay-ensemble"
	PolicySoftmax        = "learned:softmax"
)

// DefaultPolicies are the offline policies a request may name instead of
// an engine: the scripted replay ensemble (careful, sloppy and quitter by
// slot; never a model, for throughput and client tests) and the learnable
// softmax over the replay's decision points (the learning check).
func DefaultPolicies() map[string]PolicyFactory {
	ensemble := []string{"careful", "sloppy", "quitter"}
	return map[string]PolicyFactory{
		PolicyReplayEnsemble: func(t *task.Task, slot int, seed uint64, params json.RawMessage) (rollout.Policy, error) {
			if len(params) > 0 {
				return nil, errors.New("policy_params: the replay ensemble takes none")
			}
			name := ensemble[slot%len(ensemble)]
			errs, _ := policy.Variant(name)
			return policy.NewReplay(name, t, errs, seed), nil
		},
		PolicySoftmax: func(t *task.Task, slot int, seed uint64, params json.RawMessage) (rollout.Policy, error) {
			return policy.NewSoftmax(t, params, seed)
		},
	}
}

// Options configure a Service.
// Rollouts is what the service runs its rollouts through: each in a
// fresh instance of the task's initial world, then judged by the task's
// verifier (a *rollout.Env).
type Rollouts interface {
	Run(ctx context.Context, t *task.Task, spec rollout.Spec) (*rollout.Result, error)
	Judge(ctx context.Context, t *task.Task, verifierDir string, res *rollout.Result) (*verify.Result, error)
}

type Options struct {
	// Dir is the world-synthesis run: its pool is Dir/pool/pool.json; the
	// service keeps its batches, scheduler state and trajectories in
	// Dir/rl/ (or StateDir).
	Dir      string
	StateDir string
	// Split is the pool split tasks are sampled from (default "rl").
	Split string
	// Env is the rollout environment of a task's world.
	Env func(t *task.Task) (Rollouts, error)
	// Parallel is how many rollouts run at a time (default 4).
	Parallel int
	// Policies are the offline policies requests may name (nil:
	// DefaultPolicies).
	Policies map[string]PolicyFactory
	// Progress, when set, gets a line per finished group.
	Progress func(format string, args ...any)
	// Rollout, when set, replaces running a rollout in an instance (the
	// scheduler-overhead benchmark's instant rollouts).
	Rollout func(ctx context.Context, job RolloutJob) (*RolloutResult, error)
	// Model are the options of the engines' clients: time-out, retries,
	// backoff (nil: the model package's defaults).
	Model *model.Options
}

// taskRef is one task of the split.
type taskRef struct {
	id, dir string
	task    *task.Task
}

// Service computes batches: one train step at a time, in the order the
// steps are requested.
type Service struct {
	opts  Options
	dir   string
	tasks []taskRef
	byID  map[string]taskRef

	clientsMu sync.Mutex
	clients   map[string]*model.Client

	mu        sync.Mutex
	batches   map[int]*pending
	queue     chan *pending
	done      chan struct{}
	stop      context.CancelFunc
	closed    bool // under mu
	closeOnce sync.Once
	wg        sync.WaitGroup
}

// pending is a requested batch.
type pending struct {
	req   Request
	batch *Batch
	done  chan struct{}
	// progress counts finished rollouts while it runs.
	progress Progress
}

// failed reports whether the batch finished and failed (under s.mu).
func (p *pending) failed() bool {
	select {
	case <-p.done:
		return p.batch.Status == StatusFailed
	default:
		return false
	}
}

// Progress is a running batch's progress.
type Progress struct {
	Groups    int `json:"groups"`
	Decided   int `json:"decided"`
	Rollouts  int `json:"rollouts"`
	Launched  int `json:"launched"`
	Cancelled int `json:"cancelled"`
}

// Open loads the split's tasks and starts the service's batch worker.
// Close stops it.
func Open(ctx context.Context, opts Options) (*Service, error) {
	if opts.Env == nil && opts.Rollout == nil {
		return nil, errors.New("trainer: Options.Env is nil: the service needs the tasks' rollout environment")
	}
	opts.Split = cmp.Or(opts.Split, pool.SplitRL)
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	if opts.Policies == nil {
		opts.Policies = DefaultPolicies()
	}
	p, err := pool.LoadPool(filepath.Join(opts.Dir, pool.File))
	if err != nil {
		return nil, fmt.Errorf("trainer: %w (build the pool with wildawm pool run --dir %s)", err, opts.Dir)
	}
	s := &Service{opts: opts, dir: cmp.Or(opts.StateDir, filepath.Join(opts.Dir, "rl")), byID: map[string]taskRef{},
		clients: map[string]*model.Client{}, batches: map[int]*pending{}, queue: make(chan *pending, 1024), done: make(chan struct{})}
	for _, e := range p.Split(opts.Split) {
		dir := p.TaskDir(e)
		t, err := task.Load(dir)
		if err != nil {
			return nil, fmt.Errorf("trainer: task %s of the %s split: %w", e.ID, opts.Split, err)
		}
		ref := taskRef{id: t.ID, dir: dir, task: t}
		s.tasks = append(s.tasks, ref)
		s.byID[t.ID] = ref
	}
	if len(s.tasks) == 0 {
		return nil, fmt.Errorf("trainer: the pool at %s has no %s tasks: build one with wildawm pool run, or give its proportions with wildawm pool split --proportions", filepath.Join(opts.Dir, pool.File), opts.Split)
	}
	slices.SortFunc(s.tasks, func(a, b taskRef) int { return cmp.Compare(a.id, b.id) })
	for _, sub := range []string{"batches", "state", "rollouts"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	wctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	s.stop = stop
	s.wg.Add(1)
	go s.work(wctx)
	return s, nil
}

// Tasks is how many tasks the split holds.
func (s *Service) Tasks() int { return len(s.tasks) }

// Close stops the worker; a batch being computed fails and is not saved.
func (s *Service) Close(ctx context.Context) error {
	s.closeOnce.Do(func() {
		s.mu.Lock()
		s.closed = true
		s.mu.Unlock()
		s.stop()
		close(s.done)
	})
	s.wg.Wait()
	// The batches still queued will not run: they fail, and whoever waits
	// for them is told.
	for {
		select {
		case p := <-s.queue:
			s.mu.Lock()
			p.batch.Status, p.batch.Error = StatusFailed, ErrClosed.Error()
			close(p.done)
			s.mu.Unlock()
		default:
			return nil
		}
	}
}

// ErrConflict is returned for a step already requested with other
// parameters.
var ErrConflict = errors.New("trainer: step already requested with other parameters")

// ErrClosed is returned by a closed service, and is the error of the
// batches it did not get to.
var ErrClosed = errors.New("trainer: the service is closed")

// RequestError is a request the service refuses as it is (a field's value,
// an unknown policy): the client's to fix.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// Submit requests a step's batch and returns its pending handle: a batch
// computed before (saved in the state directory) is read back; a step
// requested again with the same request returns the same batch.
func (s *Service) Submit(req Request) (*Batch, <-chan struct{}, error) {
	if err := req.Validate(); err != nil {
		return nil, nil, &RequestError{err}
	}
	req = req.withDefaults()
	if req.Tasks > len(s.tasks) {
		return nil, nil, &RequestError{fmt.Errorf("tasks: %d, but the %s split has %d tasks: ask for at most %d", req.Tasks, s.opts.Split, len(s.tasks), len(s.tasks))}
	}
	if req.Policy != "" {
		f := s.opts.Policies[req.Policy]
		if f == nil {
			return nil, nil, &RequestError{fmt.Errorf("policy: %q is not an offline policy of this service: choose one of %v, or give an engine", req.Policy, slices.Sorted(maps.Keys(s.opts.Policies)))}
		}
		if _, err := f(s.tasks[0].task, 0, req.Seed, req.PolicyParams); err != nil {
			return nil, nil, &RequestError{fmt.Errorf("policy_params: %w", err)}
		}
	}
	if req.Engine != "" && req.Harness != "" && req.Harness != agent.HarnessName {
		return nil, nil, &RequestError{fmt.Errorf("harness: %q: RL needs the engine's token ids, which only the %s harness records: leave it out", req.Harness, agent.HarnessName)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, nil, ErrClosed
	}
	if p := s.batches[req.Step]; p != nil && !p.failed() {
		if !sameRequest(p.req, req) {
			return nil, nil, fmt.Errorf("step %d: %w: request the next step, or repeat this one's request exactly", req.Step, ErrConflict)
		}
		return p.batch, p.done, nil
	}
	if b, err := loadBatch(s.batchPath(req.Step)); err == nil {
		if !sameRequest(b.Request, req) {
			return nil, nil, fmt.Errorf("step %d: %w (saved in %s): request the next step, or repeat this one's request exactly", req.Step, ErrConflict, s.batchPath(req.Step))
		}
		done := make(chan struct{})
		close(done)
		s.batches[req.Step] = &pending{req: req, batch: b, done: done}
		return b, done, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	p := &pending{req: req, batch: &Batch{Version: SchemaVersion, ID: batchID(req.Step), Step: req.Step, Status: StatusRunning, Request: req}, done: make(chan struct{})}
	s.batches[req.Step] = p
	select {
	case s.queue <- p:
	default:
		delete(s.batches, req.Step)
		return nil, nil, fmt.Errorf("step %d: too many batches queued (%d): wait for one to finish", req.Step, cap(s.queue))
	}
	return p.batch, p.done, nil
}

// Lookup returns a requested step's batch (a copy while it runs) and its
// progress.
func (s *Service) Lookup(step int) (*Batch, Progress, <-chan struct{}, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.batches[step]
	if p == nil {
		if b, err := loadBatch(s.batchPath(step)); err == nil {
			done := make(chan struct{})
			close(done)
			s.batches[step] = &pending{req: b.Request, batch: b, done: done}
			return b, Progress{}, done, true
		}
		return nil, Progress{}, nil, false
	}
	select {
	case <-p.done:
		return p.batch, p.progress, p.done, true
	default:
		cp := *p.batch
		return &cp, p.progress, p.done, true
	}
}

// Batch computes (or reads back) one step's batch and waits for it.
func (s *Service) Batch(ctx context.Context, req Request) (*Batch, error) {
	_, done, err := s.Submit(req)
	if err != nil {
		return nil, err
	}
	select {
	case <-done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	b, _, _, _ := s.Lookup(req.Step)
	if b.Status == StatusFailed {
		return b, fmt.Errorf("step %d: %s", req.Step, b.Error)
	}
	return b, nil
}

func (s *Service) work(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case p := <-s.queue:
			b, err := s.compute(ctx, p)
			s.mu.Lock()
			if err != nil {
				// A failed step is not saved: requesting it again retries.
				p.batch.Status, p.batch.Error = StatusFailed, err.Error()
			} else {
				p.batch = b
			}
			close(p.done)
			s.mu.Unlock()
		}
	}
}

func batchID(step int) string { return fmt.Sprintf("step-%06d", step) }

func (s *Service) batchPath(step int) string {
	return filepath.Join(s.dir, "batches", batchID(step)+".json")
}

func sameRequest(a, b Request) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func loadBatch(path string) (*Batch, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var b Batch
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("trainer: %s: %w", path, err)
	}
	if b.Version != SchemaVersion {
		return nil, fmt.Errorf("trainer: %s: batch version %d, this build reads %d", path, b.Version, SchemaVersion)
	}
	return &b, nil
}

func saveJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	return world.WriteFileAtomic(path, append(data, '\n'), 0o644)
}

// seedOf mixes the request's seed with names and numbers.
func seedOf(seed uint64, parts ...any) uint64 {
	h := fnv.New64a()
	fmt.Fprint(h, seed)
	for _, p := range parts {
		fmt.Fprintf(h, "\x00%v", p)
	}
	return h.Sum64()
}

// rngOf is a generator seeded by seedOf.
func rngOf(seed uint64, parts ...any) *rand.Rand {
	return rand.New(rand.NewPCG(seedOf(seed, parts...), 0x853c49e6748fea9b))
}

func msSince(t time.Time) float64 { return float64(time.Since(t).Microseconds()) / 1000 }
