package trainer

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rl"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/world"
)

// RolloutJob is one rollout of a step: a unit of work with JSON input.
type RolloutJob struct {
	Step      int     `json:"step"`
	TaskID    string  `json:"task_id"`
	Group     int     `json:"group"`
	Slot      int     `json:"slot"`
	RolloutID string  `json:"rollout_id"`
	Request   Request `json:"request"`
	// Try counts runs of this slot after infrastructure failures (0 first).
	Try int `json:"try"`
}

// RolloutResult is a finished rollout, verified: its JSON output.
type RolloutResult struct {
	RolloutID string `json:"rollout_id"`
	Policy    string `json:"policy"`
	Outcome   string `json:"outcome"`
	Failure   string `json:"failure,omitempty"`
	Error     string `json:"error,omitempty"`
	// Fault says how the agent made its world or answer unverifiable
	// (agent.Trajectory.Fault): V false, reward 0, failure "agent".
	Fault  string   `json:"fault,omitempty"`
	Final  world.ID `json:"final"`
	Steps  int      `json:"steps"`
	WallMS float64  `json:"wall_ms"`
	// V, Checklist: the verifier's verdict and criteria (unset for an
	// infrastructure or set-up failure, which is not verified).
	V             bool        `json:"v"`
	Checklist     []Criterion `json:"checklist"`
	FormatFailure bool        `json:"format_failure"`
	Reward        float64     `json:"reward"`
	// Trajectory is the rollout's record (its turns carry the token ids).
	Trajectory *agent.Trajectory `json:"trajectory"`
}

// Rollout runs one rollout job in a fresh instance and verifies it. An
// infrastructure or set-up failure is a value (Failure), not an error; the
// error is for a cancelled ctx, a task not in the split, or a store that
// cannot take the final world.
func (s *Service) Rollout(ctx context.Context, job RolloutJob) (*RolloutResult, error) {
	if s.opts.Rollout != nil {
		return s.opts.Rollout(ctx, job)
	}
	ref, ok := s.byID[job.TaskID]
	if !ok {
		return nil, fmt.Errorf("trainer: task %q is not in the %s split", job.TaskID, s.opts.Split)
	}
	pol, watch, err := s.policy(ref, job)
	if err != nil {
		return nil, err
	}
	env, err := s.opts.Env(ref.task)
	if err != nil {
		return nil, err
	}
	res, err := env.Run(ctx, ref.task, rollout.Spec{ID: job.RolloutID, Policy: pol})
	if err != nil {
		return nil, err
	}
	tr := res.Trajectory
	if oerr := watch.outage(); oerr != nil && tr.Failure == agent.FailInfra {
		return nil, &OutageError{Engine: job.Request.Engine, Err: oerr}
	}
	if job.Request.Policy == "" {
		if err := TokenSignal(tr, job.Request.Engine); err != nil {
			return nil, err
		}
	}
	out := &RolloutResult{RolloutID: job.RolloutID, Policy: tr.Policy, Outcome: tr.Outcome, Failure: tr.Failure, Error: tr.Error,
		Final: res.Final, Steps: len(tr.Steps), WallMS: tr.WallMS, Trajectory: tr}
	if tr.Failure == agent.FailInfra || tr.Failure == agent.FailSetup {
		return out, nil
	}
	// Every other rollout is verified, a timed-out one too (the paper). One
	// whose agent made its world or answer unverifiable is V 0 and reward
	// 0 (Judge): its failure, never infrastructure, so its group goes on.
	vr, err := env.Judge(ctx, ref.task, filepath.Join(ref.dir, "verifier"), res)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out.Outcome, out.Failure, out.Error = rollout.OutcomeInfra, agent.FailInfra, "verify: "+err.Error()
		return out, nil
	}
	tr.Classify(vr.V == 1)
	out.Failure, out.Fault = tr.Failure, tr.Fault
	out.V = vr.V == 1
	var checks []bool
	for _, c := range vr.Criteria {
		out.Checklist = append(out.Checklist, Criterion{ID: c.ID, Pass: c.Pass})
		checks = append(checks, c.Pass)
	}
	out.FormatFailure = tr.Outcome == rollout.OutcomeFormat
	out.Reward = rl.Reward(out.FormatFailure, out.V, checks)
	return out, nil
}

