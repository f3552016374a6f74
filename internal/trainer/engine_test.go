package trainer

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/rl"
)

// engine is a fake inference engine whose behaviour is the rollout's
// sampling seed mod 3: 0 runs a command with a long output (the context
// outgrows its budget and the harness compacts), then answers; 1 makes a
// tool call that does not parse (a format failure); 2 answers at once.
func engine(t *testing.T) *fake.Server { return fake.NewResponder(t, engineTurn) }

// engineTurn is engine's reply to a request.
func engineTurn(r fake.Request) fake.Turn {
	{
		mode := int64(0)
		if r.Seed != nil {
			mode = *r.Seed % 3
		}
		last := r.Messages[len(r.Messages)-1]
		var reply fake.Turn
		switch {
		case strings.Contains(last.Content, "about to be cut"):
			reply = fake.Turn{Content: "Summary: I listed numbers; answer now."}
		case mode == 1:
			reply = fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command": `}}}
		case mode == 0 && !slices.ContainsFunc(r.Messages, func(m fake.Message) bool { return m.Role == "tool" || strings.HasPrefix(m.Content, "Summary") }):
			reply = fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c1", Name: "shell", Arguments: `{"command":"seq 1 3000"}`}}}
		default:
			reply = fake.Turn{Content: "I could not finish the task."}
		}
		reply = fake.ByteTokens(r, reply)
		reply.WeightVersion = "w-7"
		return reply
	}
}

// TestBatchThroughEngine: the harness pointed at a trainer's engine (the
// fake, speaking SGLang's wire format): token ids, logprobs and weight
// versions reach the samples; compaction splits a rollout into segments
// with one advantage; a format failure has reward -1 and trains only its
// failing turn; tool results are masked out.
func TestBatchThroughEngine(t *testing.T) {
	f := fixture(t)
	srv := engine(t)
	srv.SetEngine("sglang")
	s := open(t, f, Options{})
	seed := int64(0)
	req := Request{Step: 1, Tasks: 2, G: 3, Engine: "sglang+" + srv.URL() + "#" + fake.DefaultModel, PolicyVersion: "step-1",
		Sampling: Sampling{Temperature: ptr(1.0), TopP: ptr(0.95), MaxTokens: 200, ContextTokens: 2500, MaxTurns: 8, Seed: &seed}}
	b, err := s.Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	if !b.Tokens || b.Stats.Ready != 2 {
		t.Fatalf("tokens %v, stats %+v, groups %+v", b.Tokens, b.Stats, b.Groups)
	}
	var sawCompacted, sawFormat bool
	for _, smp := range b.Samples {
		if smp.Policy != "model:"+fake.DefaultModel || !slices.Equal(smp.WeightVersions, []string{"w-7"}) {
			t.Errorf("sample policy %q weight versions %v", smp.Policy, smp.WeightVersions)
		}
		if smp.TrajectoryTrainableTokens == 0 || smp.LossWeight != rl.TokenWeight(smp.TrajectoryTrainableTokens, 3, 2) {
			t.Errorf("%s: L_j %d weight %v", smp.RolloutID, smp.TrajectoryTrainableTokens, smp.LossWeight)
		}
		if len(smp.PromptTokenIDs) == 0 || smp.PromptTokenIDs[0] != 1 {
			t.Errorf("%s segment %d: the prompt does not start with the system message", smp.RolloutID, smp.SegmentIndex)
		}
		// Masked-in tokens are the assistant's; a tool result's role token is masked out.
		for i, id := range smp.ResponseTokenIDs {
			if id == 4 && smp.LossMask[i] != 0 {
				t.Errorf("%s: a tool result is trainable", smp.RolloutID)
			}
			if smp.LossMask[i] == 1 && smp.RolloutLogprobs[i] == 0 {
				t.Errorf("%s: a trainable token without its logprob", smp.RolloutID)
			}
		}
		switch {
		case smp.FormatFailure:
			sawFormat = true
			if smp.Reward != -1 || smp.Status != "format_error" || smp.SegmentCount != 1 {
				t.Errorf("format failure sample: reward %v status %s segments %d", smp.Reward, smp.Status, smp.SegmentCount)
			}
		case smp.SegmentCount > 1:
			sawCompacted = true
		}
	}
	if !sawCompacted || !sawFormat {
		t.Errorf("the batch lacks a compacted rollout (%v) or a format failure (%v)", sawCompacted, sawFormat)
	}
	// Every request asked for token ids and logprobs, at the sampling asked.
	for _, r := range srv.Chats() {
		if !r.ReturnTokenIDs || !r.Logprobs || r.Temperature == nil || *r.Temperature != 1 || r.TopP == nil || *r.TopP != 0.95 {
			t.Fatalf("request %d: token ids %v logprobs %v temperature %v top_p %v", r.N, r.ReturnTokenIDs, r.Logprobs, r.Temperature, r.TopP)
		}
	}
}

