package trainer

import (
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
	pol, err := s.policy(ref, job)
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

// policy builds the job's policy: a model through the harness at the
// request's engine, or an offline policy of the registry.
func (s *Service) policy(ref taskRef, job RolloutJob) (rollout.Policy, error) {
	req := job.Request
	seed := seedOf(req.Seed, "rollout", job.Step, job.TaskID, job.Slot, job.Try)
	if req.Policy != "" {
		f := s.opts.Policies[req.Policy]
		if f == nil {
			return nil, fmt.Errorf("policy: %q is not an offline policy of this service", req.Policy)
		}
		return f(ref.task, job.Slot, seed, req.PolicyParams)
	}
	client, spec, err := s.client(req.Engine)
	if err != nil {
		return nil, err
	}
	h := &agent.Harness{Model: client, ModelName: spec.Model, TokenIDs: true, WeightVersion: req.PolicyVersion,
		Temperature: req.Sampling.Temperature, TopP: req.Sampling.TopP, MaxTokens: req.Sampling.MaxTokens,
		ContextTokens: req.Sampling.ContextTokens, MaxTurns: req.Sampling.MaxTurns}
	if req.Sampling.Seed != nil {
		// A seed of its own per step, group, slot and try: a retried slot
		// or the next step does not replay the same draw.
		sd := int64(seedOf(uint64(*req.Sampling.Seed), "sampling", job.Step, job.Group, job.Slot, job.Try) >> 1)
		h.Seed = &sd
	}
	return policy.Model{Harness: h}, nil
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
// infrastructure fails in every attempt (each run itself tries
// rollout.MaxAttempts fresh instances); then the group is abandoned.
const MaxTries = 2

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

// LoadState is the scheduler state saved after step.
func (s *Service) LoadState(step int) (*State, error) { return s.loadState(step + 1) }

// compute runs one step: sample tasks, run the adaptive scheduler over
// instances, select, compute advantages, build the samples; then save
// the batch and the state.
func (s *Service) compute(ctx context.Context, p *pending) (*Batch, error) {
	start := time.Now()
	req := p.req
	st, err := s.loadState(req.Step)
	if err != nil {
		return nil, err
	}
	cfg := rl.Config{G: req.G}
	perm := rngOf(req.Seed, "tasks", req.Step).Perm(len(s.tasks))
	var groups []*group
	for i, ti := range perm[:req.Tasks] {
		ref := s.tasks[ti]
		k := st.Kappa[ref.id]
		if k == 0 {
			k = 1
		}
		groups = append(groups, &group{index: i, ref: ref, g: rl.NewGroup(cfg, k), results: map[int]*RolloutResult{},
			cancels: map[int]context.CancelFunc{}, cancelled: map[int]bool{}, kappa: k})
	}
	batch := &Batch{Version: SchemaVersion, ID: batchID(req.Step), Step: req.Step, Status: StatusDone, Request: req}

	type slotJob struct{ g, slot, try int }
	var (
		mu    sync.Mutex
		cond  = sync.NewCond(&mu)
		queue []slotJob
		fatal error
		sched time.Duration
	)
	for _, g := range groups {
		for slot := range g.g.Launched() {
			queue = append(queue, slotJob{g.index, slot, 0})
		}
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
				res, err := s.Rollout(jctx, RolloutJob{Step: req.Step, TaskID: g.ref.id, Group: g.index, Slot: j.slot,
					RolloutID: id, Request: req, Try: j.try})
				cancel()
				if err == nil {
					if serr := s.saveTrajectory(req.Step, res); serr != nil {
						err = fmt.Errorf("keep the trajectory: %w", serr)
					}
				}
				mu.Lock()
				delete(g.cancels, j.slot)
				t0 := time.Now()
				switch {
				case err != nil && (g.cancelled[j.slot] || g.abandoned != "") && ctx.Err() == nil:
					batch.Stats.Cancelled++
				case err != nil:
					fail(fmt.Errorf("task %s slot %d: %w", g.ref.id, j.slot, err))
				case res.Failure == agent.FailInfra && j.try+1 < MaxTries && !g.decided():
					batch.Stats.Retried++
					queue = append([]slotJob{{j.g, j.slot, j.try + 1}}, queue...)
				case res.Failure == agent.FailInfra || res.Failure == agent.FailSetup:
					if !g.decided() {
						g.abandoned, g.why = res.Failure, res.Error
						var left []int
						for sl := range g.g.Launched() {
							if g.results[sl] == nil {
								left = append(left, sl)
							}
						}
						cancelGroup(g, left)
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
					for sl := g.g.Launched() - act.Launch; sl < g.g.Launched(); sl++ {
						queue = append(queue, slotJob{g.index, sl, 0})
					}
					cancelGroup(g, act.Cancel)
					if g.decided() && s.opts.Progress != nil {
						s.opts.Progress("step %d: %s %s after %d rollouts", req.Step, g.ref.id, g.g.State(), len(g.g.Pool()))
					}
				}
				s.mu.Lock()
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
	next := &State{Version: SchemaVersion, Step: req.Step, Kappa: map[string]float64{}}
	for id, k := range st.Kappa {
		next.Kappa[id] = k
	}
	for _, g := range groups {
		rep := GroupReport{Index: g.index, TaskID: g.ref.id, Kappa: g.kappa, NextKappa: g.kappa, Launched: g.g.Launched(), Cancelled: len(g.cancelled), Why: g.why}
		if g.abandoned != "" {
			rep.State = g.abandoned
			batch.Stats.Abandoned++
			batch.Groups = append(batch.Groups, rep)
			continue
		}
		rep.State = g.g.State().String()
		rep.NextKappa = g.g.NextKappa()
		next.Kappa[g.ref.id] = rep.NextKappa
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
				smp := samples(res, len(sel), ready)
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
	// The batch first, then the state: a state never runs ahead of a
	// batch a trainer could ask for again.
	if err := saveJSON(s.batchPath(req.Step), batch); err != nil {
		return nil, err
	}
	if err := saveJSON(s.statePath(req.Step), next); err != nil {
		return nil, err
	}
	return batch, nil
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
// group's selected rollouts, for the loss weight.
func samples(res *RolloutResult, g, groups int) []Sample {
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
		return []Sample{smp}
	}
	out := make([]Sample, len(segs))
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
	return out
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
