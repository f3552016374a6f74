package model_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestEveryEngineShape reads the same turn (thinking, two parallel tool
// calls, one with arguments that are not JSON, logprobs) in each engine's
// reply shape: the client reads every one alike; the engines that return
// token ids return them, the others none.
func TestEveryEngineShape(t *testing.T) {
	turn := fake.Turn{
		Reasoning: "compare both",
		ToolCalls: []fake.ToolCall{
			{Name: "search", Arguments: `{"q":"kettle"}`},
			{Name: "open", Arguments: `{"url": "/x`},
		},
		PromptTokenIDs: []int{1, 2}, CompletionTokenIDs: []int{7, 8, 9},
	}
	for _, e := range append([]model.Engine{model.EngineAny}, model.Engines()...) {
		t.Run(string(e)+"_", func(t *testing.T) {
			s := fake.New(t, turn)
			s.SetEngine(e)
			r, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: hello.Messages, ReturnTokenIDs: true, Logprobs: true})
			if err != nil {
				t.Fatal(err)
			}
			if r.FinishReason != "tool_calls" || len(r.ToolCalls) != 2 || r.ToolCalls[0].Name != "search" || string(r.ToolCalls[0].Arguments) != `{"q":"kettle"}` {
				t.Errorf("calls %+v finish %q", r.ToolCalls, r.FinishReason)
			}
			if r.ToolCalls[1].ArgError == "" || r.ToolCalls[1].RawArguments != `{"url": "/x` {
				t.Errorf("bad arguments not kept as such: %+v", r.ToolCalls[1])
			}
			if e != model.EngineOpenAI && r.Reasoning != "compare both" {
				t.Errorf("reasoning %q", r.Reasoning)
			}
			if len(r.Logprobs) != 3 {
				t.Errorf("logprobs %v", r.Logprobs)
			}
			if got := len(r.CompletionTokenIDs) == 3; got != e.TokenIDs() {
				t.Errorf("completion token ids %v; the engine returns them: %v", r.CompletionTokenIDs, e.TokenIDs())
			}
		})
	}
}

// TestToolCallingNotEnabled: a server not started to call tools refuses
// in its own words, and the error names the server flag that turns tool
// calling on; it is not retried.
func TestToolCallingNotEnabled(t *testing.T) {
	req := model.Request{Messages: hello.Messages, Tools: []model.Tool{{Name: "search"}}}
	for _, c := range []struct {
		engine model.Engine
		want   string
	}{
		{model.EngineVLLM, "--enable-auto-tool-choice --tool-call-parser"},
		{model.EngineLlamaCpp, "start llama-server with --jinja"},
		{model.EngineOllama, "tools capability"},
	} {
		s := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "x"} })
		s.SetEngine(c.engine)
		s.SetToolCalling(false)
		_, err := s.Client(t, nil).Chat(context.Background(), req)
		var me *model.Error
		if !errors.As(err, &me) || me.Status < 400 || me.Attempts != 1 || !strings.Contains(me.Fix, c.want) {
			t.Errorf("%s: %v; want a refusal tried once whose fix says %q", c.engine, err, c.want)
		}
	}
	// SGLang without --tool-call-parser answers, the calls written as
	// text: TextToolCall tells them, so that the harness names the flag.
	s := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{{Name: "search", Arguments: `{"q":"k"}`}}})
	s.SetEngine(model.EngineSGLang)
	s.SetToolCalling(false)
	r, err := s.Client(t, nil).Chat(context.Background(), req)
	if err != nil || len(r.ToolCalls) != 0 {
		t.Fatalf("%+v %v", r, err)
	}
	if _, ok := model.TextToolCall(r.Content, []string{"search"}); !ok {
		t.Errorf("the call written as text is not told: %q", r.Content)
	}
}

// TestTrainable: only the engines that return token ids and logprobs can
// serve a policy under training; the others say which to use.
func TestTrainable(t *testing.T) {
	for _, e := range model.Engines() {
		err := e.Trainable()
		if want := e == model.EngineVLLM || e == model.EngineSGLang; (err == nil) != want {
			t.Errorf("%s: Trainable() = %v", e, err)
		}
		if err != nil && !strings.Contains(err.Error(), "vllm+URL#MODEL") {
			t.Errorf("%s: %v names no engine to use", e, err)
		}
	}
}

// TestEmbeddingsOverTheWire: a NaN (sent as null) is an error saying so;
// vectors of any dimension otherwise come back as sent (the diversity
// gate judges them).
func TestEmbeddingsOverTheWire(t *testing.T) {
	s := fake.New(t)
	n := 0
	s.SetEmbedder(func(string) []float64 {
		n++
		if n == 3 {
			return []float64{1, math.NaN(), 0}
		}
		return make([]float64, 4+n)
	})
	c := s.Client(t, nil)
	v, err := c.Embed(context.Background(), []string{"a", "b"})
	if err != nil || len(v[0]) != 5 || len(v[1]) != 6 {
		t.Fatalf("%v %v", v, err)
	}
	_, err = c.Embed(context.Background(), []string{"c"})
	if err == nil || !strings.Contains(err.Error(), "null at element 1") {
		t.Errorf("a NaN: %v", err)
	}
}

