package trainer

import (
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wildawm/wildawm/internal/model"
)

// SchemaVersion is the version of the batch and segment-sample formats
// (docs/segment.md). A change a reader must know about increments it.
const SchemaVersion = 1

// Request is a trainer's request for one train step's batch
// (POST /v1/batches).
type Request struct {
	// Step is the train step, from 1. A step's batch is computed once: a
	// repeated request for it returns the same batch.
	Step int `json:"step"`
	// Tasks is how many tasks of the RL split the step samples (with
	// TaskIDs, 0 means all of them).
	Tasks int `json:"tasks"`
	// TaskIDs names the step's tasks, in order, for a curriculum or an
	// outside data loader; TaskFilter (a path.Match glob over task ids)
	// narrows the split the step samples from. Neither: the service
	// samples from the whole split.
	TaskIDs    []string `json:"task_ids,omitempty"`
	TaskFilter string   `json:"task_filter,omitempty"`
	// Fill is what the step does when groups are dropped (mastered,
	// exhausted, abandoned): FillDrop (the default) returns the ready
	// groups of the tasks sampled, fewer than Tasks; FillReady samples
	// further tasks until Tasks groups are ready or the candidates run out
	// (Stats.Filled counts them).
	Fill string `json:"fill,omitempty"`
	// MaxStaleness, when above 0, lets the service compute up to that many
	// steps ahead of the last one requested, with this request's
	// parameters, while the trainer trains: the rollouts of a prefetched
	// step are sampled with weights up to MaxStaleness versions older than
	// the trainer's when it asks (Stats.Staleness). 0: strictly
	// alternating steps.
	MaxStaleness int `json:"max_staleness,omitempty"`
	// G is the base rollouts per task and the rollouts returned per ready
	// task (default 4).
	G int `json:"g,omitempty"`
	// Engine is the inference engine the harness calls, [ENGINE+]URL#MODEL
	// as docs/models.md (sglang+http://127.0.0.1:30000/v1#qwen3-8b): the
	// trainer's own rollout engine. Empty with Policy set runs an offline
	// policy instead.
	Engine string `json:"engine,omitempty"`
	// Harness is the harness the model acts through (default "wildawm").
	Harness  string   `json:"harness,omitempty"`
	Sampling Sampling `json:"sampling,omitzero"`
	// PolicyVersion is the version of the policy weights the engine serves;
	// each turn records it unless the engine says its own.
	PolicyVersion string `json:"policy_version,omitempty"`
	// Policy names an offline policy of the service's registry instead of
	// a model ("scripted:replay-ensemble", "learned:softmax"); PolicyParams
	// are its parameters.
	Policy       string          `json:"policy,omitempty"`
	PolicyParams json.RawMessage `json:"policy_params,omitempty"`
	// Seed seeds which tasks the step samples, the G-subsets and the
	// offline policies' draws (default 1).
	Seed uint64 `json:"seed,omitempty"`
}

// Sampling are the engine's sampling parameters.
type Sampling struct {
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	// MaxTokens bounds each completion (the harness's default when 0).
	MaxTokens int `json:"max_tokens,omitempty"`
	// Seed, when set, seeds the engine's sampling: each rollout gets a seed
	// of its own, derived from Seed, the step, its group, slot and try.
	Seed *int64 `json:"seed,omitempty"`
	// ContextTokens is the context budget before compaction (the harness's
	// default when 0); MaxTurns bounds a rollout's turns.
	ContextTokens int `json:"context_tokens,omitempty"`
	MaxTurns      int `json:"max_turns,omitempty"`
	// TokenInTokenOut makes the harness hold the token sequence itself:
	// it sends the engine prompt token ids and appends each completion's
	// ids and the engine's tokenization of the new messages, so a segment
	// is one causal chain whatever the chat template does (vLLM, SGLang;
	// docs/harness.md). Off: messages are sent and a template that
	// re-renders the past breaks segments (Stats.PrefixBreaks).
	TokenInTokenOut bool `json:"token_in_token_out,omitempty"`
}

// Fill policies.
const (
	FillDrop  = "drop"
	FillReady = "ready"
)

// MaxStaleness bounds Request.MaxStaleness.
const MaxStaleness = 8

// MaxG bounds G: kappa_max*G rollouts of one task is the most a step runs.
const MaxG = 64

