package model

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// ErrNoTokenMode: the engine cannot serve token mode (Engine.TokenMode).
var ErrNoTokenMode = errors.New("the engine cannot take token ids")

// TokenRequest is one generation from prompt token ids (token mode): the
// harness holds the sequence, the engine continues it.
type TokenRequest struct {
	// PromptIDs is the whole sequence so far; it must not be empty.
	PromptIDs []int
	// MaxTokens bounds the completion; 0 leaves it to the server.
	MaxTokens int
	// Temperature, TopP and Seed are sent when non-nil (the Options'
	// Temperature and Seed otherwise).
	Temperature *float64
	TopP        *float64
	Seed        *int64
}

// TokenResponse is what the engine generated: the completion's ids (the
// stop token included), its text (special tokens left out), a logprob per
// id, why it stopped ("stop" or "length") and, from SGLang, the weight
// version.
type TokenResponse struct {
	Text               string
	CompletionTokenIDs []int
	Logprobs           []float64
	FinishReason       string
	WeightVersion      string
	Latency            time.Duration
	Attempts           int
}

// TokenizeRequest asks for the token ids of messages rendered by the
// model's chat template, with the generation prompt when Generation is
// set.
type TokenizeRequest struct {
	Messages   []Message
	Tools      []Tool
	Generation bool
}

// atRoot is path at the server's root, the spec's base URL without its
// /v1 (vLLM serves /tokenize and SGLang /generate there), relative to the
// base URL as the SDK takes paths.
func (c *Client) atRoot(path string) string {
	if strings.HasSuffix(c.spec.BaseURL, "/v1") {
		return "../" + path
	}
	return path
}

// post sends body to path (relative to the base URL, or absolute) with the
// client's retries and reads the reply into out.
func (c *Client) post(ctx context.Context, op, path string, body, out any) (int, error) {
	sdk := openai.Client{Options: c.sdk}
	return c.do(ctx, op, func(ctx context.Context, opts ...option.RequestOption) error {
		var raw []byte
		if err := sdk.Post(ctx, path, body, &raw, opts...); err != nil {
			return err
		}
		return json.Unmarshal(raw, out)
	})
}

// Generate continues req.PromptIDs: vLLM's POST /v1/completions with the
// ids as the prompt (return_token_ids, logprobs 0: the sampled token's),
// SGLang's POST /generate with input_ids (return_logprob). An engine that
// cannot is refused before anything is sent (ErrNoTokenMode).
func (c *Client) Generate(ctx context.Context, req TokenRequest) (*TokenResponse, error) {
	r, err := c.generate(ctx, req)
	return r, c.staged(err)
}

func (c *Client) refuse(op string, err error) *Error {
	return &Error{Op: op, Endpoint: c.spec.BaseURL, Model: c.spec.Model, Message: err.Error(),
		Fix: "nothing was sent", Err: err}
}

