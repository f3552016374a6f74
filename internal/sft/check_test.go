package sft

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestCheckRefuses: a record that is not what the harness sends is
// refused, naming the field; the record the harness would send passes.
func TestCheckRefuses(t *testing.T) {
	good := func() Record {
		call := func(id, args string) Message {
			return Message{Role: "assistant", Train: true, ToolCalls: []ToolCall{{ID: id, Type: "function", Function: Function{Name: "browser_click", Arguments: json.RawMessage(args)}}}}
		}
		return Record{Rollout: "r1", Tools: builtinTools(), Messages: []Message{
			{Role: "system", Content: "s"}, {Role: "user", Content: "task"},
			call("c1", `{"ref":3}`), {Role: "tool", ToolCallID: "c1", Content: "URL: x"},
			call("c2", `{"selector":"#buy"}`), {Role: "tool", ToolCallID: "c2", Content: `error: browser_click: no argument "selector": it takes ref`},
			{Role: "assistant", Content: "done", Train: true},
		}}
	}
	if err := Check(good()); err != nil {
		t.Fatalf("the harness's record: %v", err)
	}
	for _, c := range []struct {
		name, want string
		change     func(*Record)
	}{
		{"no tools", "field tools is empty", func(r *Record) { r.Tools = nil }},
		{"a tool twice", "listed twice", func(r *Record) { r.Tools = append(r.Tools, r.Tools[0]) }},
		{"a schema that is not an object", "field parameters", func(r *Record) { r.Tools[0].Function.Parameters = json.RawMessage(`"x"`) }},
		{"no system prompt", "want the system prompt", func(r *Record) { r.Messages = r.Messages[1:] }},
		{"a role", `role "developer"`, func(r *Record) { r.Messages[3].Role = "developer" }},
		{"arguments as text", "field arguments is not a JSON object", func(r *Record) {
			r.Messages[2].ToolCalls[0].Function.Arguments = json.RawMessage(`"{\"ref\":3}"`)
		}},
		{"a selector answered as if taken", `argument "selector" is not one the tool takes`, func(r *Record) { r.Messages[5].Content = "URL: x" }},
		{"a required argument missing", `required argument "ref" is missing`, func(r *Record) { r.Messages[2].ToolCalls[0].Function.Arguments = json.RawMessage(`{}`) }},
		{"a tool not listed", "a tool the record does not list", func(r *Record) { r.Messages[2].ToolCalls[0].Function.Name = "browser_html" }},
		{"an unanswered call", "before every call of the last one was answered", func(r *Record) { r.Messages = append(r.Messages[:3], r.Messages[4:]...) }},
		{"an answer to no call", "which no open call", func(r *Record) { r.Messages[3].ToolCallID = "c9" }},
		{"nothing trainable", "no assistant message is trainable", func(r *Record) {
			for i := range r.Messages {
				r.Messages[i].Train = false
			}
		}},
	} {
		r := good()
		r.Tools = append([]Tool(nil), r.Tools...)
		c.change(&r)
		if err := Check(r); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.name, err, c.want)
		}
	}
}
