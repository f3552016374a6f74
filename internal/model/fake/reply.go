package fake

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/wildawm/wildawm/internal/model"
)

// StreamPiece is how many characters (runes) of content, reasoning or
// tool-call arguments one streamed chunk carries.
const StreamPiece = 4

// DefaultWeightVersion is SGLang's weight_version until a trainer sets one.
const DefaultWeightVersion = "default"

// DefaultLogprobs are the logprobs a turn without its own sends for ids:
// a deterministic value in [-5, -0.1] per token, from its id and position.
func DefaultLogprobs(ids []int) []float64 {
	if ids == nil {
		return nil
	}
	out := make([]float64, len(ids))
	for i, id := range ids {
		out[i] = -float64((id*7+i)%50+1) / 10
	}
	return out
}

// TokenText is the text the fake gives token id in logprobs, as vLLM's
// return_tokens_as_token_ids writes it.
func TokenText(id int) string { return fmt.Sprintf("token_id:%d", id) }

// engineProblem is what the engine rejects in a request that is otherwise
// fine, or "": SGLang streams no token ids and no meta_info.
func engineProblem(engine model.Engine, req Request) string {
	if engine != model.EngineSGLang || !req.Stream {
		return ""
	}
	switch {
	case req.ReturnPromptTokenIDs:
		return "return_prompt_token_ids is not supported with streaming. Please set stream=false when using return_prompt_token_ids=true."
	case req.ReturnMetaInfo:
		return "return_meta_info is not supported with streaming. Please set stream=false when using return_meta_info=true."
	case req.ReturnTokenIDs:
		return "return_token_ids is not supported with streaming on /v1/chat/completions. Please set stream=false when using return_token_ids=true."
	}
	return ""
}

// answer is a turn resolved against its request: defaults filled in.
type answer struct {
	engine        model.Engine
	id, model     string
	content       string
	reasoning     string
	calls         []ToolCall // ids filled in
	finish        string
	usage         model.Usage
	promptIDs     []int
	completionIDs []int
	logprobs      []float64
	noLogprobs    bool
	weightVersion string
}

func compose(engine model.Engine, req Request, t Turn) answer {
	a := answer{
		engine:        engine,
		id:            fmt.Sprintf("chatcmpl-fake-%d", req.N),
		model:         cmp.Or(t.Model, req.Model),
		content:       t.Content,
		reasoning:     t.Reasoning,
		finish:        t.FinishReason,
		usage:         t.Usage,
		promptIDs:     t.PromptTokenIDs,
		completionIDs: t.CompletionTokenIDs,
		logprobs:      t.Logprobs,
		noLogprobs:    t.NoLogprobs,
		weightVersion: cmp.Or(t.WeightVersion, DefaultWeightVersion),
	}
	if a.logprobs == nil {
		a.logprobs = DefaultLogprobs(a.completionIDs)
	}
	for i, c := range t.ToolCalls {
		if c.ID == "" {
			c.ID = fmt.Sprintf("call_%d_%d", req.N, i)
		}
		a.calls = append(a.calls, c)
	}
	if a.finish == "" {
		a.finish = "stop"
		if len(a.calls) > 0 {
			a.finish = "tool_calls"
		}
	}
	if a.usage == (model.Usage{}) {
		a.usage = model.Usage{PromptTokens: len(a.promptIDs), CompletionTokens: len(a.completionIDs)}
	}
	return a
}

// reply writes turn as the completion of req, in the engine's shape: one
// JSON object, or server-sent events when the request streams.
func reply(w http.ResponseWriter, engine model.Engine, req Request, t Turn) {
	if t.CutAfter > 0 {
		t.CutAfter, w = 0, &cutWriter{ResponseWriter: w, left: t.CutAfter}
		defer w.(*cutWriter).cut()
	}
	if t.Body != "" {
		typ := t.BodyType
		if typ == "" {
			typ = "text/html; charset=utf-8"
		}
		w.Header().Set("Content-Type", typ)
		w.WriteHeader(http.StatusOK)
		w.Write([]byte(t.Body))
		return
	}
	if t.RetryAfter > 0 {
		w.Header().Set("Retry-After", fmt.Sprint(int(t.RetryAfter.Round(time.Second)/time.Second)))
	}
	if t.Status != 0 {
		msg := t.Error
		if msg == "" {
			msg = http.StatusText(t.Status)
		}
		writeEngineError(w, engine, t.Status, msg, t.ErrorType, t.ErrorCode)
		return
	}
	a := compose(engine, req, t)
	if req.Stream {
		a.stream(w, req)
		return
	}
	if sh, ok := shapes[a.engine]; ok {
		writeJSON(w, http.StatusOK, a.shaped(req, sh))
		return
	}
	if a.engine == model.EngineSGLang {
		writeJSON(w, http.StatusOK, a.sglang(req))
		return
	}
	writeJSON(w, http.StatusOK, a.vllm(req))
}

