package fake

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The template's special tokens, one id each, as Qwen's tokenizer has
// them; every other byte of a text is its own token (its value).
const (
	IMStart = 151644 // <|im_start|>
	IMEnd   = 151645 // <|im_end|>
)

// Template is the chat template the fake renders and tokenizes with: the
// ChatML of Qwen and Hermes (<|im_start|>role\n...<|im_end|>\n), tools in
// the system turn, an assistant's tool calls as <tool_call>{json}</tool_call>
// and tool results as a user turn of <tool_response> blocks. The zero
// value renders every message as it was sent, so that each prompt extends
// the last (a template built to).
type Template struct {
	// StripReasoning drops the <think>...</think> of every assistant turn
	// before the last user turn, as Qwen3's template does.
	StripReasoning bool
	// Reserialize writes tool-call JSON as the template's tojson does,
	// keys sorted and ", " / ": " separators, not as the model wrote it.
	Reserialize bool
	// OmitTools renders no tool schemas (a template that keeps them out
	// of the system turn), so that a request without tools can extend one
	// with them.
	OmitTools bool
}

// ReasoningTemplate is the template of a Qwen3-like model: past reasoning
// stripped and tool calls re-serialised.
var ReasoningTemplate = Template{StripReasoning: true, Reserialize: true}

// Encode is text's token ids: the special tokens one id each, every other
// byte its value.
func Encode(text string) []int {
	var ids []int
	for len(text) > 0 {
		switch {
		case strings.HasPrefix(text, "<|im_start|>"):
			ids, text = append(ids, IMStart), text[len("<|im_start|>"):]
		case strings.HasPrefix(text, "<|im_end|>"):
			ids, text = append(ids, IMEnd), text[len("<|im_end|>"):]
		default:
			ids, text = append(ids, int(text[0])), text[1:]
		}
	}
	return ids
}

// Decode is Encode's inverse; skipSpecial drops the special tokens, as an
// engine's detokenizer does for a completion's text.
func Decode(ids []int, skipSpecial bool) string {
	var b strings.Builder
	for _, id := range ids {
		switch {
		case id == IMStart && !skipSpecial:
			b.WriteString("<|im_start|>")
		case id == IMEnd && !skipSpecial:
			b.WriteString("<|im_end|>")
		case id >= 0 && id < 256:
			b.WriteByte(byte(id))
		}
	}
	return b.String()
}

// Render is the template's text of msgs (and tools), with the generation
// prompt "<|im_start|>assistant\n" when gen is set.
func (t Template) Render(msgs []Message, tools []Tool, gen bool) string {
	var b strings.Builder
	lastUser := -1
	for i, m := range msgs {
		if m.Role == "user" {
			lastUser = i
		}
	}
	for i, m := range msgs {
		switch m.Role {
		case "system":
			b.WriteString("<|im_start|>system\n" + m.Content)
			if len(tools) > 0 && !t.OmitTools {
				b.WriteString("\n\n# Tools\n<tools>")
				for _, tl := range tools {
					j, _ := json.Marshal(map[string]any{"name": tl.Name, "description": tl.Description, "parameters": tl.Parameters})
					b.WriteString("\n" + string(j))
				}
				b.WriteString("\n</tools>")
			}
			b.WriteString("<|im_end|>\n")
		case "assistant":
			content := m.Content
			if t.StripReasoning && i < lastUser {
				if _, after, ok := strings.Cut(content, "</think>"); ok {
					content = strings.TrimLeft(after, "\n")
				}
			}
			b.WriteString("<|im_start|>assistant\n" + content)
			for _, c := range m.ToolCalls {
				b.WriteString("\n<tool_call>\n" + t.callJSON(c.Function.Name, c.Function.Arguments) + "\n</tool_call>")
			}
			b.WriteString("<|im_end|>\n")
		case "tool":
			if i == 0 || msgs[i-1].Role != "tool" {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != "tool" {
				b.WriteString("<|im_end|>\n")
			}
		default:
			b.WriteString("<|im_start|>" + m.Role + "\n" + m.Content + "<|im_end|>\n")
		}
	}
	if gen {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

// callJSON is a tool call's JSON as the template writes it.
func (t Template) callJSON(name, args string) string {
	if !t.Reserialize {
		return `{"name": "` + name + `", "arguments": ` + args + `}`
	}
	var v any
	if json.Unmarshal([]byte(args), &v) != nil {
		v = args
	}
	return spaced(map[string]any{"arguments": v, "name": name})
}

// spaced is v as JSON with sorted keys and Python's json.dumps separators.
func spaced(v any) string {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sortStrings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			kj, _ := json.Marshal(k)
			parts[i] = string(kj) + ": " + spaced(x[k])
		}
		return "{" + strings.Join(parts, ", ") + "}"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = spaced(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	j, _ := json.Marshal(v)
	return string(j)
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

// Completion is the text a model of this template writes for t: its
// reasoning in <think>, its content, each call as <tool_call>{json}
// </tool_call> ({"name": ..., "arguments": ...} with the arguments as the
// turn has them, in the model's own key order and spacing), and
// <|im_end|> unless the turn was cut (FinishReason "length").
func Completion(t Turn) string {
	var b strings.Builder
	if t.Reasoning != "" {
		b.WriteString("<think>\n" + t.Reasoning + "\n</think>\n\n")
	}
	b.WriteString(t.Content)
	for _, c := range t.ToolCalls {
		fmt.Fprintf(&b, "\n<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Name, c.Arguments)
	}
	if t.FinishReason != "length" {
		b.WriteString("<|im_end|>")
	}
	return b.String()
}

func cmpStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
