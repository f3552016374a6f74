package fake

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
)

// DefaultModel is the model a new Server serves.
const DefaultModel = "fake-model"

// created is every completion's timestamp: replies are deterministic.
const created = 1700000000

// Turn is one scripted reply.
type Turn struct {
	// Content is the assistant's text; Reasoning, when set, is sent as
	// the engine does for reasoning models: vLLM's reasoning, SGLang's
	// reasoning_content.
	Content   string
	Reasoning string
	// ToolCalls are the calls the assistant makes.
	ToolCalls []ToolCall
	// FinishReason defaults to "tool_calls" when there are tool calls,
	// else "stop".
	FinishReason string
	// PromptTokenIDs and CompletionTokenIDs are sent when the request
	// asks for token ids, in the engine's shape (vLLM: top-level
	// prompt_token_ids and per-choice token_ids; SGLang: both per choice).
	PromptTokenIDs     []int
	CompletionTokenIDs []int
	// Logprobs are the completion tokens' log probabilities, sent as
	// choice.logprobs.content when the request asks ("logprobs": true);
	// nil means DefaultLogprobs(CompletionTokenIDs).
	Logprobs []float64
	// NoLogprobs sends no logprobs though the request asks (a server
	// that ignores the field).
	NoLogprobs bool
	// WeightVersion is SGLang's meta_info.weight_version; "" means
	// "default", SGLang's own default.
	WeightVersion string
	// Usage defaults to the token ids' lengths.
	Usage model.Usage
	// Model names the answering model; "" echoes the request's.
	Model string

	// Status, when non-zero, makes the turn an HTTP error with an OpenAI
	// error body {"error":{"message","type","code"}} of Error, ErrorType
	// (default from the status) and ErrorCode (default the status).
	Status    int
	Error     string
	ErrorType string
	ErrorCode string
	// RetryAfter, when non-zero, is sent as a Retry-After header (whole
	// seconds).
	RetryAfter time.Duration

	// CutAfter, when positive, cuts the reply's body after that many
	// bytes: the status (200) and a Content-Length of the whole body are
	// sent, then the bytes, then the connection is closed, as when a
	// server or a proxy dies mid-reply.
	CutAfter int
	// Body, when set, is sent as the whole 200 reply instead of a
	// completion (Content-Type BodyType, default text/html): a proxy's
	// page, a non-JSON reply.
	Body     string
	BodyType string

	// Delay is waited before replying (to test timeouts); a request whose
	// client gives up stops waiting.
	Delay time.Duration

	// Handler, when set, computes the reply from the request: its Turn is
	// used (its own Handler ignored), after this turn's Delay and then
	// its own.
	Handler func(Request) Turn
}

// ToolCall is a scripted call; Arguments is sent as it is, valid JSON or
// not. ID defaults to call_<request>_<index>.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string
}

// Request is one request the server received.
type Request struct {
	// N numbers the chat requests from 1; 0 for other requests.
	N      int
	Method string
	Path   string
	Header http.Header
	// Body is the raw body.
	Body []byte

	// The decoded chat request.
	Model       string
	Messages    []Message
	Tools       []Tool
	ToolChoice  json.RawMessage
	MaxTokens   *int
	Temperature *float64
	TopP        *float64
	Seed        *int64
	Stream      bool
	// IncludeUsage is stream_options.include_usage.
	IncludeUsage bool
	// Logprobs and TopLogprobs are OpenAI's logprobs and top_logprobs.
	Logprobs    bool
	TopLogprobs *int
	// ReturnTokenIDs is vLLM's and SGLang's return_token_ids;
	// ReturnPromptTokenIDs and ReturnMetaInfo SGLang's
	// return_prompt_token_ids and return_meta_info.
	ReturnTokenIDs       bool
	ReturnPromptTokenIDs bool
	ReturnMetaInfo       bool
	// InputIDs is a token-in request's prompt (vLLM's completions prompt,
	// SGLang's generate input_ids).
	InputIDs []int
}

