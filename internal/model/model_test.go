package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

func TestParseSpec(t *testing.T) {
	t.Setenv(model.EnvAPIKey, "")
	t.Setenv(model.EnvOpenAIAPIKey, "")
	for _, tc := range []struct {
		in         string
		base, name string
	}{
		{"http://127.0.0.1:8000/v1#qwen3-8b", "http://127.0.0.1:8000/v1", "qwen3-8b"},
		{"  https://api.example.com/v1/#org/model:tag ", "https://api.example.com/v1", "org/model:tag"},
		{"http://localhost:30000/v1beta/openai#m", "http://localhost:30000/v1beta/openai", "m"},
	} {
		spec, err := model.ParseSpec(tc.in)
		if err != nil {
			t.Errorf("ParseSpec(%q): %v", tc.in, err)
			continue
		}
		if spec.BaseURL != tc.base || spec.Model != tc.name || spec.APIKey != "" {
			t.Errorf("ParseSpec(%q) = %#v, key %q; want %s#%s", tc.in, spec, spec.APIKey, tc.base, tc.name)
		}
	}
	for _, tc := range []struct{ in, problem string }{
		{"", "is empty"},
		{"http://127.0.0.1:8000/v1", "names no model"},
		{"http://127.0.0.1:8000/v1#", "no model name after #"},
		{"#qwen3-8b", "no URL before #"},
		{"127.0.0.1:8000/v1#m", "not http:// or https://"},
		{"ftp://host/v1#m", "not http:// or https://"},
		{"http:///v1#m", "no host"},
		{"http://127.0.0.1:8000#m", "no path"},
		{"http://127.0.0.1:8000/v1?x=1#m", "query"},
		{"http://127.0.0.1:8000/v1#my model", "white space"},
	} {
		_, err := model.ParseSpec(tc.in)
		if err == nil {
			t.Errorf("ParseSpec(%q) succeeded; want an error saying %q", tc.in, tc.problem)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, tc.problem) || !strings.Contains(msg, "e.g. http://127.0.0.1:8000/v1#qwen3-8b") {
			t.Errorf("ParseSpec(%q) = %q; want it to say %q and give the example", tc.in, msg, tc.problem)
		}
	}
}

func TestParseSpecKey(t *testing.T) {
	t.Setenv(model.EnvAPIKey, "")
	t.Setenv(model.EnvOpenAIAPIKey, "sk-openai")
	spec, err := model.ParseSpec("http://h/v1#m")
	if err != nil || spec.APIKey != "sk-openai" {
		t.Fatalf("ParseSpec = %q, %v; want the key from %s", spec.APIKey, err, model.EnvOpenAIAPIKey)
	}
	t.Setenv(model.EnvAPIKey, "sk-wildawm")
	if spec, _ = model.ParseSpec("http://h/v1#m"); spec.APIKey != "sk-wildawm" {
		t.Fatalf("key %q; want %s's, which wins", spec.APIKey, model.EnvAPIKey)
	}
	for _, s := range []string{spec.String(), fmt.Sprint(spec), fmt.Sprintf("%+v", spec), fmt.Sprintf("%#v", spec)} {
		if strings.Contains(s, "sk-wildawm") {
			t.Errorf("%q shows the API key", s)
		}
	}
}

func TestNewRejectsBadSpec(t *testing.T) {
	if _, err := model.New(model.Spec{BaseURL: "http://h/v1"}, nil); err == nil || !strings.Contains(err.Error(), "no model name") {
		t.Errorf("New without a model: %v; want an error naming it", err)
	}
	if _, err := model.New(model.Spec{BaseURL: "h:1", Model: "m"}, nil); err == nil {
		t.Error("New with a bad URL succeeded")
	}
}

var weather = model.Tool{
	Name:        "get_weather",
	Description: "The weather in a city.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}`),
}

