package fake_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model/fake"
)

// post sends body to the server's chat endpoint and returns the status
// and the decoded reply.
func post(t *testing.T, s *fake.Server, body string) (int, map[string]any, http.Header) {
	t.Helper()
	res, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("reply is not JSON: %s", b)
	}
	return res.StatusCode, out, res.Header
}

const hello = `{"model":"fake-model","messages":[{"role":"user","content":"hi"}]}`

// errorMessage is an OpenAI error body's message, failing unless the body
// has that shape.
func errorMessage(t *testing.T, out map[string]any) string {
	t.Helper()
	e, ok := out["error"].(map[string]any)
	if !ok {
		t.Fatalf("no error object in %v", out)
	}
	msg, _ := e["message"].(string)
	if msg == "" || e["type"] == nil {
		t.Fatalf("error object %v lacks a message or a type", e)
	}
	return msg
}

func TestCompletionShape(t *testing.T) {
	s := fake.New(t, fake.Turn{
		ToolCalls:          []fake.ToolCall{{Name: "f", Arguments: `{"x":`}},
		PromptTokenIDs:     []int{1, 2},
		CompletionTokenIDs: []int{3},
	})
	status, out, _ := post(t, s, `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"return_token_ids":true}`)
	if status != 200 || out["object"] != "chat.completion" || out["model"] != "fake-model" {
		t.Fatalf("%d %v", status, out)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if msg["content"] != nil || msg["role"] != "assistant" || choice["finish_reason"] != "tool_calls" {
		t.Errorf("choice %v", choice)
	}
	call := msg["tool_calls"].([]any)[0].(map[string]any)
	fn := call["function"].(map[string]any)
	if call["id"] != "call_1_0" || call["type"] != "function" || fn["name"] != "f" || fn["arguments"] != `{"x":` {
		t.Errorf("tool call %v", call)
	}
	ids, _ := json.Marshal([]any{out["prompt_token_ids"], choice["token_ids"]})
	if string(ids) != "[[1,2],[3]]" {
		t.Errorf("token ids %s", ids)
	}
	usage := out["usage"].(map[string]any)
	if usage["prompt_tokens"] != 2.0 || usage["completion_tokens"] != 1.0 || usage["total_tokens"] != 3.0 {
		t.Errorf("usage %v", usage)
	}
}

func TestTokenIDsOnlyWhenAsked(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "x", PromptTokenIDs: []int{1}, CompletionTokenIDs: []int{2}})
	_, out, _ := post(t, s, hello)
	choice := out["choices"].([]any)[0].(map[string]any)
	if _, ok := out["prompt_token_ids"]; ok {
		t.Errorf("prompt_token_ids unasked: %v", out)
	}
	if _, ok := choice["token_ids"]; ok {
		t.Errorf("token_ids unasked: %v", choice)
	}
}

func TestRejections(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		status     int
		want       string
	}{
		{"unknown model", `{"model":"other","messages":[{"role":"user","content":"hi"}]}`, 404, "The model `other` does not exist."},
		{"no model", `{"messages":[{"role":"user","content":"hi"}]}`, 400, `"model" is required`},
		{"no messages", `{"model":"fake-model","messages":[]}`, 400, "non-empty"},
		{"not JSON", `{"model":`, 400, "not a JSON chat request"},
		{"orphan tool message", `{"model":"fake-model","messages":[{"role":"user","content":"hi"},{"role":"tool","tool_call_id":"c1","content":"r"}]}`, 400, "must answer a preceding assistant tool call"},
		{"bad tool", `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{}}]}`, 400, "name is required"},
		{"bad role", `{"model":"fake-model","messages":[{"role":"robot","content":"hi"}]}`, 400, "unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := fake.New(t, fake.Turn{Content: "unused"})
			status, out, _ := post(t, s, tc.body)
			if msg := errorMessage(t, out); status != tc.status || !strings.Contains(msg, tc.want) {
				t.Errorf("%d %q; want %d saying %q", status, msg, tc.status, tc.want)
			}
			if s.Remaining() != 1 {
				t.Errorf("a rejection consumed the turn")
			}
			if len(s.Chats()) != 1 || !bytes.Equal(s.Chats()[0].Body, []byte(tc.body)) {
				t.Errorf("the request was not recorded as sent: %+v", s.Chats())
			}
		})
	}
}

