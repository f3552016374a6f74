package model

import (
	"bytes"
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
)

// The defaults Options' zero values stand for.
const (
	DefaultTimeout    = 120 * time.Second
	DefaultMaxRetries = 3
	DefaultBackoff    = time.Second
	// maxBackoff caps the schedule; maxRetryAfter caps a server's
	// Retry-After.
	maxBackoff    = 30 * time.Second
	maxRetryAfter = 60 * time.Second
	// maxErrorBody is how much of an error body is read.
	maxErrorBody = 1 << 20
)

// Attribute keys of the client's log records.
const (
	logKeyOp       = "op"
	logKeyEndpoint = "endpoint"
	logKeyStatus   = "status"
	logKeyAttempt  = "attempt"
	logKeyWait     = "wait"
	logKeyError    = "error"
)

// Options tune a Client; the zero value and nil mean the defaults.
type Options struct {
	// Timeout bounds each attempt; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries bounds the retries after the first attempt; 0 means
	// DefaultMaxRetries, a negative value none.
	MaxRetries int
	// Backoff is the wait before the first retry, doubled before each
	// next one (at most 30s); 0 means DefaultBackoff.
	Backoff time.Duration
	// Seed and Temperature are sent with every request that does not set
	// its own; nil sends none, leaving them to the server.
	Seed        *int64
	Temperature *float64
	// HTTPClient carries the requests; nil means a client of the package's
	// own (a clone of http.DefaultTransport).
	HTTPClient *http.Client
	// Logger receives a record per retry; nil discards them.
	Logger *slog.Logger
	// TimeoutSetting names, in a time-out's error, where the user sets
	// Timeout (a command line's flag); "" means "Options.Timeout".
	TimeoutSetting string
	// Stage names the stage the client serves in its errors (a command
	// line's flag, "--judge-model"); "" names none.
	Stage string
}

// Client talks to one model on one OpenAI-compatible server. It is safe
// for concurrent use.
type Client struct {
	spec        Spec
	timeout     time.Duration
	maxRetries  int
	backoff     time.Duration
	seed        *int64
	temperature *float64
	log         *slog.Logger
	knob        string // where Timeout is set, for errors
	stage       string // Options.Stage
	// plain: the server refused an engine's extension field (a hosted
	// API): the client sends none from then on.
	plain      atomic.Bool
	chat       openai.ChatCompletionService
	models     openai.ModelService
	embeddings openai.EmbeddingService
	// sdk are the SDK's options, for the engines' own endpoints
	// (tokens.go).
	sdk []option.RequestOption
}

