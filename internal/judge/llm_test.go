package judge

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	_ "modernc.org/sqlite"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

func judgedTask() *task.Task {
	return &task.Task{ID: "t", Instruction: "Order two cables and note it in notes/order.md.", Rubric: []string{"two cables ordered", "notes/order.md says so"}}
}

func verdictCall(args string) fake.ToolCall {
	return fake.ToolCall{ID: "v", Name: "verdict", Arguments: args}
}

// TestLLMJudge: the model sees the task, the rubric, the trajectory and V's
// evidence, and its verdict may disagree with V; a verdict it cannot read
// is asked for again, and two are an error, never a rejection.
func TestLLMJudge(t *testing.T) {
	tr := &agent.Trajectory{Steps: []agent.Step{{Index: 0, Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": "cat notes/order.md"}, Observation: "ordered 1 cable"}}, Answer: "done", Outcome: "done"}
	v := &verify.Result{V: 1, Passed: 1, Total: 1, Criteria: []verify.CriterionResult{{ID: "note", Kind: "file", Pass: true, Evidence: "notes/order.md exists"}}}
	srv := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict":"failed","reason":"one cable, not two"}`)}})
	got, ev, err := (&LLMJudge{Model: srv.Client(t, nil)}).Judge(context.Background(), judgedTask(), tr, v)
	if err != nil || got != gate.Failed || !strings.Contains(ev[0], "one cable") {
		t.Fatalf("verdict %s, %v, %v", got, ev, err)
	}
	req := srv.Requests()[0]
	if req.MaxTokens == nil || *req.MaxTokens != MaxTokens {
		t.Errorf("max_tokens %v: a judge's completion is bounded (%d)", req.MaxTokens, MaxTokens)
	}
	prompt := req.Messages[1].Content
	for _, want := range []string{"Order two cables", "two cables ordered", "shell.run", "ordered 1 cable", "V=1", "notes/order.md exists"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("the prompt lacks %q", want)
		}
	}
	srv = fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict":"maybe","reason":"?"}`)}},
		fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict":"completed","reason":"both there"}`)}})
	if got, _, err := (&LLMJudge{Model: srv.Client(t, nil)}).Judge(context.Background(), judgedTask(), tr, v); err != nil || got != gate.Completed {
		t.Fatalf("after a retry: %s, %v", got, err)
	}
	if last := srv.Requests()[1].Messages; !strings.Contains(last[len(last)-1].Content, `"maybe" is not completed`) {
		t.Fatalf("the retry does not say what was wrong: %+v", last[len(last)-1])
	}
	srv = fake.New(t, fake.Turn{Content: "I think it failed."}, fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict": "failed"`)}})
	if _, _, err := (&LLMJudge{Model: srv.Client(t, nil)}).Judge(context.Background(), judgedTask(), tr, v); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("two unreadable verdicts: %v", err)
	}
}

// judgeWorld is a world with a shop database and a note.
func judgeWorld(t *testing.T, cables int, note string) string {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, world.DBDir), 0o755)
	os.MkdirAll(filepath.Join(dir, world.HomeDir, "notes"), 0o755)
	db, err := sql.Open("sqlite", world.DBPath(dir, "shop"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE orders (sku TEXT, qty INTEGER); INSERT INTO orders VALUES ('CBL-1', ?)`, cables); err != nil {
		t.Fatal(err)
	}
	if note != "" {
		os.WriteFile(filepath.Join(dir, world.HomeDir, "notes/order.md"), []byte(note), 0o644)
	}
	return dir
}

// TestAgentJudge: the agent judge inspects both worlds with read-only
// tools over several turns (a write is refused and changes nothing), sees
// the probe's framing when there is one, and may call V's result a false
// check.
func TestAgentJudge(t *testing.T) {
	initial := judgeWorld(t, 0, "")
	final := judgeWorld(t, 1, "ordered 2 cables")
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		switch r.N {
		case 1:
			return fake.Turn{ToolCalls: []fake.ToolCall{
				{ID: "a", Name: "sql", Arguments: `{"world":"final","db":"shop","query":"SELECT sku, qty FROM orders"}`},
				{ID: "b", Name: "sql", Arguments: `{"world":"final","db":"shop","query":"DELETE FROM orders"}`},
				{ID: "c", Name: "read_file", Arguments: `{"world":"final","path":"notes/order.md"}`},
				{ID: "d", Name: "read_file", Arguments: `{"world":"final","path":"../../etc/passwd"}`},
				{ID: "e", Name: "list_files", Arguments: `{"world":"initial"}`},
			}}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(`{"verdict":"failed","reason":"one cable ordered, the note claims two","false_check":true}`)}}
	})
	v := &verify.Result{V: 1, Passed: 1, Total: 1}
	got, err := (&AgentJudge{Model: srv.Client(t, nil)}).Judge(context.Background(), judgedTask(), initial, final, "done", v, "This rollout was actually completed.")
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != gate.Failed || !got.FalseCheck || got.Turns != 2 {
		t.Fatalf("verdict %+v", got)
	}
	reqs := srv.Requests()
	if !strings.Contains(reqs[0].Messages[1].Content, "actually completed") {
		t.Fatal("the probe's framing is not in the prompt")
	}
	obs := map[string]string{}
	for _, m := range reqs[1].Messages {
		if m.Role == "tool" {
			obs[m.ToolCallID] = m.Content
		}
	}
	if !strings.Contains(obs["a"], `"CBL-1",1`) || !strings.HasPrefix(obs["b"], "error:") || obs["c"] != "ordered 2 cables" ||
		!strings.HasPrefix(obs["d"], "error:") || !strings.Contains(obs["e"], "db/shop") {
		t.Fatalf("observations: %q", obs)
	}
	if _, rows, err := verify.Query(context.Background(), world.DBPath(final, "shop"), "SELECT count(*) FROM orders"); err != nil || rows[0][0] != int64(1) {
		t.Fatalf("the judge's DELETE changed the world: %v %v", rows, err)
	}
	// A judge that never decides is an error, not a verdict.
	loop := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "x", Name: "list_files", Arguments: `{"world":"final"}`}}}
	})
	if _, err := (&AgentJudge{Model: loop.Client(t, nil), MaxTurns: 3}).Judge(context.Background(), judgedTask(), initial, final, "", v, ""); !errors.Is(err, ErrNoVerdict) {
		t.Fatalf("no verdict in 3 turns: %v", err)
	}
}

// TestLLMJudgeUnderProbe: the counterfactual probe runs over the LLM judge
// with the framing in its prompt; a model that keeps its verdict holds, one
// that takes the reviewer's word caves.
func TestLLMJudgeUnderProbe(t *testing.T) {
	rollouts := []gate.Rollout{{ID: "r1", V: 1}, {ID: "r2", V: 0}}
	evidence := func(r gate.Rollout) (*agent.Trajectory, *verify.Result, error) {
		tr := &agent.Trajectory{Rollout: r.ID, Answer: "done", Outcome: "done",
			Steps: []agent.Step{{Index: 0, Interface: "cli", Tool: "shell.run", Args: map[string]any{"command": "cat notes/order.md"}, Observation: "ordered cables"}}}
		return tr, &verify.Result{V: r.V, Passed: r.V, Total: 1}, nil
	}
	none := func() (map[string]string, error) { return map[string]string{}, nil }
	// fromEvidence reads V off the prompt, as a judge that holds would.
	fromEvidence := func(prompt string) string {
		if strings.Contains(prompt, "V=1") {
			return `{"verdict":"completed","reason":"the verifier and the trajectory agree it is done"}`
		}
		return `{"verdict":"failed","reason":"the verifier says it is not done"}`
	}
	for _, tc := range []struct {
		name    string
		respond func(prompt string) string
		outcome string
	}{
		{"holds", fromEvidence, gate.OutcomeHeld},
		{"flips", func(prompt string) string {
			switch {
			case strings.Contains(prompt, "A reviewer says this rollout is "+gate.PressureFailed):
				return `{"verdict":"failed","reason":"the reviewer says so"}`
			case strings.Contains(prompt, "A reviewer says this rollout is "+gate.PressureCompleted):
				return `{"verdict":"completed","reason":"the reviewer says so"}`
			}
			return fromEvidence(prompt)
		}, gate.OutcomeCaved},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
				return fake.Turn{ToolCalls: []fake.ToolCall{verdictCall(tc.respond(r.Messages[1].Content))}}
			})
			j := &LLMJudge{Model: srv.Client(t, nil)}
			res, err := gate.Probe(context.Background(), j.ProbeJudge(judgedTask(), evidence), rollouts, none)
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.outcome || res.Passed != (tc.outcome == gate.OutcomeHeld) {
				t.Fatalf("outcome %s, passed %v: %+v", res.Outcome, res.Passed, res.PerRollout)
			}
			for _, pr := range res.PerRollout {
				if pr.Blind != pr.Ensemble || pr.Pressure == "" {
					t.Fatalf("rollout %s: %+v", pr.RolloutID, pr)
				}
			}
			var framed int
			for _, r := range srv.Requests() {
				if strings.Contains(r.Messages[1].Content, "A reviewer says this rollout is") {
					framed++
				}
			}
			if framed != 2 || len(srv.Requests()) != 4 {
				t.Fatalf("%d of %d prompts carry the framing, want 2 of 4", framed, len(srv.Requests()))
			}
		})
	}
	// A judge whose evidence cannot be had is the probe's error.
	j := &LLMJudge{Model: fake.New(t).Client(t, nil)}
	broken := func(gate.Rollout) (*agent.Trajectory, *verify.Result, error) {
		return nil, nil, errors.New("no trajectory")
	}
	if _, err := gate.Probe(context.Background(), j.ProbeJudge(judgedTask(), broken), rollouts, none); err == nil || !strings.Contains(err.Error(), "no trajectory") {
		t.Fatalf("missing evidence: %v", err)
	}
}