func TestToolCallRoundTrip(t *testing.T) {
	s := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{
			{Name: "get_weather", Arguments: `{"city":"Paris"}`},
			{ID: "call_x", Name: "noop", Arguments: ""},
		}},
		fake.Turn{Handler: func(r fake.Request) fake.Turn {
			last := r.Messages[len(r.Messages)-1]
			return fake.Turn{Content: "echo " + last.ToolCallID + ": " + last.Content}
		}},
	)
	c := s.Client(t, nil)
	ctx := context.Background()
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "You help."},
		{Role: model.RoleUser, Content: "Weather in Paris?"},
	}
	resp, err := c.Chat(ctx, model.Request{Messages: msgs, Tools: []model.Tool{weather, {Name: "noop"}}, ToolChoice: model.ToolChoiceAuto})
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != "tool_calls" || resp.Attempts != 1 || resp.Model != fake.DefaultModel {
		t.Errorf("finish %q, attempts %d, model %q", resp.FinishReason, resp.Attempts, resp.Model)
	}
	want := []model.ToolCall{
		{ID: "call_1_0", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`), RawArguments: `{"city":"Paris"}`},
		{ID: "call_x", Name: "noop", Arguments: json.RawMessage(`{}`)},
	}
	if !reflect.DeepEqual(resp.ToolCalls, want) {
		t.Fatalf("tool calls\n got %+v\nwant %+v", resp.ToolCalls, want)
	}

	first := s.Chats()[0]
	var body map[string]any
	if err := json.Unmarshal(first.Body, &body); err != nil {
		t.Fatal(err)
	}
	tools, _ := body["tools"].([]any)
	if len(tools) != 2 || body["tool_choice"] != "auto" || body["model"] != fake.DefaultModel {
		t.Fatalf("body on the wire: %s", first.Body)
	}
	if _, ok := body["return_token_ids"]; ok {
		t.Errorf("return_token_ids sent unasked: %s", first.Body)
	}
	if first.Tools[0].Type != "function" || first.Tools[0].Name != "get_weather" || first.Tools[0].Description != weather.Description {
		t.Errorf("tool on the wire: %+v", first.Tools[0])
	}
	assertJSONEqual(t, first.Tools[0].Parameters, weather.Parameters)
	if first.Tools[1].Parameters != nil {
		t.Errorf("a tool without parameters sent %s", first.Tools[1].Parameters)
	}

	msgs = append(msgs, model.Message{Role: model.RoleAssistant, ToolCalls: resp.ToolCalls},
		model.Message{Role: model.RoleTool, ToolCallID: "call_1_0", Content: "sunny"},
		model.Message{Role: model.RoleTool, ToolCallID: "call_x", Content: "done"})
	resp, err = c.Chat(ctx, model.Request{Messages: msgs, Tools: []model.Tool{weather, {Name: "noop"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "echo call_x: done" || resp.FinishReason != "stop" || len(resp.ToolCalls) != 0 {
		t.Errorf("second reply %+v", resp)
	}
	second := s.Chats()[1].Messages
	if len(second) != 5 {
		t.Fatalf("second request has %d messages; want 5", len(second))
	}
	a := second[2]
	if a.Role != "assistant" || len(a.ToolCalls) != 2 || a.Content != "" {
		t.Fatalf("assistant message on the wire: %+v", a)
	}
	for i, w := range []struct{ id, name, args string }{{"call_1_0", "get_weather", `{"city":"Paris"}`}, {"call_x", "noop", "{}"}} {
		tc := a.ToolCalls[i]
		if tc.ID != w.id || tc.Type != "function" || tc.Function.Name != w.name || tc.Function.Arguments != w.args {
			t.Errorf("tool call %d on the wire: %+v; want %+v", i, tc, w)
		}
	}
	if m := second[3]; m.Role != "tool" || m.ToolCallID != "call_1_0" || m.Content != "sunny" {
		t.Errorf("tool message on the wire: %+v", m)
	}
	var raw struct {
		Messages []map[string]json.RawMessage `json:"messages"`
	}
	if err := json.Unmarshal(s.Chats()[1].Body, &raw); err != nil {
		t.Fatal(err)
	}
	if string(raw.Messages[3]["role"]) != `"tool"` || string(raw.Messages[3]["tool_call_id"]) != `"call_1_0"` || string(raw.Messages[3]["content"]) != `"sunny"` {
		t.Errorf("tool message's JSON: %v", raw.Messages[3])
	}
	if s.Remaining() != 0 {
		t.Errorf("%d turns left", s.Remaining())
	}
}

func TestMalformedArguments(t *testing.T) {
	s := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{
		{Name: "a", Arguments: `{"city": "Par`},
		{Name: "b", Arguments: `[1, 2]`},
		{Name: "c", Arguments: ` {"ok": true} `},
	}}, fake.Turn{Content: "fine"})
	c := s.Client(t, nil)
	user := model.Message{Role: model.RoleUser, Content: "go"}
	resp, err := c.Chat(context.Background(), model.Request{Messages: []model.Message{user}})
	if err != nil {
		t.Fatalf("malformed arguments made an error: %v", err)
	}
	if len(resp.ToolCalls) != 3 {
		t.Fatalf("got %d tool calls; want all 3 kept", len(resp.ToolCalls))
	}
	bad, arr, ok := resp.ToolCalls[0], resp.ToolCalls[1], resp.ToolCalls[2]
	if bad.Name != "a" || bad.Arguments != nil || bad.RawArguments != `{"city": "Par` || !strings.Contains(bad.ArgError, "not valid JSON") {
		t.Errorf("malformed call: %+v", bad)
	}
	if arr.ArgError == "" || !strings.Contains(arr.ArgError, "not a JSON object") || string(arr.Arguments) != "[1, 2]" {
		t.Errorf("array arguments: %+v", arr)
	}
	if ok.ArgError != "" || string(ok.Arguments) != `{"ok": true}` {
		t.Errorf("valid arguments: %+v", ok)
	}
	if _, err := json.Marshal(resp); err != nil {
		t.Errorf("a response with a malformed call does not marshal: %v", err)
	}
	// What the model said goes back as it said it.
	msgs := []model.Message{user, {Role: model.RoleAssistant, ToolCalls: resp.ToolCalls}}
	for _, tc := range resp.ToolCalls {
		msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: tc.ID, Content: "error: " + tc.ArgError})
	}
	if _, err := c.Chat(context.Background(), model.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if got := s.Chats()[1].Messages[1].ToolCalls[0].Function.Arguments; got != `{"city": "Par` {
		t.Errorf("malformed arguments sent back as %q", got)
	}
}

