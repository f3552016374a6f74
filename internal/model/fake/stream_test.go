package fake_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// events posts body and reads the reply as server-sent events: the data
// of each event, [DONE] included.
func events(t *testing.T, s *fake.Server, body string) (*http.Response, []string) {
	t.Helper()
	res, err := http.Post(s.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out []string
	sc := bufio.NewScanner(res.Body)
	blank := true // each event is one data line and a blank line
	for sc.Scan() {
		line := sc.Text()
		if line == "" {
			if blank {
				t.Errorf("two blank lines in a row after event %d", len(out))
			}
			blank = true
			continue
		}
		data, ok := strings.CutPrefix(line, "data: ")
		if !ok || !blank {
			t.Fatalf("line %q is not one data line of an event", line)
		}
		blank = false
		out = append(out, data)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return res, out
}

type wireChunk struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Role             *string `json:"role"`
			Content          *string `json:"content"`
			Reasoning        *string `json:"reasoning"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int     `json:"index"`
				ID       *string `json:"id"`
				Type     *string `json:"type"`
				Function struct {
					Name      *string `json:"name"`
					Arguments *string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	} `json:"usage"`
	raw map[string]json.RawMessage
}

func decodeChunks(t *testing.T, data []string) []wireChunk {
	t.Helper()
	if len(data) == 0 || data[len(data)-1] != "[DONE]" {
		t.Fatalf("the stream does not end with [DONE]: %q", data)
	}
	var out []wireChunk
	for _, d := range data[:len(data)-1] {
		var c wireChunk
		if err := json.Unmarshal([]byte(d), &c); err != nil {
			t.Fatalf("event %s: %v", d, err)
		}
		if err := json.Unmarshal([]byte(d), &c.raw); err != nil {
			t.Fatal(err)
		}
		if c.Object != "chat.completion.chunk" || c.ID != "chatcmpl-fake-1" || c.Model != fake.DefaultModel || c.Created == 0 {
			t.Errorf("chunk envelope %s", d)
		}
		out = append(out, c)
	}
	return out
}

func TestStreamRaw(t *testing.T) {
	s := fake.New(t, fake.Turn{
		Reasoning:          "think",
		Content:            "Hello, world",
		ToolCalls:          []fake.ToolCall{{Name: "search", Arguments: `{"q":"kettle"}`}, {Name: "noop"}},
		PromptTokenIDs:     []int{1, 2, 3},
		CompletionTokenIDs: []int{4, 5},
	})
	res, data := events(t, s, `{"model":"fake-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("%d %q", res.StatusCode, res.Header.Get("Content-Type"))
	}
	chunks := decodeChunks(t, data)

	first := chunks[0].Choices[0]
	if first.Delta.Role == nil || *first.Delta.Role != "assistant" || first.Delta.Content == nil || *first.Delta.Content != "" || first.FinishReason != nil {
		t.Errorf("first chunk %s; want the role delta", data[0])
	}
	var reasoning, content strings.Builder
	type call struct{ id, typ, name, args string }
	var calls []call
	finishes := 0
	for i, c := range chunks {
		if string(c.raw["usage"]) != "null" && i != len(chunks)-1 {
			t.Errorf("chunk %d: usage %s; want null before the usage chunk", i, c.raw["usage"])
		}
		if i == len(chunks)-1 {
			break
		}
		if len(c.Choices) != 1 || c.Choices[0].Index != 0 {
			t.Fatalf("chunk %d: choices %s", i, c.raw["choices"])
		}
		d := c.Choices[0].Delta
		if i > 0 && d.Role != nil {
			t.Errorf("chunk %d repeats the role", i)
		}
		if d.ReasoningContent != nil {
			t.Errorf("chunk %d: reasoning_content; vLLM streams reasoning", i)
		}
		if d.Reasoning != nil {
			reasoning.WriteString(*d.Reasoning)
		}
		if d.Content != nil {
			content.WriteString(*d.Content)
		}
		for _, tc := range d.ToolCalls {
			if tc.ID != nil {
				if tc.Index != len(calls) || tc.Type == nil || tc.Function.Name == nil {
					t.Errorf("chunk %d: a call's first delta lacks index, type or name: %s", i, data[i])
				}
				calls = append(calls, call{id: *tc.ID, typ: *tc.Type, name: *tc.Function.Name})
			} else if tc.Index != len(calls)-1 || tc.Type != nil || tc.Function.Name != nil {
				t.Errorf("chunk %d: an arguments delta %s", i, data[i])
			}
			if tc.Function.Arguments != nil {
				calls[tc.Index].args += *tc.Function.Arguments
			}
		}
		if f := c.Choices[0].FinishReason; f != nil {
			finishes++
			if *f != "tool_calls" || i != len(chunks)-2 || string(c.raw["choices"]) == "" {
				t.Errorf("chunk %d: finish %q; want tool_calls in the last chunk before usage", i, *f)
			}
		}
	}
	if reasoning.String() != "think" || content.String() != "Hello, world" || finishes != 1 {
		t.Errorf("reasoning %q, content %q, %d finish chunks", reasoning.String(), content.String(), finishes)
	}
	want := []call{{"call_1_0", "function", "search", `{"q":"kettle"}`}, {"call_1_1", "function", "noop", ""}}
	if len(calls) != 2 || calls[0] != want[0] || calls[1] != want[1] {
		t.Errorf("calls %+v; want %+v", calls, want)
	}
	if len(chunks) < 8 {
		t.Errorf("%d chunks: content and arguments are not cut in pieces", len(chunks))
	}
	last := chunks[len(chunks)-1]
	if string(last.raw["choices"]) != "[]" || last.Usage == nil || last.Usage.PromptTokens != 3 || last.Usage.CompletionTokens != 2 || last.Usage.TotalTokens != 5 {
		t.Errorf("usage chunk %s", data[len(data)-2])
	}
}

func TestStreamWithoutUsage(t *testing.T) {
	s := fake.New(t, fake.Turn{Handler: func(r fake.Request) fake.Turn {
		return fake.Turn{Content: "re: " + r.Messages[0].Content}
	}})
	_, data := events(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	chunks := decodeChunks(t, data)
	var content strings.Builder
	for i, c := range chunks {
		if len(c.Choices) == 1 && c.Choices[0].Delta.Content != nil {
			content.WriteString(*c.Choices[0].Delta.Content)
		}
		if _, ok := c.raw["usage"]; ok {
			t.Errorf("chunk %d has usage unasked: %s", i, data[i])
		}
		if len(c.Choices) != 1 {
			t.Errorf("chunk %d: %s", i, data[i])
		}
	}
	if content.String() != "re: hi" {
		t.Errorf("a handler's turn streamed %q", content.String())
	}
	if f := chunks[len(chunks)-1].Choices[0].FinishReason; f == nil || *f != "stop" {
		t.Errorf("last chunk %s", data[len(data)-2])
	}
}

func TestStreamErrorsAreHTTP(t *testing.T) {
	s := fake.New(t, fake.Turn{Status: 503, Error: "overloaded"})
	status, out, _ := post(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 503 || errorMessage(t, out) != "overloaded" {
		t.Errorf("%d %v", status, out)
	}
	status, out, _ = post(t, s, `{"model":"other","stream":true,"messages":[{"role":"user","content":"hi"}]}`)
	if status != 404 || !strings.Contains(errorMessage(t, out), "does not exist") {
		t.Errorf("%d %v", status, out)
	}
	status, out, _ = post(t, s, `{"model":"fake-model","stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi"}]}`)
	if status != 400 || !strings.Contains(errorMessage(t, out), "stream=True") {
		t.Errorf("stream_options without stream: %d %v", status, out)
	}
}

// TestStreamSDK reassembles a stream with openai-go's own streaming
// client and accumulator: the same message as the non-streamed reply.
func TestStreamSDK(t *testing.T) {
	turn := fake.Turn{
		Content:   "Ünïcode ✓ and more text",
		ToolCalls: []fake.ToolCall{{ID: "call_a", Name: "search", Arguments: `{"q":"blue kettle","n":3}`}, {ID: "call_b", Name: "bad", Arguments: `{"x":`}},
		Usage:     model.Usage{PromptTokens: 11, CompletionTokens: 7},
	}
	s := fake.New(t, turn, turn)
	chat := openai.NewChatCompletionService(option.WithBaseURL(s.URL()+"/"), option.WithMaxRetries(0))
	params := openai.ChatCompletionNewParams{
		Model:         fake.DefaultModel,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage("hi")},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	ctx := context.Background()
	stream := chat.NewStreaming(ctx, params)
	var acc openai.ChatCompletionAccumulator
	n := 0
	for stream.Next() {
		n++
		if !acc.AddChunk(stream.Current()) {
			t.Fatalf("the accumulator refused chunk %d: %s", n, stream.Current().RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	stream.Close()
	plain, err := chat.New(ctx, openai.ChatCompletionNewParams{Model: params.Model, Messages: params.Messages})
	if err != nil {
		t.Fatal(err)
	}
	if len(acc.Choices) != 1 {
		t.Fatalf("%d choices", len(acc.Choices))
	}
	got, want := acc.Choices[0], plain.Choices[0]
	if got.Message.Content != want.Message.Content || got.FinishReason != want.FinishReason || got.Message.Role != "assistant" {
		t.Errorf("streamed %q/%q; plain %q/%q", got.Message.Content, got.FinishReason, want.Message.Content, want.FinishReason)
	}
	if len(got.Message.ToolCalls) != 2 {
		t.Fatalf("streamed tool calls %+v", got.Message.ToolCalls)
	}
	for i, w := range want.Message.ToolCalls {
		g := got.Message.ToolCalls[i]
		if g.ID != w.ID || g.Type != "function" || g.Function.Name != w.Function.Name || g.Function.Arguments != w.Function.Arguments {
			t.Errorf("tool call %d: streamed %+v; plain %+v", i, g, w)
		}
	}
	if acc.Usage.PromptTokens != 11 || acc.Usage.CompletionTokens != 7 || acc.Usage.TotalTokens != 18 {
		t.Errorf("usage %+v", acc.Usage)
	}
	if acc.ID != "chatcmpl-fake-1" || acc.Model != fake.DefaultModel {
		t.Errorf("id %q, model %q", acc.ID, acc.Model)
	}
	if body := string(s.Chats()[0].Body); !strings.Contains(body, `"stream":true`) || !s.Chats()[0].Stream || !s.Chats()[0].IncludeUsage {
		t.Errorf("request %s", body)
	}
}
