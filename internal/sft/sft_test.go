package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/sandbox"
)

func ids(from, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = from + i
	}
	return out
}

func cat(parts ...[]int) []int { return slices.Concat(parts...) }

// tokenTrajectory: segment 0 holds act turns 1 and 2 and the compaction
// turn 3; segment 1 act turns 4 and 5 (5 answers). The compaction's prompt
// extends the held tokens only when extend is set (nothing was cut).
func tokenTrajectory(extend bool) *agent.Trajectory {
	p1, c1 := ids(100, 10), ids(200, 3)
	o1 := ids(300, 4) // the tool message after turn 1
	p2 := cat(p1, c1, o1)
	c2 := ids(400, 2)
	o2 := ids(500, 5)
	p3 := cat(ids(100, 10), ids(900, 6)) // observations cut for the summary
	if extend {
		p3 = cat(p2, c2, o2, ids(950, 3))
	}
	c3 := ids(600, 4)
	p4 := cat(ids(100, 10), ids(700, 5)) // system, task, summary
	c4 := ids(800, 2)
	o4 := ids(850, 3)
	p5 := cat(p4, c4, o4)
	c5 := ids(870, 1)
	call := func(id string) []agent.TurnCall {
		return []agent.TurnCall{{ID: id, Name: "shell", Arguments: `{"command":"ls"}`}}
	}
	return &agent.Trajectory{Version: 2, TaskID: "t", Rollout: "r1", Policy: "model:m", Harness: "wildawm", Model: "m",
		Steps: []agent.Step{
			{Index: 0, Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": "ls"}, Observation: strings.Repeat("x", 700), Turn: 1, CallID: "c1"},
			{Index: 1, Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": "ls"}, Observation: "a\n", Turn: 2, CallID: "c2"},
			{Index: 2, Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": "ls"}, Error: "exit status 1", Observation: "no", Turn: 4, CallID: "c4"},
		},
		Turns: []agent.Turn{
			{Index: 1, Segment: 0, Kind: "act", Content: "look", ToolCalls: call("c1"), PromptTokenIDs: p1, CompletionTokenIDs: c1},
			{Index: 2, Segment: 0, Kind: "act", ToolCalls: call("c2"), PromptTokenIDs: p2, CompletionTokenIDs: c2},
			{Index: 3, Segment: 0, Kind: "compaction", Content: "summary one", PromptTokenIDs: p3, CompletionTokenIDs: c3},
			{Index: 4, Segment: 1, Kind: "act", Reasoning: "think", ToolCalls: call("c4"), PromptTokenIDs: p4, CompletionTokenIDs: c4},
			{Index: 5, Segment: 1, Kind: "act", Content: "done it", PromptTokenIDs: p5, CompletionTokenIDs: c5},
		},
		Segments: []agent.Segment{{Index: 0, FirstTurn: 1, LastTurn: 3, Reason: "start"}, {Index: 1, FirstTurn: 4, LastTurn: 5, Reason: "compaction", Summary: "summary one"}},
		Answer:   "done it", Outcome: "done"}
}

func TestTokenSegments(t *testing.T) {
	tr := tokenTrajectory(false)
	b, err := Build(tr, Context{Instruction: "do it"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if b.Segments != 3 || b.Dropped != 0 || len(b.Records) != 3 {
		t.Fatalf("segments %d, dropped %d, records %d; want 3 samples for one compaction", b.Segments, b.Dropped, len(b.Records))
	}
	r0, r1, r2 := b.Records[0], b.Records[1], b.Records[2]
	// Segment 0: prompt p1; response c1 (1) o1 (0) c2 (1).
	if fmt.Sprint(r0.PromptIDs) != fmt.Sprint(ids(100, 10)) ||
		fmt.Sprint(r0.ResponseIDs) != fmt.Sprint(cat(ids(200, 3), ids(300, 4), ids(400, 2))) ||
		fmt.Sprint(r0.LossMask) != "[1 1 1 0 0 0 0 1 1]" || r0.Trainable != 5 || r0.Tokens != 19 || r0.TokensEstimated {
		t.Fatalf("segment 0: %+v", r0)
	}
	if r0.FirstTurn != 1 || r0.LastTurn != 2 || r0.SegmentIndex != 0 || r0.SegmentCount != 3 || r0.Teacher != "model:m" || r0.TeacherKind != KindModel {
		t.Fatalf("segment 0 fields: %+v", r0)
	}
	// The compaction turn: a sample of its own, its summary trainable.
	if r1.FirstTurn != 3 || r1.LastTurn != 3 || fmt.Sprint(r1.LossMask) != "[1 1 1 1]" || len(r1.PromptIDs) != 16 {
		t.Fatalf("compaction segment: %+v", r1)
	}
	if fmt.Sprint(r2.LossMask) != "[1 1 0 0 0 1]" || r2.FirstTurn != 4 || r2.LastTurn != 5 || r2.Tokens != 21 {
		t.Fatalf("segment after compaction: %+v", r2)
	}
	// Both forms: the messages of each segment, the teacher's trainable.
	var roles []string
	for _, m := range r0.Messages {
		roles = append(roles, fmt.Sprintf("%s:%t", m.Role, m.Train))
	}
	if strings.Join(roles, " ") != "system:false user:false assistant:true tool:false assistant:true" {
		t.Fatalf("segment 0 messages: %s", roles)
	}
	last := r1.Messages[len(r1.Messages)-1]
	if req := r1.Messages[len(r1.Messages)-2]; req.Role != "user" || req.Content != compactPrompt || last.Content != "summary one" || !last.Train {
		t.Fatalf("compaction messages end %+v, %+v", req, last)
	}
	for _, m := range r1.Messages[:len(r1.Messages)-1] {
		if m.Train {
			t.Fatalf("compaction sample trains its prompt: %+v", m)
		}
		if m.Role == "tool" && strings.HasPrefix(m.Content, "xxx") && !strings.Contains(m.Content, "more bytes cut for the summary") {
			t.Fatalf("summary request's observation not cut: %d bytes", len(m.Content))
		}
	}
	if r2.Messages[2].Content != resumeHead+"summary one"+resumeTail || r2.Messages[3].Reasoning != "think" || !r2.Messages[3].Train ||
		r2.Messages[4].Content != "error: exit status 1\nno" || r2.Messages[5].Content != "done it" {
		t.Fatalf("segment after compaction messages: %+v", r2.Messages)
	}

	// Over the limit: segment 0 (19 tokens) and 2 (21) go, the compaction
	// (20) stays, with its index among all three.
	b, err = Build(tr, Context{Instruction: "do it"}, 20)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dropped != 1 || len(b.Records) != 2 || b.Records[0].SegmentIndex != 0 || b.Records[1].SegmentIndex != 1 {
		t.Fatalf("limit 20: dropped %d, records %+v", b.Dropped, b.Records)
	}
	b, err = Build(tr, Context{Instruction: "do it"}, 18)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dropped != 3 || len(b.Records) != 0 {
		t.Fatalf("limit 18: dropped %d, kept %d", b.Dropped, len(b.Records))
	}
}

// TestTokenSegmentsCompactionExtends: a summary request that cut nothing
// extends its segment and ends it.
func TestTokenSegmentsCompactionExtends(t *testing.T) {
	b, err := Build(tokenTrajectory(true), Context{Instruction: "do it"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 2 {
		t.Fatalf("%d records, want 2", len(b.Records))
	}
	r0 := b.Records[0]
	if r0.LastTurn != 3 || fmt.Sprint(r0.LossMask) != "[1 1 1 0 0 0 0 1 1 0 0 0 0 0 0 0 0 1 1 1 1]" {
		t.Fatalf("segment 0: turns %d..%d mask %v", r0.FirstTurn, r0.LastTurn, r0.LossMask)
	}
	if b.Records[1].FirstTurn != 4 || b.Records[1].SegmentCount != 2 {
		t.Fatalf("segment 1: %+v", b.Records[1])
	}
}

// TestMessageSegments: the same trajectory without token ids is cut by
// the rule on messages into the same three samples (the summary request
// cut turn 1's long observation, so it does not extend segment 0), its
// length estimated.
func TestMessageSegments(t *testing.T) {
	tr := tokenTrajectory(false)
	for i := range tr.Turns {
		tr.Turns[i].PromptTokenIDs, tr.Turns[i].CompletionTokenIDs = nil, nil
	}
	tr.Hint = true
	c := Context{Instruction: "do it", Hint: "use ls", Sites: []string{"shop http://127.0.0.1:1"},
		Tools: []Tool{{Type: "function", Function: ToolDef{Name: "shell"}}}}
	b, err := Build(tr, c, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Records) != 3 {
		t.Fatalf("%d records, want 3", len(b.Records))
	}
	r0 := b.Records[0]
	if r0.PromptIDs != nil || r0.LossMask != nil || !r0.TokensEstimated || r0.Tokens != estimateMessages(r0.Messages)+toolsTokens(c.Tools) || len(r0.Tools) != 1 {
		t.Fatalf("segment 0: %+v", r0)
	}
	if r0.Messages[0].Content != agent.SystemPrompt(c.Sites) || r0.Messages[1].Content != "do it\n\nHint: use ls" {
		t.Fatalf("start: %+v", r0.Messages[:2])
	}
	if r0.Messages[2].ToolCalls[0].Function.Name != "shell" || r0.Messages[3].Content != strings.Repeat("x", 700) || r0.Messages[3].ToolCallID != "c1" {
		t.Fatalf("turn 1: %+v", r0.Messages[2:4])
	}
	if b.Records[1].FirstTurn != 3 || b.Records[2].FirstTurn != 4 {
		t.Fatalf("segments start at %d, %d", b.Records[1].FirstTurn, b.Records[2].FirstTurn)
	}
	// Dropped for length by the estimate.
	b, err = Build(tr, c, r0.Tokens-1)
	if err != nil {
		t.Fatal(err)
	}
	if b.Dropped == 0 || slices.ContainsFunc(b.Records, func(r Record) bool { return r.SegmentIndex == 0 }) {
		t.Fatalf("segment 0 (%d tokens) kept under a limit of %d", r0.Tokens, r0.Tokens-1)
	}
}

func TestBuildRefuses(t *testing.T) {
	if _, err := Build(&agent.Trajectory{Policy: "oracle"}, Context{}, 0); err == nil || !strings.Contains(err.Error(), "field policy") {
		t.Fatalf("a policy that says no kind: %v", err)
	}
	script := &agent.Trajectory{Rollout: "r1", Policy: "scripted:replay-oracle", Answer: "ok",
		Steps: []agent.Step{{Tool: "browser.click", Args: map[string]any{"selector": "#buy"}}}}
	if _, err := Build(script, Context{}, 0); err == nil || !strings.Contains(err.Error(), "no harness turns") {
		t.Fatalf("a script's steps outside the harness: %v", err)
	}
	tr := tokenTrajectory(false)
	tr.Turns[0].ToolCalls[0].Arguments = `["ls"]`
	if _, err := Build(tr, Context{}, 0); err == nil || !strings.Contains(err.Error(), "not a JSON object") {
		t.Fatalf("arguments that are not an object: %v", err)
	}
	tr = tokenTrajectory(false)
	tr.Steps = tr.Steps[1:]
	if _, err := Build(tr, Context{}, 0); err == nil || !strings.Contains(err.Error(), "no step records") {
		t.Fatalf("a call without its step: %v", err)
	}
}

// sentChat calls the shell with each command in turn, keeps every request
// the harness sends, then answers.
type sentChat struct {
	commands []string
	reqs     []model.Request
}

func (c *sentChat) Chat(_ context.Context, req model.Request) (*model.Response, error) {
	c.reqs = append(c.reqs, req)
	if n := len(c.reqs); n <= len(c.commands) {
		b, _ := json.Marshal(map[string]string{"command": c.commands[n-1]})
		return &model.Response{FinishReason: "tool_calls", ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("c%d", n), Name: "shell", Arguments: b}}}, nil
	}
	return &model.Response{Content: "done", FinishReason: "stop"}, nil
}

// TestObservationsAsSent: observations over the harness's limit, with and
// without an error, in several bytes a character, render as exactly the
// tool messages the harness sent (its cut and its marker, not the
// trajectory recorder's), and the chat is the harness's last request.
func TestObservationsAsSent(t *testing.T) {
	outputs := map[string]sandbox.Result{
		"long":     {Stdout: []byte(strings.Repeat("x", 5000))},
		"longfail": {Stdout: []byte(strings.Repeat("y", 3990)), ExitCode: 1},
		"utf8":     {Stdout: []byte(strings.Repeat("é", 2500)), Stderr: []byte("warn")},
		"short":    {Stdout: []byte("ok\n")},
		"fail":     {ExitCode: 2, Stderr: []byte("no such file")},
	}
	cmds := []string{"long", "longfail", "utf8", "short", "fail"}
	chat := &sentChat{commands: cmds}
	tr := &agent.Trajectory{Version: agent.TrajectoryVersion, Rollout: "r1", Policy: "model:m"}
	env := &agent.Env{Traj: tr, Shell: func(_ context.Context, cmd string) (*sandbox.Result, error) {
		r := outputs[cmd]
		return &r, nil
	}}
	h := agent.Harness{Model: chat, ModelName: "m"}
	if _, err := h.Run(context.Background(), env, "do it", ""); err != nil {
		t.Fatal(err)
	}
	b, err := Build(tr, Context{Instruction: "do it"}, 0)
	if err != nil || len(b.Records) != 1 {
		t.Fatalf("%+v, %v", b, err)
	}
	got, want := b.Records[0].Messages, chat.reqs[len(chat.reqs)-1].Messages
	if len(got) != len(want)+1 {
		t.Fatalf("%d messages for a last request of %d", len(got), len(want))
	}
	cut := 0
	for i, w := range want {
		if got[i].Content != w.Content || got[i].Role != string(w.Role) {
			t.Fatalf("message %d:\n%q\nthe harness sent\n%q", i, abbrev(got[i].Content, 200), abbrev(w.Content, 200))
		}
		if strings.HasSuffix(w.Content, "more bytes cut]") {
			cut++
		}
	}
	if cut != 3 {
		t.Fatalf("%d observations cut, want 3", cut)
	}
}
