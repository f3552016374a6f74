package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// Role is who wrote a message.
type Role string

// The four roles of a chat.
const (
	RoleSystem    Role = "system"
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolChoice says whether the model may, must or must not call a tool.
type ToolChoice string

// The tool choices; "" leaves it to the server (auto when tools are given).
const (
	ToolChoiceAuto     ToolChoice = "auto"
	ToolChoiceNone     ToolChoice = "none"
	ToolChoiceRequired ToolChoice = "required"
)

// Message is one message of a chat.
type Message struct {
	Role    Role   `json:"role"`
	Content string `json:"content,omitempty"`
	// ToolCalls are an assistant message's calls, sent back as the model
	// made them (RawArguments when set, else Arguments).
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID is the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	// Images go with a user message's text as image parts (data URLs), for
	// a vision model.
	Images []Image `json:"images,omitempty"`
}

// Image is a picture sent to a vision model.
type Image struct {
	// MIME is its type ("image/png", "image/jpeg").
	MIME string `json:"mime"`
	Data []byte `json:"data"`
}

// Tool is a function the model may call.
type Tool struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the arguments' JSON Schema, an object; nil means the
	// function takes none.
	Parameters json.RawMessage `json:"parameters,omitempty"`
}

// ToolCall is one call the model made.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's arguments when they are valid JSON (an
	// empty string on the wire reads as {}), else nil.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// RawArguments is the arguments exactly as the server sent them.
	RawArguments string `json:"raw_arguments,omitempty"`
	// ArgError says why the arguments are unusable (not JSON, or not a JSON
	// object); the call is kept so that the caller can answer it.
	ArgError string `json:"arg_error,omitempty"`
}

// Request is one chat completion.
type Request struct {
	Messages   []Message
	Tools      []Tool
	ToolChoice ToolChoice
	// MaxTokens bounds the completion (sent as max_tokens, which every
	// OpenAI-compatible server reads); 0 leaves it to the server.
	MaxTokens int
	// Temperature and Seed override the Options' defaults when non-nil.
	Temperature *float64
	// TopP is nucleus sampling's top_p, sent when non-nil.
	TopP *float64
	Seed *int64
	// ReturnTokenIDs asks the server for the prompt's and the completion's
	// token ids: "return_token_ids": true, which vLLM and SGLang read, and
	// for SGLang "return_prompt_token_ids": true as well.
	ReturnTokenIDs bool
	// Logprobs asks for each completion token's log probability
	// ("logprobs": true, OpenAI's field).
	Logprobs bool
}

// Usage is what the server counted.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Response is the first choice of a chat completion.
type Response struct {
	Content string `json:"content,omitempty"`
	// Reasoning is the thinking a reasoning model returned apart from its
	// content (vLLM's and SGLang's reasoning_content), when there was any,
	// and the thinking it wrote inline in its content (<think>...</think>,
	// SplitThink), which Content then no longer holds: an answer is never
	// judged by candidates its reasoning weighed.
	Reasoning string `json:"reasoning,omitempty"`
	// InlineReasoning: Reasoning was written inside the content (the
	// server runs no reasoning parser for this model).
	InlineReasoning bool       `json:"inline_reasoning,omitempty"`
	ToolCalls       []ToolCall `json:"tool_calls,omitempty"`
	FinishReason    string     `json:"finish_reason"`
	Usage           Usage      `json:"usage"`
	// PromptTokenIDs and CompletionTokenIDs are set when the server
	// returned them (vLLM's top-level prompt_token_ids, SGLang's
	// per-choice prompt_token_ids; the choice's token_ids, else SGLang's
	// meta_info.output_token_logprobs); ReturnTokenIDs asks for them.
	PromptTokenIDs     []int `json:"prompt_token_ids,omitempty"`
	CompletionTokenIDs []int `json:"completion_token_ids,omitempty"`
	// Logprobs are the completion tokens' log probabilities
	// (choice.logprobs.content[].logprob), one per token: when
	// CompletionTokenIDs is set too, Logprobs[i] is CompletionTokenIDs[i]'s
	// (a reply where the two differ in length is an ErrMisaligned error).
	// Request.Logprobs asks for them.
	Logprobs []float64 `json:"logprobs,omitempty"`
	// WeightVersion is the version of the weights that answered, as the
	// server names it: SGLang's meta_info.weight_version ("default" until
	// the trainer sets one); "" when the server says none (vLLM's chat
	// completions carry none).
	WeightVersion string `json:"weight_version,omitempty"`
	// Model is the model that answered, as the server names it.
	Model string `json:"model"`
	// Latency is the whole call's wall time, retries and backoff included.
	Latency time.Duration `json:"latency"`
	// Attempts is how many HTTP requests the call took.
	Attempts int `json:"attempts"`
}