// ErrNoSignal is a model rollout whose turns cannot be trained on: the
// engine returned no token ids, or token ids without their logprobs.
var ErrNoSignal = errors.New("trainer: the engine's replies carry no training signal")

// TokenSignal fails when a model rollout's turns lack the token ids or
// the logprobs a trainer needs (a sample of them would train nothing, or
// on logprob 0.0), naming the engine and the fix.
func TokenSignal(tr *agent.Trajectory, engine string) error {
	for _, t := range tr.Turns {
		switch {
		case len(t.CompletionTokenIDs) == 0:
			return fmt.Errorf("%w: turn %d of rollout %s came back from %s without token ids: serve the policy with vLLM or SGLang and name the engine (vllm+URL#MODEL or sglang+URL#MODEL), so that return_token_ids is sent and read", ErrNoSignal, t.Index, tr.Rollout, engine)
		case len(t.CompletionTokenIDs) > 0 && len(t.Logprobs) != len(t.CompletionTokenIDs):
			return fmt.Errorf("%w: turn %d of rollout %s came back from %s with %d token ids and %d logprobs: the engine must return a logprob per sampled token (vLLM: do not set --max-logprobs 0; SGLang: logprobs are returned when asked)", ErrNoSignal, t.Index, tr.Rollout, engine, len(t.CompletionTokenIDs), len(t.Logprobs))
		}
	}
	return nil
}

// outageWatch is the engine's client as one rollout's harness sees it:
// it keeps the last failure that was the server's outage (model.IsOutage,
// after the client's own retries), so the service tells an engine that
// went away from a rollout's infrastructure failure.
type outageWatch struct {
	agent.Chatter
	mu  sync.Mutex
	err error
}

func (w *outageWatch) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	resp, err := w.Chatter.Chat(ctx, req)
	if ctx.Err() == nil {
		w.note(err)
	}
	return resp, err
}

func (w *outageWatch) note(err error) {
	if err != nil && model.IsOutage(err) {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
	}
}

// tokenWatch is outageWatch over a client in token mode
// (agent.TokenModel): its generations and tokenizations are watched too.
type tokenWatch struct {
	*outageWatch
	tm agent.TokenModel
}

func (w tokenWatch) Generate(ctx context.Context, req model.TokenRequest) (*model.TokenResponse, error) {
	resp, err := w.tm.Generate(ctx, req)
	if ctx.Err() == nil {
		w.note(err)
	}
	return resp, err
}

func (w tokenWatch) Tokenize(ctx context.Context, req model.TokenizeRequest) ([]int, error) {
	ids, err := w.tm.Tokenize(ctx, req)
	if ctx.Err() == nil {
		w.note(err)
	}
	return ids, err
}

