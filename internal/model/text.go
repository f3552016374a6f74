package model

import (
	"encoding/json"
	"regexp"
	"strings"
)

// Reasoning models write their thinking inline, between <think> and
// </think>, when the server runs no reasoning parser (vLLM's
// --reasoning-parser, SGLang's --reasoning-parser); some chat templates
// open the block in the prompt, so the reply holds only its end.
const (
	thinkOpen  = "<think>"
	thinkClose = "</think>"
)

// SplitThink splits a reply's text into what it says and the reasoning
// written inline: every <think>...</think> block, the text up to a
// </think> that opens nowhere (the template opened it), and the rest
// after a <think> that never closes (cut off mid-thought). ok is false
// when the text has no such block.
func SplitThink(text string) (said, reasoning string, ok bool) {
	lower := strings.ToLower(text)
	if !strings.Contains(lower, thinkOpen) && !strings.Contains(lower, thinkClose) {
		return text, "", false
	}
	var say, think []string
	rest, lrest := text, lower
	// A close before any open: the block began in the prompt.
	if c, o := strings.Index(lrest, thinkClose), strings.Index(lrest, thinkOpen); c >= 0 && (o < 0 || c < o) {
		think = append(think, rest[:c])
		rest, lrest = rest[c+len(thinkClose):], lrest[c+len(thinkClose):]
	}
	for {
		o := strings.Index(lrest, thinkOpen)
		if o < 0 {
			say = append(say, rest)
			break
		}
		say = append(say, rest[:o])
		rest, lrest = rest[o+len(thinkOpen):], lrest[o+len(thinkOpen):]
		c := strings.Index(lrest, thinkClose)
		if c < 0 {
			think = append(think, rest) // never closed
			break
		}
		think = append(think, rest[:c])
		rest, lrest = rest[c+len(thinkClose):], lrest[c+len(thinkClose):]
	}
	for i := range think {
		think[i] = strings.TrimSpace(think[i])
	}
	return strings.TrimSpace(strings.Join(say, "")), strings.TrimSpace(strings.Join(think, "\n\n")), true
}

// toolCallTags are the markup chat templates wrap a tool call in when
// they write one as text (Hermes and Qwen: <tool_call>; Llama 3:
// <|python_tag|>; Mistral: [TOOL_CALLS]; DeepSeek: <｜tool▁call▁begin｜>).
var toolCallTags = []string{"<tool_call>", "<|python_tag|>", "[TOOL_CALLS]", "<｜tool▁call▁begin｜>", "<function="}

var jsonBlock = regexp.MustCompile("(?s)```(?:json)?\\s*(\\{.*?\\})\\s*```")

// TextToolCall reports whether a reply's text is a tool call written as
// text instead of made (the server parses no tool calls for this model,
// or the model wrote the template's markup itself): a template's tool-call
// tag, or a JSON object (the whole text, or a fenced block) naming one of
// tools with its arguments. what quotes the evidence.
func TextToolCall(text string, tools []string) (what string, ok bool) {
	for _, tag := range toolCallTags {
		if strings.Contains(text, tag) {
			return tag, true
		}
	}
	candidates := []string{strings.TrimSpace(text)}
	for _, m := range jsonBlock.FindAllStringSubmatch(text, -1) {
		candidates = append(candidates, m[1])
	}
	for _, c := range candidates {
		var call struct {
			Name       string          `json:"name"`
			Arguments  json.RawMessage `json:"arguments"`
			Parameters json.RawMessage `json:"parameters"`
			Function   *struct {
				Name string `json:"name"`
			} `json:"function"`
		}
		if !strings.HasPrefix(c, "{") || json.Unmarshal([]byte(c), &call) != nil {
			continue
		}
		name := call.Name
		if call.Function != nil && name == "" {
			name = call.Function.Name
		}
		for _, t := range tools {
			if name == t {
				return `{"name": "` + name + `", ...}`, true
			}
		}
	}
	return "", false
}