// Message is a message as it was on the wire.
type Message struct {
	Role string `json:"role"`
	// Content is the text; content parts' texts are joined.
	Content    string          `json:"-"`
	RawContent json.RawMessage `json:"content,omitempty"`
	ToolCalls  []WireToolCall  `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
}

// WireToolCall is an assistant message's tool call as it was on the wire.
type WireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool as it was on the wire, flattened: Type is the tool's
// type, the rest its function.
type Tool struct {
	Type        string
	Name        string
	Description string
	Parameters  json.RawMessage
}

// Server is the fake. Its methods are safe for concurrent use.
type Server struct {
	ts      *httptest.Server
	done    chan struct{}
	closing sync.Once

	mu        sync.Mutex
	engine    model.Engine
	strict    bool
	noTools   bool
	embedder  func(string) []float64
	embedFail func(n int) Turn
	models    []string
	script    []Turn
	responder func(Request) Turn
	next      int // the script's next turn
	chats     int // chat requests numbered so far
	requests  []Request
	// embedCalls counts embedding requests.
	embedCalls int
	// template, when set, renders and tokenizes (SetTemplate).
	template *Template
}

// New starts a server that replies to chat requests with script, in
// order. When t is non-nil the server closes at the test's end; else the
// caller closes it.
func New(t testing.TB, script ...Turn) *Server {
	return start(t, slices.Clone(script), nil)
}

// NewResponder starts a server that replies to every chat request with
// respond's turn.
func NewResponder(t testing.TB, respond func(Request) Turn) *Server {
	return start(t, nil, respond)
}

func start(t testing.TB, script []Turn, respond func(Request) Turn) *Server {
	s := &Server{
		done:      make(chan struct{}),
		models:    []string{DefaultModel},
		script:    script,
		responder: respond,
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.listModels)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	mux.HandleFunc("POST /v1/completions", s.completions)
	mux.HandleFunc("POST /generate", s.generate)
	mux.HandleFunc("POST /tokenize", s.tokenizeChat)
	mux.HandleFunc("POST /v1/tokenize", s.tokenizeText)
	mux.HandleFunc("/", s.notFound)
	s.ts = httptest.NewServer(mux)
	if t != nil {
		t.Cleanup(s.Close)
	}
	return s
}

// Close stops the server, ending pending delays first.
func (s *Server) Close() {
	s.closing.Do(func() {
		close(s.done)
		s.ts.Close()
	})
}

// URL is the base URL, ending in /v1.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

// Spec is the spec of the server's first model, with the server's
// engine and no API key.
func (s *Server) Spec() model.Spec {
	s.mu.Lock()
	defer s.mu.Unlock()
	return model.Spec{Engine: s.engine, BaseURL: s.URL(), Model: s.models[0]}
}

// SetStrict makes the server refuse, as a hosted API does, a request
// with a field OpenAI's API does not have (the engines' return_token_ids,
// return_prompt_token_ids, return_meta_info): HTTP 400 "Unrecognized
// request argument supplied: FIELD".
func (s *Server) SetStrict(strict bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.strict = strict
}

// SetEngine makes the server answer as engine does: model.EngineVLLM (and
// model.EngineAny, the default) in vLLM's shapes, model.EngineSGLang in
// SGLang's. Spec carries it.
func (s *Server) SetEngine(engine model.Engine) {
	if engine != model.EngineAny && !slices.Contains(model.Engines(), engine) {
		panic(fmt.Sprintf("fake: SetEngine(%q): no such engine", engine))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.engine = engine
	if engine == model.EngineOpenAI {
		s.strict = true
	}
}

// SetToolCalling(false) makes the server one not started to call tools:
// a request with tools is refused in the engine's words (vLLM without
// --enable-auto-tool-choice, llama-server without --jinja, an Ollama
// model without the tools capability), or, for SGLang without
// --tool-call-parser and an unnamed server, answered with the turn's
// calls written as text in the content.
func (s *Server) SetToolCalling(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noTools = !on
}

// SetEmbedder makes the server embed a text with f instead of Embedding:
// a test's vectors of other or varying dimensions, unnormalised, zero or
// NaN. JSON has no NaN: a NaN or an infinity is sent as null, as
// Pydantic's serialiser (vLLM's, SGLang's) writes it.
func (s *Server) SetEmbedder(f func(string) []float64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedder = f
}

// SetEmbedFailures makes embedding request n (from 1) fail as f(n) says:
// its Status (with Error and RetryAfter), Body (a non-JSON 200), Delay or
// CutAfter (the embeddings cut mid-way); a zero Turn answers it.
func (s *Server) SetEmbedFailures(f func(n int) Turn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.embedFail = f
}

// Client is a model client of the server's Spec; nil opts mean the
// defaults, and a zero Backoff a millisecond, so that retries are quick.
func (s *Server) Client(t testing.TB, opts *model.Options) *model.Client {
	t.Helper()
	var o model.Options
	if opts != nil {
		o = *opts
	}
	if o.Backoff == 0 {
		o.Backoff = time.Millisecond
	}
	c, err := model.New(s.Spec(), &o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// SetModels sets the models the server serves (GET /v1/models, and the
// ones chat requests may name); the first is Spec's.
func (s *Server) SetModels(ids ...string) {
	if len(ids) == 0 {
		panic("fake: SetModels needs at least one model")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.models = slices.Clone(ids)
}

// Requests returns every request received so far, in order.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Chats returns the chat requests received so far, in order.
func (s *Server) Chats() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Request
	for _, r := range s.requests {
		if r.N > 0 {
			out = append(out, r)
		}
	}
	return out
}

// Remaining is how many scripted turns no request has taken yet.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "reading the body: "+err.Error(), "", "")
		return
	}
	req := Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body}
	problem := decodeChat(body, &req)

	s.mu.Lock()
	s.chats++
	req.N = s.chats
	s.requests = append(s.requests, req)
	served := slices.Contains(s.models, req.Model)
	engine, strict, noTools, tmpl := s.engine, s.strict, s.noTools, s.template
	s.mu.Unlock()
	if problem == "" {
		problem = engineProblem(engine, req)
	}
	if problem == "" && strict {
		problem = strictProblem(body)
	}

	switch {
	case problem != "":
		writeError(w, http.StatusBadRequest, problem, "", "")
		return
	case !served:
		writeError(w, http.StatusNotFound, fmt.Sprintf("The model `%s` does not exist.", req.Model), "NotFoundError", "")
		return
	}

	if noTools {
		if status, msg, refused := toolRefusal(engine, req); refused {
			writeEngineError(w, engine, status, msg, "", "")
			return
		}
	}
	turn := s.turn(req)
	if !s.sleep(r, turn.Delay) {
		return
	}
	if turn.Handler != nil {
		turn = turn.Handler(req)
		if !s.sleep(r, turn.Delay) {
			return
		}
	}
	if noTools {
		turn = textCalls(turn)
	}
	if tmpl != nil && turn.Status == 0 {
		if turn.PromptTokenIDs == nil {
			turn.PromptTokenIDs = Encode(tmpl.Render(req.Messages, req.Tools, true))
		}
		if turn.CompletionTokenIDs == nil {
			turn.CompletionTokenIDs = Encode(Completion(turn))
		}
	}
	reply(w, engine, req, turn)
}

// turn takes the next turn: the responder's, the script's, or, when the
// script ran out, a 500 that says so.
func (s *Server) turn(req Request) Turn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.responder != nil {
		return Turn{Handler: s.responder}
	}
	if s.next >= len(s.script) {
		return Turn{Status: http.StatusInternalServerError, ErrorType: "fake_script_exhausted",
			Error: fmt.Sprintf("fake: script exhausted: it had %d turns and this is chat request %d", len(s.script), req.N)}
	}
	t := s.script[s.next]
	s.next++
	return t
}

// sleep waits d unless the client or the server gives up first.
func (s *Server) sleep(r *http.Request, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

func (s *Server) listModels(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	ids := slices.Clone(s.models)
	s.mu.Unlock()
	data := make([]any, len(ids))
	for i, id := range ids {
		data[i] = map[string]any{"id": id, "object": "model", "created": created, "owned_by": "fake"}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.requests = append(s.requests, Request{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone()})
	s.mu.Unlock()
	writeError(w, http.StatusNotFound, fmt.Sprintf("fake: no route %s %s; the fake serves POST /v1/chat/completions and GET /v1/models", r.Method, r.URL.Path), "NotFoundError", "")
}

// wireChat is a chat request's body.
type wireChat struct {
	Model         *string           `json:"model"`
	Messages      []Message         `json:"messages"`
	Tools         []json.RawMessage `json:"tools"`
	ToolChoice    json.RawMessage   `json:"tool_choice"`
	MaxTokens     *int              `json:"max_tokens"`
	MaxCompletion *int              `json:"max_completion_tokens"`
	Temperature   *float64          `json:"temperature"`
	TopP          *float64          `json:"top_p"`
	Seed          *int64            `json:"seed"`
	Stream        bool              `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Logprobs             bool `json:"logprobs"`
	TopLogprobs          *int `json:"top_logprobs"`
	ReturnTokenIDs       bool `json:"return_token_ids"`
	ReturnPromptTokenIDs bool `json:"return_prompt_token_ids"`
	ReturnMetaInfo       bool `json:"return_meta_info"`
}