// outage is the last outage the rollout met (nil for an offline policy).
func (w *outageWatch) outage() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// policy builds the job's policy: a model through the harness at the
// request's engine (with the watch on its client), or an offline policy
// of the registry.
func (s *Service) policy(ref taskRef, job RolloutJob) (rollout.Policy, *outageWatch, error) {
	req := job.Request
	seed := seedOf(req.Seed, "rollout", job.Step, job.TaskID, job.Slot, job.Try)
	if req.Policy != "" {
		f := s.opts.Policies[req.Policy]
		if f == nil {
			return nil, nil, fmt.Errorf("policy: %q is not an offline policy of this service", req.Policy)
		}
		pol, err := f(ref.task, job.Slot, seed, req.PolicyParams)
		return pol, nil, err
	}
	client, spec, err := s.client(req.Engine)
	if err != nil {
		return nil, nil, err
	}
	watch := &outageWatch{Chatter: client}
	var m agent.Chatter = watch
	if req.Sampling.TokenInTokenOut {
		m = tokenWatch{outageWatch: watch, tm: client}
	}
	h := &agent.Harness{Model: m, TokenMode: req.Sampling.TokenInTokenOut, ModelName: spec.Model, TokenIDs: true, WeightVersion: req.PolicyVersion,
		Temperature: req.Sampling.Temperature, TopP: req.Sampling.TopP, MaxTokens: req.Sampling.MaxTokens,
		ContextTokens: req.Sampling.ContextTokens, MaxTurns: req.Sampling.MaxTurns}
	if req.Sampling.Seed != nil {
		// A seed of its own per step, group, slot and try: a retried slot
		// or the next step does not replay the same draw.
		sd := int64(seedOf(uint64(*req.Sampling.Seed), "sampling", job.Step, job.Group, job.Slot, job.Try) >> 1)
		h.Seed = &sd
	}
	return policy.Model{Harness: h}, watch, nil
}

// client is the engine's client, one per engine spec.
func (s *Service) client(engine string) (*model.Client, model.Spec, error) {
	spec, err := model.ParseSpec(engine)
	if err != nil {
		return nil, spec, fmt.Errorf("engine: %w", err)
	}
	s.clientsMu.Lock()
	defer s.clientsMu.Unlock()
	if c := s.clients[engine]; c != nil {
		return c, spec, nil
	}
	c, err := model.New(spec, s.opts.Model)
	if err != nil {
		return nil, spec, fmt.Errorf("engine: %w", err)
	}
	s.clients[engine] = c
	return c, spec, nil
}

// MaxTries is how many times a slot runs when its rollout's
// infrastructure fails: the first run and 3 retries, each in a fresh
// instance (the paper's "retried up to 3 times in a fresh sandbox"; each
// run itself tries rollout.MaxAttempts instances before it reports an
// infrastructure failure). The group waits for the retried slot; only a
// slot that fails in every run abandons it, since no verdict of the
// slot's can be taken.
const MaxTries = 4

// Outage defaults (Options.OutageBackoff, OutageLimit).
const (
	DefaultOutageBackoff = 2 * time.Second
	DefaultOutageLimit   = 2 * time.Hour
)

// ErrOutage is a step stopped because its engine stayed unreachable past
// Options.OutageLimit: not saved, its finished rollouts kept, retried by
// requesting it again (HTTP 503, retriable).
var ErrOutage = errors.New("trainer: the engine is unreachable")

// ErrPredecessor is a step whose predecessor failed after it was queued
// (retriable: request the predecessor, then it, again).
var ErrPredecessor = errors.New("trainer: the step before failed")

// OutageError is a rollout the engine's outage stopped (model.IsOutage
// after the client's retries): it is no verdict and no try of the slot's;
// the slot runs again when the engine answers.
type OutageError struct {
	Engine string
	Err    error
}

func (e *OutageError) Error() string {
	return fmt.Sprintf("engine %s is unreachable: %v (the step goes on when it answers)", e.Engine, e.Err)
}
func (e *OutageError) Unwrap() error { return e.Err }

// group is one task's rollouts in a running batch.
type group struct {
	index     int
	ref       taskRef
	g         *rl.Group
	results   map[int]*RolloutResult
	cancels   map[int]context.CancelFunc
	cancelled map[int]bool
	abandoned string // "infra" or "setup"
	why       string
	kappa     float64
	tries     int // reruns after infrastructure failures
}

func (g *group) decided() bool { return g.abandoned != "" || g.g.State() != rl.Running }

// State is the scheduler's state after a step: each task's kappa.
type State struct {
	Version int                `json:"version"`
	Step    int                `json:"step"`
	Kappa   map[string]float64 `json:"kappa"`
}

