package fake_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// rl is a turn with everything RL records.
var rl = fake.Turn{
	Content:            "ok",
	Reasoning:          "hmm",
	PromptTokenIDs:     []int{10, 11, 12},
	CompletionTokenIDs: []int{20, 21, 22, 23},
	WeightVersion:      "step-7",
}

const askAll = `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"logprobs":true,"return_token_ids":true,"return_prompt_token_ids":true,"return_meta_info":true}`

// logprobsOf reads a choice's logprobs.content[].logprob, failing on
// an entry that lacks token, bytes or top_logprobs.
func logprobsOf(t *testing.T, choice map[string]any) []float64 {
	t.Helper()
	lp, ok := choice["logprobs"].(map[string]any)
	if !ok {
		t.Fatalf("choice logprobs %v", choice["logprobs"])
	}
	var out []float64
	for _, e := range lp["content"].([]any) {
		m := e.(map[string]any)
		if _, ok := m["token"].(string); !ok || m["bytes"] == nil || m["top_logprobs"] == nil {
			t.Errorf("logprob entry %v", m)
		}
		out = append(out, m["logprob"].(float64))
	}
	return out
}

func ints(t *testing.T, v any) []int {
	t.Helper()
	b, _ := json.Marshal(v)
	var out []int
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s is not a list of ints", b)
	}
	return out
}

func TestVLLMShape(t *testing.T) {
	s := fake.New(t, rl)
	s.SetEngine(model.EngineVLLM)
	if s.Spec().Engine != model.EngineVLLM {
		t.Errorf("spec %v", s.Spec())
	}
	status, out, _ := post(t, s, askAll)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if msg["reasoning"] != "hmm" || msg["reasoning_content"] != nil {
		t.Errorf("message %v; want vLLM's reasoning", msg)
	}
	if got := ints(t, out["prompt_token_ids"]); !reflect.DeepEqual(got, rl.PromptTokenIDs) {
		t.Errorf("prompt_token_ids %v", got)
	}
	if _, ok := choice["prompt_token_ids"]; ok {
		t.Errorf("vLLM has no per-choice prompt_token_ids: %v", choice)
	}
	if got := ints(t, choice["token_ids"]); !reflect.DeepEqual(got, rl.CompletionTokenIDs) {
		t.Errorf("token_ids %v", got)
	}
	if got := logprobsOf(t, choice); !reflect.DeepEqual(got, fake.DefaultLogprobs(rl.CompletionTokenIDs)) {
		t.Errorf("logprobs %v", got)
	}
	if _, ok := choice["meta_info"]; ok {
		t.Errorf("vLLM has no meta_info: %v", choice)
	}
}

