package model_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestGenerateEngines: Generate sends the prompt ids in each engine's
// shape (vLLM: POST /v1/completions with prompt, return_token_ids and
// logprobs; SGLang: POST /generate at the root with input_ids,
// sampling_params and return_logprob) and reads the completion's text,
// ids, logprobs, finish reason and SGLang's weight version.
func TestGenerateEngines(t *testing.T) {
	for _, tc := range []struct {
		engine model.Engine
		path   string
		field  string
	}{{model.EngineVLLM, "/v1/completions", "prompt"}, {model.EngineSGLang, "/generate", "input_ids"}} {
		turn := fake.Turn{Reasoning: "hm", Content: "ok", ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command":"ls"}`}}, WeightVersion: "7"}
		srv := fake.New(t, turn)
		srv.SetEngine(tc.engine)
		srv.SetTemplate(fake.ReasoningTemplate)
		temp := 0.5
		r, err := srv.Client(t, nil).Generate(context.Background(), model.TokenRequest{PromptIDs: []int{1, 2, 3}, MaxTokens: 64, Temperature: &temp})
		if err != nil {
			t.Fatalf("%s: %v", tc.engine, err)
		}
		want := fake.Encode(fake.Completion(turn))
		if !slices.Equal(r.CompletionTokenIDs, want) || !slices.Equal(r.Logprobs, fake.DefaultLogprobs(want)) || r.FinishReason != "stop" {
			t.Fatalf("%s: ids %v, logprobs %v, finish %q", tc.engine, r.CompletionTokenIDs, r.Logprobs, r.FinishReason)
		}
		if r.Text != fake.Decode(want, true) || strings.Contains(r.Text, "<|im_end|>") {
			t.Fatalf("%s: text %q", tc.engine, r.Text)
		}
		if (tc.engine == model.EngineSGLang) != (r.WeightVersion == "7") {
			t.Fatalf("%s: weight version %q", tc.engine, r.WeightVersion)
		}
		reqs := srv.Requests()
		if len(reqs) != 1 || reqs[0].Path != tc.path || !slices.Equal(reqs[0].InputIDs, []int{1, 2, 3}) {
			t.Fatalf("%s: requests %+v", tc.engine, reqs)
		}
		var body map[string]any
		if err := json.Unmarshal(reqs[0].Body, &body); err != nil || body[tc.field] == nil {
			t.Fatalf("%s: body %s", tc.engine, reqs[0].Body)
		}
	}
}

// TestTokenizeEngines: vLLM's /tokenize applies the server's template to
// the messages (the generation prompt when asked); SGLang's /v1/tokenize
// gets the client's ChatML text, which is the same template's text.
func TestTokenizeEngines(t *testing.T) {
	msgs := []model.Message{{Role: model.RoleSystem, Content: "sys"}, {Role: model.RoleUser, Content: "hi"}}
	tools := []model.Tool{{Name: "shell", Parameters: json.RawMessage(`{"type":"object"}`)}}
	var got [][]int
	for _, engine := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		srv := fake.New(t)
		srv.SetEngine(engine)
		srv.SetTemplate(fake.Template{})
		ids, err := srv.Client(t, nil).Tokenize(context.Background(), model.TokenizeRequest{Messages: msgs, Tools: tools, Generation: true})
		if err != nil {
			t.Fatalf("%s: %v", engine, err)
		}
		text := fake.Decode(ids, false)
		if !strings.HasPrefix(text, "<|im_start|>system\nsys") || !strings.Contains(text, `"name":"shell"`) || !strings.HasSuffix(text, "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n") {
			t.Fatalf("%s: %q", engine, text)
		}
		got = append(got, ids)
		want := map[model.Engine]string{model.EngineVLLM: "/tokenize", model.EngineSGLang: "/v1/tokenize"}[engine]
		if reqs := srv.Requests(); len(reqs) != 1 || reqs[0].Path != want {
			t.Fatalf("%s: requests %+v, want one to %s", engine, reqs, want)
		}
	}
	if !slices.Equal(got[0], got[1]) {
		t.Fatalf("the engines tokenize differently:\n%q\n%q", fake.Decode(got[0], false), fake.Decode(got[1], false))
	}
}

// TestTokenModeRefused: engines without token-in generation are refused
// by Generate and Tokenize before anything is sent.
func TestTokenModeRefused(t *testing.T) {
	for _, e := range []model.Engine{model.EngineAny, model.EngineOllama, model.EngineLlamaCpp, model.EngineOpenAI} {
		if e.TokenIn() || e.Tokenizes() || e.TokenMode() == nil {
			t.Fatalf("%s: token mode allowed", e)
		}
		srv := fake.New(t)
		srv.SetEngine(e)
		c := srv.Client(t, nil)
		_, gerr := c.Generate(context.Background(), model.TokenRequest{PromptIDs: []int{1}})
		_, terr := c.Tokenize(context.Background(), model.TokenizeRequest{})
		for _, err := range []error{gerr, terr} {
			if !errors.Is(err, model.ErrNoTokenMode) || !strings.Contains(err.Error(), e.Name()) || !strings.Contains(err.Error(), "sglang+URL#MODEL") {
				t.Fatalf("%s: %v", e, err)
			}
		}
		if len(srv.Requests()) != 0 {
			t.Fatalf("%s: a request was sent", e)
		}
	}
	for _, e := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		if e.TokenMode() != nil {
			t.Fatalf("%s refused", e)
		}
	}
	srv := fake.New(t)
	srv.SetEngine(model.EngineVLLM)
	if _, err := srv.Client(t, nil).Generate(context.Background(), model.TokenRequest{}); err == nil || !strings.Contains(err.Error(), "PromptIDs") {
		t.Fatalf("empty prompt: %v", err)
	}
}

// TestParseToolText: Qwen/Hermes tool calls are read from a completion's
// text, reasoning apart; malformed blocks become calls with ArgError.
func TestParseToolText(t *testing.T) {
	r := model.ParseToolText("<think>\nplan\n</think>\n\nLet me look.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n</tool_call>\n<tool_call>\n{\"arguments\": {}, \"name\": \"browser_read\"}\n</tool_call>", 3)
	if r.Reasoning != "plan" || r.Content != "Let me look." || len(r.ToolCalls) != 2 {
		t.Fatalf("%+v", r)
	}
	if c := r.ToolCalls[0]; c.ID != "call_3_0" || c.Name != "shell" || string(c.Arguments) != `{"command": "ls"}` || c.ArgError != "" {
		t.Fatalf("%+v", c)
	}
	if c := r.ToolCalls[1]; c.Name != "browser_read" || string(c.Arguments) != "{}" {
		t.Fatalf("%+v", c)
	}
	for _, bad := range []string{
		"<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"\n</tool_call>",
		"<tool_call>\n{\"arguments\": {}}\n</tool_call>",
		"<tool_call>\n{\"name\": \"shell\", \"arguments\": \"ls\"}\n</tool_call>",
		"<tool_call>\n{\"name\": \"shell\", \"argu",
	} {
		r := model.ParseToolText(bad, 1)
		if len(r.ToolCalls) != 1 || r.ToolCalls[0].ArgError == "" {
			t.Fatalf("%q: %+v", bad, r.ToolCalls)
		}
	}
	if r := model.ParseToolText("The answer is 4.", 1); len(r.ToolCalls) != 0 || r.Content != "The answer is 4." {
		t.Fatalf("%+v", r)
	}
}
