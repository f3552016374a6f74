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
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
		PolicyObserve: observePolicy,
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
	// AllowGaps accepts a step whose predecessor was never requested
	// (its tasks then start from the last saved state before it). Without
	// it such a step is refused (409, GapError): steps out of order would
	// fork the kappa history.
	AllowGaps bool
	// OutageBackoff is the first wait before a rollout the engine's
	// outage stopped is run again (doubled per consecutive outage, at
	// most a minute; default 2s); OutageLimit how long an outage may last
	// before the step fails, retriable, and is not saved (default 2h).
	OutageBackoff time.Duration
	OutageLimit   time.Duration
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
	// lastPosted is the highest step a trainer asked for (not prefetched),
	// and version the policy version it asked with, under mu.
	lastPosted int
	version    string
}

// pending is a requested batch.
type pending struct {
	req   Request
	batch *Batch
	done  chan struct{}
	// progress counts finished rollouts while it runs.
	progress Progress
	// ahead: the service requested the step itself (MaxStaleness), fixed
	// for the pending's life; posted: a trainer has asked for it since
	// (under s.mu). staleness is how many steps ahead of the trainer it
	// was when queued.
	ahead, posted bool
	staleness     int
	// outage is the engine's error while rollouts wait for it to come
	// back (under s.mu); retriable marks a failure a re-POST may retry
	// (the outage lasted past OutageLimit, or the service closed).
	outage    string
	retriable bool
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
	for _, sub := range []string{"batches", "state", "rollouts", "requests"} {
		if err := os.MkdirAll(filepath.Join(s.dir, sub), 0o755); err != nil {
			return nil, err
		}
	}
	if err := s.resume(); err != nil {
		return nil, err
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
			// Its request stays in STATE/requests/: the next service resumes it.
			p.batch.Status, p.batch.Error, p.retriable = StatusFailed, ErrClosed.Error(), true
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

// ErrBusy is a request the service has no room to queue now (HTTP 503).
var ErrBusy = errors.New("trainer: too many batches queued")

// ErrClosed is returned by a closed service, and is the error of the
// batches it did not get to.
var ErrClosed = errors.New("trainer: the service is closed")

// RequestError is a request the service refuses as it is (a field's value,
// an unknown policy): the client's to fix.
type RequestError struct{ Err error }

func (e *RequestError) Error() string { return e.Err.Error() }
func (e *RequestError) Unwrap() error { return e.Err }

// GapError is a step requested before the step before it: Missing is the
// first step never requested.
type GapError struct{ Step, Missing int }

func (e *GapError) Error() string {
	return fmt.Sprintf("step %d: step %d was never requested: request the steps in order (each step's kappas start from the step before), or start the service with --allow-gaps", e.Step, e.Missing)
}

// marker is a requested step's request, kept in STATE/requests/ until its
// batch is saved, so a restarted service resumes it.
type marker struct {
	Version    int     `json:"version"`
	Request    Request `json:"request"`
	Prefetched bool    `json:"prefetched,omitempty"`
	Staleness  int     `json:"staleness,omitempty"`
	// Posted says a trainer asked for the step (a prefetched one too,
	// once asked).
	Posted bool `json:"posted,omitempty"`
}

func (s *Service) markerPath(step int) string {
	return filepath.Join(s.dir, "requests", batchID(step)+".json")
}

func loadMarker(path string) (*marker, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var m marker
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("trainer: %s: %w (remove it to forget the step's request)", path, err)
	}
	if m.Version != SchemaVersion {
		return nil, fmt.Errorf("trainer: %s: request version %d, this build reads %d", path, m.Version, SchemaVersion)
	}
	return &m, nil
}

// resume queues the steps a previous process was asked for and did not
// finish, in step order, and sweeps the trajectories of steps that were
// neither saved nor are to be resumed (a dead run's).
func (s *Service) resume() error {
	names, err := filepath.Glob(filepath.Join(s.dir, "requests", "step-*.json"))
	if err != nil {
		return err
	}
	saved, err := s.Steps()
	if err != nil {
		return err
	}
	for _, st := range saved {
		s.lastPosted = max(s.lastPosted, st)
		if err := s.repairState(st); err != nil {
			return err
		}
	}
	keep := map[int]bool{}
	for _, st := range saved {
		keep[st] = true
	}
	var todo []*marker
	for _, n := range names {
		step, ok := stepOf(n)
		if !ok {
			continue
		}
		if keep[step] {
			os.Remove(n) // saved after its marker was written: the marker is done
			continue
		}
		m, err := loadMarker(n)
		if err != nil {
			return err
		}
		keep[step] = true
		todo = append(todo, m)
		if m.Posted || !m.Prefetched {
			s.lastPosted = max(s.lastPosted, step)
		}
	}
	slices.SortFunc(todo, func(a, b *marker) int { return cmp.Compare(a.Request.Step, b.Request.Step) })
	for _, m := range todo {
		p := &pending{req: m.Request, batch: &Batch{Version: SchemaVersion, ID: batchID(m.Request.Step), Step: m.Request.Step, Status: StatusRunning, Request: m.Request},
			done: make(chan struct{}), ahead: m.Prefetched, posted: m.Posted, staleness: m.Staleness}
		s.batches[m.Request.Step] = p
		select {
		case s.queue <- p:
		default:
			return fmt.Errorf("trainer: %d steps to resume in %s: more than the queue holds (%d)", len(todo), filepath.Join(s.dir, "requests"), cap(s.queue))
		}
		if s.opts.Progress != nil {
			s.opts.Progress("resuming step %d, requested before the service stopped", m.Request.Step)
		}
	}
	dirs, err := filepath.Glob(filepath.Join(s.dir, "rollouts", "step-*"))
	if err != nil {
		return err
	}
	swept := 0
	for _, d := range dirs {
		if step, ok := stepOf(d); ok && !keep[step] {
			if err := os.RemoveAll(d); err != nil {
				return err
			}
			swept++
		}
	}
	if swept > 0 && s.opts.Progress != nil {
		s.opts.Progress("swept the trajectories of %d steps a stopped service left unfinished and no trainer asks for", swept)
	}
	return nil
}

// repairState writes the state after a saved step when a crash came
// between saving its batch and its state: the state before it with the
// batch's groups' next kappas.
func (s *Service) repairState(step int) error {
	if _, err := os.Stat(s.statePath(step)); !errors.Is(err, os.ErrNotExist) {
		return err
	}
	b, err := loadBatch(s.batchPath(step))
	if err != nil {
		return err
	}
	st, err := s.loadState(step)
	if err != nil {
		return err
	}
	st.Step = step
	for _, g := range b.Groups {
		if g.State != agent.FailInfra && g.State != agent.FailSetup {
			st.Kappa[g.TaskID] = g.NextKappa
		}
	}
	if s.opts.Progress != nil {
		s.opts.Progress("step %d: its batch was saved and its state was not (a crash between them): wrote the state from the batch", step)
	}
	return saveJSON(s.statePath(step), st)
}

// stepOf reads N from a path ending in step-N or step-N.json.
func stepOf(path string) (int, bool) {
	k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "step-"), ".json"))
	return k, err == nil && k > 0
}