func TestTokenIDs(t *testing.T) {
	turn := fake.Turn{Content: "hi", PromptTokenIDs: []int{1, 2, 3}, CompletionTokenIDs: []int{7, 8}}
	s := fake.New(t, turn, turn)
	c := s.Client(t, nil)
	msgs := []model.Message{{Role: model.RoleUser, Content: "hello"}}
	resp, err := c.Chat(context.Background(), model.Request{Messages: msgs, ReturnTokenIDs: true})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(resp.PromptTokenIDs, []int{1, 2, 3}) || !reflect.DeepEqual(resp.CompletionTokenIDs, []int{7, 8}) {
		t.Errorf("token ids %v, %v", resp.PromptTokenIDs, resp.CompletionTokenIDs)
	}
	if resp.Usage != (model.Usage{PromptTokens: 3, CompletionTokens: 2}) {
		t.Errorf("usage %+v", resp.Usage)
	}
	var body map[string]any
	if err := json.Unmarshal(s.Chats()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	if body["return_token_ids"] != true {
		t.Errorf("return_token_ids not true on the wire: %s", s.Chats()[0].Body)
	}

	resp, err = c.Chat(context.Background(), model.Request{Messages: msgs})
	if err != nil {
		t.Fatal(err)
	}
	if resp.PromptTokenIDs != nil || resp.CompletionTokenIDs != nil {
		t.Errorf("token ids unasked: %v, %v", resp.PromptTokenIDs, resp.CompletionTokenIDs)
	}
	if strings.Contains(string(s.Chats()[1].Body), "return_token_ids") {
		t.Errorf("return_token_ids sent unasked: %s", s.Chats()[1].Body)
	}
}

// TestHostedAPIRefusesEngineFields: a server of no named engine that
// refuses return_token_ids (a hosted API) is asked again without it, and
// never sent it again; the reply has no token ids. A server named vLLM is
// not second-guessed.
func TestHostedAPIRefusesEngineFields(t *testing.T) {
	s := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "hi", CompletionTokenIDs: []int{7}} })
	s.SetStrict(true)
	c := s.Client(t, nil)
	req := model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hello"}}, ReturnTokenIDs: true, Logprobs: true}
	for i := range 2 {
		resp, err := c.Chat(context.Background(), req)
		if err != nil || resp.Content != "hi" || resp.CompletionTokenIDs != nil {
			t.Fatalf("call %d: %+v, %v; want the reply without token ids", i, resp, err)
		}
	}
	if n := len(s.Chats()); n != 3 {
		t.Errorf("%d requests; want 3: the refused one, then two without the field", n)
	}
	if strings.Contains(string(s.Chats()[2].Body), "return_token_ids") {
		t.Errorf("return_token_ids sent again after the refusal: %s", s.Chats()[2].Body)
	}
	v := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "hi"} })
	v.SetStrict(true)
	sp := v.Spec()
	sp.Engine = model.EngineVLLM
	vc, err := model.New(sp, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := vc.Chat(context.Background(), req); err == nil || !strings.Contains(err.Error(), "Unrecognized request argument supplied: return_token_ids") {
		t.Errorf("a server named vLLM that refuses return_token_ids: %v; want the refusal", err)
	}
}