// TestSGLangTokenIDPlaces: SGLang's newer places for the ids (the
// choice's response_token_ids, the top-level sglext) read as its older
// token_ids do.
func TestSGLangTokenIDPlaces(t *testing.T) {
	for name, body := range map[string]string{
		"response_token_ids": `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop","prompt_token_ids":[1,2],"response_token_ids":[7,8]}]}`,
		"sglext":             `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],"sglext":{"input_ids":[1,2],"output_ids":[[7,8]]}}`,
	} {
		s := fake.New(t, fake.Turn{Body: body, BodyType: "application/json"})
		s.SetEngine(model.EngineSGLang)
		r, err := s.Client(t, nil).Chat(context.Background(), model.Request{Messages: hello.Messages, ReturnTokenIDs: true})
		if err != nil || len(r.PromptTokenIDs) != 2 || len(r.CompletionTokenIDs) != 2 || r.CompletionTokenIDs[1] != 8 {
			t.Errorf("%s: %+v %v", name, r, err)
		}
	}
}

// TestIsOutage: a server failing after its retries is an outage a rerun
// may outlive; a refusal or an unusable whole reply is not.
func TestIsOutage(t *testing.T) {
	req := model.Request{Messages: hello.Messages, Tools: []model.Tool{{Name: "search"}}}
	for _, c := range []struct {
		name   string
		turn   fake.Turn
		setup  func(*fake.Server)
		outage bool
	}{
		{"503", fake.Turn{Status: 503, Error: "no healthy upstream"}, nil, true},
		{"429", fake.Turn{Status: 429, Error: "slow down"}, nil, true},
		{"cut", fake.Turn{Content: "hello there", CutAfter: 30}, nil, true},
		{"non-JSON 200", fake.Turn{Body: "<html>login</html>"}, nil, true},
		{"timeout", fake.Turn{Content: "late", Delay: time.Second}, nil, true},
		{"400", fake.Turn{Status: 400, Error: "bad request"}, nil, false},
		{"misaligned", fake.Turn{Content: "x", CompletionTokenIDs: []int{1, 2}, Logprobs: []float64{-1}}, nil, false},
		{"tools off", fake.Turn{Content: "x"}, func(s *fake.Server) { s.SetEngine(model.EngineVLLM); s.SetToolCalling(false) }, false},
	} {
		s := fake.NewResponder(t, func(fake.Request) fake.Turn { return c.turn })
		if c.setup != nil {
			c.setup(s)
		}
		r := req
		r.ReturnTokenIDs, r.Logprobs = true, true
		_, err := s.Client(t, &model.Options{MaxRetries: -1, Timeout: 100 * time.Millisecond}).Chat(context.Background(), r)
		if err == nil || model.IsOutage(err) != c.outage {
			t.Errorf("%s: %v: IsOutage %t, want %t", c.name, err, model.IsOutage(err), c.outage)
		}
	}
	down := fake.New(nil)
	spec := down.Spec()
	down.Close()
	c, _ := model.New(spec, &model.Options{MaxRetries: -1})
	if _, err := c.Chat(context.Background(), hello); !model.IsOutage(err) {
		t.Errorf("a server that does not answer: %v is no outage", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Chat(ctx, hello); model.IsOutage(err) {
		t.Errorf("a cancelled call: %v is an outage", err)
	}
}

// TestEmbedFailuresRetried: an embeddings endpoint's 503 and a reply cut
// mid-way are retried like a chat's; an outage is one.
func TestEmbedFailuresRetried(t *testing.T) {
	for _, f := range []fake.Turn{{Status: 503, Error: "Loading model"}, {CutAfter: 20}} {
		s := fake.New(t)
		s.SetEmbedFailures(func(n int) fake.Turn {
			if n == 1 {
				return f
			}
			return fake.Turn{}
		})
		v, err := s.Client(t, nil).Embed(context.Background(), []string{"a b"})
		if err != nil || len(v) != 1 || s.EmbedCalls() != 2 {
			t.Errorf("%+v once: %v %v after %d requests", f, v, err, s.EmbedCalls())
		}
	}
	s := fake.New(t)
	s.SetEmbedFailures(func(int) fake.Turn { return fake.Turn{Status: 502} })
	if _, err := s.Client(t, &model.Options{MaxRetries: 1}).Embed(context.Background(), []string{"a"}); !model.IsOutage(err) || s.EmbedCalls() != 2 {
		t.Errorf("an outage: %v after %d requests", err, s.EmbedCalls())
	}
}