// New returns a client for spec. It reads no environment: ParseSpec does.
func New(spec Spec, opts *Options) (*Client, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	var o Options
	if opts != nil {
		o = *opts
	}
	c := &Client{
		spec:        spec,
		timeout:     o.Timeout,
		maxRetries:  o.MaxRetries,
		backoff:     o.Backoff,
		seed:        o.Seed,
		temperature: o.Temperature,
		log:         o.Logger,
		knob:        o.TimeoutSetting,
		stage:       o.Stage,
	}
	if c.knob == "" {
		c.knob = "Options.Timeout"
	}
	if c.timeout <= 0 {
		c.timeout = DefaultTimeout
	}
	switch {
	case c.maxRetries == 0:
		c.maxRetries = DefaultMaxRetries
	case c.maxRetries < 0:
		c.maxRetries = 0
	}
	if c.backoff <= 0 {
		c.backoff = DefaultBackoff
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	hc := o.HTTPClient
	if hc == nil {
		hc = &http.Client{}
		if t, ok := http.DefaultTransport.(*http.Transport); ok {
			hc.Transport = t.Clone()
		}
	}
	// The services, not openai.NewClient, so that the SDK reads no
	// OPENAI_* variable: the spec is the whole configuration.
	sdk := []option.RequestOption{
		option.WithBaseURL(spec.BaseURL + "/"),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(0),
	}
	if spec.APIKey != "" {
		sdk = append(sdk, option.WithAPIKey(spec.APIKey))
	}
	c.chat = openai.NewChatCompletionService(sdk...)
	c.models = openai.NewModelService(sdk...)
	c.embeddings = openai.NewEmbeddingService(sdk...)
	c.sdk = sdk
	return c, nil
}

// Spec returns the client's spec.
func (c *Client) Spec() Spec { return c.spec }

// Chat sends req and returns the first choice. A failed exchange is an
// *Error; a tool call with bad arguments is a ToolCall with ArgError.
func (c *Client) Chat(ctx context.Context, req Request) (*Response, error) {
	resp, err := c.chatCall(ctx, req)
	return resp, c.staged(err)
}

// staged names the client's stage in err, a failed exchange.
func (c *Client) staged(err error) error {
	var e *Error
	if c.stage != "" && errors.As(err, &e) {
		e.Stage = c.stage
	}
	return err
}

func (c *Client) chatCall(ctx context.Context, req Request) (*Response, error) {
	if err := req.check(); err != nil {
		return nil, &Error{Op: "chat", Endpoint: c.spec.BaseURL, Model: c.spec.Model, Message: err.Error(),
			Fix: "fix the request: nothing was sent", Err: err}
	}
	params, extra, err := c.params(req)
	if err != nil {
		return nil, &Error{Op: "chat", Endpoint: c.spec.BaseURL, Model: c.spec.Model, Message: err.Error(),
			Fix: "fix the request: nothing was sent", Err: err}
	}
	start := time.Now()
	var completion *openai.ChatCompletion
	send := func(extra []option.RequestOption) (int, error) {
		return c.do(ctx, "chat", func(ctx context.Context, opts ...option.RequestOption) error {
			var err error
			completion, err = c.chat.New(ctx, params, append(slices.Clone(extra), opts...)...)
			return err
		})
	}
	if c.plain.Load() {
		extra = nil
	}
	attempts, err := send(extra)
	if refused := refusedExtension(err, c.spec.Engine, extensions(c.spec.Engine, req)); refused != "" && len(extra) > 0 {
		// A server without the engines' fields (a hosted API) refuses
		// them: ask again without any, and send none from now on. A stage
		// that needs token ids says so when none come (it names the
		// engine prefix to give).
		c.plain.Store(true)
		c.log.Warn("model: the server refuses the engines' request fields; sending none (no token ids)", logKeyEndpoint, c.spec.BaseURL, "field", refused)
		var n int
		n, err = send(nil)
		attempts += n
	}
	if err != nil {
		c.explainNotServed(ctx, err)
		return nil, err
	}
	resp, err := c.read(completion)
	if err != nil {
		fix := "the server's reply is not an OpenAI chat completion"
		if errors.Is(err, ErrMisaligned) {
			fix = "the server's token ids and logprobs cannot be paired for training: report it to the server's maintainers"
		}
		return nil, &Error{Op: "chat", Endpoint: c.spec.BaseURL, Model: c.spec.Model, Status: http.StatusOK,
			Message: err.Error(), Attempts: attempts, Fix: fix, Err: err}
	}
	resp.Latency = time.Since(start)
	resp.Attempts = attempts
	return resp, nil
}

// Embed returns one embedding per text (POST /embeddings, the spec's model
// an embedding model), in the texts' order, with the retries and timeouts
// of Chat.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float64, error) {
	v, err := c.embed(ctx, texts)
	return v, c.staged(err)
}

func (c *Client) embed(ctx context.Context, texts []string) ([][]float64, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	var out [][]float64
	var bad string // what is wrong with a vector that decoded
	_, err := c.do(ctx, "embeddings", func(ctx context.Context, opts ...option.RequestOption) error {
		res, err := c.embeddings.New(ctx, openai.EmbeddingNewParams{Input: openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
			Model: openai.EmbeddingModel(c.spec.Model)}, opts...)
		if err != nil {
			return err
		}
		out = make([][]float64, len(texts))
		bad = ""
		for _, e := range res.Data {
			if e.Index < 0 || int(e.Index) >= len(texts) {
				return fmt.Errorf("the server returned an embedding for input %d of %d", e.Index, len(texts))
			}
			out[e.Index] = e.Embedding
			if j := nullElement(e.RawJSON()); j >= 0 && bad == "" {
				bad = fmt.Sprintf("the embedding of input %d has null at element %d (a NaN or an infinity, which JSON cannot carry)", e.Index, j)
			}
		}
		for i, v := range out {
			if len(v) == 0 {
				return fmt.Errorf("the server returned no embedding for input %d", i)
			}
		}
		return nil
	})
	if err == nil && bad != "" {
		return nil, &Error{Op: "embeddings", Endpoint: c.spec.BaseURL, Model: c.spec.Model, Status: http.StatusOK, Message: bad,
			Fix: "the embedding model computes NaNs: check its checkpoint and dtype (fp16 overflow), or serve another embedding model"}
	}
	return out, err
}

