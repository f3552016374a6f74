package sft

import "encoding/json"

// Version is the version of the JSONL records this build writes
// (docs/sft.md). Version 2: every record is the harness's (a script's
// steps replayed through it), holds its tools, and writes a tool call's
// arguments as a JSON object.
const Version = 2

// The paper's budgets (PAPER.md, "Training"): the context a model is
// trained and evaluated at, with compaction, and the turns of a rollout.
// sft export uses them unless a flag says smaller.
const (
	// DefaultMaxTokens is the segment limit: a segment longer than it,
	// prompt and response, is dropped.
	DefaultMaxTokens = 102400
	// DefaultContextTokens is the harness's context budget for the
	// export's rollouts (a model teacher's and a replayed script's): past
	// it the harness compacts into a new segment.
	DefaultContextTokens = 102400
	// DefaultMaxTurns is the turn budget of the export's rollouts.
	DefaultMaxTurns = 256
)

// Sources of a teacher trajectory.
const (
	SourceGate = "gate" // a rollout the gates stored (TASKDIR/gate/outcome.json)
	SourceLive = "live" // a rollout run for the export in a fresh instance
)

// Teacher kinds, from Trajectory.Policy.
const (
	KindModel    = "model"    // "model:NAME": a model through a harness
	KindScripted = "scripted" // "scripted:NAME": a script, never a model
)

// Record is one line of the export: one segment of one teacher trajectory.
type Record struct {
	Version int    `json:"version"`
	TaskID  string `json:"task_id"`
	Split   string `json:"split"`
	Family  string `json:"family,omitempty"`
	// Teacher is the trajectory's policy as it says itself (model:NAME or
	// scripted:NAME); TeacherKind is "model" or "scripted".
	Teacher     string `json:"teacher"`
	TeacherKind string `json:"teacher_kind"`
	Harness     string `json:"harness,omitempty"`
	Model       string `json:"model,omitempty"`
	Source      string `json:"source"`
	Rollout     string `json:"rollout"`
	Hint        bool   `json:"hint"`
	// Trajectory is the stored trajectory's path, when there is one.
	Trajectory string `json:"trajectory,omitempty"`
	// ReplayOf is the script's trajectory the harness replayed (a gate
	// rollout's, or the live script's own), when a script acted.
	ReplayOf string `json:"replay_of,omitempty"`
	// SegmentIndex and SegmentCount number the trajectory's segments,
	// dropped ones included: a missing index is a segment over the limit.
	SegmentIndex int `json:"segment_index"`
	SegmentCount int `json:"segment_count"`
	// FirstTurn and LastTurn are the harness turns (Trajectory.Turns, from
	// 1) the segment holds.
	FirstTurn int `json:"first_turn,omitempty"`
	LastTurn  int `json:"last_turn,omitempty"`
	// Messages is the segment as a chat, assistant messages marked
	// trainable; Tools the tools the harness offered.
	Messages []Message `json:"messages,omitempty"`
	Tools    []Tool    `json:"tools,omitempty"`
	// PromptIDs, ResponseIDs and LossMask are the segment as the engine's
	// tokens (internal/rl.Segments): the shared prefix, then everything
	// after it with 1 on the model's tokens and 0 on the prompt parts
	// later turns added.
	PromptIDs   []int `json:"prompt_ids,omitempty"`
	ResponseIDs []int `json:"response_ids,omitempty"`
	LossMask    []int `json:"loss_mask,omitempty"`
	// Tokens is the segment's length, prompt and response; estimated (4
	// bytes a token) when no token ids were recorded. Trainable is the
	// tokens with loss mask 1 (token ids only).
	Tokens          int  `json:"tokens"`
	TokensEstimated bool `json:"tokens_estimated"`
	Trainable       int  `json:"trainable_tokens,omitempty"`
	// V is the verifier's verdict on the trajectory (1: it passed), with
	// Passed of Total criteria.
	V      int `json:"v"`
	Passed int `json:"passed"`
	Total  int `json:"total"`
	// Mapping says how a script's steps became the harness's tool calls,
	// when a script acted.
	Mapping *Mapping `json:"tool_mapping,omitempty"`
}

// Message is one chat message in the OpenAI form, with Train on the
// assistant messages the teacher wrote in this segment.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Reasoning  string     `json:"reasoning_content,omitempty"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	Train      bool       `json:"train,omitempty"`
}

// ToolCall is an assistant's tool call.
type ToolCall struct {
	ID       string   `json:"id"`
	Type     string   `json:"type"`
	Function Function `json:"function"`
}

// Function names a tool call's function and its arguments: the JSON
// object the model wrote, as an object (chat templates iterate or re-encode
// it; TRL's tool-calling data holds a mapping there).
type Function struct {
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments"`
}

// Tool is one tool definition in the OpenAI form.
type Tool struct {
	Type     string  `json:"type"`
	Function ToolDef `json:"function"`
}

// ToolDef is a tool's name, description and JSON Schema, as the harness
// sent them.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Mapping is how a script's steps (the names references use,
// docs/trajectory.md) were issued as the harness's tool calls (Harnessed).
type Mapping struct {
	Note string `json:"note"`
	// Tools maps each step name used to the harness tool it was issued as.
	Tools map[string]string `json:"tools"`
	// Selectors counts CSS selectors written as the element number the
	// last browser_read showed.
	Selectors int `json:"selectors_as_refs"`
	// Unseen counts those refs the page the model last saw does not show
	// (an observation is cut at agent.DefaultMaxObservation bytes): the
	// script knew an element a model would have had to find.
	Unseen int `json:"refs_not_shown"`
	// Skipped counts reads of a page the previous call had just returned.
	Skipped int `json:"reads_skipped"`
}