// loadState reads the latest saved state of a step before step (kappa 1
// for every task when there is none).
func (s *Service) loadState(step int) (*State, error) {
	names, err := filepath.Glob(filepath.Join(s.dir, "state", "step-*.json"))
	if err != nil {
		return nil, err
	}
	best := 0
	for _, n := range names {
		k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "step-"), ".json"))
		if err == nil && k < step && k > best {
			best = k
		}
	}
	st := &State{Version: SchemaVersion, Kappa: map[string]float64{}}
	if best == 0 {
		return st, nil
	}
	data, err := os.ReadFile(s.statePath(best))
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(data, st); err != nil {
		return nil, fmt.Errorf("trainer: %s: %w", s.statePath(best), err)
	}
	if st.Version != SchemaVersion {
		return nil, fmt.Errorf("trainer: %s: state version %d, this build reads %d", s.statePath(best), st.Version, SchemaVersion)
	}
	if st.Kappa == nil {
		st.Kappa = map[string]float64{}
	}
	return st, nil
}

func (s *Service) statePath(step int) string {
	return filepath.Join(s.dir, "state", batchID(step)+".json")
}

// NeverSavedError is a state asked for after a step that was never saved.
type NeverSavedError struct{ Step, Last int }

func (e *NeverSavedError) Error() string {
	if e.Last == 0 {
		return fmt.Sprintf("step %d was never saved: no step is yet (step=0 is the state every run starts from)", e.Step)
	}
	return fmt.Sprintf("step %d was never saved: the last saved step is %d", e.Step, e.Last)
}

// LoadState is the scheduler state saved after step (step 0: the state a
// run starts from, every kappa 1); a step never saved is a
// *NeverSavedError.
func (s *Service) LoadState(step int) (*State, error) {
	if step > 0 {
		if _, err := os.Stat(s.statePath(step)); errors.Is(err, os.ErrNotExist) {
			last := 0
			if steps, err := savedSteps(filepath.Join(s.dir, "state")); err == nil && len(steps) > 0 {
				last = steps[len(steps)-1]
			}
			return nil, &NeverSavedError{Step: step, Last: last}
		}
	}
	return s.loadState(step + 1)
}