// nullElement is the index of the first null in an embedding object's
// "embedding" array, or -1.
func nullElement(raw string) int {
	var e struct {
		Embedding []*float64 `json:"embedding"`
	}
	if json.Unmarshal([]byte(raw), &e) != nil {
		return -1
	}
	return slices.Index(e.Embedding, nil)
}

// Models lists the models the server serves (GET /models), in its order.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	ids, err := c.listModels(ctx, c.maxRetries)
	return ids, c.staged(err)
}

func (c *Client) listModels(ctx context.Context, retries int) ([]string, error) {
	var ids []string
	_, err := c.doRetries(ctx, "models", retries, func(ctx context.Context, opts ...option.RequestOption) error {
		page, err := c.models.List(ctx, opts...)
		if err != nil {
			return err
		}
		ids = ids[:0]
		for _, m := range page.Data {
			ids = append(ids, m.ID)
		}
		return nil
	})
	return ids, err
}

// explainNotServed turns the fix of a rejection that may be about the
// model's name into the list of what the server serves, when its model
// list lacks the spec's model.
func (c *Client) explainNotServed(ctx context.Context, err error) {
	e, ok := err.(*Error)
	if !ok || !mentionsModel(e.Status, e.Message) {
		return
	}
	ids, lerr := c.listModels(ctx, 0)
	if lerr != nil || slices.Contains(ids, c.spec.Model) {
		return
	}
	e.Fix = fmt.Sprintf("model %s not served; the server serves: %s", c.spec.Model, served(ids))
	e.Err = ErrNotServed
}

// params builds the SDK's request, and the options that add what it has
// no field for.
func (c *Client) params(req Request) (openai.ChatCompletionNewParams, []option.RequestOption, error) {
	p := openai.ChatCompletionNewParams{Model: c.spec.Model}
	for _, m := range req.Messages {
		p.Messages = append(p.Messages, wireMessage(m))
	}
	for _, t := range req.Tools {
		def := openai.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = openai.String(t.Description)
		}
		if t.Parameters != nil {
			schema, err := schemaObject(t.Parameters)
			if err != nil {
				return p, nil, fmt.Errorf("tool %q: parameters: %w", t.Name, err)
			}
			def.Parameters = schema
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	if req.ToolChoice != "" {
		p.ToolChoice = openai.ChatCompletionToolChoiceOptionUnionParam{OfAuto: openai.String(string(req.ToolChoice))}
	}
	if req.MaxTokens > 0 {
		p.MaxTokens = openai.Int(int64(req.MaxTokens))
	}
	if req.TopP != nil {
		p.TopP = openai.Float(*req.TopP)
	}
	if t := cmpPtr(req.Temperature, c.temperature); t != nil {
		p.Temperature = openai.Float(*t)
	}
	if s := cmpPtr(req.Seed, c.seed); s != nil {
		p.Seed = openai.Int(*s)
	}
	if req.Logprobs {
		p.Logprobs = openai.Bool(true)
	}
	var extra []option.RequestOption
	for _, k := range extensions(c.spec.Engine, req) {
		extra = append(extra, option.WithJSONSet(k, true))
	}
	return p, extra, nil
}

// extensions are the engine's own request fields req needs, each sent as
// true (docs/models.md has the sources):
//
//	vLLM:   return_token_ids
//	SGLang: return_token_ids and return_prompt_token_ids; and always
//	        return_meta_info, for its weight_version
//	any:    return_token_ids, which both read
//
// and none for the engines that return no token ids (Ollama, llama.cpp, a
// hosted API).
func extensions(e Engine, req Request) []string {
	var keys []string
	if req.ReturnTokenIDs && e.TokenIDs() {
		keys = append(keys, "return_token_ids")
		if e == EngineSGLang {
			keys = append(keys, "return_prompt_token_ids")
		}
	}
	if e == EngineSGLang {
		keys = append(keys, "return_meta_info")
	}
	return keys
}

// refusedExtension is the extension field a 400 from a server of no
// named engine refuses ("Unrecognized request argument supplied: F",
// "Extra inputs are not permitted", "unknown field F"), or "".
func refusedExtension(err error, e Engine, keys []string) string {
	var me *Error
	if e != EngineAny || !errors.As(err, &me) || me.Status != http.StatusBadRequest {
		return ""
	}
	for _, k := range keys {
		if strings.Contains(me.Message, k) {
			return k
		}
	}
	return ""
}

// cmpPtr returns the first non-nil pointer.
func cmpPtr[T any](ps ...*T) *T {
	for _, p := range ps {
		if p != nil {
			return p
		}
	}
	return nil
}

// wireMessage is m in the SDK's shape.
func wireMessage(m Message) openai.ChatCompletionMessageParamUnion {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content)
	case RoleUser:
		if len(m.Images) == 0 {
			return openai.UserMessage(m.Content)
		}
		parts := []openai.ChatCompletionContentPartUnionParam{openai.TextContentPart(m.Content)}
		for _, im := range m.Images {
			parts = append(parts, openai.ImageContentPart(openai.ChatCompletionContentPartImageImageURLParam{
				URL: "data:" + im.MIME + ";base64," + base64.StdEncoding.EncodeToString(im.Data)}))
		}
		return openai.UserMessage(parts)
	case RoleTool:
		return openai.ToolMessage(m.Content, m.ToolCallID)
	}
	var a openai.ChatCompletionAssistantMessageParam
	if m.Content != "" || len(m.ToolCalls) == 0 {
		a.Content.OfString = openai.String(m.Content)
	}
	for _, tc := range m.ToolCalls {
		a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
			OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
				ID: tc.ID,
				Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{
					Name:      tc.Name,
					Arguments: tc.wireArguments(),
				},
			},
		})
	}
	return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}
}

