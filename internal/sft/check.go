package sft

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Check holds a record to what the harness sends and receives, which is
// what a chat trainer needs of it: its tools listed (each a function with a
// name and a JSON Schema object, no name twice); the chat opening with the
// system prompt and the task; roles system, user, assistant and tool only;
// every assistant tool call a function call with an id, a name and a JSON
// object of arguments, answered by exactly one tool message after it (the
// last message's calls may be answered in the next segment); a
// call that names no listed tool, or whose arguments the tool's schema
// refuses (an argument it does not declare where it takes no others, a
// required one missing), answered with the harness's error; at least one
// trainable assistant message. The error names the message and the field.
func Check(r Record) error {
	if len(r.Tools) == 0 {
		return fmt.Errorf("record %s segment %d: field tools is empty: every record lists the tools the harness offered", r.Rollout, r.SegmentIndex)
	}
	schemas := map[string]schema{}
	for i, t := range r.Tools {
		if t.Type != "function" || t.Function.Name == "" {
			return fmt.Errorf("record %s: tools[%d]: want {\"type\":\"function\",\"function\":{\"name\":...}}, got type %q name %q", r.Rollout, i, t.Type, t.Function.Name)
		}
		if _, dup := schemas[t.Function.Name]; dup {
			return fmt.Errorf("record %s: tools[%d]: tool %s listed twice", r.Rollout, i, t.Function.Name)
		}
		var s schema
		if err := json.Unmarshal(t.Function.Parameters, &s); err != nil || s.Type != "object" {
			return fmt.Errorf("record %s: tools[%d] (%s): field parameters is not a JSON Schema object (%s)", r.Rollout, i, t.Function.Name, abbrev(string(t.Function.Parameters), 80))
		}
		schemas[t.Function.Name] = s
	}
	m := r.Messages
	if len(m) < 2 || m[0].Role != "system" || m[1].Role != "user" {
		return fmt.Errorf("record %s segment %d: the messages open with %s: want the system prompt, then the task", r.Rollout, r.SegmentIndex, roles(m[:min(len(m), 2)]))
	}
	open := map[string]string{} // call id -> tool name, calls not yet answered
	trainable := false
	for i, msg := range m {
		switch msg.Role {
		case "system", "user":
		case "assistant":
			if len(open) > 0 {
				return fmt.Errorf("record %s: messages[%d]: an assistant message before every call of the last one was answered (%v)", r.Rollout, i, keys(open))
			}
			trainable = trainable || msg.Train
			for j, c := range msg.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" {
					return fmt.Errorf("record %s: messages[%d].tool_calls[%d]: want an id, type \"function\" and a name, got %q %q %q", r.Rollout, i, j, c.ID, c.Type, c.Function.Name)
				}
				var args map[string]json.RawMessage
				if err := json.Unmarshal(c.Function.Arguments, &args); err != nil || args == nil {
					return fmt.Errorf("record %s: messages[%d].tool_calls[%d] (%s): field arguments is not a JSON object: %s", r.Rollout, i, j, c.Function.Name, abbrev(string(c.Function.Arguments), 80))
				}
				if _, dup := open[c.ID]; dup {
					return fmt.Errorf("record %s: messages[%d]: call id %s twice", r.Rollout, i, c.ID)
				}
				open[c.ID] = c.Function.Name
			}
		case "tool":
			name, ok := open[msg.ToolCallID]
			if !ok {
				return fmt.Errorf("record %s: messages[%d]: a tool message answering %q, which no open call of the assistant message before it has", r.Rollout, i, msg.ToolCallID)
			}
			delete(open, msg.ToolCallID)
			if strings.HasPrefix(msg.Content, "error: ") {
				continue // the harness refused or the tool failed: any call may
			}
			call := callOf(m[:i], msg.ToolCallID)
			s, ok := schemas[name]
			if !ok {
				return fmt.Errorf("record %s: messages[%d]: call %s of %s, a tool the record does not list, answered without an error", r.Rollout, i, msg.ToolCallID, name)
			}
			if err := s.fits(call.Function.Arguments); err != nil {
				return fmt.Errorf("record %s: call %s of %s: %v, yet answered without an error", r.Rollout, msg.ToolCallID, name, err)
			}
		default:
			return fmt.Errorf("record %s: messages[%d]: role %q: want system, user, assistant or tool", r.Rollout, i, msg.Role)
		}
	}
	// The segment's last message may call tools whose answers the next
	// segment holds (the harness compacted after it).
	if last := m[len(m)-1]; len(open) > 0 && (last.Role != "assistant" || len(last.ToolCalls) != len(open)) {
		return fmt.Errorf("record %s: calls %v are never answered", r.Rollout, keys(open))
	}
	if !trainable {
		return fmt.Errorf("record %s segment %d: no assistant message is trainable (train: true)", r.Rollout, r.SegmentIndex)
	}
	return nil
}

// schema is what Check reads of a tool's JSON Schema.
type schema struct {
	Type                 string                     `json:"type"`
	Properties           map[string]json.RawMessage `json:"properties"`
	Required             []string                   `json:"required"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

func (s schema) fits(raw json.RawMessage) error {
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil {
		return err
	}
	closed := s.AdditionalProperties != nil && !*s.AdditionalProperties
	for _, k := range slices.Sorted(maps.Keys(args)) {
		if _, ok := s.Properties[k]; !ok && closed {
			return fmt.Errorf("argument %q is not one the tool takes (%s)", k, strings.Join(slices.Sorted(maps.Keys(s.Properties)), ", "))
		}
	}
	for _, k := range s.Required {
		if _, ok := args[k]; !ok {
			return fmt.Errorf("the required argument %q is missing", k)
		}
	}
	return nil
}

func callOf(msgs []Message, id string) ToolCall {
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, c := range msgs[i].ToolCalls {
			if c.ID == id {
				return c
			}
		}
	}
	return ToolCall{}
}

func roles(msgs []Message) string {
	var out []string
	for _, m := range msgs {
		out = append(out, m.Role)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func keys(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