func TestSamplingOnTheWire(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "a"}, fake.Turn{Content: "b"})
	seed, temp, zero, seed2, topP := int64(7), 0.5, 0.0, int64(9), 0.9
	c := s.Client(t, &model.Options{Seed: &seed, Temperature: &temp})
	msgs := []model.Message{{Role: model.RoleUser, Content: "x"}}
	if _, err := c.Chat(context.Background(), model.Request{Messages: msgs, MaxTokens: 64}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), model.Request{Messages: msgs, Temperature: &zero, Seed: &seed2, TopP: &topP}); err != nil {
		t.Fatal(err)
	}
	r1, r2 := s.Chats()[0], s.Chats()[1]
	if r1.Seed == nil || *r1.Seed != 7 || r1.Temperature == nil || *r1.Temperature != 0.5 || r1.MaxTokens == nil || *r1.MaxTokens != 64 {
		t.Errorf("options' defaults on the wire: %s", r1.Body)
	}
	if r1.TopP != nil {
		t.Errorf("top_p sent unasked: %s", r1.Body)
	}
	if r2.Seed == nil || *r2.Seed != 9 || r2.Temperature == nil || *r2.Temperature != 0 || r2.MaxTokens != nil || r2.TopP == nil || *r2.TopP != 0.9 {
		t.Errorf("the request's own values on the wire: %s", r2.Body)
	}
}

func TestNoSamplingUnasked(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "a"})
	c := s.Client(t, nil)
	if _, err := c.Chat(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "x"}}}); err != nil {
		t.Fatal(err)
	}
	var body map[string]any
	if err := json.Unmarshal(s.Chats()[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"seed", "temperature", "max_tokens", "tools", "tool_choice", "stream"} {
		if _, ok := body[k]; ok {
			t.Errorf("%s sent unasked: %s", k, s.Chats()[0].Body)
		}
	}
}

func TestAPIKey(t *testing.T) {
	t.Setenv(model.EnvOpenAIAPIKey, "sk-ambient")
	s := fake.New(t, fake.Turn{Content: "a"}, fake.Turn{Content: "b"})
	msgs := []model.Message{{Role: model.RoleUser, Content: "x"}}

	spec := s.Spec()
	spec.APIKey = "sk-test"
	c, err := model.New(spec, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Chat(context.Background(), model.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if got := s.Chats()[0].Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization %q; want the spec's key", got)
	}
	// A spec without a key sends none: New reads no environment.
	if _, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	if got := s.Chats()[1].Header.Get("Authorization"); got != "" {
		t.Errorf("Authorization %q sent for a spec without a key", got)
	}
}

func TestReasoning(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "42", Reasoning: "six times seven"})
	resp, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "?"}}})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "42" || resp.Reasoning != "six times seven" {
		t.Errorf("content %q, reasoning %q", resp.Content, resp.Reasoning)
	}
}

// TestInlineReasoning: thinking written inline (<think>, a server without
// a reasoning parser) is moved out of the content: an answer criterion
// never matches a candidate the reasoning weighed.
func TestInlineReasoning(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "<think>Cafe Uno is 2 km away; Bean There 300 m.</think>\n\nBean There", Reasoning: "the nearest"},
		fake.Turn{Content: "Cafe Uno, then...</think>Bean There"})
	c := s.Client(t, nil)
	resp, err := c.Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "Bean There" || resp.Reasoning != "the nearest\n\nCafe Uno is 2 km away; Bean There 300 m." || !resp.InlineReasoning {
		t.Errorf("content %q, reasoning %q, inline %t", resp.Content, resp.Reasoning, resp.InlineReasoning)
	}
	resp, err = c.Chat(context.Background(), hello)
	if err != nil || resp.Content != "Bean There" || resp.Reasoning != "Cafe Uno, then..." {
		t.Errorf("a block opened by the template: %+v, %v", resp, err)
	}
}