func (c *Client) generate(ctx context.Context, req TokenRequest) (*TokenResponse, error) {
	if err := c.spec.Engine.TokenMode(); err != nil {
		return nil, c.refuse("generate", err)
	}
	if len(req.PromptIDs) == 0 {
		return nil, c.refuse("generate", errors.New("TokenRequest.PromptIDs is empty: give the sequence to continue"))
	}
	temp, seed := cmpPtr(req.Temperature, c.temperature), cmpPtr(req.Seed, c.seed)
	start := time.Now()
	out := &TokenResponse{}
	var attempts int
	var err error
	switch c.spec.Engine {
	case EngineVLLM:
		body := map[string]any{"model": c.spec.Model, "prompt": req.PromptIDs, "logprobs": 0, "return_token_ids": true}
		if req.MaxTokens > 0 {
			body["max_tokens"] = req.MaxTokens
		}
		setOpt(body, "temperature", temp)
		setOpt(body, "top_p", req.TopP)
		setOpt(body, "seed", seed)
		var r struct {
			Choices []struct {
				Text         string `json:"text"`
				TokenIDs     []int  `json:"token_ids"`
				FinishReason string `json:"finish_reason"`
				Logprobs     *struct {
					TokenLogprobs []*float64 `json:"token_logprobs"`
				} `json:"logprobs"`
			} `json:"choices"`
		}
		attempts, err = c.post(ctx, "generate", "completions", body, &r)
		if err == nil {
			if len(r.Choices) == 0 {
				return nil, c.badReply(attempts, errors.New("the completion has no choices"))
			}
			ch := r.Choices[0]
			out.Text, out.CompletionTokenIDs, out.FinishReason = ch.Text, ch.TokenIDs, ch.FinishReason
			if ch.Logprobs != nil {
				for i, lp := range ch.Logprobs.TokenLogprobs {
					if lp == nil {
						return nil, c.badReply(attempts, fmt.Errorf("choices[0].logprobs.token_logprobs[%d] is null", i))
					}
					out.Logprobs = append(out.Logprobs, *lp)
				}
			}
		}
	case EngineSGLang:
		sp := map[string]any{}
		if req.MaxTokens > 0 {
			sp["max_new_tokens"] = req.MaxTokens
		}
		setOpt(sp, "temperature", temp)
		setOpt(sp, "top_p", req.TopP)
		setOpt(sp, "sampling_seed", seed)
		body := map[string]any{"input_ids": req.PromptIDs, "sampling_params": sp, "return_logprob": true}
		var r struct {
			Text      string `json:"text"`
			OutputIDs []int  `json:"output_ids"`
			MetaInfo  struct {
				FinishReason        json.RawMessage     `json:"finish_reason"`
				WeightVersion       json.RawMessage     `json:"weight_version"`
				OutputTokenLogprobs [][]json.RawMessage `json:"output_token_logprobs"`
			} `json:"meta_info"`
		}
		attempts, err = c.post(ctx, "generate", c.atRoot("generate"), body, &r)
		if err == nil {
			out.Text, out.CompletionTokenIDs = r.Text, r.OutputIDs
			out.WeightVersion = rawString(r.MetaInfo.WeightVersion)
			var fr struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(r.MetaInfo.FinishReason, &fr) == nil {
				out.FinishReason = fr.Type
			}
			for i, t := range r.MetaInfo.OutputTokenLogprobs {
				var lp float64
				if len(t) < 2 || json.Unmarshal(t[0], &lp) != nil {
					return nil, c.badReply(attempts, fmt.Errorf("meta_info.output_token_logprobs[%d] is not a [logprob, token id, text] triple", i))
				}
				out.Logprobs = append(out.Logprobs, lp)
			}
			if out.CompletionTokenIDs == nil && r.MetaInfo.OutputTokenLogprobs != nil {
				if out.CompletionTokenIDs, err = outputTokenIDs(r.MetaInfo.OutputTokenLogprobs); err != nil {
					return nil, c.badReply(attempts, err)
				}
			}
		}
	}
	if err != nil {
		return nil, err
	}
	if out.Logprobs != nil && len(out.Logprobs) != len(out.CompletionTokenIDs) {
		return nil, c.badReply(attempts, fmt.Errorf("%w: %d completion token ids and %d logprobs", ErrMisaligned, len(out.CompletionTokenIDs), len(out.Logprobs)))
	}
	if len(out.CompletionTokenIDs) == 0 && out.FinishReason != "length" {
		return nil, c.badReply(attempts, errors.New("the reply has no completion token ids"))
	}
	out.Latency, out.Attempts = time.Since(start), attempts
	return out, nil
}

// Tokenize is the token ids of req's messages rendered by the chat
// template. vLLM applies its own template (POST /tokenize with messages,
// add_generation_prompt and tools); SGLang's /v1/tokenize takes text only,
// so the client renders ChatML (RenderChatML, the Qwen and Hermes format)
// and sends it with add_special_tokens false.
func (c *Client) Tokenize(ctx context.Context, req TokenizeRequest) ([]int, error) {
	ids, err := c.tokenize(ctx, req)
	return ids, c.staged(err)
}

func (c *Client) tokenize(ctx context.Context, req TokenizeRequest) ([]int, error) {
	if err := c.spec.Engine.TokenMode(); err != nil {
		return nil, c.refuse("tokenize", err)
	}
	var r struct {
		Tokens []int `json:"tokens"`
	}
	var err error
	var attempts int
	switch c.spec.Engine {
	case EngineVLLM:
		p, _, perr := c.params(Request{Messages: req.Messages, Tools: req.Tools})
		if perr != nil {
			return nil, c.refuse("tokenize", perr)
		}
		body := map[string]any{"model": c.spec.Model, "messages": p.Messages, "add_generation_prompt": req.Generation}
		if len(p.Tools) > 0 {
			body["tools"] = p.Tools
		}
		attempts, err = c.post(ctx, "tokenize", c.atRoot("tokenize"), body, &r)
	case EngineSGLang:
		body := map[string]any{"model": c.spec.Model, "prompt": RenderChatML(req.Messages, req.Tools, req.Generation), "add_special_tokens": false}
		attempts, err = c.post(ctx, "tokenize", "tokenize", body, &r)
	}
	if err != nil {
		return nil, err
	}
	if r.Tokens == nil {
		return nil, c.badReply(attempts, errors.New("the tokenize reply has no tokens"))
	}
	return r.Tokens, nil
}