// extras are the fields of a completion the SDK has no field for, in
// vLLM's and SGLang's shapes, and the logprobs, read from the raw JSON so
// that a null is told from a zero.
type extras struct {
	// PromptTokenIDs is vLLM's (top level).
	PromptTokenIDs []int `json:"prompt_token_ids"`
	// Sglext is SGLang's newer place for the ids
	// (return_input_ids_in_sglext, return_output_ids_in_sglext): the
	// prompt's, and one list per choice.
	Sglext *struct {
		InputIDs  []int   `json:"input_ids"`
		OutputIDs [][]int `json:"output_ids"`
	} `json:"sglext"`
	Choices []struct {
		TokenIDs []int `json:"token_ids"`
		// ResponseTokenIDs is SGLang's newer name for TokenIDs (its
		// serving_chat.py's response_token_ids).
		ResponseTokenIDs []int `json:"response_token_ids"`
		// PromptTokenIDs is SGLang's (per choice).
		PromptTokenIDs []int `json:"prompt_token_ids"`
		Message        struct {
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
		} `json:"message"`
		Logprobs *struct {
			Content []struct {
				Logprob *float64 `json:"logprob"`
			} `json:"content"`
		} `json:"logprobs"`
		// MetaInfo is SGLang's (return_meta_info).
		MetaInfo *struct {
			WeightVersion json.RawMessage `json:"weight_version"`
			// OutputTokenLogprobs are [logprob, token id, text] triples.
			OutputTokenLogprobs [][]json.RawMessage `json:"output_token_logprobs"`
		} `json:"meta_info"`
	} `json:"choices"`
}

// read turns the SDK's completion into a Response.
func (c *Client) read(cc *openai.ChatCompletion) (*Response, error) {
	if cc == nil || len(cc.Choices) == 0 {
		return nil, fmt.Errorf("the reply has no choices")
	}
	ch := cc.Choices[0]
	r := &Response{
		Content:      ch.Message.Content,
		FinishReason: ch.FinishReason,
		Usage:        Usage{PromptTokens: int(cc.Usage.PromptTokens), CompletionTokens: int(cc.Usage.CompletionTokens)},
		Model:        cc.Model,
	}
	for i, tc := range ch.Message.ToolCalls {
		id := tc.ID
		if id == "" { // some servers send none; the next request needs one
			id = fmt.Sprintf("call_%d", i)
		}
		if tc.Type == "custom" {
			r.ToolCalls = append(r.ToolCalls, ToolCall{ID: id, Name: tc.Custom.Name, RawArguments: tc.Custom.Input,
				ArgError: "a custom tool call, not a function call"})
			continue
		}
		r.ToolCalls = append(r.ToolCalls, readToolCall(id, tc.Function.Name, tc.Function.Arguments))
	}
	var x extras
	if err := json.Unmarshal([]byte(cc.RawJSON()), &x); err != nil {
		return nil, fmt.Errorf("reading token ids: %w", err)
	}
	r.PromptTokenIDs = x.PromptTokenIDs
	if len(x.Choices) == 0 {
		return r.splitThink(), nil
	}
	xc := x.Choices[0]
	if r.PromptTokenIDs == nil {
		r.PromptTokenIDs = xc.PromptTokenIDs
	}
	r.CompletionTokenIDs = xc.TokenIDs
	if r.CompletionTokenIDs == nil {
		r.CompletionTokenIDs = xc.ResponseTokenIDs
	}
	if g := x.Sglext; g != nil {
		if r.PromptTokenIDs == nil {
			r.PromptTokenIDs = g.InputIDs
		}
		if r.CompletionTokenIDs == nil && len(g.OutputIDs) > 0 {
			r.CompletionTokenIDs = g.OutputIDs[0]
		}
	}
	r.Reasoning = cmpString(xc.Message.ReasoningContent, xc.Message.Reasoning)
	if xc.Logprobs != nil && xc.Logprobs.Content != nil {
		r.Logprobs = make([]float64, len(xc.Logprobs.Content))
		for i, t := range xc.Logprobs.Content {
			if t.Logprob == nil {
				return nil, fmt.Errorf("logprobs.content[%d] has no logprob", i)
			}
			r.Logprobs[i] = *t.Logprob
		}
	}
	if m := xc.MetaInfo; m != nil {
		r.WeightVersion = rawString(m.WeightVersion)
		if r.CompletionTokenIDs == nil && m.OutputTokenLogprobs != nil {
			ids, err := outputTokenIDs(m.OutputTokenLogprobs)
			if err != nil {
				return nil, err
			}
			r.CompletionTokenIDs = ids
		}
	}
	if r.CompletionTokenIDs != nil && r.Logprobs != nil && len(r.CompletionTokenIDs) != len(r.Logprobs) {
		return nil, fmt.Errorf("%w: %d completion token ids and %d logprobs", ErrMisaligned, len(r.CompletionTokenIDs), len(r.Logprobs))
	}
	return r.splitThink(), nil
}