var hello = model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: "hello"}}}

func TestRetry429ThenSuccess(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 429, Error: "slow down"}, fake.Turn{Status: 503, Error: "warming up"}, fake.Turn{Content: "ok"})
	resp, err := s.Client(t, nil).Chat(context.Background(), hello)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "ok" || resp.Attempts != 3 || len(s.Chats()) != 3 {
		t.Errorf("content %q after %d attempts, %d requests; want ok after 3", resp.Content, resp.Attempts, len(s.Chats()))
	}
}

func Test400NotRetried(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 400, Error: "tools[0].function.parameters is not a valid schema"}, fake.Turn{Content: "never"})
	_, err := s.Client(t, nil).Chat(context.Background(), hello)
	var e *model.Error
	if !errors.As(err, &e) {
		t.Fatalf("err %v (%T); want a *model.Error", err, err)
	}
	if e.Status != 400 || e.Attempts != 1 || e.Type != "BadRequestError" || e.Code != "400" {
		t.Errorf("error %+v", e)
	}
	msg := err.Error()
	for _, want := range []string{s.URL(), "HTTP 400", "tools[0].function.parameters is not a valid schema", "model " + fake.DefaultModel} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q does not say %q", msg, want)
		}
	}
	if len(s.Chats()) != 1 || s.Remaining() != 1 {
		t.Errorf("%d requests, %d turns left; want 1 and 1: a 400 is not retried", len(s.Chats()), s.Remaining())
	}
}

func Test500ExhaustsRetries(t *testing.T) {
	boom := fake.Turn{Status: 500, Error: "boom"}
	s := fake.New(t, boom, boom, boom, fake.Turn{Content: "too late"})
	_, err := s.Client(t, &model.Options{MaxRetries: 2}).Chat(context.Background(), hello)
	var e *model.Error
	if !errors.As(err, &e) || e.Status != 500 || e.Attempts != 3 || e.Message != "boom" {
		t.Fatalf("err %v; want HTTP 500 boom after 3 attempts", err)
	}
	if !strings.Contains(err.Error(), "after 3 attempts") || !strings.Contains(err.Error(), "see its log") {
		t.Errorf("error %q", err)
	}
	if len(s.Chats()) != 3 {
		t.Errorf("%d requests; want 3", len(s.Chats()))
	}
}

func TestDefaultRetries(t *testing.T) {
	s := fake.New(t) // every request: the script is exhausted, a 500
	_, err := s.Client(t, nil).Chat(context.Background(), hello)
	var e *model.Error
	if !errors.As(err, &e) || e.Attempts != 1+model.DefaultMaxRetries || len(s.Chats()) != 1+model.DefaultMaxRetries {
		t.Fatalf("err %v after %d requests; want %d attempts", err, len(s.Chats()), 1+model.DefaultMaxRetries)
	}
	if !strings.Contains(e.Message, "script exhausted") || !strings.Contains(e.Message, "had 0 turns") {
		t.Errorf("message %q does not say the script is exhausted", e.Message)
	}
	s2 := fake.New(t)
	if _, err := s2.Client(t, &model.Options{MaxRetries: -1}).Chat(context.Background(), hello); err == nil || len(s2.Chats()) != 1 {
		t.Errorf("MaxRetries -1: %d requests; want 1", len(s2.Chats()))
	}
}

func TestTimeout(t *testing.T) {
	s := fake.New(t, fake.Turn{Delay: 10 * time.Second, Content: "late"}, fake.Turn{Content: "never"})
	start := time.Now()
	_, err := s.Client(t, &model.Options{Timeout: 100 * time.Millisecond}).Chat(context.Background(), hello)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s; want about the 100ms timeout", took)
	}
	if !errors.Is(err, model.ErrTimeout) {
		t.Fatalf("err %v; want ErrTimeout", err)
	}
	if !strings.Contains(err.Error(), "timed out after 100ms") {
		t.Errorf("error %q does not say after how long", err)
	}
	if len(s.Chats()) != 1 {
		t.Errorf("%d requests; want 1: a timeout is not retried", len(s.Chats()))
	}
}

