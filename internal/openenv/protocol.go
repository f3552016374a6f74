package openenv

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wildawm/wildawm/internal/controlplane"

	"github.com/wildawm/wildawm/internal/task"
)

// ProtocolVersion is the version of this server's messages
// (docs/openenv.md), reported by /metadata.
const ProtocolVersion = "1"

// AnswerTool is the action that ends an episode with a final answer:
// {"tool": "answer", "args": {"text": "..."}}.
const AnswerTool = "answer"

// Message types, as OpenEnv names them: a client sends reset, step, state
// and close; the server answers observation, state or error.
const (
	TypeReset = "reset"
	TypeStep  = "step"
	TypeState = "state"
	TypeClose = "close"
	// TypeMCP carries a JSON-RPC request (and its response) over /ws,
	// as OpenEnv's WSMCPMessage does.
	TypeMCP         = "mcp"
	TypeObservation = "observation"
	TypeError       = "error"
)

// Error codes, OpenEnv's WSErrorCode values.
const (
	CodeInvalidJSON     = "INVALID_JSON"
	CodeUnknownType     = "UNKNOWN_TYPE"
	CodeValidation      = "VALIDATION_ERROR"
	CodeExecution       = "EXECUTION_ERROR"
	CodeCapacityReached = "CAPACITY_REACHED"
	CodeSession         = "SESSION_ERROR"
)

// End reasons of an episode.
const (
	EndAnswer = "answer"
	EndBudget = "budget"
)

// message is what a client sends: {"type": ..., "data": {...}}.
type message struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data,omitempty"`
}

// ResetData is a reset message's data. Every field is optional.
type ResetData struct {
	// TaskID picks a task of the split; without it the seed or the
	// server's order picks one.
	TaskID string `json:"task_id,omitempty" jsonschema:"a task of the served split; default the task the seed picks, or the next in the server's order"`
	// Seed picks the task at position seed mod N of the server's order.
	Seed *uint64 `json:"seed,omitempty" jsonschema:"picks the task at position seed mod N of the server's seeded order of the split"`
	// EpisodeID names the episode in state; default a fresh random id.
	EpisodeID string `json:"episode_id,omitempty" jsonschema:"the episode's id in state (1 to 128 characters); default a random id"`
	// Hint shows the task's hint in the observation.
	Hint bool `json:"hint,omitempty" jsonschema:"include the task's hint in the observation"`
	// Ignored are the keys of the reset's data that reset does not take,
	// dropped as OpenEnv drops them (sorted); the reset observation's
	// metadata lists them under MetaIgnoredResetKeys.
	Ignored []string `json:"-"`
}

// MetaIgnoredResetKeys is the metadata key of a reset observation that
// lists the keys the reset dropped.
const MetaIgnoredResetKeys = "ignored_reset_keys"

// Action is a step message's data: one tool call, in wildawm's form
// ({"tool", "args"}) or in OpenEnv's MCP form ({"type": "call_tool",
// "tool_name", "arguments"}), or OpenEnv's {"type": "list_tools"}.
type Action struct {
	// Type is empty for wildawm's form, else OpenEnv's MCP action
	// discriminator: list_tools or call_tool (openenv's mcp_types.py).
	Type string `json:"type,omitempty" jsonschema:"empty, or OpenEnv's MCP action type: list_tools (the episode's tools, no step) or call_tool (tool_name and arguments)"`
	// ToolName and Arguments are a call_tool action's.
	ToolName  string         `json:"tool_name,omitempty" jsonschema:"call_tool: a tool of the episode's tools (list_tools), or answer"`
	Arguments map[string]any `json:"arguments,omitempty" jsonschema:"call_tool: the tool's arguments, a JSON object"`
	// Tool is a trajectory tool name (docs/trajectory.md: shell.run,
	// file.read, file.write, mcp.SERVICE__TOOL, browser.open, ...), a
	// model-facing name from the reset observation's tools
	// (browser_navigate, shell, SERVICE__TOOL, ...), or answer.
	Tool string `json:"tool" jsonschema:"a tool of the reset observation's tools, a trajectory tool name (shell.run, file.read, file.write, mcp.SERVICE__TOOL, browser.open, browser.snapshot, browser.click, ...), or answer, which ends the episode"`
	// Args are the tool's arguments.
	Args map[string]any `json:"args,omitempty" jsonschema:"the tool's arguments, a JSON object; answer takes text"`
	// Metadata is OpenEnv's free-form action metadata, ignored.
	Metadata map[string]any `json:"metadata,omitempty" jsonschema:"free-form, ignored"`
}