// The bounds of a request's other numbers (docs/segment.md): a train step
// keeps the six digits of its batch id; the sampling parameters stay
// within what any engine serves.
const (
	MaxStep           = 999_999
	MaxTemperature    = 100
	MaxSamplingTokens = 1 << 22 // max_tokens and context_tokens
	MaxTurns          = 100_000
	MaxPolicyVersion  = 256 // bytes
)

// Validate checks a request; the error names the field and the fix.
func (r *Request) Validate() error {
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", field, fmt.Sprintf(format, args...)))
	}
	if r.Step < 1 || r.Step > MaxStep {
		bad("step", "%d: give a train step 1..%d (steps count from 1)", r.Step, MaxStep)
	}
	switch {
	case len(r.TaskIDs) > 0 && r.Tasks != 0 && r.Tasks != len(r.TaskIDs):
		bad("tasks", "%d with %d task_ids: leave tasks out (or give %d) when naming the tasks", r.Tasks, len(r.TaskIDs), len(r.TaskIDs))
	case len(r.TaskIDs) == 0 && r.Tasks < 1:
		bad("tasks", "%d: ask for at least one task per step (the paper uses 8), or name them in task_ids", r.Tasks)
	}
	seen := map[string]bool{}
	for i, id := range r.TaskIDs {
		if id == "" || seen[id] {
			bad(fmt.Sprintf("task_ids[%d]", i), "%q: name each task once, by its pool id", id)
		}
		seen[id] = true
	}
	if r.TaskFilter != "" {
		if len(r.TaskIDs) > 0 {
			bad("task_filter", "%q with task_ids: give one", r.TaskFilter)
		} else if _, err := path.Match(r.TaskFilter, ""); err != nil {
			bad("task_filter", "%q: not a glob (path.Match: %v): e.g. \"shop-*\"", r.TaskFilter, err)
		}
	}
	if r.Fill != "" && r.Fill != FillDrop && r.Fill != FillReady {
		bad("fill", "%q: give %q (return the ready groups of the tasks sampled) or %q (sample more tasks until tasks groups are ready)", r.Fill, FillDrop, FillReady)
	}
	if r.Fill == FillReady && len(r.TaskIDs) > 0 {
		bad("fill", "%q with task_ids: the step's tasks are named, there are none to fill with; leave fill out or give task_filter", r.Fill)
	}
	if r.MaxStaleness > 0 && len(r.TaskIDs) > 0 {
		bad("max_staleness", "%d with task_ids: a step computed ahead would repeat this step's tasks; name each step's tasks without max_staleness, or give task_filter", r.MaxStaleness)
	}
	if r.MaxStaleness < 0 || r.MaxStaleness > MaxStaleness {
		bad("max_staleness", "%d: give 0 (strictly alternating steps) to %d policy versions", r.MaxStaleness, MaxStaleness)
	}
	if r.G < 0 || r.G > MaxG {
		bad("g", "%d: give 1..%d (the paper uses 4), or leave it out for 4", r.G, MaxG)
	}
	switch {
	case r.Engine == "" && r.Policy == "":
		bad("engine", "empty: give the inference engine as [ENGINE+]URL#MODEL (sglang+http://127.0.0.1:30000/v1#qwen3-8b), or an offline \"policy\"")
	case r.Engine != "" && r.Policy != "":
		bad("policy", "%q with an engine: give one (a model acts through the engine, or an offline policy does)", r.Policy)
	case r.Engine != "":
		if spec, err := model.ParseSpec(r.Engine); err != nil {
			bad("engine", "%v", err)
		} else if err := spec.Engine.Trainable(); err != nil {
			bad("engine", "%v", err)
		} else if r.Sampling.TokenInTokenOut {
			if err := spec.Engine.TokenMode(); err != nil {
				bad("sampling.token_in_token_out", "%v", err)
			}
		}
	}
	if r.Policy != "" && (r.Harness != "" || r.PolicyVersion != "" || r.Sampling != (Sampling{})) {
		bad("policy", "%q with harness, policy_version or sampling: those are the engine's; an offline policy takes policy_params only", r.Policy)
	}
	if len(r.PolicyParams) > 0 && r.Policy == "" {
		bad("policy_params", "set without a policy: name the offline policy they are for")
	}
	if len(r.PolicyParams) > 0 && !json.Valid(r.PolicyParams) {
		bad("policy_params", "not valid JSON")
	}
	s := r.Sampling
	if t := s.Temperature; t != nil && !(*t >= 0 && *t <= MaxTemperature) {
		bad("sampling.temperature", "%v: give a temperature 0..%d", *t, MaxTemperature)
	}
	if p := s.TopP; p != nil && (!(*p > 0) || *p > 1) {
		bad("sampling.top_p", "%v: give 0 < top_p <= 1", *p)
	}
	if s.MaxTokens < 0 || s.MaxTokens > MaxSamplingTokens {
		bad("sampling.max_tokens", "%d: give 1..%d, or leave it out for the harness's default", s.MaxTokens, MaxSamplingTokens)
	}
	if s.ContextTokens < 0 || s.ContextTokens > MaxSamplingTokens {
		bad("sampling.context_tokens", "%d: give 1..%d, or leave it out for the harness's default", s.ContextTokens, MaxSamplingTokens)
	}
	if s.MaxTurns < 0 || s.MaxTurns > MaxTurns {
		bad("sampling.max_turns", "%d: give 1..%d, or leave it out for the harness's default", s.MaxTurns, MaxTurns)
	}
	if s.ContextTokens > 0 && s.MaxTokens >= s.ContextTokens {
		bad("sampling.max_tokens", "%d is not below context_tokens %d: a completion must fit in the context", s.MaxTokens, s.ContextTokens)
	}
	if strings.ContainsAny(r.PolicyVersion, "\n\x00") || len(r.PolicyVersion) > MaxPolicyVersion {
		bad("policy_version", "must be one line of at most %d bytes", MaxPolicyVersion)
	}
	return errors.Join(errs...)
}