func TestSGLangShape(t *testing.T) {
	s := fake.New(t, rl, fake.Turn{ToolCalls: []fake.ToolCall{{Name: "f", Arguments: "{}"}}}, rl)
	s.SetEngine(model.EngineSGLang)
	status, out, _ := post(t, s, askAll)
	if status != 200 {
		t.Fatalf("%d %v", status, out)
	}
	if _, ok := out["prompt_token_ids"]; ok {
		t.Errorf("SGLang has no top-level prompt_token_ids: %v", out)
	}
	choice := out["choices"].([]any)[0].(map[string]any)
	msg := choice["message"].(map[string]any)
	if msg["reasoning_content"] != "hmm" || msg["content"] != "ok" {
		t.Errorf("message %v", msg)
	}
	if v, ok := msg["tool_calls"]; !ok || v != nil {
		t.Errorf("tool_calls %v; want null", v)
	}
	if got := ints(t, choice["prompt_token_ids"]); !reflect.DeepEqual(got, rl.PromptTokenIDs) {
		t.Errorf("prompt_token_ids %v", got)
	}
	if got := ints(t, choice["token_ids"]); !reflect.DeepEqual(got, rl.CompletionTokenIDs) {
		t.Errorf("token_ids %v", got)
	}
	if choice["matched_stop"] != 23.0 {
		t.Errorf("matched_stop %v", choice["matched_stop"])
	}
	want := fake.DefaultLogprobs(rl.CompletionTokenIDs)
	if got := logprobsOf(t, choice); !reflect.DeepEqual(got, want) {
		t.Errorf("logprobs %v", got)
	}
	meta := choice["meta_info"].(map[string]any)
	if meta["weight_version"] != "step-7" || meta["prompt_tokens"] != 3.0 || meta["completion_tokens"] != 4.0 {
		t.Errorf("meta_info %v", meta)
	}
	if f := meta["finish_reason"].(map[string]any); f["type"] != "stop" || f["matched"] != 23.0 {
		t.Errorf("meta_info.finish_reason %v", f)
	}
	triples := meta["output_token_logprobs"].([]any)
	if len(triples) != 4 {
		t.Fatalf("output_token_logprobs %v", triples)
	}
	for i, tr := range triples {
		tr := tr.([]any)
		if tr[0] != want[i] || tr[1] != float64(rl.CompletionTokenIDs[i]) || tr[2] != fake.TokenText(rl.CompletionTokenIDs[i]) {
			t.Errorf("triple %d: %v", i, tr)
		}
	}
	u := out["usage"].(map[string]any)
	if _, ok := u["reasoning_tokens"]; !ok {
		t.Errorf("usage %v lacks SGLang's reasoning_tokens", u)
	}

	// A tool call: content "", not null; finish_reason tool_calls, but a
	// stop inside meta_info; nothing unasked.
	_, out, _ = post(t, s, hello)
	choice = out["choices"].([]any)[0].(map[string]any)
	msg = choice["message"].(map[string]any)
	if msg["content"] != "" || choice["finish_reason"] != "tool_calls" || choice["logprobs"] != nil {
		t.Errorf("choice %v", choice)
	}
	for _, k := range []string{"prompt_token_ids", "token_ids", "meta_info"} {
		if _, ok := choice[k]; ok {
			t.Errorf("%s unasked: %v", k, choice)
		}
	}

	// return_prompt_token_ids alone: the prompt's ids only; meta_info
	// alone: the weight version, no logprobs.
	_, out, _ = post(t, s, `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"return_prompt_token_ids":true,"return_meta_info":true}`)
	choice = out["choices"].([]any)[0].(map[string]any)
	if _, ok := choice["token_ids"]; ok || choice["prompt_token_ids"] == nil {
		t.Errorf("choice %v", choice)
	}
	meta = choice["meta_info"].(map[string]any)
	if _, ok := meta["output_token_logprobs"]; ok || meta["weight_version"] != "step-7" {
		t.Errorf("meta_info %v", meta)
	}
}

func TestSGLangDefaultWeightVersion(t *testing.T) {
	s := fake.New(t, fake.Turn{Content: "x"})
	s.SetEngine(model.EngineSGLang)
	_, out, _ := post(t, s, `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"return_meta_info":true}`)
	meta := out["choices"].([]any)[0].(map[string]any)["meta_info"].(map[string]any)
	if meta["weight_version"] != fake.DefaultWeightVersion {
		t.Errorf("weight_version %v", meta["weight_version"])
	}
}