// Result is the data of an observation message, OpenEnv's serialized
// observation: the observation's own fields, the reward and done.
type Result struct {
	Observation Observation `json:"observation"`
	// Reward is null at reset, 0 on a step that does not end the episode,
	// and rl.Reward on the one that does.
	Reward   *float64       `json:"reward"`
	Done     bool           `json:"done"`
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Observation is what reset and step show the agent.
type Observation struct {
	// Task is the task's public part (reset only).
	Task *task.Public `json:"task,omitempty" jsonschema:"the task's public part: id, instruction, interfaces, and the hint when reset asked for it (reset only)"`
	// Tools are the tools a model may call (reset only).
	Tools []Tool `json:"tools,omitempty" jsonschema:"the tools, with their arguments' JSON Schemas (reset only)"`
	// Checklist is the task's criteria, by id and description.
	Checklist []Check `json:"checklist" jsonschema:"the criteria the verifier checks, by id and description"`
	// Step is the number of actions taken so far (0 at reset).
	Step     int `json:"step" jsonschema:"actions taken so far, 0 at reset"`
	MaxSteps int `json:"max_steps" jsonschema:"the step budget: the episode ends and is verified after this many actions"`
	// Tool, Interface, Output and Error describe the step's action.
	Tool      string `json:"tool,omitempty" jsonschema:"the tool the step ran, by its trajectory name"`
	Interface string `json:"interface,omitempty" jsonschema:"the interface it acted through: gui, mcp, cli or file"`
	Output    string `json:"output" jsonschema:"the tool's output"`
	Error     string `json:"error,omitempty" jsonschema:"set when the tool failed: the world rejected the action, nothing changed"`
	// EndReason is answer or budget once the episode is done.
	EndReason string `json:"end_reason,omitempty" jsonschema:"answer or budget, once the episode is done"`
	// Verification is the verifier's result once the episode is done.
	Verification *Verification `json:"verification,omitempty" jsonschema:"the verifier's result, once the episode is done"`
}

// Tool is one tool as a model sees it. InputSchema is Parameters under
// the name OpenEnv's Tool model (mcp_types.py) and its MCP clients read.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Interface   string          `json:"interface,omitempty"`
	Parameters  json.RawMessage `json:"parameters" jsonschema:"the arguments' JSON Schema"`
	InputSchema json.RawMessage `json:"input_schema" jsonschema:"the arguments' JSON Schema again, as OpenEnv's MCP clients read it"`
}

// ListToolsObservation is the observation of a list_tools action, OpenEnv's
// ListToolsObservation: the episode's tools.
type ListToolsObservation struct {
	Tools []Tool `json:"tools"`
}

// CallToolObservation is the observation of a call_tool action, OpenEnv's
// CallToolObservation (tool_name, result, error) with the episode's step,
// and its end and verification once done.
type CallToolObservation struct {
	ToolName string `json:"tool_name"`
	// Result is the tool's result; a tool that failed (the world rejected
	// the action) is a result with IsError, as OpenEnv has tool errors.
	Result *CallToolResult `json:"result"`
	// Error is a framework error (an unknown tool, arguments refused before
	// anything ran); nothing ran and no step was counted.
	Error        *ToolError    `json:"error"`
	Step         int           `json:"step"`
	MaxSteps     int           `json:"max_steps"`
	Interface    string        `json:"interface,omitempty"`
	EndReason    string        `json:"end_reason,omitempty"`
	Verification *Verification `json:"verification,omitempty"`
}

// CallToolResult is a tool's result in the form OpenEnv's server sends a
// FastMCP CallToolResult (content, structured_content, meta, data,
// is_error): MCPToolClient.call_tool returns Data. Meta carries the
// episode's step, done, reward, end_reason and verification (JSON-RPC
// tools/call only).
type CallToolResult struct {
	Content           []TextContent  `json:"content"`
	StructuredContent map[string]any `json:"structured_content"`
	Meta              map[string]any `json:"meta"`
	Data              string         `json:"data"`
	IsError           bool           `json:"is_error"`
}

