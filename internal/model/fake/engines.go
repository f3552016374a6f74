package fake

import (
	"cmp"
	"fmt"
	"maps"
	"net/http"
	"strings"

	"github.com/wildawm/wildawm/internal/model"
)

// shape is how a server without token ids writes a completion: where
// the thinking goes ("" drops it), whether content is null beside tool
// calls, whether each call carries its index, whether a choice without
// logprobs says null (else leaves the field out), the top-level and
// message fields of its own, and whether it reports llama-server's
// timings.
type shape struct {
	reasoningKey string
	nullContent  bool
	callIndex    bool
	nullLogprobs bool
	top, message map[string]any
	timings      bool
}

// shapes are the servers without token ids: Ollama's OpenAI layer
// (ChatCompletion in openai/openai.go), llama.cpp's llama-server
// (to_json_oaicompat_chat in tools/server/server-task.cpp, with its
// "timings"), a hosted API (OpenAI's fields only, the message's refusal
// and annotations). None returns token ids, whatever the request asks.
var shapes = map[model.Engine]shape{
	model.EngineOllama:   {reasoningKey: "reasoning", callIndex: true, top: map[string]any{"system_fingerprint": "fp_ollama"}},
	model.EngineLlamaCpp: {reasoningKey: "reasoning_content", nullContent: true, timings: true, top: map[string]any{"system_fingerprint": "b0-fake"}},
	model.EngineOpenAI: {nullContent: true, nullLogprobs: true, top: map[string]any{"system_fingerprint": "fp_fake", "service_tier": "default"},
		message: map[string]any{"refusal": nil, "annotations": []any{}}},
}

// shaped is the completion in sh's shape.
func (a answer) shaped(req Request, sh shape) map[string]any {
	msg := map[string]any{"role": "assistant", "content": a.content}
	maps.Copy(msg, sh.message)
	if sh.nullContent && a.content == "" && len(a.calls) > 0 {
		msg["content"] = nil
	}
	if a.reasoning != "" && sh.reasoningKey != "" {
		msg[sh.reasoningKey] = a.reasoning
	}
	if len(a.calls) > 0 {
		calls := a.wireCalls()
		for i := range calls {
			if sh.callIndex { // Ollama's
				calls[i]["index"] = i
			}
		}
		msg["tool_calls"] = calls
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": a.finish}
	if lp := a.logprobsJSON(req, 0, a.tokens()); lp != nil || sh.nullLogprobs {
		choice["logprobs"] = lp
	}
	out := a.envelope("chat.completion")
	maps.Copy(out, sh.top)
	out["choices"] = []any{choice}
	out["usage"] = a.usageJSON()
	if sh.timings {
		out["timings"] = map[string]any{"prompt_n": a.usage.PromptTokens, "prompt_ms": 1.0, "predicted_n": a.usage.CompletionTokens, "predicted_ms": 1.0}
	}
	return out
}

// toolRefusal is how the engine answers a request with tools when it was
// not started to call them (SetToolCalling(false)): an HTTP error in its
// words, or ok=false when it serves the request all the same and the
// model writes its calls as text (SGLang without --tool-call-parser, an
// unnamed server).
func toolRefusal(engine model.Engine, req Request) (status int, msg string, ok bool) {
	if len(req.Tools) == 0 {
		return 0, "", false
	}
	switch engine {
	case model.EngineVLLM:
		// vllm/entrypoints/openai/chat_completion/serving.py
		return http.StatusBadRequest, `"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set`, true
	case model.EngineLlamaCpp:
		// tools/server/utils.hpp, oaicompat_chat_params_parse: a
		// server started with --no-jinja (--jinja is the default now),
		// an error of type server_error.
		return http.StatusInternalServerError, "tools param requires --jinja flag", true
	case model.EngineOllama:
		// server/routes.go, ChatHandler
		return http.StatusBadRequest, fmt.Sprintf("registry.ollama.ai/library/%s does not support tools", req.Model), true
	case model.EngineOpenAI:
		return http.StatusBadRequest, fmt.Sprintf("tools is not supported with this model (%s)", req.Model), true
	}
	return 0, "", false
}

// textCalls is a turn's tool calls written into its content, as a model
// writes them when the server parses no tool calls (Hermes's
// <tool_call> blocks).
func textCalls(t Turn) Turn {
	if len(t.ToolCalls) == 0 {
		return t
	}
	var b strings.Builder
	b.WriteString(t.Content)
	for _, c := range t.ToolCalls {
		fmt.Fprintf(&b, "\n<tool_call>\n{\"name\": %q, \"arguments\": %s}\n</tool_call>", c.Name, c.Arguments)
	}
	t.Content = strings.TrimSpace(b.String())
	t.ToolCalls = nil
	if t.FinishReason == "tool_calls" {
		t.FinishReason = "stop"
	}
	return t
}

// errorBody is an error's JSON body as the engine writes it: OpenAI's
// nested shape with a numeric code (vLLM's ErrorResponse), SGLang's flat
// one (its protocol.py ErrorResponse), llama.cpp's with its own type
// names, Ollama's and a hosted API's with OpenAI's type names.
func errorBody(engine model.Engine, status int, msg, typ, code string) map[string]any {
	if engine == model.EngineSGLang {
		var c any = status
		if code != "" {
			c = code
		}
		return map[string]any{"object": "error", "message": msg, "type": cmp.Or(typ, errorType(status)), "param": nil, "code": c}
	}
	if engine == model.EngineLlamaCpp {
		if typ == "" {
			typ = "invalid_request_error"
			switch {
			case status == http.StatusServiceUnavailable:
				typ = "unavailable_error"
			case status >= 500:
				typ = "server_error"
			}
		}
		return map[string]any{"error": map[string]any{"code": status, "message": msg, "type": typ}}
	}
	if typ == "" {
		typ = errorType(status)
		if engine == model.EngineOllama || engine == model.EngineOpenAI {
			typ = "invalid_request_error"
			if status >= 500 {
				typ = "api_error"
			}
		}
	}
	var c any = status
	if code != "" {
		c = code
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": typ, "param": nil, "code": c}}
}
