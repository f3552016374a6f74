package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

func TestParseSpecEngine(t *testing.T) {
	t.Setenv(model.EnvAPIKey, "")
	t.Setenv(model.EnvOpenAIAPIKey, "")
	for _, tc := range []struct {
		in     string
		engine model.Engine
		base   string
	}{
		{"sglang+http://127.0.0.1:30000/v1#qwen3-8b", model.EngineSGLang, "http://127.0.0.1:30000/v1"},
		{"vllm+https://h/v1#m", model.EngineVLLM, "https://h/v1"},
		{"http://h/v1#m", model.EngineAny, "http://h/v1"},
		{"ollama+http://127.0.0.1:11434/v1#qwen3:8b", model.EngineOllama, "http://127.0.0.1:11434/v1"},
		{"llamacpp+http://127.0.0.1:8080/v1#qwen3", model.EngineLlamaCpp, "http://127.0.0.1:8080/v1"},
		{"openai+https://api.example.com/v1#m", model.EngineOpenAI, "https://api.example.com/v1"},
	} {
		spec, err := model.ParseSpec(tc.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.in, err)
			continue
		}
		if spec.Engine != tc.engine || spec.BaseURL != tc.base {
			t.Errorf("ParseSpec(%q) = %q %q", tc.in, spec.Engine, spec.BaseURL)
		}
		if spec.String() != tc.in {
			t.Errorf("String() = %q; want %q back", spec.String(), tc.in)
		}
	}
	if _, err := model.ParseSpec("tgi+http://h/v1#m"); err == nil || !strings.Contains(err.Error(), `engine "tgi"`) {
		t.Errorf("an unknown engine: %v", err)
	}
	if _, err := model.New(model.Spec{Engine: "tgi", BaseURL: "http://h/v1", Model: "m"}, nil); err == nil {
		t.Error("New with an unknown engine succeeded")
	}
}

func TestSGLangStartHint(t *testing.T) {
	s := fake.New(nil)
	s.SetEngine(model.EngineSGLang)
	spec := s.Spec()
	s.Close()
	c, err := model.New(spec, &model.Options{MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), hello)
	if want := "python -m sglang.launch_server --model-path " + spec.Model; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("err %v; want it to say %q", err, want)
	}
}

// sentExtensions lists the non-OpenAI fields of a chat request's body.
func sentExtensions(t *testing.T, body []byte) []string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		if strings.HasPrefix(k, "return_") {
			keys = append(keys, k)
			if m[k] != true {
				t.Errorf("%s is %v; want true", k, m[k])
			}
		}
	}
	slices.Sort(keys)
	return keys
}

func TestEngineRequestFields(t *testing.T) {
	for _, tc := range []struct {
		name      string
		engine    model.Engine
		ids, none []string
	}{
		{"any", model.EngineAny, []string{"return_token_ids"}, nil},
		{"vllm", model.EngineVLLM, []string{"return_token_ids"}, nil},
		{"sglang", model.EngineSGLang, []string{"return_meta_info", "return_prompt_token_ids", "return_token_ids"}, []string{"return_meta_info"}},
		// The engines that return no token ids are sent no extension:
		// a strict hosted API would refuse it, and the others ignore it.
		{"ollama", model.EngineOllama, nil, nil},
		{"llamacpp", model.EngineLlamaCpp, nil, nil},
		{"openai", model.EngineOpenAI, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "x"} })
			s.SetEngine(tc.engine)
			c := s.Client(t, nil)
			for _, req := range []model.Request{
				{Messages: hello.Messages, ReturnTokenIDs: true, Logprobs: true},
				{Messages: hello.Messages},
			} {
				if _, err := c.Chat(context.Background(), req); err != nil {
					t.Fatal(err)
				}
			}
			chats := s.Chats()
			if got := sentExtensions(t, chats[0].Body); !reflect.DeepEqual(got, tc.ids) {
				t.Errorf("with token ids: sent %v; want %v", got, tc.ids)
			}
			if got := sentExtensions(t, chats[1].Body); !reflect.DeepEqual(got, tc.none) {
				t.Errorf("without: sent %v; want %v", got, tc.none)
			}
			if !chats[0].Logprobs || chats[1].Logprobs || strings.Contains(string(chats[1].Body), "logprobs") {
				t.Errorf("logprobs on the wire: %s / %s", chats[0].Body, chats[1].Body)
			}
		})
	}
}

// rlTurn is a turn with what RL records, and a malformed tool call.
var rlTurn = fake.Turn{
	Reasoning:          "think",
	ToolCalls:          []fake.ToolCall{{Name: "search", Arguments: `{"q": "ket`}},
	PromptTokenIDs:     []int{1, 2, 3, 4},
	CompletionTokenIDs: []int{50, 51, 52},
	Logprobs:           []float64{-0.5, -1.25, -0.125},
	WeightVersion:      "step-12",
}