// TextContent is an MCP text content block.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// ToolError is OpenEnv's ToolError: error_type is one of its ToolErrorType
// values.
type ToolError struct {
	ErrorType string `json:"error_type"`
	Message   string `json:"message"`
}

// OpenEnv's ToolErrorType values used here.
const (
	ToolNotFound   = "tool_not_found"
	ToolInvalidArg = "invalid_args"
)

// MCP action types (OpenEnv's ListToolsAction and CallToolAction).
const (
	ActionListTools = "list_tools"
	ActionCallTool  = "call_tool"
)

// Check is one criterion of the checklist.
type Check struct {
	ID          string `json:"id"`
	Description string `json:"description,omitempty"`
}

// Verification is V and the per-criterion results of a finished episode.
// Evidence is left out: it may quote the expected values.
type Verification struct {
	V            int           `json:"v" jsonschema:"1 when every criterion passed, else 0"`
	Passed       int           `json:"passed" jsonschema:"criteria passed"`
	Total        int           `json:"total" jsonschema:"criteria in all"`
	ScriptErrors int           `json:"script_errors" jsonschema:"script criteria that could not be carried out"`
	Criteria     []CheckResult `json:"criteria"`
}

// CheckResult is one criterion's verdict.
type CheckResult struct {
	ID   string `json:"id"`
	Pass bool   `json:"pass"`
	// Errored is set when the check could not be carried out.
	Errored bool `json:"errored,omitempty"`
}

// State is the data of a state message.
type State struct {
	EpisodeID *string  `json:"episode_id" jsonschema:"the episode's id, null before the first reset"`
	StepCount int      `json:"step_count" jsonschema:"actions taken in the episode"`
	TaskID    string   `json:"task_id,omitempty"`
	Split     string   `json:"split"`
	Hint      bool     `json:"hint,omitempty"`
	MaxSteps  int      `json:"max_steps"`
	Done      bool     `json:"done"`
	EndReason string   `json:"end_reason,omitempty"`
	Reward    *float64 `json:"reward,omitempty" jsonschema:"the episode's reward, once done"`
}

// ErrorData is the data of an error message.
type ErrorData struct {
	Message string `json:"message"`
	Code    string `json:"code"`
	// Field is the JSON path of the offending field, when there is one.
	Field string `json:"field,omitempty"`
	// ActiveSessions and MaxSessions come with CAPACITY_REACHED.
	ActiveSessions int `json:"active_sessions,omitempty"`
	MaxSessions    int `json:"max_sessions,omitempty"`
}

// reply is one message the server sends.
type reply struct {
	Type string `json:"type"`
	Data any    `json:"data"`
}

// protoError is a message the client must fix; the session goes on.
type protoError struct {
	code, field, msg string
}

func (e *protoError) Error() string { return e.msg }

// duplicateKey refuses a message that names a key twice at any depth
// (encoding/json would keep the last: a file.write whose content the
// client's log shows differs from the one written).
func duplicateKey(b []byte) *protoError {
	var dup *controlplane.DuplicateKeyError
	if errors.As(controlplane.DuplicateKey(b), &dup) {
		return &protoError{code: CodeValidation, field: dup.Field(), msg: dup.Error()}
	}
	return nil
}

func invalid(field, format string, args ...any) *protoError {
	return &protoError{code: CodeValidation, field: field, msg: field + ": " + fmt.Sprintf(format, args...)}
}

// Schemas is the body of GET /schema: the JSON Schemas of a step's
// action, of an observation message's data and of a state message's data.
type Schemas struct {
	Action      *jsonschema.Schema `json:"action"`
	Observation *jsonschema.Schema `json:"observation"`
	State       *jsonschema.Schema `json:"state"`
}

// schemas infers the schemas from the wire types.
func schemas() (*Schemas, error) {
	// A tool's parameters are a JSON Schema, an object.
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {Type: "object"}}}
	a, err := jsonschema.For[Action](opts)
	if err != nil {
		return nil, fmt.Errorf("openenv: action schema: %w", err)
	}
	o, err := jsonschema.For[Result](opts)
	if err != nil {
		return nil, fmt.Errorf("openenv: observation schema: %w", err)
	}
	s, err := jsonschema.For[State](opts)
	if err != nil {
		return nil, fmt.Errorf("openenv: state schema: %w", err)
	}
	return &Schemas{Action: a, Observation: o, State: s}, nil
}