// vllm is the completion as vLLM writes it (ChatCompletionResponse in
// vllm/entrypoints/openai/chat_completion/protocol.py): the message's
// reasoning as "reasoning", prompt_token_ids at the top level, token_ids
// in the choice.
func (a answer) vllm(req Request) map[string]any {
	msg := map[string]any{"role": "assistant", "content": a.content}
	if a.content == "" && len(a.calls) > 0 {
		msg["content"] = nil
	}
	if a.reasoning != "" {
		msg["reasoning"] = a.reasoning
	}
	if len(a.calls) > 0 {
		msg["tool_calls"] = a.wireCalls()
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": a.finish, "stop_reason": nil,
		"logprobs": a.logprobsJSON(req, 0, a.tokens())}
	out := a.envelope("chat.completion")
	out["choices"] = []any{choice}
	out["usage"] = a.usageJSON()
	if req.ReturnTokenIDs {
		out["prompt_token_ids"] = orEmpty(a.promptIDs)
		choice["token_ids"] = orEmpty(a.completionIDs)
	}
	return out
}

// sglang is the completion as SGLang writes it (ChatCompletionResponse in
// python/sglang/srt/entrypoints/openai/protocol.py, filled by
// serving_chat.py): content "" rather than null, reasoning_content and
// tool_calls null when there are none, matched_stop, and per choice the
// prompt_token_ids (return_prompt_token_ids or return_token_ids),
// token_ids (return_token_ids) and meta_info (return_meta_info).
func (a answer) sglang(req Request) map[string]any {
	msg := map[string]any{"role": "assistant", "content": a.content, "reasoning_content": nil, "tool_calls": nil}
	if a.reasoning != "" {
		msg["reasoning_content"] = a.reasoning
	}
	if len(a.calls) > 0 {
		msg["tool_calls"] = a.wireCalls()
	}
	var matched any
	if a.finish == "stop" && len(a.completionIDs) > 0 {
		matched = a.completionIDs[len(a.completionIDs)-1] // the stop token
	}
	choice := map[string]any{"index": 0, "message": msg, "finish_reason": a.finish, "matched_stop": matched,
		"logprobs": a.logprobsJSON(req, 0, a.tokens())}
	if req.ReturnPromptTokenIDs || req.ReturnTokenIDs {
		choice["prompt_token_ids"] = orEmpty(a.promptIDs)
	}
	if req.ReturnTokenIDs {
		choice["token_ids"] = orEmpty(a.completionIDs)
	}
	if req.ReturnMetaInfo {
		choice["meta_info"] = a.metaInfo(req, matched)
	}
	out := a.envelope("chat.completion")
	out["choices"] = []any{choice}
	u := a.usageJSON()
	u["prompt_tokens_details"], u["reasoning_tokens"] = nil, 0
	out["usage"] = u
	out["metadata"] = nil
	return out
}

// metaInfo is SGLang's meta_info (TokenizerManager's): the finish reason
// in its internal form (a tool call is a "stop"), the counts, the weight
// version, and with logprobs the output tokens' [logprob, id, text]
// triples.
func (a answer) metaInfo(req Request, matched any) map[string]any {
	finish := map[string]any{"type": a.finish}
	if a.finish == "tool_calls" {
		finish["type"] = "stop"
	}
	if matched != nil {
		finish["matched"] = matched
	}
	m := map[string]any{
		"id":                fmt.Sprintf("fake-%d", req.N),
		"finish_reason":     finish,
		"prompt_tokens":     a.usage.PromptTokens,
		"completion_tokens": a.usage.CompletionTokens,
		"cached_tokens":     0,
		"weight_version":    a.weightVersion,
		"total_retractions": 0,
		"e2e_latency":       0.0,
	}
	if req.Logprobs && !a.noLogprobs {
		triples := []any{}
		for i := 0; i < len(a.completionIDs) && i < len(a.logprobs); i++ {
			id := a.completionIDs[i]
			triples = append(triples, []any{a.logprobs[i], id, TokenText(id)})
		}
		m["output_token_logprobs"] = triples
	}
	return m
}

func (a answer) wireCalls() []map[string]any {
	calls := make([]map[string]any, len(a.calls))
	for i, c := range a.calls {
		calls[i] = map[string]any{
			"id":       c.ID,
			"type":     "function",
			"function": map[string]any{"name": c.Name, "arguments": c.Arguments},
		}
	}
	return calls
}

// tokens is how many completion tokens the answer has: its ids', or its
// logprobs' when a test sent more (or no ids).
func (a answer) tokens() int { return max(len(a.completionIDs), len(a.logprobs)) }

// logprobsJSON is a choice's logprobs for the tokens [from, to), or null
// when the request asks for none. A token has an entry only when the turn
// has its logprob, so that a test can send a misaligned reply.
func (a answer) logprobsJSON(req Request, from, to int) any {
	if !req.Logprobs || a.noLogprobs {
		return nil
	}
	content := []any{}
	for i := from; i < to && i < len(a.logprobs); i++ {
		text := ""
		if i < len(a.completionIDs) {
			text = TokenText(a.completionIDs[i])
		}
		content = append(content, map[string]any{"token": text, "logprob": a.logprobs[i], "bytes": []byte(text), "top_logprobs": []any{}})
	}
	return map[string]any{"content": content}
}