// compute runs one step: sample tasks, run the adaptive scheduler over
// instances, select, compute advantages, build the samples; then save
// the batch and the state. Rollouts finished before (by a service that
// stopped, or before an outage failed the step) are read back, not run
// again.
func (s *Service) compute(ctx context.Context, p *pending) (*Batch, error) {
	start := time.Now()
	req := p.req
	if req.Step > 1 && !s.opts.AllowGaps {
		// Its predecessor failed after it was queued: computing this one
		// now would fork the kappa history.
		if _, err := os.Stat(s.statePath(req.Step - 1)); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("%w: step %d has no saved state: request step %d again first, then this one", ErrPredecessor, req.Step-1, req.Step-1)
		}
	}
	st, err := s.loadState(req.Step)
	if err != nil {
		return nil, err
	}
	cands, err := s.candidates(req)
	if err != nil {
		return nil, err
	}
	if err := s.openRolloutsDir(req); err != nil {
		return nil, err
	}
	cfg := rl.Config{G: req.G}
	var groups []*group
	next := 0 // the next candidate to sample
	addGroup := func() {
		ref := cands[next]
		next++
		k := st.Kappa[ref.id]
		if k == 0 {
			k = 1
		}
		groups = append(groups, &group{index: len(groups), ref: ref, g: rl.NewGroup(cfg, k), results: map[int]*RolloutResult{},
			cancels: map[int]context.CancelFunc{}, cancelled: map[int]bool{}, kappa: k})
	}
	for range req.Tasks {
		addGroup()
	}
	batch := &Batch{Version: SchemaVersion, ID: batchID(req.Step), Step: req.Step, Status: StatusDone, Request: req}
	batch.Stats.Staleness = p.staleness

	type slotJob struct{ g, slot, try int }
	var (
		mu      sync.Mutex
		cond    = sync.NewCond(&mu)
		queue   []slotJob
		fatal   error
		sched   time.Duration
		outages int       // consecutive outages
		since   time.Time // the outage's start
	)
	launch := func(g *group, from int) {
		for slot := from; slot < g.g.Launched(); slot++ {
			queue = append(queue, slotJob{g.index, slot, 0})
		}
	}
	for _, g := range groups {
		launch(g, 0)
	}
	s.mu.Lock()
	p.progress = Progress{Groups: len(groups), Launched: len(queue)}
	s.mu.Unlock()
	allDecided := func() bool {
		for _, g := range groups {
			if !g.decided() {
				return false
			}
		}
		return true
	}
	// fill samples further tasks while fewer than Tasks groups are ready
	// or undecided (Request.Fill).
	fill := func() {
		if req.Fill != FillReady {
			return
		}
		for next < len(cands) {
			live := 0
			for _, g := range groups {
				if !g.decided() || (g.abandoned == "" && g.g.State() == rl.Ready) {
					live++
				}
			}
			if live >= req.Tasks {
				return
			}
			addGroup()
			batch.Stats.Filled++
			launch(groups[len(groups)-1], 0)
		}
	}
	cancelGroup := func(g *group, slots []int) {
		for _, sl := range slots {
			g.cancelled[sl] = true
			if c := g.cancels[sl]; c != nil {
				c()
			}
		}
	}
	// fail ends the step on an error: every running rollout is cancelled.
	fail := func(err error) {
		if fatal == nil {
			fatal = err
		}
		for _, g := range groups {
			for _, c := range g.cancels {
				c()
			}
		}
	}
	abandon := func(g *group, why, msg string) {
		g.abandoned, g.why = why, msg
		var left []int
		for sl := range g.g.Launched() {
			if g.results[sl] == nil {
				left = append(left, sl)
			}
		}
		cancelGroup(g, left)
	}
	var wg sync.WaitGroup
	for range s.opts.Parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			mu.Lock()
			defer mu.Unlock()
			for {
				for len(queue) == 0 && fatal == nil && !allDecided() {
					cond.Wait()
				}
				if fatal != nil || (len(queue) == 0 && allDecided()) {
					return
				}
				j := queue[0]
				queue = queue[1:]
				g := groups[j.g]
				if g.decided() || g.cancelled[j.slot] {
					batch.Stats.Cancelled++
					continue
				}
				jctx, cancel := context.WithCancel(ctx)
				g.cancels[j.slot] = cancel
				mu.Unlock()
				id := fmt.Sprintf("s%06d-g%02d-r%02d", req.Step, g.index, j.slot)
				if j.try > 0 {
					id += fmt.Sprintf("-t%d", j.try)
				}
				res, reused := s.loadResult(req.Step, id, g.ref.id)
				var err error
				if res == nil {
					res, err = s.Rollout(jctx, RolloutJob{Step: req.Step, TaskID: g.ref.id, Group: g.index, Slot: j.slot,
						RolloutID: id, Request: req, Try: j.try})
					if err == nil {
						if serr := s.saveResult(req.Step, res); serr != nil {
							err = fmt.Errorf("keep the rollout: %w", serr)
						}
					}
				}
				cancel()
				mu.Lock()
				delete(g.cancels, j.slot)
				t0 := time.Now()
				if reused {
					batch.Stats.Reused++
				}
				var outage *OutageError
				isOutage := errors.As(err, &outage) && ctx.Err() == nil
				if !isOutage && outages > 0 {
					// Anything but the outage again: the engine answers.
					outages = 0
					s.mu.Lock()
					p.outage = ""
					s.mu.Unlock()
				}
				switch {
				case err != nil && (g.cancelled[j.slot] || g.abandoned != "") && ctx.Err() == nil:
					batch.Stats.Cancelled++
				case isOutage:
					// The engine is out: the slot waits for it and runs
					// again, as the same try; no verdict is taken.
					batch.Stats.Outages++
					if outages == 0 {
						since = time.Now()
					}
					outages++
					limit := cmp.Or(s.opts.OutageLimit, DefaultOutageLimit)
					if time.Since(since) > limit {
						fail(fmt.Errorf("%w for %s (more than %s): %w", ErrOutage, time.Since(since).Round(time.Second), limit, outage.Err))
						break
					}
					s.mu.Lock()
					p.outage = outage.Error()
					s.mu.Unlock()
					queue = append([]slotJob{j}, queue...)
					wait := min(time.Minute, cmp.Or(s.opts.OutageBackoff, DefaultOutageBackoff)<<min(outages-1, 10))
					mu.Unlock()
					select {
					case <-time.After(wait):
					case <-ctx.Done():
					}
					mu.Lock()
				case err != nil:
					fail(fmt.Errorf("task %s slot %d: %w", g.ref.id, j.slot, err))
				case res.Failure == agent.FailInfra && j.try+1 < MaxTries && !g.decided():
					batch.Stats.Retried++
					g.tries++
					queue = append([]slotJob{{j.g, j.slot, j.try + 1}}, queue...)
				case res.Failure == agent.FailInfra || res.Failure == agent.FailSetup:
					if !g.decided() {
						abandon(g, res.Failure, res.Error)
						fill()
					}
				default:
					batch.Stats.Rollouts++
					batch.Stats.RolloutMS += res.WallMS
					if res.V {
						batch.Stats.Succeeded++
					}
					if g.decided() {
						break
					}
					act, rerr := g.g.Record(j.slot, rl.Outcome{Reward: res.Reward, FormatFailure: res.FormatFailure})
					if rerr != nil {
						fail(rerr)
						break
					}
					if !act.Dropped {
						g.results[j.slot] = res
					}
					launch(g, g.g.Launched()-act.Launch)
					cancelGroup(g, act.Cancel)
					if g.decided() {
						if s.opts.Progress != nil {
							s.opts.Progress("step %d: %s %s after %d rollouts", req.Step, g.ref.id, g.g.State(), len(g.g.Pool()))
						}
						fill()
					}
				}
				s.mu.Lock()
				p.progress.Groups = len(groups)
				p.progress.Rollouts = batch.Stats.Rollouts
				p.progress.Cancelled = batch.Stats.Cancelled
				p.progress.Launched = 0
				p.progress.Decided = 0
				for _, g := range groups {
					p.progress.Launched += g.g.Launched()
					if g.decided() {
						p.progress.Decided++
					}
				}
				s.mu.Unlock()
				sched += time.Since(t0)
				cond.Broadcast()
			}
		}()
	}
	wg.Wait()
	if fatal != nil {
		return nil, fatal
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}

	t0 := time.Now()
	ready := 0
	for _, g := range groups {
		if g.abandoned == "" && g.g.State() == rl.Ready {
			ready++
		}
	}
	nextState := &State{Version: SchemaVersion, Step: req.Step, Kappa: map[string]float64{}}
	for id, k := range st.Kappa {
		nextState.Kappa[id] = k
	}
	for _, g := range groups {
		rep := GroupReport{Index: g.index, TaskID: g.ref.id, Kappa: g.kappa, NextKappa: g.kappa, Launched: g.g.Launched(), Cancelled: len(g.cancelled), Why: g.why, Tries: g.tries}
		if g.abandoned != "" {
			rep.State = g.abandoned
			batch.Stats.Abandoned++
			batch.Groups = append(batch.Groups, rep)
			continue
		}
		rep.State = g.g.State().String()
		rep.NextKappa = g.g.NextKappa()
		nextState.Kappa[g.ref.id] = rep.NextKappa
		slots, outs := g.g.Pool(), g.g.Outcomes()
		adv, mu, sigma := rl.Advantages(outs)
		rep.K, rep.Mu, rep.Sigma, rep.Slots = len(slots), mu, sigma, slots
		for i, o := range outs {
			rep.Rewards = append(rep.Rewards, o.Reward)
			if g.results[slots[i]].V {
				rep.Successes++
			}
		}
		switch g.g.State() {
		case rl.Mastered:
			batch.Stats.Mastered++
		case rl.Exhausted:
			batch.Stats.Exhausted++
		case rl.Ready:
			batch.Stats.Ready++
			sel := g.g.Select(rngOf(req.Seed, "select", req.Step, g.index))
			for ti, i := range sel {
				rep.Selected = append(rep.Selected, slots[i])
				res := g.results[slots[i]]
				smp, breaks := samples(res, len(sel), ready)
				batch.Stats.PrefixBreaks += breaks
				for k := range smp {
					smp[k].Step, smp[k].TaskID, smp[k].GroupIndex, smp[k].TrajectoryIndex, smp[k].Slot = req.Step, g.ref.id, g.index, ti, slots[i]
					smp[k].Advantage, smp[k].K, smp[k].Mu, smp[k].Sigma, smp[k].Kappa = adv[i], len(slots), mu, sigma, g.kappa
					if len(smp[k].ResponseTokenIDs) > 0 {
						batch.Tokens = true
					}
				}
				batch.Samples = append(batch.Samples, smp...)
			}
		}
		batch.Groups = append(batch.Groups, rep)
	}
	batch.Stats.SchedulerMS = float64((sched + time.Since(t0)).Microseconds()) / 1000
	batch.Stats.WallMS = msSince(start)
	if p.ahead {
		batch.Prefetched = true
	}
	// The batch first, then the state: a state never runs ahead of a
	// batch a trainer could ask for again.
	if err := saveJSON(s.batchPath(req.Step), batch); err != nil {
		return nil, err
	}
	if err := saveJSON(s.statePath(req.Step), nextState); err != nil {
		return nil, err
	}
	return batch, nil
}