// splitThink moves the reasoning written inline in the content
// (SplitThink) to Reasoning, after any the server returned apart.
func (r *Response) splitThink() *Response {
	if said, thought, ok := SplitThink(r.Content); ok {
		r.Content, r.InlineReasoning = said, true
		if r.Reasoning != "" && thought != "" {
			thought = r.Reasoning + "\n\n" + thought
		}
		r.Reasoning = cmp.Or(thought, r.Reasoning)
	}
	return r
}

// outputTokenIDs reads the token ids of SGLang's output_token_logprobs,
// [logprob, token id, text] triples.
func outputTokenIDs(triples [][]json.RawMessage) ([]int, error) {
	ids := make([]int, len(triples))
	for i, t := range triples {
		if len(t) < 2 || json.Unmarshal(t[1], &ids[i]) != nil {
			return nil, fmt.Errorf("meta_info.output_token_logprobs[%d] is not a [logprob, token id, text] triple", i)
		}
	}
	return ids, nil
}

// rawString is a JSON string's value, another JSON value's text, or ""
// for none or null.
func rawString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func cmpString(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// attempt is what one HTTP exchange returned, seen from the middleware.
type attempt struct {
	sent   bool // the request reached the transport
	status int
	header http.Header
	body   []byte // of an error response; the start of a reply that is not JSON
	// cut: the reply's body ended before it was whole (the connection
	// closed mid-reply, or JSON that stops short); got is what came.
	cut bool
	got int
}

// capture records the response's status and, for an error, its body (put
// back for the SDK to read).
func (a *attempt) capture(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	a.sent = true
	res, err := next(req)
	if err != nil || res == nil {
		return res, err
	}
	a.status, a.header = res.StatusCode, res.Header
	if res.StatusCode < 400 {
		// Read whole here, so that a reply cut mid-way is told from one
		// that is not JSON at all: the first is retried.
		body, rerr := io.ReadAll(res.Body)
		res.Body.Close()
		if rerr != nil {
			a.cut, a.got = true, len(body)
			return nil, fmt.Errorf("the reply (HTTP %d) was cut off after %d bytes: %w", res.StatusCode, len(body), rerr)
		}
		if t := bytes.TrimSpace(body); !json.Valid(t) {
			if len(t) == 0 || t[0] == '{' || t[0] == '[' {
				a.cut, a.got = true, len(body)
				return nil, fmt.Errorf("the reply (HTTP %d) ends after %d bytes, before its JSON is whole", res.StatusCode, len(body))
			}
			a.body = t[:min(len(t), 120)]
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		return res, nil
	}
	if res.StatusCode >= 400 {
		body, rerr := io.ReadAll(io.LimitReader(res.Body, maxErrorBody))
		res.Body.Close()
		if rerr != nil {
			return nil, fmt.Errorf("reading the HTTP %d body: %w", res.StatusCode, rerr)
		}
		a.body = body
		res.Body = io.NopCloser(bytes.NewReader(body))
	}
	return res, nil
}

// call is one attempt, given the attempt's context and the options that
// observe it.
type call func(ctx context.Context, opts ...option.RequestOption) error

func (c *Client) do(ctx context.Context, op string, fn call) (int, error) {
	return c.doRetries(ctx, op, c.maxRetries, fn)
}

// doRetries runs fn until it succeeds, fails for good or has been retried
// retries times, and returns how many attempts it made.
func (c *Client) doRetries(ctx context.Context, op string, retries int, fn call) (int, error) {
	for n := 1; ; n++ {
		if ctx.Err() != nil {
			return n - 1, c.cancelled(ctx, op, n-1)
		}
		var a attempt
		actx, cancel := context.WithTimeoutCause(ctx, c.timeout, ErrTimeout)
		err := fn(actx, option.WithMiddleware(a.capture))
		expired := actx.Err() != nil
		cancel()
		if err == nil {
			return n, nil
		}
		if ctx.Err() != nil {
			return n, c.cancelled(ctx, op, n)
		}
		if expired {
			return n, &Error{Op: op, Endpoint: c.spec.BaseURL, Model: c.spec.Model, Attempts: n,
				Message: fmt.Sprintf("timed out after %s (%s)", c.timeout, c.knob),
				Fix:     "raise " + c.knob + ", lower the completion's max tokens, or check that the server is not overloaded",
				Err:     ErrTimeout}
		}
		e := c.attemptError(op, a, err, n)
		// A server not started to call tools says so, with a 500 at
		// times (llama-server): no retry changes that.
		config := a.status >= 400 && toolsFix(e.Message) != ""
		if !a.sent || !(retryable(a.status) || a.cut) || config || n > retries {
			return n, e
		}
		wait := c.wait(n, a)
		c.log.Warn("model: retrying", logKeyOp, op, logKeyEndpoint, c.spec.BaseURL, logKeyStatus, a.status,
			logKeyAttempt, n, logKeyWait, wait, logKeyError, e.Message)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return n, c.cancelled(ctx, op, n)
		case <-t.C:
		}
	}
}

// attemptError describes a failed attempt.
func (c *Client) attemptError(op string, a attempt, err error, n int) *Error {
	e := &Error{Op: op, Endpoint: c.spec.BaseURL, Model: c.spec.Model, Status: a.status, Attempts: n}
	switch {
	case a.status >= 400:
		se := readServerError(a.body)
		e.Message, e.Type, e.Code = se.Message, se.Type, se.Code
		e.Fix = fixFor(c.spec, a.status, se.Message)
		if toolsFix(se.Message) != "" {
			e.Err = ErrServerConfig
		}
	case !a.sent:
		e.Message, e.Err = "building the request: "+err.Error(), err
	case a.cut:
		e.Message, e.Err = err.Error(), err
		e.Fix = "the server (or a proxy in front of it) closed the connection mid-reply: it was retried; if it goes on, check the server's log for a crash or an out-of-memory kill, or raise --model-retries"
	case a.status == 0:
		e.Message, e.Err = err.Error(), err
		e.Fix = startHint(c.spec)
	default:
		e.Message, e.Err = "the reply does not decode: "+err.Error(), err
		if len(a.body) > 0 {
			e.Message += fmt.Sprintf(" (it begins %q)", a.body)
		}
		e.Fix = "is the URL the root of an OpenAI-compatible API (usually ending in /v1)?"
	}
	return e
}

func (c *Client) cancelled(ctx context.Context, op string, n int) *Error {
	return &Error{Op: op, Endpoint: c.spec.BaseURL, Model: c.spec.Model, Attempts: n,
		Message: "stopped: " + ctx.Err().Error(), Err: ctx.Err()}
}

// wait is the backoff before retry n (1-based): Backoff doubled n-1 times,
// at most maxBackoff, or the server's Retry-After when that is longer (at
// most maxRetryAfter).
func (c *Client) wait(n int, a attempt) time.Duration {
	d := backoff(c.backoff, n)
	if s, ok := retryAfter(a.header); ok {
		ra := min(time.Duration(s)*time.Second, maxRetryAfter)
		d = max(d, ra)
	}
	return d
}

// backoff is base doubled n-1 times, capped at maxBackoff (or base, when
// base is larger).
func backoff(base time.Duration, n int) time.Duration {
	limit := max(base, maxBackoff)
	d := base
	for i := 1; i < n && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