func TestCancelMidRequest(t *testing.T) {
	s := fake.New(t, fake.Turn{Delay: 10 * time.Second, Content: "late"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(50*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Client(t, nil).Chat(ctx, hello)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s after cancel", took)
	}
	if !errors.Is(err, context.Canceled) || errors.Is(err, model.ErrTimeout) {
		t.Fatalf("err %v; want context.Canceled", err)
	}
}

func TestCancelMidBackoff(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 503}, fake.Turn{Content: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	start := time.Now()
	_, err := s.Client(t, &model.Options{Backoff: time.Minute}).Chat(ctx, hello)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("took %s after cancel", took)
	}
	var e *model.Error
	if !errors.Is(err, context.Canceled) || !errors.As(err, &e) || e.Attempts != 1 {
		t.Fatalf("err %v; want context.Canceled after 1 attempt", err)
	}
	if len(s.Chats()) != 1 {
		t.Errorf("%d requests", len(s.Chats()))
	}
}

func TestCancelledBeforeStart(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "never"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.Client(t, nil).Chat(ctx, hello); !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	if len(s.Chats()) != 0 {
		t.Errorf("%d requests sent on a cancelled context", len(s.Chats()))
	}
}

func TestConnectionRefused(t *testing.T) {
	s := fake.New(nil)
	spec := s.Spec()
	s.Close()
	c, err := model.New(spec, &model.Options{MaxRetries: 1, Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), hello)
	var e *model.Error
	if !errors.As(err, &e) || e.Status != 0 || e.Attempts != 2 {
		t.Fatalf("err %v; want no status after 2 attempts", err)
	}
	for _, want := range []string{spec.BaseURL, "is the server running?", "vllm serve " + spec.Model} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

func TestModels(t *testing.T) {
	s := fake.New(t)
	s.SetModels("qwen3-8b", "llama-3.1-8b")
	ids, err := s.Client(t, nil).Models(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(ids, []string{"qwen3-8b", "llama-3.1-8b"}) {
		t.Errorf("models %v", ids)
	}
	if r := s.Requests(); len(r) != 1 || r[0].Method != "GET" || r[0].Path != "/v1/models" {
		t.Errorf("requests %+v", r)
	}
}

func TestModelNotServed(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "never"})
	spec := s.Spec()
	spec.Model = "qwen3-8b"
	c, err := model.New(spec, &model.Options{Backoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Chat(context.Background(), hello)
	if !errors.Is(err, model.ErrNotServed) {
		t.Fatalf("err %v; want ErrNotServed", err)
	}
	if want := "model qwen3-8b not served; the server serves: " + fake.DefaultModel; !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not say %q", err, want)
	}
	if !strings.Contains(err.Error(), "HTTP 404") || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("error %q lacks the status or the server's message", err)
	}
	if len(s.Chats()) != 1 {
		t.Errorf("%d chat requests; want 1: a 404 is not retried", len(s.Chats()))
	}
}

func TestRequestChecked(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "never"})
	c := s.Client(t, nil)
	for _, tc := range []struct {
		req  model.Request
		want string
	}{
		{model.Request{}, "no messages"},
		{model.Request{Messages: []model.Message{{Role: model.RoleTool, Content: "x"}}}, "ToolCallID"},
		{model.Request{Messages: []model.Message{{Role: "robot", Content: "x"}}}, "role"},
		{model.Request{Messages: hello.Messages, ToolChoice: "always"}, "tool choice"},
		{model.Request{Messages: hello.Messages, Tools: []model.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, "not a JSON object"},
		{model.Request{Messages: hello.Messages, Tools: []model.Tool{{Name: "t"}, {Name: "t"}}}, "twice"},
	} {
		_, err := c.Chat(context.Background(), tc.req)
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "nothing was sent") {
			t.Errorf("Chat(%+v) = %v; want an error saying %q", tc.req, err, tc.want)
		}
	}
	if n := len(s.Requests()); n != 0 {
		t.Errorf("%d requests sent for bad requests", n)
	}
}

func TestConcurrentResponder(t *testing.T) {
	s := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		return fake.Turn{Content: "re: " + r.Messages[0].Content}
	})
	c := s.Client(t, nil)
	var wg sync.WaitGroup
	errs := make([]error, 8)
	for i := range errs {
		wg.Go(func() {
			in := fmt.Sprintf("m%d", i)
			resp, err := c.Chat(context.Background(), model.Request{Messages: []model.Message{{Role: model.RoleUser, Content: in}}})
			if err == nil && resp.Content != "re: "+in {
				err = fmt.Errorf("reply %q to %q", resp.Content, in)
			}
			errs[i] = err
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		t.Fatal(err)
	}
	if len(s.Chats()) != 8 {
		t.Errorf("%d requests", len(s.Chats()))
	}
}

func assertJSONEqual(t *testing.T, got, want json.RawMessage) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("%s: %v", got, err)
	}
	if err := json.Unmarshal(want, &w); err != nil {
		t.Fatalf("%s: %v", want, err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("JSON\n got %s\nwant %s", got, want)
	}
}