func TestToolRoundTripAccepted(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "ok"})
	body := `{"model":"fake-model","messages":[{"role":"user","content":"hi"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"res"},{"type":"text","text":"ult"}]}]}`
	if status, out, _ := post(t, s, body); status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	m := s.Chats()[0].Messages
	if len(m) != 3 || m[1].ToolCalls[0].Function.Name != "f" || m[2].Content != "result" || m[2].ToolCallID != "c1" {
		t.Errorf("decoded messages %+v", m)
	}
}

func TestErrorTurn(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 429, Error: "slow down", ErrorType: "rate_limit_exceeded", ErrorCode: "rate_limit", RetryAfter: 2 * time.Second})
	status, out, h := post(t, s, hello)
	if status != 429 || errorMessage(t, out) != "slow down" || h.Get("Retry-After") != "2" {
		t.Errorf("%d %v %v", status, out, h)
	}
	e := out["error"].(map[string]any)
	if e["type"] != "rate_limit_exceeded" || e["code"] != "rate_limit" {
		t.Errorf("error %v", e)
	}
}

func TestScriptExhausted(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "one"}, fake.Turn{Content: "two"})
	for range 2 {
		if status, out, _ := post(t, s, hello); status != 200 {
			t.Fatalf("%d %v", status, out)
		}
	}
	status, out, _ := post(t, s, hello)
	msg := errorMessage(t, out)
	if status != 500 || !strings.Contains(msg, "script exhausted") || !strings.Contains(msg, "had 2 turns") || !strings.Contains(msg, "chat request 3") {
		t.Errorf("%d %q", status, msg)
	}
}

func TestHandlerSeesRequest(t *testing.T) {
	s := fake.New(t, fake.Turn{Handler: func(r fake.Request) fake.Turn {
		return fake.Turn{Content: r.Model + "/" + r.Messages[0].Content, Model: "served-as"}
	}})
	_, out, _ := post(t, s, hello)
	choice := out["choices"].([]any)[0].(map[string]any)
	if got := choice["message"].(map[string]any)["content"]; got != "fake-model/hi" || out["model"] != "served-as" {
		t.Errorf("content %v, model %v", got, out["model"])
	}
}

func TestResponder(t *testing.T) {
	n := 0
	s := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		n++
		return fake.Turn{Content: strings.Repeat("x", r.N)}
	})
	for i := 1; i <= 3; i++ {
		_, out, _ := post(t, s, hello)
		choice := out["choices"].([]any)[0].(map[string]any)
		if got := choice["message"].(map[string]any)["content"]; got != strings.Repeat("x", i) {
			t.Errorf("reply %d: %v", i, got)
		}
	}
	if n != 3 {
		t.Errorf("responder called %d times", n)
	}
}

func TestModelsAndRoutes(t *testing.T) {
	s := fake.New(t)
	s.SetModels("a", "b")
	if s.Spec().Model != "a" || !strings.HasSuffix(s.Spec().BaseURL, "/v1") || s.Spec().BaseURL != s.URL() {
		t.Errorf("spec %v", s.Spec())
	}
	res, err := http.Get(s.URL() + "/models")
	if err != nil {
		t.Fatal(err)
	}
	var list struct {
		Object string
		Data   []struct{ ID, Object string }
	}
	err = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if err != nil || list.Object != "list" || len(list.Data) != 2 || list.Data[0].ID != "a" || list.Data[1].Object != "model" {
		t.Errorf("models %+v, %v", list, err)
	}
	res, err = http.Get(s.URL() + "/embeddings")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 {
		t.Errorf("unknown route: %d", res.StatusCode)
	}
	if r := s.Requests(); len(r) != 2 || r[0].Path != "/v1/models" || r[1].Path != "/v1/embeddings" || len(s.Chats()) != 0 {
		t.Errorf("requests %+v", r)
	}
}

func TestCloseEndsDelay(t *testing.T) {
	s := fake.New(nil, fake.Turn{Delay: time.Hour})
	done := make(chan struct{})
	go func() {
		defer close(done)
		res, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(hello))
		if err == nil {
			res.Body.Close()
		}
	}()
	for len(s.Chats()) == 0 {
		time.Sleep(time.Millisecond)
	}
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close waited for a delayed turn")
	}
	<-done
}