// openRolloutsDir readies STATE/rollouts/step-N for req: the rollouts a
// computation of the same request finished are kept to read back; those
// of another request for the step (one that failed) are removed.
func (s *Service) openRolloutsDir(req Request) error {
	dir := filepath.Join(s.dir, "rollouts", batchID(req.Step))
	reqPath := filepath.Join(dir, "request.json")
	var was Request
	if data, err := os.ReadFile(reqPath); err == nil && json.Unmarshal(data, &was) == nil && sameRequest(was, req) {
		return nil
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return saveJSON(reqPath, req)
}

// saveResult keeps a finished rollout in STATE/rollouts/step-N/: its
// trajectory as ID.json, the rest as ID.result.json (written last, so a
// result on disk always has its trajectory). A failure to keep it fails
// the step.
func (s *Service) saveResult(step int, res *RolloutResult) error {
	if res == nil {
		return nil
	}
	if err := s.saveTrajectory(step, res); err != nil {
		return err
	}
	cp := *res
	cp.Trajectory = nil
	return saveJSON(filepath.Join(s.dir, "rollouts", batchID(step), res.RolloutID+".result.json"), &cp)
}

// loadResult reads back a rollout saveResult kept for task (nil when
// there is none, it does not read, or it is another task's: it then runs
// again).
func (s *Service) loadResult(step int, id, task string) (*RolloutResult, bool) {
	dir := filepath.Join(s.dir, "rollouts", batchID(step))
	data, err := os.ReadFile(filepath.Join(dir, id+".result.json"))
	if err != nil {
		return nil, false
	}
	var res RolloutResult
	if json.Unmarshal(data, &res) != nil || res.RolloutID != id {
		return nil, false
	}
	tr, err := agent.LoadTrajectory(filepath.Join(dir, id+".json"))
	if err != nil || tr.TaskID != task {
		return nil, false
	}
	res.Trajectory = tr
	return &res, true
}

// saveTrajectory keeps a finished rollout's trajectory in
// rl/rollouts/step-N/ (a failure to keep it fails the step).
func (s *Service) saveTrajectory(step int, res *RolloutResult) error {
	if res == nil || res.Trajectory == nil {
		return nil
	}
	dir := filepath.Join(s.dir, "rollouts", batchID(step))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return res.Trajectory.Save(filepath.Join(dir, res.RolloutID+".json"))
}

// samples are one rollout's segment samples, with the fields that depend
// on the rollout alone: groups is the step's ready groups and g the
// group's selected rollouts, for the loss weight. breaks counts the
// segments that started because a turn's prompt did not extend the
// tokens held (the chat template re-rendered the past), not at a
// compaction.
func samples(res *RolloutResult, g, groups int) (out []Sample, breaks int) {
	tr := res.Trajectory
	compacted := map[int]bool{}
	for _, sg := range tr.Segments {
		if sg.Reason == "compaction" {
			compacted[sg.FirstTurn] = true
		}
	}
	var turns []rl.Turn
	var meta []agent.Turn
	for _, t := range tr.Turns {
		if len(t.PromptTokenIDs) == 0 && len(t.CompletionTokenIDs) == 0 {
			continue
		}
		turns = append(turns, rl.Turn{PromptIDs: t.PromptTokenIDs, ResponseIDs: t.CompletionTokenIDs, Logprobs: t.Logprobs,
			Compacted: compacted[t.Index]})
		meta = append(meta, t)
	}
	segs := rl.Segments(turns, res.FormatFailure)
	breaks = rl.PrefixBreaks(segs)
	l := rl.Trainable(segs)
	base := Sample{Version: SchemaVersion, RolloutID: res.RolloutID, Status: res.Outcome, Policy: res.Policy, Reward: res.Reward,
		FormatFailure: res.FormatFailure, V: res.V, Checklist: res.Checklist, TrajectoryTrainableTokens: l,
		LossWeight: rl.TokenWeight(l, g, groups)}
	if len(segs) == 0 {
		// No token ids (a scripted policy): one sample with empty tokens.
		smp := base
		smp.SegmentCount = 1
		smp.PromptTokenIDs, smp.ResponseTokenIDs, smp.LossMask, smp.RolloutLogprobs = []int{}, []int{}, []int{}, []float64{}
		smp.WeightVersions = []string{}
		if n := len(tr.Turns); n > 0 {
			smp.FinishReason = tr.Turns[n-1].FinishReason
		}
		return []Sample{smp}, 0
	}
	out = make([]Sample, len(segs))
	for i, sg := range segs {
		smp := base
		smp.SegmentIndex, smp.SegmentCount = i, len(segs)
		smp.PromptTokenIDs, smp.ResponseTokenIDs, smp.LossMask, smp.RolloutLogprobs = sg.PromptIDs, sg.ResponseIDs, sg.LossMask, sg.Logprobs
		smp.WeightVersions = []string{}
		for _, t := range meta[sg.FirstTurn : sg.FirstTurn+sg.Turns] {
			if t.WeightVersion != "" && !slices.Contains(smp.WeightVersions, t.WeightVersion) {
				smp.WeightVersions = append(smp.WeightVersions, t.WeightVersion)
			}
		}
		smp.FinishReason = meta[sg.FirstTurn+sg.Turns-1].FinishReason
		out[i] = smp
	}
	return out, breaks
}

// Steps lists the steps whose batches are saved, ascending.
func (s *Service) Steps() ([]int, error) { return savedSteps(filepath.Join(s.dir, "batches")) }

func savedSteps(dir string) ([]int, error) {
	names, err := filepath.Glob(filepath.Join(dir, "step-*.json"))
	if err != nil {
		return nil, err
	}
	var out []int
	for _, n := range names {
		k, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(filepath.Base(n), "step-"), ".json"))
		if err == nil {
			out = append(out, k)
		}
	}
	sort.Ints(out)
	return out, nil
}