func TestHistoryOnTheWire(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "ok"})
	msgs := []model.Message{
		{Role: model.RoleSystem, Content: "sys"},
		{Role: model.RoleUser, Content: "q1"},
		{Role: model.RoleAssistant, Content: "a1"},
		{Role: model.RoleUser, Content: "q2"},
		{Role: model.RoleAssistant, Content: "calling", ToolCalls: []model.ToolCall{{ID: "c1", Name: "f", Arguments: json.RawMessage(`{"k":"v"}`)}}},
		{Role: model.RoleTool, ToolCallID: "c1", Content: "r"},
	}
	if _, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: msgs}); err != nil {
		t.Fatal(err)
	}
	got := s.Chats()[0].Messages
	if len(got) != len(msgs) {
		t.Fatalf("%d messages on the wire; want %d", len(got), len(msgs))
	}
	for i, m := range msgs {
		if got[i].Role != string(m.Role) || got[i].Content != m.Content || got[i].ToolCallID != m.ToolCallID || len(got[i].ToolCalls) != len(m.ToolCalls) {
			t.Errorf("message %d on the wire: %+v; want %+v", i, got[i], m)
		}
	}
	if a := got[4].ToolCalls[0]; a.ID != "c1" || a.Function.Arguments != `{"k":"v"}` {
		t.Errorf("tool call on the wire: %+v", a)
	}
}

func TestNotACompletion(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body, want string
	}{
		{"no choices", "application/json", `{"id":"x","object":"chat.completion","model":"m","choices":[]}`, "no choices"},
		{"html", "text/html", `<html>hello</html>`, `(it begins "<html>hello</html>"); is the URL the root`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				n++
				w.Header().Set("Content-Type", tc.contentType)
				io.WriteString(w, tc.body)
			}))
			defer ts.Close()
			c, err := model.New(model.Spec{BaseURL: ts.URL + "/v1", Model: "m"}, &model.Options{Backoff: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			_, err = c.Chat(context.Background(), hello)
			var e *model.Error
			if !errors.As(err, &e) || e.Status != 200 || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v; want a 200 that %s", err, tc.want)
			}
			if n != 1 {
				t.Errorf("%d requests; want 1: a bad reply is not retried", n)
			}
		})
	}
}

// TestCutReplyRetried: a 200 whose body ends before it is whole (the
// server or a proxy closing the connection mid-reply, or JSON that stops
// short) is retried, and said so; it is never "is the URL right?".
func TestCutReplyRetried(t *testing.T) {
	whole := fake.Turn{Content: "all of it"}
	for _, tc := range []struct {
		name string
		bad  fake.Turn
		want string
	}{
		{"connection closed mid-body", fake.Turn{Content: "all of it", CutAfter: 40}, "was cut off after 40 bytes"},
		{"json stops short", fake.Turn{Body: `{"id":"chatcmpl-1","choices":[{"message":`, BodyType: "application/json"}, "before its JSON is whole"},
		{"empty body", fake.Turn{Body: " ", BodyType: "application/json"}, "before its JSON is whole"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake.New(t, tc.bad, whole)
			resp, err := s.Client(t, nil).Chat(context.Background(), hello)
			if err != nil || resp.Content != "all of it" || resp.Attempts != 2 {
				t.Fatalf("resp %+v, err %v; want the whole reply at the second attempt", resp, err)
			}
			s = fake.New(t, tc.bad, tc.bad)
			_, err = s.Client(t, &model.Options{MaxRetries: 1}).Chat(context.Background(), hello)
			var e *model.Error
			if !errors.As(err, &e) || e.Attempts != 2 || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "closed the connection mid-reply") || strings.Contains(err.Error(), "root of an OpenAI") {
				t.Fatalf("err %v; want a cut reply after 2 attempts, saying %q", err, tc.want)
			}
		})
	}
}