// TestBatchRefusesRepliesWithoutSignal: an engine that returns no token
// ids, or token ids without logprobs, ends the step with an error naming
// the engine and the fix (such samples once trained nothing, or on
// logprob 0.0, silently).
func TestBatchRefusesRepliesWithoutSignal(t *testing.T) {
	f := fixture(t)
	for _, c := range []struct {
		name string
		edit func(*fake.Turn)
		want string
	}{
		{"no token ids", func(r *fake.Turn) { r.PromptTokenIDs, r.CompletionTokenIDs = nil, nil }, "without token ids"},
		{"no logprobs", func(r *fake.Turn) { r.NoLogprobs = true }, "logprobs"},
	} {
		t.Run(c.name, func(t *testing.T) {
			srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
				reply := fake.Turn{Content: "I could not finish the task.", PromptTokenIDs: []int{1, 2}, CompletionTokenIDs: []int{7, 8, 9}}
				c.edit(&reply)
				return reply
			})
			s := open(t, f, Options{})
			req := Request{Step: 1, Tasks: 1, G: 2, Engine: srv.URL() + "#" + fake.DefaultModel, Sampling: Sampling{MaxTurns: 4}}
			_, err := s.Batch(context.Background(), req)
			// The step's error is the saved batch's, as text (the API's).
			if err == nil || !strings.Contains(err.Error(), ErrNoSignal.Error()) || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), srv.URL()) {
				t.Fatalf("a batch from an engine with %s: %v; want ErrNoSignal naming the engine", c.name, err)
			}
		})
	}
}

// TestOutageThroughEngine: the engine (the fake, SGLang's wire) answers
// 503 to every chat for a while, past the client's retries: the rollouts
// it stopped wait and run again, as the same try, and the step is the one
// a healthy engine gives: no infrastructure try, no abandoned group, no
// reward of the outage's.
func TestOutageThroughEngine(t *testing.T) {
	f := fixture(t)
	seed := int64(0)
	run := func(outage int64) *Batch {
		var chats atomic.Int64
		srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
			if chats.Add(1) <= outage {
				return fake.Turn{Status: http.StatusServiceUnavailable, Content: "no healthy upstream"}
			}
			return engineTurn(r)
		})
		srv.SetEngine("sglang")
		s := open(t, f, Options{Parallel: 2, OutageBackoff: time.Millisecond, Model: &model.Options{MaxRetries: -1, Backoff: time.Millisecond}})
		b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 2, G: 2, Engine: "sglang+" + srv.URL() + "#" + fake.DefaultModel,
			Sampling: Sampling{MaxTokens: 200, ContextTokens: 2500, MaxTurns: 8, Seed: &seed}})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	want := run(0)
	got := run(8)
	if got.Stats.Outages == 0 {
		t.Fatal("no rollout met the outage")
	}
	if got.Stats.Retried != 0 || got.Stats.Abandoned != 0 || product(got) != product(want) {
		t.Errorf("after an outage (%d rollouts waited, %d retried):\n%s\nhealthy:\n%s", got.Stats.Outages, got.Stats.Retried, product(got), product(want))
	}
}