// Submit requests a step's batch and returns its pending handle: a batch
// computed before (saved in the state directory) is read back; a step
// requested again with the same request returns the same batch.
func (s *Service) Submit(req Request) (*Batch, <-chan struct{}, error) {
	if err := req.Validate(); err != nil {
		return nil, nil, &RequestError{err}
	}
	req = req.withDefaults()
	if _, err := s.candidates(req); err != nil {
		return nil, nil, &RequestError{err}
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
		if p.ahead && samePrefetch(p.req, req) {
			s.postedLocked(req.Step, req.PolicyVersion)
			return p.batch, p.done, nil
		}
		if !sameRequest(p.req, req) {
			why := "request the next step, or repeat this one's request exactly"
			if p.ahead {
				why = fmt.Sprintf("it was computed ahead (max_staleness %d) with step %d's request: ask with the same parameters (only policy_version may change)", p.req.MaxStaleness, req.Step-1)
			}
			return nil, nil, fmt.Errorf("step %d: %w: %s", req.Step, ErrConflict, why)
		}
		s.postedLocked(req.Step, req.PolicyVersion)
		return p.batch, p.done, nil
	}
	if b, err := loadBatch(s.batchPath(req.Step)); err == nil {
		if !sameRequest(b.Request, req) && !(b.Prefetched && samePrefetch(b.Request, req)) {
			return nil, nil, fmt.Errorf("step %d: %w (saved in %s): request the next step, or repeat this one's request exactly", req.Step, ErrConflict, s.batchPath(req.Step))
		}
		done := make(chan struct{})
		close(done)
		s.batches[req.Step] = &pending{req: b.Request, batch: b, done: done}
		s.postedLocked(req.Step, req.PolicyVersion)
		return b, done, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	if req.Step > 1 && !s.opts.AllowGaps && !s.requestedLocked(req.Step-1) {
		return nil, nil, &GapError{Step: req.Step, Missing: s.highestRequestedLocked(req.Step) + 1}
	}
	p, err := s.enqueueLocked(req, false, 0)
	if err != nil {
		return nil, nil, err
	}
	s.postedLocked(req.Step, req.PolicyVersion)
	return p.batch, p.done, nil
}

// postedLocked notes that a trainer asked for step.
func (s *Service) postedLocked(step int, version string) {
	if step >= s.lastPosted {
		s.version = version
	}
	if p := s.batches[step]; p != nil && p.ahead && !p.posted {
		p.posted = true
		if m, err := loadMarker(s.markerPath(step)); err == nil {
			m.Posted = true
			saveJSON(s.markerPath(step), m)
		}
	}
	s.lastPosted = max(s.lastPosted, step)
	// The trainer caught up: the step after the newest computed one may
	// run ahead again.
	for p := s.batches[step]; p != nil; p = s.batches[p.req.Step+1] {
		select {
		case <-p.done:
		default:
			return
		}
		if p.batch.Status != StatusDone {
			return
		}
		if s.batches[p.req.Step+1] == nil {
			s.prefetchLocked(p.batch.Request)
			return
		}
	}
}

// requestedLocked says whether step was requested: running, saved, or to
// be resumed.
func (s *Service) requestedLocked(step int) bool {
	if p := s.batches[step]; p != nil && !p.failed() {
		return true
	}
	for _, path := range []string{s.batchPath(step), s.markerPath(step)} {
		if _, err := os.Stat(path); err == nil {
			return true
		}
	}
	return false
}

// highestRequestedLocked is the highest step below step that was
// requested (0: none).
func (s *Service) highestRequestedLocked(step int) int {
	best := 0
	for k, p := range s.batches {
		if k < step && k > best && !p.failed() {
			best = k
		}
	}
	for _, dir := range []string{"batches", "requests"} {
		steps, _ := savedSteps(filepath.Join(s.dir, dir))
		for _, k := range steps {
			if k < step && k > best {
				best = k
			}
		}
	}
	return best
}

// enqueueLocked writes the step's marker and queues it.
func (s *Service) enqueueLocked(req Request, prefetched bool, staleness int) (*pending, error) {
	// Only enqueueLocked sends, under s.mu, and the worker only takes:
	// a queue with room now has room for this one.
	if len(s.queue) >= cap(s.queue) {
		return nil, fmt.Errorf("step %d: %w (%d batches queued): wait for one to finish", req.Step, ErrBusy, cap(s.queue))
	}
	if err := saveJSON(s.markerPath(req.Step), marker{Version: SchemaVersion, Request: req, Prefetched: prefetched, Staleness: staleness}); err != nil {
		return nil, fmt.Errorf("step %d: keep the request: %w", req.Step, err)
	}
	p := &pending{req: req, batch: &Batch{Version: SchemaVersion, ID: batchID(req.Step), Step: req.Step, Status: StatusRunning, Request: req},
		done: make(chan struct{}), ahead: prefetched, staleness: staleness}
	s.batches[req.Step] = p
	s.queue <- p
	return p, nil
}

// prefetchLocked queues the step after a finished one with its request
// when the request allows it and the trainer is close enough behind.
func (s *Service) prefetchLocked(done Request) {
	next := done
	next.Step++
	// Its turns record the weights the trainer last said it serves.
	next.PolicyVersion = s.version
	ahead := next.Step - s.lastPosted
	if done.MaxStaleness <= 0 || ahead > done.MaxStaleness || next.Step > MaxStep || s.closed || s.requestedLocked(next.Step) {
		return
	}
	if _, err := s.enqueueLocked(next, true, ahead); err != nil && s.opts.Progress != nil {
		s.opts.Progress("step %d: not computed ahead: %v", next.Step, err)
	}
}

// Lookup returns a requested step's batch (a copy while it runs) and its
// progress.
func (s *Service) Lookup(step int) (*Batch, Progress, <-chan struct{}, bool) {
	b, prog, done, _, ok := s.lookup(step)
	return b, prog, done, ok
}

// lookup is Lookup with the step's outage (the engine's error while its
// rollouts wait, or a failure a re-POST may retry).
func (s *Service) lookup(step int) (*Batch, Progress, <-chan struct{}, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.batches[step]
	if p == nil {
		if b, err := loadBatch(s.batchPath(step)); err == nil {
			done := make(chan struct{})
			close(done)
			s.batches[step] = &pending{req: b.Request, batch: b, done: done}
			return b, Progress{}, done, "", true
		}
		return nil, Progress{}, nil, "", false
	}
	select {
	case <-p.done:
		outage := ""
		if p.retriable {
			outage = p.batch.Error
		}
		return p.batch, p.progress, p.done, outage, true
	default:
		cp := *p.batch
		return &cp, p.progress, p.done, p.outage, true
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
				// One the engine's outage or the service's end stopped is
				// kept to resume; any other forgets its request.
				p.batch.Status, p.batch.Error = StatusFailed, err.Error()
				p.retriable = errors.Is(err, ErrOutage) || errors.Is(err, ErrPredecessor) || ctx.Err() != nil
				if !p.retriable {
					os.Remove(s.markerPath(p.req.Step))
				}
			} else {
				if p.ahead {
					b.Prefetched = true
				}
				p.batch = b
				os.Remove(s.markerPath(p.req.Step))
				s.prefetchLocked(p.req)
			}
			p.outage = ""
			close(p.done)
			s.mu.Unlock()
		}
	}
}

