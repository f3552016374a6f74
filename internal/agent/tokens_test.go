package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/rl"
)

// segmentsOf cuts a trajectory's turns as the RL service does
// (internal/trainer's samples): a turn that opens a compaction segment is
// compacted.
func segmentsOf(tr *Trajectory, formatFailure bool) []rl.Segment {
	compacted := map[int]bool{}
	for _, sg := range tr.Segments {
		if sg.Reason == "compaction" {
			compacted[sg.FirstTurn] = true
		}
	}
	var turns []rl.Turn
	for _, t := range tr.Turns {
		turns = append(turns, rl.Turn{PromptIDs: t.PromptTokenIDs, ResponseIDs: t.CompletionTokenIDs, Logprobs: t.Logprobs, Compacted: compacted[t.Index]})
	}
	return rl.Segments(turns, formatFailure)
}

// lastText is what a request ends with: its last message, or the tail of
// a token-in request's ids.
func lastText(r fake.Request) string {
	if len(r.Messages) > 0 {
		return r.Messages[len(r.Messages)-1].Content
	}
	s := fake.Decode(r.InputIDs, false)
	return s[max(0, len(s)-600):]
}

// reasoningAgent is a model of the reasoning template: every act turn
// thinks, then calls the shell (compact JSON, its own key order) until
// step steps, where it answers; step big's command prints bigBytes bytes.
// The summary request is answered with a summary.
func reasoningAgent(steps, big, bigBytes int) func(fake.Request) fake.Turn {
	step := 0
	return func(r fake.Request) fake.Turn {
		if strings.Contains(lastText(r), "about to be cut") {
			return fake.Turn{Reasoning: "what did I do", Content: fmt.Sprintf("summary: %d steps done", step)}
		}
		step++
		if step == steps {
			return fake.Turn{Reasoning: "all done", Content: "finished"}
		}
		cmd := fmt.Sprintf("echo s%d", step)
		if step == big {
			cmd = fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", bigBytes)
		}
		return fake.Turn{Reasoning: fmt.Sprintf("step %d: I should run a command", step),
			ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: fmt.Sprintf(`{"command":%q}`, cmd)}}}
	}
}

// rollout runs reasoningAgent on a fake of engine with tmpl, in token mode
// or messages mode; contextTokens 0 means no compaction.
func rollout(t *testing.T, engine model.Engine, tmpl fake.Template, tokenMode bool, steps, big, contextTokens int) (*Trajectory, string, error) {
	t.Helper()
	srv := fake.NewResponder(t, reasoningAgent(steps, big, 30000))
	srv.SetEngine(engine)
	srv.SetTemplate(tmpl)
	env, _, _ := testEnv(t, nil)
	env.MaxObservation = 40000
	h := &Harness{Model: srv.Client(t, nil), TokenIDs: true, TokenMode: tokenMode, MaxTokens: 1000,
		ContextTokens: cmpInt(contextTokens, 1<<20)}
	answer, err := h.Run(context.Background(), env, "count the steps", "")
	return env.Traj, answer, err
}