func (c *Client) badReply(attempts int, err error) *Error {
	return &Error{Op: "generate", Endpoint: c.spec.BaseURL, Model: c.spec.Model, Status: http.StatusOK, Attempts: attempts,
		Message: err.Error(), Fix: "the engine's reply is not in the shape docs/models.md cites (token mode): check the engine's version", Err: err}
}

func setOpt[T any](m map[string]any, k string, v *T) {
	if v != nil {
		m[k] = *v
	}
}

// RenderChatML is msgs in the ChatML of Qwen and Hermes models, as their
// templates write it: tools in the system turn, tool results as a user
// turn of <tool_response> blocks, calls as <tool_call>{json}</tool_call>.
func RenderChatML(msgs []Message, tools []Tool, gen bool) string {
	var b strings.Builder
	for i, m := range msgs {
		switch m.Role {
		case RoleSystem:
			b.WriteString("<|im_start|>system\n" + m.Content)
			if len(tools) > 0 {
				b.WriteString("\n\n# Tools\n<tools>")
				for _, t := range tools {
					j, _ := json.Marshal(map[string]any{"name": t.Name, "description": t.Description, "parameters": t.Parameters})
					b.WriteString("\n" + string(j))
				}
				b.WriteString("\n</tools>")
			}
			b.WriteString("<|im_end|>\n")
		case RoleAssistant:
			b.WriteString("<|im_start|>assistant\n" + m.Content)
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "\n<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Name, c.wireArguments())
			}
			b.WriteString("<|im_end|>\n")
		case RoleTool:
			if i == 0 || msgs[i-1].Role != RoleTool {
				b.WriteString("<|im_start|>user")
			}
			b.WriteString("\n<tool_response>\n" + m.Content + "\n</tool_response>")
			if i == len(msgs)-1 || msgs[i+1].Role != RoleTool {
				b.WriteString("<|im_end|>\n")
			}
		default:
			b.WriteString("<|im_start|>" + string(m.Role) + "\n" + m.Content + "<|im_end|>\n")
		}
	}
	if gen {
		b.WriteString("<|im_start|>assistant\n")
	}
	return b.String()
}

// ParseToolText reads a completion written in the Qwen/Hermes tool-call
// format: its reasoning (<think>...</think>), its content, and each
// <tool_call>{"name": ..., "arguments": {...}}</tool_call> as a ToolCall
// with ids call_<turn>_<i>. A block that is not closed, not JSON, or has
// no name is a ToolCall with ArgError, as a server's bad arguments are,
// so that the harness ends the rollout as a format failure.
func ParseToolText(text string, turn int) Response {
	r := Response{Content: text}
	r.splitThink()
	rest := r.Content
	var content strings.Builder
	for i := 0; ; i++ {
		before, after, ok := strings.Cut(rest, "<tool_call>")
		content.WriteString(before)
		if !ok {
			break
		}
		id := fmt.Sprintf("call_%d_%d", turn, i)
		body, tail, closed := strings.Cut(after, "</tool_call>")
		rest = tail
		if !closed {
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, RawArguments: strings.TrimSpace(after),
				ArgError: "a <tool_call> block without </tool_call>"})
			break
		}
		var call struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		}
		raw := strings.TrimSpace(body)
		if err := json.Unmarshal([]byte(raw), &call); err != nil || call.Name == "" {
			why := "a <tool_call> block that is not {\"name\": ..., \"arguments\": {...}}"
			if err != nil {
				why += ": " + err.Error()
			}
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, RawArguments: raw, ArgError: why})
			continue
		}
		args := string(call.Arguments)
		if args == "" || args == "null" {
			args = "{}"
		}
		r.ToolCalls = append(r.ToolCalls, readToolCall(id, call.Name, args))
	}
	r.Content = strings.TrimSpace(content.String())
	return r
}
