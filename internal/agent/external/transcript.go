package external

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/agent"
)

// MaxObservation bounds a step's observation, as the wildawm harness does.
const MaxObservation = 4000

// Transcript is what an opencode transcript says.
type Transcript struct {
	Session string
	Steps   []agent.Step
	// Turns are the model's replies, one per opencode step (a request to
	// the model): its text, its tool calls, its finish reason and usage.
	// opencode does not say how many messages a request held, nor any
	// token ids.
	Turns []agent.Turn
	// Answer is the assistant's text after its last tool call.
	Answer string
	// Errors are the session's error events' messages, in order.
	Errors []string
	// FormatErrors are the tool calls whose arguments were not a JSON
	// object (opencode keeps the model's text as {"value": TEXT} and
	// answers the call as one of its "invalid" tool), in order.
	FormatErrors []string
	// Finish is the last step's finish reason ("stop", "tool-calls",
	// "length"...).
	Finish string
	// PromptTokens and CompletionTokens sum the steps' usage.
	PromptTokens, CompletionTokens int
}

// LineError is a transcript line that cannot be parsed. Unterminated says
// it is a last line without its newline: what a harness killed mid-write
// leaves.
type LineError struct {
	Line         int
	Unterminated bool
	Err          error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("opencode transcript: line %d: %v", e.Line, e.Err)
}

func (e *LineError) Unwrap() error { return e.Err }

// opencodeEvent is one line of `opencode run --format json`.
type opencodeEvent struct {
	Type      string          `json:"type"`
	Timestamp int64           `json:"timestamp"`
	SessionID string          `json:"sessionID"`
	Part      *opencodePart   `json:"part"`
	Error     json.RawMessage `json:"error"`
}

type opencodePart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Tool   string `json:"tool"`
	CallID string `json:"callID"`
	Reason string `json:"reason"`
	State  *struct {
		Status string          `json:"status"`
		Input  json.RawMessage `json:"input"`
		Output string          `json:"output"`
		Error  string          `json:"error"`
		Time   struct {
			Start, End int64
		} `json:"time"`
	} `json:"state"`
	Tokens *struct {
		Input, Output int
	} `json:"tokens"`
}

// ParseOpencode reads the JSON events of `opencode run --format json`
// (one object a line): each tool_use becomes a step, routed by the MCP
// server its name starts with (opencode names a server's tool
// SERVER_TOOL, both with every character outside [a-zA-Z0-9_-] made "_");
// a tool of no server in servers (one of opencode's own) is a step with no
// interface and the tool "opencode.NAME". A line that is not a JSON object
// is a *LineError naming the line, returned with what came before it.
// Event types it does not know are skipped.
func ParseOpencode(r io.Reader, servers []string, route Router) (*Transcript, error) {
	if route == nil {
		route = DefaultRouter()
	}
	t := &Transcript{}
	br := bufio.NewReader(r)
	var answer []string
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return t, &LineError{Line: n, Err: err}
		}
		if len(bytes.TrimSpace(line)) > 0 {
			unterminated := !bytes.HasSuffix(line, []byte("\n"))
			var ev opencodeEvent
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				return t, &LineError{Line: n, Unterminated: unterminated, Err: fmt.Errorf("not a JSON event: %v: %.200q", jerr, line)}
			}
			if ev.Type == "" {
				return t, &LineError{Line: n, Unterminated: unterminated, Err: fmt.Errorf("an event without a type: %.200q", line)}
			}
			if t.Session == "" {
				t.Session = ev.SessionID
			}
			if perr := t.add(ev, servers, route, &answer); perr != nil {
				return t, &LineError{Line: n, Unterminated: unterminated, Err: perr}
			}
		}
		if err != nil {
			break
		}
	}
	t.Answer = strings.TrimSpace(strings.Join(answer, "\n"))
	return t, nil
}