func TestSGLangStreamRejections(t *testing.T) {
	for _, field := range []string{"return_prompt_token_ids", "return_meta_info", "return_token_ids"} {
		s := fake.New(t, rl)
		s.SetEngine(model.EngineSGLang)
		status, out, _ := post(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}],"`+field+`":true}`)
		if msg := errorMessage(t, out); status != 400 || !strings.Contains(msg, field+" is not supported with streaming") {
			t.Errorf("%s: %d %q", field, status, msg)
		}
		if s.Remaining() != 1 {
			t.Errorf("%s: the rejection consumed the turn", field)
		}
	}
}

func TestTopLogprobsWithoutLogprobs(t *testing.T) {
	s := fake.New(t, rl)
	status, out, _ := post(t, s, `{"model":"fake-model","messages":[{"role":"user","content":"hi"}],"top_logprobs":2}`)
	if status != 400 || !strings.Contains(errorMessage(t, out), "`logprobs` must be set to true") {
		t.Errorf("%d %v", status, out)
	}
}

// streamTokens reassembles a stream's token ids and logprobs.
func streamTokens(t *testing.T, chunks []wireChunk) (prompt, ids []int, logprobs []float64) {
	t.Helper()
	for i, c := range chunks {
		if raw, ok := c.raw["prompt_token_ids"]; ok {
			if i != 0 {
				t.Errorf("chunk %d has prompt_token_ids; only the first has", i)
			}
			if err := json.Unmarshal(raw, &prompt); err != nil {
				t.Fatal(err)
			}
		}
		var choices []map[string]json.RawMessage
		if err := json.Unmarshal(c.raw["choices"], &choices); err != nil {
			t.Fatal(err)
		}
		for _, ch := range choices {
			if raw, ok := ch["token_ids"]; ok {
				var part []int
				if err := json.Unmarshal(raw, &part); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, part...)
			}
			var lp *struct {
				Content []struct {
					Logprob float64 `json:"logprob"`
				} `json:"content"`
			}
			if err := json.Unmarshal(ch["logprobs"], &lp); err != nil {
				t.Fatal(err)
			}
			if lp != nil {
				for _, e := range lp.Content {
					logprobs = append(logprobs, e.Logprob)
				}
			}
		}
	}
	return prompt, ids, logprobs
}

func TestStreamTokensVLLM(t *testing.T) {
	s := fake.New(t, rl)
	_, data := events(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}],"logprobs":true,"return_token_ids":true}`)
	prompt, ids, logprobs := streamTokens(t, decodeChunks(t, data))
	if !reflect.DeepEqual(prompt, rl.PromptTokenIDs) || !reflect.DeepEqual(ids, rl.CompletionTokenIDs) {
		t.Errorf("streamed ids %v, %v", prompt, ids)
	}
	if !reflect.DeepEqual(logprobs, fake.DefaultLogprobs(rl.CompletionTokenIDs)) {
		t.Errorf("streamed logprobs %v", logprobs)
	}
}

func TestStreamTokensSGLang(t *testing.T) {
	s := fake.New(t, rl)
	s.SetEngine(model.EngineSGLang)
	_, data := events(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}],"logprobs":true}`)
	chunks := decodeChunks(t, data)
	prompt, ids, logprobs := streamTokens(t, chunks)
	if prompt != nil || ids != nil {
		t.Errorf("SGLang streamed ids %v, %v", prompt, ids)
	}
	if !reflect.DeepEqual(logprobs, fake.DefaultLogprobs(rl.CompletionTokenIDs)) {
		t.Errorf("streamed logprobs %v", logprobs)
	}
	var reasoning strings.Builder
	for _, c := range chunks {
		if len(c.Choices) == 1 && c.Choices[0].Delta.ReasoningContent != nil {
			reasoning.WriteString(*c.Choices[0].Delta.ReasoningContent)
		}
	}
	if reasoning.String() != "hmm" {
		t.Errorf("SGLang streamed reasoning_content %q", reasoning.String())
	}
}

// An empty turn's tokens ride on the finish chunk.
func TestStreamTokensEmptyTurn(t *testing.T) {
	s := fake.New(t, fake.Turn{CompletionTokenIDs: []int{5}, FinishReason: "length"})
	_, data := events(t, s, `{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"hi"}],"logprobs":true,"return_token_ids":true}`)
	_, ids, logprobs := streamTokens(t, decodeChunks(t, data))
	if !reflect.DeepEqual(ids, []int{5}) || len(logprobs) != 1 {
		t.Errorf("ids %v, logprobs %v", ids, logprobs)
	}
}