// check reports what is wrong with a request before anything is sent.
func (r Request) check() error {
	if len(r.Messages) == 0 {
		return fmt.Errorf("request has no messages")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case RoleSystem, RoleUser:
		case RoleAssistant:
			for j, c := range m.ToolCalls {
				if c.ID == "" || c.Name == "" {
					return fmt.Errorf("message %d: tool call %d has no id or no name", i, j)
				}
			}
		case RoleTool:
			if m.ToolCallID == "" {
				return fmt.Errorf("message %d: a tool message needs the ToolCallID of the call it answers", i)
			}
		default:
			return fmt.Errorf("message %d: role %q is none of system, user, assistant, tool", i, m.Role)
		}
		if m.Role != RoleUser && len(m.Images) > 0 {
			return fmt.Errorf("message %d: only a user message carries images, not a %s message", i, m.Role)
		}
		for j, im := range m.Images {
			if !strings.HasPrefix(im.MIME, "image/") || len(im.Data) == 0 {
				return fmt.Errorf("message %d: image %d: want a MIME type image/... and data, got %q with %d bytes", i, j, im.MIME, len(im.Data))
			}
		}
		if m.Role != RoleAssistant && len(m.ToolCalls) > 0 {
			return fmt.Errorf("message %d: only an assistant message has tool calls, not a %s message", i, m.Role)
		}
	}
	seen := map[string]bool{}
	for i, t := range r.Tools {
		if t.Name == "" {
			return fmt.Errorf("tool %d has no name", i)
		}
		if seen[t.Name] {
			return fmt.Errorf("tool %q is given twice", t.Name)
		}
		seen[t.Name] = true
		if t.Parameters != nil {
			if _, err := schemaObject(t.Parameters); err != nil {
				return fmt.Errorf("tool %q: parameters: %w", t.Name, err)
			}
		}
	}
	switch r.ToolChoice {
	case "", ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
	default:
		return fmt.Errorf("tool choice %q is none of auto, none, required", r.ToolChoice)
	}
	if r.MaxTokens < 0 {
		return fmt.Errorf("max tokens %d is negative", r.MaxTokens)
	}
	return nil
}

// schemaObject decodes a JSON Schema, which must be an object.
func schemaObject(raw json.RawMessage) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object: %s", abbrev(string(raw), 80))
	}
	return m, nil
}

// readToolCall turns a call off the wire into a ToolCall; bad arguments
// set ArgError, never an error.
func readToolCall(id, name, args string) ToolCall {
	c := ToolCall{ID: id, Name: name, RawArguments: args}
	trimmed := bytes.TrimSpace([]byte(args))
	switch {
	case len(trimmed) == 0:
		c.Arguments = json.RawMessage("{}")
	case !json.Valid(trimmed):
		c.ArgError = fmt.Sprintf("arguments are not valid JSON: %s", abbrev(args, 200))
	case trimmed[0] != '{':
		c.Arguments = json.RawMessage(trimmed)
		c.ArgError = fmt.Sprintf("arguments are not a JSON object: %s", abbrev(args, 200))
	default:
		c.Arguments = json.RawMessage(trimmed)
	}
	return c
}

// wireArguments is what an assistant message sends back for a call.
func (c ToolCall) wireArguments() string {
	if c.RawArguments != "" {
		return c.RawArguments
	}
	if c.Arguments == nil {
		return "{}"
	}
	return string(c.Arguments)
}

// abbrev cuts s to at most n bytes, marking the cut.
func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}