// samePrefetch says whether a trainer's request asks for what a
// prefetched step computed: the same request but for the policy version
// the trainer's weights have reached since.
func samePrefetch(prefetched, asked Request) bool {
	asked.PolicyVersion = prefetched.PolicyVersion
	return sameRequest(prefetched, asked)
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

// candidates are the tasks a request's step may sample, in the order it
// takes them: the named ones as named, else the split (narrowed by the
// filter) in the step's seeded permutation. An error names the field.
func (s *Service) candidates(req Request) ([]taskRef, error) {
	if len(req.TaskIDs) > 0 {
		out := make([]taskRef, 0, len(req.TaskIDs))
		for i, id := range req.TaskIDs {
			ref, ok := s.byID[id]
			if !ok {
				return nil, fmt.Errorf("task_ids[%d]: %q is not a task of the %s split (GET /health says how many it has; ids are the pool's)", i, id, s.opts.Split)
			}
			out = append(out, ref)
		}
		return out, nil
	}
	var pool []taskRef
	for _, ref := range s.tasks {
		if ok, _ := path.Match(req.TaskFilter, ref.id); req.TaskFilter == "" || ok {
			pool = append(pool, ref)
		}
	}
	what := fmt.Sprintf("the %s split has %d tasks", s.opts.Split, len(pool))
	if req.TaskFilter != "" {
		what = fmt.Sprintf("task_filter %q matches %d tasks of the %s split", req.TaskFilter, len(pool), s.opts.Split)
	}
	if len(pool) == 0 {
		return nil, fmt.Errorf("task_filter: %s: give a glob that matches task ids", what)
	}
	if req.Tasks > len(pool) {
		return nil, fmt.Errorf("tasks: %d, but %s: ask for at most %d", req.Tasks, what, len(pool))
	}
	out := make([]taskRef, len(pool))
	for i, j := range rngOf(req.Seed, "tasks", req.Step).Perm(len(pool)) {
		out[i] = pool[j]
	}
	return out, nil
}