// TestTokensRoundTrip runs the same turn through each engine's shape, and
// through a client that knows no engine reading each.
func TestTokensRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name           string
		server, client model.Engine
		weightVersion  string
	}{
		{"vllm", model.EngineVLLM, model.EngineVLLM, ""},
		{"sglang", model.EngineSGLang, model.EngineSGLang, "step-12"},
		{"any reads vllm", model.EngineVLLM, model.EngineAny, ""},
		{"any reads sglang", model.EngineSGLang, model.EngineAny, ""}, // no return_meta_info sent
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake.New(t, rlTurn)
			s.SetEngine(tc.server)
			spec := s.Spec()
			spec.Engine = tc.client
			c, err := model.New(spec, nil)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Chat(context.Background(), model.Request{Messages: hello.Messages, ReturnTokenIDs: true, Logprobs: true})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(resp.PromptTokenIDs, rlTurn.PromptTokenIDs) || !reflect.DeepEqual(resp.CompletionTokenIDs, rlTurn.CompletionTokenIDs) {
				t.Errorf("token ids %v, %v", resp.PromptTokenIDs, resp.CompletionTokenIDs)
			}
			if !reflect.DeepEqual(resp.Logprobs, rlTurn.Logprobs) {
				t.Errorf("logprobs %v", resp.Logprobs)
			}
			if resp.WeightVersion != tc.weightVersion {
				t.Errorf("weight version %q; want %q", resp.WeightVersion, tc.weightVersion)
			}
			if resp.Reasoning != "think" || resp.FinishReason != "tool_calls" || resp.Usage != (model.Usage{PromptTokens: 4, CompletionTokens: 3}) {
				t.Errorf("reasoning %q, finish %q, usage %+v", resp.Reasoning, resp.FinishReason, resp.Usage)
			}
			if len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ArgError == "" || resp.ToolCalls[0].RawArguments != `{"q": "ket` {
				t.Errorf("a malformed call: %+v; want it kept with ArgError", resp.ToolCalls)
			}
		})
	}
}

func TestNothingUnasked(t *testing.T) {
	for _, e := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		s := fake.New(t, rlTurn)
		s.SetEngine(e)
		resp, err := s.Client(t, nil).Chat(context.Background(), hello)
		if err != nil {
			t.Fatal(err)
		}
		if resp.PromptTokenIDs != nil || resp.CompletionTokenIDs != nil || resp.Logprobs != nil {
			t.Errorf("%s: %v %v %v unasked", e, resp.PromptTokenIDs, resp.CompletionTokenIDs, resp.Logprobs)
		}
		want := ""
		if e == model.EngineSGLang {
			want = "step-12" // return_meta_info is always sent to SGLang
		}
		if resp.WeightVersion != want {
			t.Errorf("%s: weight version %q; want %q", e, resp.WeightVersion, want)
		}
	}
}

func TestLogprobsWithoutTokenIDs(t *testing.T) {
	s := fake.New(t, rlTurn)
	resp, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: hello.Messages, Logprobs: true})
	if err != nil {
		t.Fatal(err)
	}
	if resp.CompletionTokenIDs != nil || !reflect.DeepEqual(resp.Logprobs, rlTurn.Logprobs) {
		t.Errorf("ids %v, logprobs %v", resp.CompletionTokenIDs, resp.Logprobs)
	}
}

func TestDefaultLogprobsRoundTrip(t *testing.T) {
	turn := fake.Turn{Content: "x", CompletionTokenIDs: []int{9, 8, 7}}
	s := fake.New(t, turn)
	resp, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: hello.Messages, Logprobs: true, ReturnTokenIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.Logprobs, fake.DefaultLogprobs(turn.CompletionTokenIDs)) {
		t.Errorf("logprobs %v", resp.Logprobs)
	}
}

func TestMisaligned(t *testing.T) {
	for _, e := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		s := fake.New(t, fake.Turn{Content: "x", CompletionTokenIDs: []int{1, 2, 3}, Logprobs: []float64{-1, -2}})
		s.SetEngine(e)
		_, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: hello.Messages, Logprobs: true, ReturnTokenIDs: true})
		var me *model.Error
		if !errors.Is(err, model.ErrMisaligned) || !errors.As(err, &me) || me.Status != 200 || !strings.Contains(err.Error(), "3 completion token ids and 2 logprobs") {
			t.Errorf("%s: err %v; want ErrMisaligned", e, err)
		}
		if len(s.Chats()) != 1 {
			t.Errorf("%s: %d requests; a bad reply is not retried", e, len(s.Chats()))
		}
	}
}

// reply serves body to every chat request.
func reply(t *testing.T, body string) model.Spec {
	t.Helper()
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, body)
	}))
	t.Cleanup(ts.Close)
	return model.Spec{BaseURL: ts.URL + "/v1", Model: "m"}
}

