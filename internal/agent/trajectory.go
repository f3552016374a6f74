package agent

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/wildawm/wildawm/internal/world"
)

// TrajectoryVersion is the version of the trajectory format
// (docs/trajectory.md). Version 2 adds model turns with their token ids,
// segments and compactions, the file interface, artifacts, the rollout's
// failure class, and the harness and model that acted.
const TrajectoryVersion = 2

// Interfaces.
const (
	GUI  = "gui"
	MCP  = "mcp"
	CLI  = "cli"
	File = "file"
)

// Failure classes of a rollout that did not succeed. Only FailAgent counts
// as the task's difficulty: an infrastructure, set-up or format failure is
// not evidence about the task (a format failure is the model's, and RL
// punishes it, but the gates do not count it against the task).
const (
	FailInfra  = "infra"  // the harness, the instance, the browser, the model server failed
	FailSetup  = "setup"  // the task's initial world could not be made (a missing snapshot)
	FailFormat = "format" // the model emitted a tool call that cannot be parsed
	FailAgent  = "agent"  // the agent acted and did not solve the task
)

// Step is one tool call.
type Step struct {
	Index       int            `json:"index"`
	Interface   string         `json:"interface"`
	Tool        string         `json:"tool"`
	Args        map[string]any `json:"args,omitempty"`
	Observation string         `json:"observation"`
	Error       string         `json:"error,omitempty"`
	// Artifacts are files the step produced beside the trajectory
	// (screenshots), by path relative to the trajectory's directory.
	Artifacts []string `json:"artifacts,omitempty"`
	// Turn is the model turn that issued the call (Trajectory.Turns, from
	// 1); 0 for a scripted policy's step.
	Turn int `json:"turn,omitempty"`
	// CallID is the model's id of the tool call, when a model issued it.
	CallID     string  `json:"call_id,omitempty"`
	DurationMS float64 `json:"duration_ms"`
}

// Turn is one model request and its response.
type Turn struct {
	Index   int `json:"index"` // from 1
	Segment int `json:"segment"`
	// Kind is "act" (a turn of the rollout) or "compaction" (the request
	// that summarised the segment before a new one starts).
	Kind string `json:"kind"`
	// Messages is how many messages the request held.
	Messages     int        `json:"messages"`
	Content      string     `json:"content,omitempty"`
	Reasoning    string     `json:"reasoning,omitempty"`
	ToolCalls    []TurnCall `json:"tool_calls,omitempty"`
	FinishReason string     `json:"finish_reason"`
	// PromptTokens and CompletionTokens are the server's usage figures.
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	// Token ids and logprobs as the inference engine returned them (vLLM,
	// SGLang); empty when the server returns none.
	PromptTokenIDs     []int     `json:"prompt_token_ids,omitempty"`
	CompletionTokenIDs []int     `json:"completion_token_ids,omitempty"`
	Logprobs           []float64 `json:"logprobs,omitempty"`
	// WeightVersion is the policy weights' version that answered: the
	// server's when it says, else the one the rollout was given.
	WeightVersion string  `json:"weight_version,omitempty"`
	Model         string  `json:"model,omitempty"`
	Attempts      int     `json:"attempts,omitempty"`
	LatencyMS     float64 `json:"latency_ms"`
}

// TurnCall is one tool call of a model turn, as the model wrote it.
type TurnCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Error says why the call could not be parsed (a format failure).
	Error string `json:"error,omitempty"`
}

// Segment is a run of turns whose context grows by appending: a new one
// starts at the rollout's start and after every compaction.
type Segment struct {
	Index     int `json:"index"` // from 0
	FirstTurn int `json:"first_turn"`
	LastTurn  int `json:"last_turn"`
	// Reason is "start" or "compaction".
	Reason string `json:"reason"`
	// Summary is the summary of the earlier segments this one starts from.
	Summary string `json:"summary,omitempty"`
}

// Compaction records the context growing past its budget.
type Compaction struct {
	// AfterTurn is the last act turn of the closed segment; Turn is the
	// summarising request's own turn.
	AfterTurn int `json:"after_turn"`
	Turn      int `json:"turn"`
	// Tokens is the context's size that set it off; Budget the limit.
	Tokens int `json:"tokens"`
	Budget int `json:"budget"`
	// Summary is what the new segment starts from.
	Summary string `json:"summary"`
}