// strictProblem is a hosted API's refusal of a field its API lacks.
func strictProblem(body []byte) string {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return ""
	}
	for _, k := range []string{"return_token_ids", "return_prompt_token_ids", "return_meta_info"} {
		if _, ok := fields[k]; ok {
			return "Unrecognized request argument supplied: " + k
		}
	}
	return ""
}

// decodeChat fills req from body and returns what a real server would
// reject, or "".
func decodeChat(body []byte, req *Request) string {
	var c wireChat
	if err := json.Unmarshal(body, &c); err != nil {
		return "the body is not a JSON chat request: " + err.Error()
	}
	req.Stream, req.ReturnTokenIDs = c.Stream, c.ReturnTokenIDs
	req.Logprobs, req.TopLogprobs = c.Logprobs, c.TopLogprobs
	req.ReturnPromptTokenIDs, req.ReturnMetaInfo = c.ReturnPromptTokenIDs, c.ReturnMetaInfo
	if c.StreamOptions != nil {
		req.IncludeUsage = c.StreamOptions.IncludeUsage
	}
	req.ToolChoice, req.Temperature, req.TopP, req.Seed = c.ToolChoice, c.Temperature, c.TopP, c.Seed
	req.MaxTokens = c.MaxTokens
	if req.MaxTokens == nil {
		req.MaxTokens = c.MaxCompletion
	}
	if c.Model == nil || *c.Model == "" {
		return `"model" is required`
	}
	req.Model = *c.Model
	for i := range c.Messages {
		c.Messages[i].Content = text(c.Messages[i].RawContent)
	}
	req.Messages = c.Messages
	for i, raw := range c.Tools {
		var t struct {
			Type     string `json:"type"`
			Function struct {
				Name        string          `json:"name"`
				Description string          `json:"description"`
				Parameters  json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(raw, &t); err != nil {
			return fmt.Sprintf("tools[%d] is not a tool object: %v", i, err)
		}
		req.Tools = append(req.Tools, Tool{Type: t.Type, Name: t.Function.Name,
			Description: t.Function.Description, Parameters: t.Function.Parameters})
		if t.Type != "function" {
			return fmt.Sprintf(`tools[%d].type is %q, not "function"`, i, t.Type)
		}
		if t.Function.Name == "" {
			return fmt.Sprintf("tools[%d].function.name is required", i)
		}
	}
	if len(c.Messages) == 0 {
		return `"messages" must be a non-empty list`
	}
	if c.StreamOptions != nil && !c.Stream {
		return "Stream options can only be defined when `stream=True`."
	}
	if c.TopLogprobs != nil && *c.TopLogprobs > 0 && !c.Logprobs {
		return "when using `top_logprobs`, `logprobs` must be set to true."
	}
	calls := map[string]bool{}
	for i, m := range c.Messages {
		switch m.Role {
		case "system", "developer", "user":
		case "assistant":
			for j, tc := range m.ToolCalls {
				if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
					return fmt.Sprintf(`messages[%d].tool_calls[%d] needs an id, type "function" and a function name`, i, j)
				}
				calls[tc.ID] = true
			}
		case "tool":
			if !calls[m.ToolCallID] {
				return fmt.Sprintf("messages[%d]: a message with role 'tool' must answer a preceding assistant tool call; tool_call_id %q is none", i, m.ToolCallID)
			}
		default:
			return fmt.Sprintf("messages[%d].role %q is unknown", i, m.Role)
		}
	}
	return ""
}

// text is a message content's text: a string, or the text parts of a list.
func text(raw json.RawMessage) string {
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) != nil {
		return string(raw)
	}
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func writeError(w http.ResponseWriter, status int, msg, typ, code string) {
	writeEngineError(w, model.EngineAny, status, msg, typ, code)
}

// writeEngineError writes an error body in the engine's shape.
func writeEngineError(w http.ResponseWriter, engine model.Engine, status int, msg, typ, code string) {
	writeJSON(w, status, errorBody(engine, status, msg, typ, code))
}

// errorType names a status's error as vLLM does.
func errorType(status int) string {
	switch {
	case status == http.StatusNotFound:
		return "NotFoundError"
	case status == http.StatusTooManyRequests:
		return "RateLimitError"
	case status >= 500:
		return "InternalServerError"
	default:
		return "BadRequestError"
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b = []byte(fmt.Sprintf(`{"error":{"message":%q,"type":"InternalServerError"}}`, "fake: "+err.Error()))
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