func (t *Transcript) add(ev opencodeEvent, servers []string, route Router, answer *[]string) error {
	switch ev.Type {
	case "step_start":
		t.Turns = append(t.Turns, agent.Turn{Index: len(t.Turns) + 1, Kind: "act"})
	case "text":
		if ev.Part == nil {
			return errors.New("a text event without its part")
		}
		*answer = append(*answer, ev.Part.Text)
		if turn := t.turn(); turn != nil {
			turn.Content += ev.Part.Text
		}
	case "reasoning":
		if ev.Part != nil {
			if turn := t.turn(); turn != nil {
				turn.Reasoning += ev.Part.Text
			}
		}
	case "tool_use":
		p := ev.Part
		if p == nil || p.State == nil || p.Tool == "" {
			return errors.New("a tool_use event without its tool and state")
		}
		*answer = nil // the answer is what follows the last call
		var args map[string]any
		if len(p.State.Input) > 0 && string(p.State.Input) != "null" {
			dec := json.NewDecoder(bytes.NewReader(p.State.Input))
			dec.UseNumber()
			if err := dec.Decode(&args); err != nil {
				// opencode records what the model wrote; a non-object is kept as it is.
				args = map[string]any{"raw": string(p.State.Input)}
			}
		}
		server, tool, ok := splitTool(p.Tool, servers)
		var rt Route
		if ok {
			rt = route(server, tool)
		} else {
			rt = Route{Tool: "opencode." + p.Tool}
		}
		s := agent.Step{Index: len(t.Steps), Interface: rt.Interface, Tool: rt.Tool, Args: args, CallID: p.CallID,
			DurationMS: float64(max(p.State.Time.End-p.State.Time.Start, 0))}
		if turn := t.turn(); turn != nil {
			s.Turn = turn.Index
			turn.ToolCalls = append(turn.ToolCalls, agent.TurnCall{ID: p.CallID, Name: p.Tool, Arguments: string(p.State.Input)})
		}
		switch p.State.Status {
		case "completed":
			s.Observation = cut(p.State.Output)
		case "error":
			s.Error = p.State.Error
			if s.Error == "" {
				s.Error = "the tool failed"
			}
			s.Observation = cut(s.Error)
			if raw, ok := unparsedArguments(p.State.Input, p.State.Error); ok {
				t.FormatErrors = append(t.FormatErrors, fmt.Sprintf("turn %d: tool call %s: arguments are not a JSON object: %s", s.Turn, p.Tool, cut(raw)))
			}
		default:
			return fmt.Errorf("tool %s: state %q, want completed or error", p.Tool, p.State.Status)
		}
		t.Steps = append(t.Steps, s)
	case "step_finish":
		if ev.Part != nil {
			t.Finish = ev.Part.Reason
			turn := t.turn()
			if turn != nil {
				turn.FinishReason = ev.Part.Reason
			}
			if ev.Part.Tokens != nil {
				t.PromptTokens += ev.Part.Tokens.Input
				t.CompletionTokens += ev.Part.Tokens.Output
				if turn != nil {
					turn.PromptTokens, turn.CompletionTokens = ev.Part.Tokens.Input, ev.Part.Tokens.Output
				}
			}
		}
	case "error":
		t.Errors = append(t.Errors, errorMessage(ev.Error))
	}
	return nil
}

// turn is the turn under way, or nil before the first step.
func (t *Transcript) turn() *agent.Turn {
	if len(t.Turns) == 0 {
		return nil
	}
	return &t.Turns[len(t.Turns)-1]
}

// errorMessage words a session error {"name", "data": {"message",
// "statusCode"}} as opencode's own output does, with the status.
func errorMessage(raw json.RawMessage) string {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message    string `json:"message"`
			StatusCode int    `json:"statusCode"`
		} `json:"data"`
	}
	if json.Unmarshal(raw, &e) != nil || (e.Name == "" && e.Data.Message == "") {
		return "opencode error: " + string(raw)
	}
	msg := e.Name
	if e.Data.Message != "" {
		msg += ": " + e.Data.Message
	}
	if e.Data.StatusCode != 0 {
		msg += fmt.Sprintf(" (HTTP %d)", e.Data.StatusCode)
	}
	return msg
}

var unsafeName = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// sanitize is opencode's rule for the parts of an MCP tool's name.
func sanitize(s string) string { return unsafeName.ReplaceAllString(s, "_") }

// splitTool finds the server of an opencode tool name: the longest
// server whose sanitized name and "_" start it.
func splitTool(name string, servers []string) (server, tool string, ok bool) {
	for _, s := range servers {
		p := sanitize(s) + "_"
		if strings.HasPrefix(name, p) && len(name) > len(p) && len(s) >= len(server) {
			server, tool, ok = s, name[len(p):], true
		}
	}
	return server, tool, ok
}

// cut bounds an observation at MaxObservation bytes, on a character's
// boundary, saying how much was left out.
func cut(s string) string {
	if len(s) <= MaxObservation {
		return s
	}
	n := MaxObservation
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("... [%d more bytes]", len(s)-n)
}

// unparsedArguments says whether a failed call's input is the model's
// arguments opencode could not parse: {"value": TEXT}, TEXT not a JSON
// object, answered as a call of its "invalid" tool.
func unparsedArguments(input json.RawMessage, failure string) (string, bool) {
	if !strings.Contains(failure, "'invalid'") {
		return "", false
	}
	var in map[string]json.RawMessage
	if json.Unmarshal(input, &in) != nil || len(in) != 1 {
		return "", false
	}
	var text string
	if json.Unmarshal(in["value"], &text) != nil {
		return "", false
	}
	var obj map[string]any
	if json.Unmarshal([]byte(text), &obj) == nil {
		return "", false
	}
	return text, true
}