// An SGLang without choice token_ids (before it had them for chat) gives
// the completion's ids in meta_info.output_token_logprobs.
func TestSGLangOutputTokenLogprobs(t *testing.T) {
	spec := reply(t, `{"id":"x","object":"chat.completion","created":1,"model":"m",
		"choices":[{"index":0,"message":{"role":"assistant","content":"hi","reasoning_content":null,"tool_calls":null},
		"logprobs":{"content":[{"token":"h","bytes":[104],"logprob":-0.5,"top_logprobs":[]},{"token":"i","bytes":[105],"logprob":-0.25,"top_logprobs":[]}]},
		"finish_reason":"stop","matched_stop":2,"prompt_token_ids":[7,8],
		"meta_info":{"id":"r","finish_reason":{"type":"stop","matched":2},"prompt_tokens":2,"weight_version":"v3",
		"output_token_logprobs":[[-0.5,104,"h"],[-0.25,2,"i"]],"completion_tokens":2}}],
		"usage":{"prompt_tokens":2,"total_tokens":4,"completion_tokens":2,"prompt_tokens_details":null,"reasoning_tokens":0},"metadata":null}`)
	spec.Engine = model.EngineSGLang
	c, err := model.New(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), model.Request{Messages: hello.Messages, ReturnTokenIDs: true, Logprobs: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.PromptTokenIDs, []int{7, 8}) || !reflect.DeepEqual(resp.CompletionTokenIDs, []int{104, 2}) ||
		!reflect.DeepEqual(resp.Logprobs, []float64{-0.5, -0.25}) || resp.WeightVersion != "v3" {
		t.Errorf("response %+v", resp)
	}
}

func TestBadExtensions(t *testing.T) {
	for _, tc := range []struct{ name, choice, want string }{
		{"null logprob", `"logprobs":{"content":[{"token":"a","logprob":null,"bytes":[],"top_logprobs":[]}]}`, "has no logprob"},
		{"bad triple", `"meta_info":{"output_token_logprobs":[[-0.5]]}`, "not a [logprob, token id, text] triple"},
		{"ids not ints", `"token_ids":["a"]`, "reading token ids"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := reply(t, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop",`+tc.choice+`}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
			c, err := model.New(spec, &model.Options{Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), hello)
			var e *model.Error
			if !errors.As(err, &e) || e.Status != 200 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %v; want a 200 that says %q", err, tc.want)
			}
		})
	}
}

// A number as weight_version is kept as its text.
func TestWeightVersionNumber(t *testing.T) {
	spec := reply(t, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop","meta_info":{"weight_version":42}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)
	c, err := model.New(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Chat(context.Background(), hello)
	if err != nil || resp.WeightVersion != "42" {
		t.Errorf("weight version %v, %v", resp, err)
	}
}

// The retries wait Backoff, then twice it, and log one record each.
func TestRetryWaitsBackoff(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 429, Error: "slow down"}, fake.Turn{Status: 502, Error: "bad gateway"}, fake.Turn{Content: "ok"})
	var logs strings.Builder
	c := s.Client(t, &model.Options{Backoff: 40 * time.Millisecond, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	start := time.Now()
	resp, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 120*time.Millisecond {
		t.Errorf("took %s; want at least the waits' 40ms+80ms", took)
	}
	if resp.Attempts != 3 || resp.Latency < 120*time.Millisecond {
		t.Errorf("attempts %d, latency %s", resp.Attempts, resp.Latency)
	}
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 {
		t.Fatalf("log %q; want a record per retry", logs.String())
	}
	for i, want := range []string{`"status":429,"attempt":1,"wait":40000000`, `"status":502,"attempt":2,"wait":80000000`} {
		if !strings.Contains(lines[i], want) || !strings.Contains(lines[i], `"level":"WARN"`) {
			t.Errorf("record %d %s; want %s", i, lines[i], want)
		}
	}
}

// A Retry-After longer than the schedule is waited.
func TestRetryAfterWaited(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 503, RetryAfter: time.Second}, fake.Turn{Content: "ok"})
	start := time.Now()
	if _, err := s.Client(t, nil).Chat(context.Background(), hello); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("took %s; want the server's Retry-After of 1s", took)
	}
}

// Each attempt has its own Timeout: a slow 5xx attempt that ends in time
// is retried, and the next one may succeed.
func TestTimeoutPerAttempt(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 500, Delay: 150 * time.Millisecond}, fake.Turn{Delay: 150 * time.Millisecond, Content: "ok"})
	resp, err := s.Client(t, &model.Options{Timeout: 250 * time.Millisecond}).Chat(context.Background(), hello)
	if err != nil {
		t.Fatalf("err %v; want each attempt under its own 250ms", err)
	}
	if resp.Content != "ok" || resp.Attempts != 2 {
		t.Errorf("%+v", resp)
	}
}

// Cancelling during a retried call's second attempt stops it there.
func TestCancelDuringRetry(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 503}, fake.Turn{Delay: 10 * time.Second, Content: "late"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for len(s.Chats()) < 2 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := s.Client(t, nil).Chat(ctx, hello)
	var e *model.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || e.Attempts != 2 {
		t.Fatalf("err %v; want context.Canceled in attempt 2", err)
	}
}