// Trajectory is the record of one rollout.
type Trajectory struct {
	Version int    `json:"version"`
	TaskID  string `json:"task_id"`
	Rollout string `json:"rollout"`
	// Policy says who acted: "scripted:NAME" for a scripted policy (never a
	// model), "model:NAME" for a model through a harness (Harness names it).
	Policy  string `json:"policy"`
	Harness string `json:"harness,omitempty"`
	Model   string `json:"model,omitempty"`
	Hint    bool   `json:"hint"`
	Steps   []Step `json:"steps"`
	// Turns, Segments and Compactions are set when a model acted.
	Turns       []Turn       `json:"turns,omitempty"`
	Segments    []Segment    `json:"segments,omitempty"`
	Compactions []Compaction `json:"compactions,omitempty"`
	Answer      string       `json:"answer"`
	// Outcome is how the policy ended: "done", "stopped" (gave up early),
	// "gave_up" (stopped on an error it could not get past; Error says
	// which), "budget" (ran out of turns or time), "format_error" (a tool
	// call that cannot be parsed), "setup_error" or "infra_error" (the
	// harness failed: not the agent's doing).
	Outcome string `json:"outcome"`
	Error   string `json:"error,omitempty"`
	// Failure is the class of a rollout that did not succeed (FailInfra,
	// FailSetup, FailFormat, FailAgent); empty while it may have. The
	// rollout sets it for what it sees; whoever verifies sets FailAgent
	// on a done rollout the verifier rejects (Classify).
	Failure string `json:"failure,omitempty"`
	// Fault, when set, says how the agent made its final world or answer
	// unverifiable (an error wrapping world.ErrAgentFault, such as a final
	// world no snapshot can hold): the rollout is the agent's failure, V 0
	// without running the verifier (rollout.Env.Judge), never infra.
	Fault string `json:"fault,omitempty"`
	// Attempts is how many fresh instances the rollout took (more than 1
	// after an infrastructure failure); InfraErrors says what failed in
	// each attempt that did not count.
	Attempts    int      `json:"attempts,omitempty"`
	InfraErrors []string `json:"infra_errors,omitempty"`
	WallMS      float64  `json:"wall_ms"`
	Start       world.ID `json:"start_snapshot"`
}

// Outcomes of a trajectory.
const (
	OutcomeDone   = "done"
	OutcomeStop   = "stopped"
	OutcomeGaveUp = "gave_up"
	OutcomeBudget = "budget"
	OutcomeFormat = "format_error"
	OutcomeSetup  = "setup_error"
	OutcomeInfra  = "infra_error"
)

// FailureOf is the failure class an outcome implies: "" for done (the
// verifier decides), FailInfra, FailSetup, FailFormat, else FailAgent.
func FailureOf(outcome string) string {
	switch outcome {
	case OutcomeDone:
		return ""
	case OutcomeInfra:
		return FailInfra
	case OutcomeSetup:
		return FailSetup
	case OutcomeFormat:
		return FailFormat
	}
	return FailAgent
}

// Classify sets Failure from the outcome and the verifier's verdict: an
// infrastructure, set-up or format failure stays one; otherwise the world
// decides, so a rollout V passes has no failure (even one whose policy
// stopped early) and one V rejects, or whose agent made its world or answer
// unverifiable (Fault), failed as the agent's.
func (t *Trajectory) Classify(passed bool) {
	t.Failure = FailureOf(t.Outcome)
	if t.Countable() {
		t.Failure = FailAgent
		if passed && t.Fault == "" {
			t.Failure = ""
		}
	}
}

// Countable reports whether the rollout is evidence about the task: it
// ended without an infrastructure, set-up or format failure.
func (t *Trajectory) Countable() bool {
	switch FailureOf(t.Outcome) {
	case FailInfra, FailSetup, FailFormat:
		return false
	}
	return true
}

// InterfacesUsed lists the interfaces of the steps that succeeded, sorted.
func (t *Trajectory) InterfacesUsed() []string {
	var out []string
	for _, s := range t.Steps {
		if s.Error == "" && s.Interface != "" && !slices.Contains(out, s.Interface) {
			out = append(out, s.Interface)
		}
	}
	slices.Sort(out)
	return out
}

// Switches counts interface switches between consecutive steps.
func (t *Trajectory) Switches() int {
	n := 0
	for i := 1; i < len(t.Steps); i++ {
		if t.Steps[i].Interface != t.Steps[i-1].Interface {
			n++
		}
	}
	return n
}

// Save writes the trajectory as indented JSON, atomically.
func (t *Trajectory) Save(path string) error {
	b, err := json.MarshalIndent(t, "", "  ")
	if err != nil {
		return fmt.Errorf("encode trajectory: %w", err)
	}
	return world.WriteFileAtomic(path, append(b, '\n'), 0o644)
}

// LoadTrajectory reads a trajectory, checking its version. A version 1
// trajectory (before model turns) reads as it was written.
func LoadTrajectory(path string) (*Trajectory, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var t Trajectory
	if err := json.Unmarshal(b, &t); err != nil {
		return nil, fmt.Errorf("trajectory %s: %w", path, err)
	}
	if t.Version != TrajectoryVersion && t.Version != 1 {
		return nil, fmt.Errorf("trajectory %s: field version: got %d, this build reads 1 and %d", path, t.Version, TrajectoryVersion)
	}
	return &t, nil
}