func cmpInt(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// compactingBudget is a context budget under which the rollout compacts
// right after step big's 30,000-byte observation and at no other time:
// the first prompt's size (probed with no compaction) plus 5,000 tokens
// (the observation is estimated at 7,500) and the completion's reserve.
func compactingBudget(t *testing.T, engine model.Engine, tmpl fake.Template, tokenMode bool) int {
	tr, _, err := rollout(t, engine, tmpl, tokenMode, 2, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	return tr.Turns[0].PromptTokens + 5000 + 1000
}

// TestTokenModeOneSamplePerCompactionSegment: on a template that strips
// past reasoning and re-serialises tool calls, messages mode makes every
// turn its own sample (each a counted prefix break), while token mode
// makes one sample per compaction segment with none, on vLLM's and on
// SGLang's endpoints, end to end through the harness with tools; every
// token-mode prompt extends the last turn's prompt and completion.
func TestTokenModeOneSamplePerCompactionSegment(t *testing.T) {
	for _, engine := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		t.Run(string(engine), func(t *testing.T) {
			t.Parallel()
			budget := compactingBudget(t, engine, fake.ReasoningTemplate, true)
			tr, answer, err := rollout(t, engine, fake.ReasoningTemplate, true, 9, 4, budget)
			if err != nil || answer != "finished" {
				t.Fatalf("token mode: answer %q, err %v", answer, err)
			}
			if len(tr.Compactions) != 1 || tr.Compactions[0].AfterTurn != 4 {
				t.Fatalf("compactions %+v, want one after turn 4", tr.Compactions)
			}
			if len(env0Steps(tr)) != 8 {
				t.Fatalf("%d steps, want 8", len(env0Steps(tr)))
			}
			for i := 1; i < len(tr.Turns); i++ {
				prev, cur := tr.Turns[i-1], tr.Turns[i]
				held := append(slices.Clone(prev.PromptTokenIDs), prev.CompletionTokenIDs...)
				if cur.Segment == prev.Segment && !slices.Equal(cur.PromptTokenIDs[:min(len(held), len(cur.PromptTokenIDs))], held) {
					t.Fatalf("turn %d's prompt does not extend turn %d's", cur.Index, prev.Index)
				}
				if len(cur.Logprobs) != len(cur.CompletionTokenIDs) || cur.WeightVersion == "" && engine == model.EngineSGLang {
					t.Fatalf("turn %d: %d ids, %d logprobs, version %q", cur.Index, len(cur.CompletionTokenIDs), len(cur.Logprobs), cur.WeightVersion)
				}
			}
			segs := segmentsOf(tr, false)
			if len(segs) != len(tr.Segments) || rl.PrefixBreaks(segs) != 0 {
				t.Fatalf("token mode: %d samples (%d prefix breaks) for %d compaction segments", len(segs), rl.PrefixBreaks(segs), len(tr.Segments))
			}

			budget = compactingBudget(t, engine, fake.ReasoningTemplate, false)
			tr, answer, err = rollout(t, engine, fake.ReasoningTemplate, false, 9, 4, budget)
			if err != nil || answer != "finished" {
				t.Fatalf("messages mode: answer %q, err %v", answer, err)
			}
			segs = segmentsOf(tr, false)
			// Every turn (9 act turns and the summary) is its own sample;
			// all but the first and the one after the compaction are
			// prefix breaks.
			if len(segs) != len(tr.Turns) || rl.PrefixBreaks(segs) != len(tr.Turns)-2 {
				t.Fatalf("messages mode: %d samples, %d prefix breaks for %d turns", len(segs), rl.PrefixBreaks(segs), len(tr.Turns))
			}
		})
	}
}

func env0Steps(tr *Trajectory) []Step { return tr.Steps }

// TestTokenModeSendsTokens: token mode sends the held ids to the engine's
// token endpoint and the new messages to its tokenize endpoint, never a
// chat request; the observation's tokens are the template's rendering of
// the tool message.
func TestTokenModeSendsTokens(t *testing.T) {
	tr, _, err := rollout(t, model.EngineVLLM, fake.ReasoningTemplate, true, 3, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Turns) != 3 {
		t.Fatalf("%d turns", len(tr.Turns))
	}
	second := fake.Decode(tr.Turns[1].PromptTokenIDs, false)
	first := fake.Decode(append(slices.Clone(tr.Turns[0].PromptTokenIDs), tr.Turns[0].CompletionTokenIDs...), false)
	added := strings.TrimPrefix(second, first)
	if added == second || !strings.Contains(added, "<tool_response>\ns1\n") || !strings.HasSuffix(added, "<|im_start|>assistant\n") {
		t.Fatalf("the second prompt adds %q", added)
	}
	if !strings.Contains(first, "<think>\nstep 1") {
		t.Fatalf("the held sequence lost the reasoning: %q", first[max(0, len(first)-200):])
	}
}

// TestTokenModeRefusesEngines: an engine without token-in generation and
// tokenize is refused before anything is sent, naming the engine, the
// mode and the fix; so is a model that is no TokenModel.
func TestTokenModeRefusesEngines(t *testing.T) {
	for _, engine := range []model.Engine{model.EngineOllama, model.EngineLlamaCpp, model.EngineOpenAI, model.EngineAny} {
		srv := fake.New(t)
		srv.SetEngine(engine)
		env, _, _ := testEnv(t, nil)
		_, err := (&Harness{Model: srv.Client(t, nil), TokenMode: true}).Run(context.Background(), env, "task", "")
		if !errors.Is(err, model.ErrNoTokenMode) || !strings.Contains(err.Error(), engine.Name()) ||
			!strings.Contains(err.Error(), "token mode") || !strings.Contains(err.Error(), "vllm+URL#MODEL") {
			t.Fatalf("%s: err = %v", engine, err)
		}
		if n := len(srv.Requests()); n != 0 {
			t.Fatalf("%s: %d requests sent", engine, n)
		}
	}
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: chatOnly{}, TokenMode: true}).Run(context.Background(), env, "task", "")
	if err == nil || !strings.Contains(err.Error(), "token mode") {
		t.Fatalf("a chat-only model: err = %v", err)
	}
}