// withDefaults fills the defaults of a valid request.
func (r Request) withDefaults() Request {
	if r.G == 0 {
		r.G = 4
	}
	if r.Seed == 0 {
		r.Seed = 1
	}
	if r.Tasks == 0 {
		r.Tasks = len(r.TaskIDs)
	}
	if r.Fill == "" {
		r.Fill = FillDrop
	}
	return r
}

// Batch is one step's result: the ready tasks' selected rollouts as
// segment samples, and what the scheduler did with every task.
type Batch struct {
	Version int    `json:"version"`
	ID      string `json:"id"`
	Step    int    `json:"step"`
	// Status is "running" while the batch is computed, then "done" or
	// "failed" (Error says why).
	Status  string        `json:"status"`
	Error   string        `json:"error,omitempty"`
	Request Request       `json:"request"`
	Groups  []GroupReport `json:"groups"`
	// Samples are the ready groups' G selected rollouts, segment by
	// segment, group by group.
	Samples []Sample `json:"samples"`
	// Tokens says whether the samples carry token ids: a scripted policy's
	// rollouts have none, and a trainer must not train on them.
	Tokens bool  `json:"tokens"`
	Stats  Stats `json:"stats"`
	// Prefetched says the service computed the step ahead of the
	// trainer's request (Request.MaxStaleness): Request is the one it
	// computed with.
	Prefetched bool `json:"prefetched,omitempty"`
}

// Batch statuses.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
)

// GroupReport is one sampled task's group in the step.
type GroupReport struct {
	Index  int    `json:"index"`
	TaskID string `json:"task_id"`
	// State is "ready" (its G selected rollouts are in Samples),
	// "mastered" or "exhausted" (dropped from the step, as the paper), or
	// "infra"/"setup" (abandoned: the instances or the task's world failed;
	// kappa unchanged).
	State string `json:"state"`
	Why   string `json:"why,omitempty"`
	// Kappa is the task's kappa coming in, NextKappa after the step.
	Kappa     float64 `json:"kappa"`
	NextKappa float64 `json:"next_kappa"`
	// Launched and Cancelled count slots; K is the finished pool.
	Launched  int `json:"launched"`
	Cancelled int `json:"cancelled"`
	K         int `json:"k"`
	// Mu and Sigma are the pool's reward mean and population deviation.
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
	// Rewards are the pool's rewards by slot (Slots), Selected the slots
	// chosen.
	Slots    []int     `json:"slots"`
	Rewards  []float64 `json:"rewards"`
	Selected []int     `json:"selected,omitempty"`
	// Successes counts pool rollouts V passed.
	Successes int `json:"successes"`
	// Tries counts the group's reruns of slots after infrastructure
	// failures (each in a fresh instance; MaxTries runs a slot at most).
	Tries int `json:"tries,omitempty"`
}