// idsIn is the completion's token ids in [from, to).
func (a answer) idsIn(from, to int) []int {
	n := len(a.completionIDs)
	return orEmpty(a.completionIDs[min(from, n):min(to, n)])
}

// envelope is the fields every completion and chunk has.
func (a answer) envelope(object string) map[string]any {
	return map[string]any{"id": a.id, "object": object, "created": created, "model": a.model}
}

func (a answer) usageJSON() map[string]any {
	return map[string]any{
		"prompt_tokens":     a.usage.PromptTokens,
		"completion_tokens": a.usage.CompletionTokens,
		"total_tokens":      a.usage.PromptTokens + a.usage.CompletionTokens,
	}
}

// stream writes the answer as OpenAI's server-sent events: a
// chat.completion.chunk with the role, the reasoning's and the content's
// pieces, each tool call (its index, id, type and name, then its
// arguments in pieces), a chunk with the finish reason, a usage chunk
// when the request's stream_options include usage, and data: [DONE].
// The completion's tokens are spread over the chunks that carry text, in
// order: their logprobs when asked, and in vLLM's shape their token_ids
// when asked (with prompt_token_ids on the first chunk).
func (a answer) stream(w http.ResponseWriter, req Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flush := func() {
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	send := func(v any) {
		b, err := json.Marshal(v)
		if err != nil {
			panic("fake: " + err.Error()) // maps of plain values always marshal
		}
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush()
	}
	vllm := a.engine == model.EngineVLLM || a.engine == model.EngineAny
	reasoningKey := "reasoning"
	if a.engine == model.EngineSGLang || a.engine == model.EngineLlamaCpp {
		reasoningKey = "reasoning_content"
	}

	var deltas []map[string]any // the chunks that carry text
	for _, p := range pieces(a.reasoning) {
		deltas = append(deltas, map[string]any{reasoningKey: p})
	}
	for _, p := range pieces(a.content) {
		deltas = append(deltas, map[string]any{"content": p})
	}
	for i, c := range a.calls {
		deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
			"index": i, "id": c.ID, "type": "function",
			"function": map[string]any{"name": c.Name, "arguments": ""},
		}}})
		for _, p := range pieces(c.Arguments) {
			deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
				"index": i, "function": map[string]any{"arguments": p},
			}}})
		}
	}

	n := a.tokens()
	chunk := func(delta map[string]any, finish any, from, to int) map[string]any {
		var logprobs any // null on a chunk without tokens, as the engines send it
		if from < to {
			logprobs = a.logprobsJSON(req, from, to)
		}
		choice := map[string]any{"index": 0, "delta": delta, "logprobs": logprobs, "finish_reason": finish}
		c := a.envelope("chat.completion.chunk")
		c["choices"] = []any{choice}
		if req.IncludeUsage {
			c["usage"] = nil
		}
		if vllm && req.ReturnTokenIDs {
			choice["token_ids"] = a.idsIn(from, to)
		}
		return c
	}

	first := chunk(map[string]any{"role": "assistant", "content": ""}, nil, 0, 0)
	if vllm && req.ReturnTokenIDs {
		first["prompt_token_ids"] = orEmpty(a.promptIDs)
	}
	send(first)
	for k, d := range deltas {
		send(chunk(d, nil, k*n/len(deltas), (k+1)*n/len(deltas)))
	}
	from := n
	if len(deltas) == 0 {
		from = 0
	}
	send(chunk(map[string]any{}, a.finish, from, n))
	if req.IncludeUsage {
		u := a.envelope("chat.completion.chunk")
		u["choices"] = []any{}
		u["usage"] = a.usageJSON()
		send(u)
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	flush()
}

// pieces cuts s into StreamPiece-rune pieces.
func pieces(s string) []string {
	var out []string
	r := []rune(s)
	for len(r) > 0 {
		n := min(StreamPiece, len(r))
		out = append(out, string(r[:n]))
		r = r[n:]
	}
	return out
}

func orEmpty(ids []int) []int {
	if ids == nil {
		return []int{}
	}
	return ids
}

// cutWriter passes the first left bytes of a reply and keeps the rest:
// the whole body's length is announced (Content-Length, set by cut from
// what was written), so the client sees the body end early.
type cutWriter struct {
	http.ResponseWriter
	left   int
	status int
	body   []byte
}

func (c *cutWriter) WriteHeader(status int) { c.status = status }

func (c *cutWriter) Write(b []byte) (int, error) {
	c.body = append(c.body, b...)
	return len(b), nil
}

// cut sends the status, the whole body's Content-Length and the first
// left bytes, then closes the connection.
func (c *cutWriter) cut() {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n := min(c.left, len(c.body))
	c.Header().Set("Content-Length", fmt.Sprint(len(c.body)))
	c.ResponseWriter.WriteHeader(c.status)
	c.ResponseWriter.Write(c.body[:n])
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
	if hj, ok := c.ResponseWriter.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
		}
	}
}