type chatOnly struct{}

func (chatOnly) Chat(context.Context, model.Request) (*model.Response, error) {
	return nil, errors.New("not called")
}

// TestTokenModeMalformedCallIsFormatFailure: a completion whose
// <tool_call> is not JSON, has no name, or is never closed ends the
// rollout as a format failure before any call of it runs.
func TestTokenModeMalformedCallIsFormatFailure(t *testing.T) {
	for name, turn := range map[string]fake.Turn{
		"not json": {ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command": "ls`}}},
		"cut":      {ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command": "ls"}`}}, FinishReason: "length", CompletionTokenIDs: fake.Encode("<tool_call>\n{\"name\": \"shell\", \"argu")},
	} {
		srv := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{{Name: "write_file", Arguments: `{"path":"x","content":"y"}`}}}, turn)
		srv.SetEngine(model.EngineSGLang)
		srv.SetTemplate(fake.ReasoningTemplate)
		env, _, _ := testEnv(t, nil)
		_, err := (&Harness{Model: srv.Client(t, nil), TokenMode: true}).Run(context.Background(), env, "task", "")
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: err = %v, want a format failure", name, err)
		}
		if len(env.Traj.Steps) != 1 || len(env.Traj.Turns) != 2 {
			t.Fatalf("%s: %d steps, %d turns", name, len(env.Traj.Steps), len(env.Traj.Turns))
		}
		segs := segmentsOf(env.Traj, true)
		if len(segs) != 1 || segs[0].Trainable() != len(env.Traj.Turns[1].CompletionTokenIDs) {
			t.Fatalf("%s: format-failed segments %+v", name, segs)
		}
	}
}

// TestTokenModeOutageIsInfra: an engine that goes away mid-rollout (its
// generate endpoint answering 503 past the retries) is an infrastructure
// failure, as in messages mode, and the turns before it are kept.
func TestTokenModeOutageIsInfra(t *testing.T) {
	srv := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command":"echo hi"}`}}},
		fake.Turn{Status: 503, Error: "engine is restarting"}, fake.Turn{Status: 503, Error: "engine is restarting"})
	srv.SetEngine(model.EngineVLLM)
	srv.SetTemplate(fake.ReasoningTemplate)
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: srv.Client(t, &model.Options{MaxRetries: 1}), TokenMode: true}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "engine is restarting") {
		t.Fatalf("err = %v", err)
	}
	if len(env.Traj.Turns) != 1 || len(env.Traj.Steps) != 1 {
		t.Fatalf("%d turns, %d steps kept", len(env.Traj.Turns), len(env.Traj.Steps))
	}
}