// Stats are a batch's counts and times.
type Stats struct {
	// Rollouts finished (pool and dropped), Cancelled before or while
	// running, Retried after an infrastructure failure.
	Rollouts  int `json:"rollouts"`
	Cancelled int `json:"cancelled"`
	Retried   int `json:"retried"`
	// Succeeded is how many finished rollouts V passed, over all groups.
	Succeeded int `json:"succeeded"`
	// Ready, Mastered, Exhausted, Abandoned count groups; Filled the
	// groups sampled beyond Tasks to fill dropped ones (Request.Fill).
	Ready     int `json:"ready"`
	Mastered  int `json:"mastered"`
	Exhausted int `json:"exhausted"`
	Abandoned int `json:"abandoned"`
	Filled    int `json:"filled,omitempty"`
	// Reused counts rollouts finished before a restart or an outage and
	// read back rather than run again; Outages the rollouts sent back to
	// the queue because the engine was unreachable (never a try, never a
	// reward).
	Reused  int `json:"reused,omitempty"`
	Outages int `json:"outages,omitempty"`
	// PrefixBreaks counts segments the sample builder started because a
	// turn's prompt did not extend the tokens held so far (the engine's
	// chat template re-rendered the past), not because of compaction.
	PrefixBreaks int `json:"prefix_breaks"`
	// Staleness is how many policy versions the weights that sampled a
	// prefetched step may lag the trainer's (0: computed on request).
	Staleness int `json:"staleness"`
	// WallMS is the batch's wall time; RolloutMS the rollouts' summed
	// wall time; SchedulerMS the time the scheduler itself took (recording
	// outcomes, deciding, selecting, advantages, building samples).
	WallMS      float64 `json:"wall_ms"`
	RolloutMS   float64 `json:"rollout_ms"`
	SchedulerMS float64 `json:"scheduler_ms"`
}

// Sample is one segment of one selected rollout: a training sample
// (docs/segment.md).
type Sample struct {
	Version int    `json:"version"`
	Step    int    `json:"step"`
	TaskID  string `json:"task_id"`
	// GroupIndex is the group's index in the batch; TrajectoryIndex the
	// rollout's index among the group's G selected (0..G-1); RolloutID is
	// unique per trajectory across the run (every segment of a trajectory
	// shares it); Slot its slot in the group.
	GroupIndex      int    `json:"group_index"`
	TrajectoryIndex int    `json:"trajectory_index"`
	RolloutID       string `json:"rollout_id"`
	Slot            int    `json:"slot"`
	// SegmentIndex of SegmentCount segments of the trajectory.
	SegmentIndex int `json:"segment_index"`
	SegmentCount int `json:"segment_count"`
	// PromptTokenIDs is the segment's shared prefix; ResponseTokenIDs all
	// after it, LossMask 1 on the model's tokens and 0 on the tool results
	// and prompts later turns added; RolloutLogprobs the engine's logprob
	// per response token (0 where the mask is 0).
	PromptTokenIDs   []int     `json:"prompt_token_ids"`
	ResponseTokenIDs []int     `json:"response_token_ids"`
	LossMask         []int     `json:"loss_mask"`
	RolloutLogprobs  []float64 `json:"rollout_logprobs"`
	// Status is the rollout's outcome (docs/trajectory.md: done, stopped,
	// gave_up, budget, format_error); FinishReason the segment's last
	// turn's.
	Status       string `json:"status"`
	FinishReason string `json:"finish_reason"`
	// WeightVersions are the weight versions that answered the segment's
	// turns, in order of first use.
	WeightVersions []string `json:"weight_versions"`
	Policy         string   `json:"policy"`
	Reward         float64  `json:"reward"`
	// Advantage is the rollout's, over the group's whole pool of K; every
	// segment carries it.
	Advantage     float64 `json:"advantage"`
	FormatFailure bool    `json:"format_failure"`
	// V is the verifier's verdict; Checklist each criterion's v_i.
	V         bool        `json:"v"`
	Checklist []Criterion `json:"checklist"`
	// TrajectoryTrainableTokens is L_j over all the rollout's segments;
	// LossWeight the weight of each of its trainable tokens,
	// 1/(L_j * G * ready groups) (0 without trainable tokens).
	TrajectoryTrainableTokens int     `json:"trajectory_trainable_tokens"`
	LossWeight                float64 `json:"loss_weight"`
	// The group's K, mu, sigma and kappa (coming in).
	K     int     `json:"k"`
	Mu    float64 `json:"mu"`
	Sigma float64 `json:"sigma"`
	Kappa float64 `json:"kappa"`
}

// Criterion is one checklist item's result.
type Criterion struct {
	ID   string `json:"id"`
	Pass bool   `json:"pass"`
}