// reasoner thinks, runs three commands and answers; with an odd sampling
// seed it makes a call that does not parse instead (a format failure), so
// a group's rewards differ.
func reasoner(r fake.Request) fake.Turn {
	if r.Seed != nil && *r.Seed%2 == 1 {
		return fake.Turn{Reasoning: "hm", ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command": `}}}
	}
	calls := 0
	for _, m := range r.Messages {
		if m.Role == "tool" {
			calls++
		}
	}
	if len(r.Messages) == 0 { // token in: the conversation is the prompt's ids
		calls = strings.Count(fake.Decode(r.InputIDs, false), "<tool_response>")
	}
	if calls == 3 {
		return fake.Turn{Reasoning: "all done", Content: "I could not finish the task."}
	}
	return fake.Turn{Reasoning: fmt.Sprintf("step %d: I should look around", calls+1),
		ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: fmt.Sprintf(`{"command":"echo %d", "timeout": 10}`, calls)}}}
}

// TestTokenInTokenOutThroughService: on a chat template that strips past
// reasoning and re-serialises tool calls (the fake's ReasoningTemplate, as
// Qwen3's), messages mode makes every turn its own sample and the batch
// counts the prefix breaks; sampling.token_in_token_out makes each
// rollout one sample with none. An engine without token mode is refused
// naming the field.
func TestTokenInTokenOutThroughService(t *testing.T) {
	f := fixture(t)
	for _, tokenMode := range []bool{false, true} {
		srv := fake.NewResponder(t, reasoner)
		srv.SetEngine(model.EngineSGLang)
		srv.SetTemplate(fake.ReasoningTemplate)
		s := open(t, f, Options{Parallel: 2})
		seed := int64(4)
		b, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 1, G: 4, Engine: "sglang+" + srv.URL() + "#" + fake.DefaultModel,
			Sampling: Sampling{MaxTurns: 8, MaxTokens: 500, TokenInTokenOut: tokenMode, Seed: &seed}})
		if err != nil {
			t.Fatal(err)
		}
		checkBatch(t, b)
		counts := map[string]int{}
		format := map[string]bool{}
		for _, smp := range b.Samples {
			counts[smp.RolloutID], format[smp.RolloutID] = smp.SegmentCount, smp.FormatFailure
		}
		acted := 0
		for id, n := range counts {
			want := 1
			if !tokenMode && !format[id] {
				want = 4 // its 4 turns
			}
			if !format[id] {
				acted++
			}
			if n != want {
				t.Errorf("token mode %v: rollout %s (format failure %v) is %d samples, want %d", tokenMode, id, format[id], n, want)
			}
		}
		want := 3 * acted
		if tokenMode {
			want = 0
		}
		if acted == 0 || b.Stats.PrefixBreaks != want {
			t.Errorf("token mode %v: %d rollouts acted, prefix breaks %d, want %d", tokenMode, acted, b.Stats.PrefixBreaks, want)
		}
	}
	s := open(t, f, Options{})
	_, _, err := s.Submit(Request{Step: 1, Tasks: 1, Engine: "vllm+http://127.0.0.1:1/v1#m", Sampling: Sampling{TokenInTokenOut: true}})
	if err != nil {
		t.Fatalf("vLLM has token mode: %v", err)
	}
	s2 := open(t, f, Options{})
	_, _, err = s2.Submit(Request{Step: 1, Tasks: 1, Engine: "http://127.0.0.1:1/v1#m", Sampling: Sampling{TokenInTokenOut: true}})
	if err == nil || !strings.Contains(err.Error(), "sampling.token_in_token_out") {
		t.Errorf("an unnamed server in token mode: %v", err)
	}
}