// TestCompactionSamples decides docs/segment.md's example, 9 steps
// compacted at step 5, in messages mode on a template that re-renders
// the past as it was sent: 2 samples when the summary request extends the
// segment, 3 when it does not: it cut an observation an act turn had seen
// whole (one only the summary request sees is new tokens, cut or not), or
// it offers no tools to a template that renders them in the system turn
// (Qwen's, Hermes').
func TestCompactionSamples(t *testing.T) {
	for _, tc := range []struct {
		bigStep, bigBytes int
		omitTools         bool
		samples           int
	}{{0, 0, true, 2}, {4, 2000, true, 2}, {2, 2000, true, 3}, {0, 0, false, 3}} {
		step := 0
		srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
			if strings.Contains(lastText(r), "about to be cut") {
				return fake.Turn{Content: "summary", Usage: model.Usage{PromptTokens: 900, CompletionTokens: 5}}
			}
			step++
			if step == 9 {
				return fake.Turn{Content: "finished", Usage: model.Usage{PromptTokens: 300, CompletionTokens: 2}}
			}
			cmd := fmt.Sprintf("echo s%d", step)
			if step == tc.bigStep {
				cmd = fmt.Sprintf("head -c %d /dev/zero | tr '\\0' x", tc.bigBytes)
			}
			// The context reaches the budget after step 4.
			used := 100 * step
			if step == 4 {
				used = 1200
			}
			return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: fmt.Sprintf(`{"command": %q}`, cmd)}},
				Usage: model.Usage{PromptTokens: used, CompletionTokens: 10}}
		})
		srv.SetTemplate(fake.Template{OmitTools: tc.omitTools})
		env, _, _ := testEnv(t, nil)
		h := &Harness{Model: srv.Client(t, nil), TokenIDs: true, ContextTokens: 1500, MaxTokens: 300}
		if _, err := h.Run(context.Background(), env, "count", ""); err != nil {
			t.Fatal(err)
		}
		tr := env.Traj
		acts := 0
		for _, turn := range tr.Turns {
			if turn.Kind == "act" {
				acts++
			}
		}
		if acts != 9 || len(tr.Compactions) != 1 || tr.Compactions[0].AfterTurn != 4 {
			t.Fatalf("%d act turns, compactions %+v", acts, tr.Compactions)
		}
		segs := segmentsOf(tr, false)
		if len(segs) != tc.samples {
			t.Fatalf("observation of %d bytes at step %d, tools omitted %t: %d samples, want %d", tc.bigBytes, tc.bigStep, tc.omitTools, len(segs), tc.samples)
		}
	}
}

// TestSamplesPerRolloutFigure prints docs/BENCHMARKS.md's figure (go test
// ./internal/agent/ -run SamplesPerRolloutFigure -v): samples per rollout
// in messages mode and in token mode on the reasoning template, for a
// scripted reasoning agent of 9 act turns without compaction and with one
// after step 4, on vLLM's and SGLang's endpoints of the fake server. It
// fails when token mode gives other than one sample per compaction
// segment.
func TestSamplesPerRolloutFigure(t *testing.T) {
	t.Parallel()
	t.Log("engine  compaction  mode      turns  compaction-segments  samples  prefix-breaks")
	for _, engine := range []model.Engine{model.EngineVLLM, model.EngineSGLang} {
		for _, compact := range []bool{false, true} {
			for _, tokenMode := range []bool{false, true} {
				budget := 0
				if compact {
					budget = compactingBudget(t, engine, fake.ReasoningTemplate, tokenMode)
				}
				tr, _, err := rollout(t, engine, fake.ReasoningTemplate, tokenMode, 9, 4, budget)
				if err != nil {
					t.Fatal(err)
				}
				segs := segmentsOf(tr, false)
				mode := "messages"
				if tokenMode {
					mode = "token"
					if len(segs) != len(tr.Segments) {
						t.Errorf("%s, compaction %t: token mode gave %d samples for %d compaction segments", engine, compact, len(segs), len(tr.Segments))
					}
				}
				t.Logf("%-7s %-11t %-9s %5d  %19d  %7d  %13d", engine, compact, mode, len(tr.Turns), len(tr.Segments), len(segs), rl.PrefixBreaks(segs))
			}
		}
	}
}

// shiftingTemplate is a TokenModel whose template renders the
// conversation's start differently once messages follow the model's
// reply (the first id changes with the message count).
type shiftingTemplate struct{ chatOnly }

func (shiftingTemplate) Tokenize(_ context.Context, req model.TokenizeRequest) ([]int, error) {
	return []int{len(req.Messages), 1, 2, 3}, nil
}

func (shiftingTemplate) Generate(context.Context, model.TokenRequest) (*model.TokenResponse, error) {
	return &model.TokenResponse{Text: "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": \"echo hi\"}}\n</tool_call>",
		CompletionTokenIDs: []int{7, 8}, Logprobs: []float64{-1, -1}, FinishReason: "stop"}, nil
}

// TestTokenModeRefusesAShiftingTemplate: when the template renders the
// held conversation differently with new messages after it, the new
// tokens cannot be cut apart: the rollout stops with an error that says
// so and names messages mode, not as an infrastructure failure.
func TestTokenModeRefusesAShiftingTemplate(t *testing.T) {
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: shiftingTemplate{}, TokenMode: true}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, errTemplatePrefix) || errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "messages mode") {
		t.Fatalf("err = %v", err)
	}
	if len(env.Traj.Turns) != 1 || len(env.Traj.Steps) != 1 {
		t.Fatalf("%d turns, %d steps", len(env.Traj.Turns), len(env.Traj.Steps))
	}
}
