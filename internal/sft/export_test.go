package sft

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

var shared pooltest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func fixture(t *testing.T) *pooltest.Fixture {
	t.Helper()
	return shared.Get(t)
}

// sftPool puts the families given in the sft split, the rest in rl.
func sftPool(t *testing.T, f *pooltest.Fixture, families ...string) *pool.Pool {
	return f.WritePool(t, func(fam string) string {
		for _, x := range families {
			if x == fam {
				return pool.SplitSFT
			}
		}
		return pool.SplitRL
	})
}

func readRecords(t *testing.T, path string) []Record {
	t.Helper()
	fh, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	var out []Record
	sc := bufio.NewScanner(fh)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("line %d: %v", len(out)+1, err)
		}
		if r.Version != Version {
			t.Fatalf("line %d: version %d", len(out)+1, r.Version)
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// TestExportLiveScripted: the oracle replay passes and is exported; a
// teacher that avoids every interface never passes V, and its task has no
// record: the export disagrees with a teacher.
func TestExportLiveScripted(t *testing.T) {
	f := fixture(t)
	p := sftPool(t, f, "wishlist-balance", "model-pick")
	good, bad := f.Tasks["wishlist-balance"], f.Tasks["model-pick"]
	out := filepath.Join(t.TempDir(), "data", "sft.jsonl")
	trajs := t.TempDir()
	x := &Exporter{Pool: p, Source: SourceLive, Attempts: 2, TrajectoryDir: trajs,
		Env: func(*task.Task) (Rollouts, error) { return f.Env, nil },
		Teacher: func(tk *task.Task, attempt int) (rollout.Policy, error) {
			if tk.ID == bad.ID {
				return policy.NewReplay("nothing", tk, policy.ErrorModel{Avoid: []string{task.GUI, task.MCP, task.CLI, agent.File}}, uint64(attempt)), nil
			}
			return policy.NewReplay("oracle", tk, policy.ErrorModel{}, uint64(attempt)), nil
		}}
	sum, err := x.Export(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.Tasks != 2 || sum.WithTeacher != 1 || sum.WithoutSuccess != 1 || sum.Segments != 1 || sum.Dropped != 0 {
		t.Fatalf("summary: %+v", sum)
	}
	if !strings.Contains(sum.Failed[bad.ID], "2 live attempts, none passed V") {
		t.Fatalf("why %s failed: %q", bad.ID, sum.Failed[bad.ID])
	}
	for _, id := range []string{"sft-1-script", "sft-1", "sft-2-script", "sft-2"} {
		tr, err := agent.LoadTrajectory(filepath.Join(trajs, bad.ID, id+".json"))
		if err != nil || tr.Failure != agent.FailAgent {
			t.Fatalf("the failed attempt %s: %v, %+v", id, err, tr)
		}
	}
	recs := readRecords(t, out)
	if len(recs) != 1 {
		t.Fatalf("%d records", len(recs))
	}
	r := recs[0]
	if r.TaskID != good.ID || r.Split != pool.SplitSFT || r.Family != "wishlist-balance" || r.Source != SourceLive || r.Teacher != "scripted:replay-oracle" ||
		r.TeacherKind != KindScripted || r.Harness != agent.HarnessName || r.Rollout != "sft-1" || r.V != 1 || r.Passed != r.Total || r.Total == 0 || r.SegmentCount != 1 || r.Mapping == nil {
		t.Fatalf("record: %+v", r)
	}
	if r.Trajectory != filepath.Join(trajs, good.ID, "sft-1.json") || r.ReplayOf != filepath.Join(trajs, good.ID, "sft-1-script.json") || sum.Replayed != 1 {
		t.Fatalf("trajectory %q, replay of %q, %d replayed", r.Trajectory, r.ReplayOf, sum.Replayed)
	}
	// The live instance's websites and tools, as the harness showed them.
	if !strings.Contains(r.Messages[0].Content, "devices http://127.0.0.1:") || r.Messages[1].Content != good.Instruction {
		t.Fatalf("start: %+v", r.Messages[:2])
	}
	tools := map[string]bool{}
	for _, tl := range r.Tools {
		tools[tl.Function.Name] = true
	}
	if !tools["browser_navigate"] || !tools["payments__get_balance"] || !tools["shell"] || len(r.Tools) < len(agent.Builtins()) {
		t.Fatalf("tools: %v", tools)
	}
	harnessRecord(t, r)
	if r.Mapping.Tools["mcp.payments__get_balance"] != "payments__get_balance" || r.Mapping.Selectors == 0 || r.Mapping.Tools["browser.fill"] != "browser_type" {
		t.Fatalf("mapping %+v", r.Mapping)
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Fatalf("the output directory holds %d files (a temporary file left?)", len(ents))
	}
}

// harnessRecord holds a record to the harness's action space: every call
// is a harness tool's with the arguments it takes (element numbers, never
// selectors), and a browser call's observation is the page as browser_read
// shows it.
func harnessRecord(t *testing.T, r Record) {
	t.Helper()
	if err := Check(r); err != nil {
		t.Fatal(err)
	}
	calls := 0
	for i, m := range r.Messages {
		if m.Train != (m.Role == "assistant") {
			t.Fatalf("message %d: %+v", i, m)
		}
		for _, c := range m.ToolCalls {
			calls++
			if strings.Contains(string(c.Function.Arguments), `"selector"`) {
				t.Fatalf("message %d calls %s with a selector: %s", i, c.Function.Name, c.Function.Arguments)
			}
			obs := r.Messages[i+1].Content
			if pageTools[c.Function.Name] && !strings.HasPrefix(obs, "URL: http://127.0.0.1:") {
				t.Fatalf("%s returned %q, not the page", c.Function.Name, obs)
			}
		}
	}
	if calls == 0 {
		t.Fatal("no tool call")
	}
}

// TestExportGate: the stored gate rollouts V passed, a model's before a
// script's and a hint-free before a hinted; a script's steps are replayed
// through the harness in a fresh instance, and one the harness cannot
// express, or whose replay V rejects, gives way to the next; the
// indispensability replay and a rollout V rejected never count; a task
// never gated has no teacher.
func TestExportGate(t *testing.T) {
	f := fixture(t)
	tasks := t.TempDir()
	p := &pool.Pool{Version: pool.Version, TasksDir: tasks, Counts: map[string]int{}}
	for _, fam := range []string{"wishlist-balance", "model-pick"} {
		tk := f.Tasks[fam]
		if err := verify.CopyDir(context.Background(), f.TaskDirs[fam], filepath.Join(tasks, tk.ID)); err != nil {
			t.Fatal(err)
		}
		p.Tasks = append(p.Tasks, pool.Entry{ID: tk.ID, Dir: tk.ID, Split: pool.SplitSFT, Family: fam})
	}
	tk := f.Tasks["wishlist-balance"]
	dir := filepath.Join(tasks, tk.ID)
	save := func(id string, tr *agent.Trajectory) string {
		rel := filepath.Join(pool.GateDir, "rollouts", id+".json")
		tr.Rollout = id
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := tr.Save(filepath.Join(dir, rel)); err != nil {
			t.Fatal(err)
		}
		return rel
	}
	// reference is a script's trajectory of the task's reference steps;
	// steps replaces them.
	script := func(policy string, steps ...agent.Step) *agent.Trajectory {
		if steps == nil {
			for i, s := range tk.Reference {
				steps = append(steps, agent.Step{Index: i, Interface: s.Interface, Tool: s.Tool, Args: s.Args})
			}
		}
		return &agent.Trajectory{Version: 2, TaskID: tk.ID, Policy: policy, Answer: tk.Answer, Outcome: "done", Steps: steps}
	}
	unaddressable := script("scripted:replay-careful",
		agent.Step{Tool: "browser.open", Args: map[string]any{"url": "site:payments/"}},
		agent.Step{Index: 1, Tool: "browser.click", Args: map[string]any{"selector": "body"}})
	rejected := script("scripted:replay-careful", agent.Step{Tool: "shell.run", Args: map[string]any{"command": "ls"}})
	model := tokenTrajectory(false)
	recs := []pool.RolloutRecord{
		{ID: "r1", Policy: "scripted:replay-careful", Hint: true, V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("r1", script("scripted:replay-careful"))},
		{ID: "r2", Policy: "scripted:replay-sloppy", V: 0, Passed: 1, Total: 3, Outcome: "done", Trajectory: save("r2", script("scripted:replay-sloppy"))},
		{ID: "without-gui", Without: "gui", Policy: "scripted:replay-oracle", V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("without-gui", script("scripted:replay-oracle"))},
		{ID: "r3", Policy: "scripted:replay-careful", V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("r3", script("scripted:replay-careful"))},
		{ID: "r4", Policy: "model:m", V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("r4", model)},
		{ID: "r5", Policy: "scripted:replay-careful", V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("r5", unaddressable)},
		{ID: "r6", Policy: "scripted:replay-careful", V: 1, Passed: 3, Total: 3, Outcome: "done", Trajectory: save("r6", rejected)},
	}
	writeOutcome := func(rs []pool.RolloutRecord) {
		b, err := json.Marshal(pool.Outcome{Version: pool.OutcomeVersion, TaskID: tk.ID, Rollouts: rs})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, pool.OutcomeFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	trajs := t.TempDir()
	x := &Exporter{Pool: p, Env: func(*task.Task) (Rollouts, error) { return f.Env, nil }, TrajectoryDir: trajs}
	export := func() (Summary, []Record) {
		out := filepath.Join(t.TempDir(), "sft.jsonl")
		sum, err := x.Export(context.Background(), out)
		if err != nil {
			t.Fatal(err)
		}
		return sum, readRecords(t, out)
	}
	if _, err := (&Exporter{Pool: p}).Export(context.Background(), filepath.Join(t.TempDir(), "x.jsonl")); err == nil || !strings.Contains(err.Error(), "needs an Env") {
		t.Fatalf("the gate source without an Env: %v", err)
	}
	writeOutcome(recs)
	sum, got := export()
	if sum.Tasks != 2 || sum.WithTeacher != 1 || sum.WithoutSuccess != 1 || !strings.Contains(sum.Failed[f.Tasks["model-pick"].ID], "never gated") {
		t.Fatalf("summary %+v", sum)
	}
	if len(got) != 3 || got[0].Rollout != "r4" || got[0].Teacher != "model:m" || got[0].Source != SourceGate || got[0].PromptIDs == nil || got[2].SegmentIndex != 2 ||
		len(got[0].Tools) < len(agent.Builtins()) || got[0].ReplayOf != "" {
		t.Fatalf("the model's rollout, 3 segments with the harness's tools: %+v", got)
	}
	// Without the model's: the hint-free scripts first: r3, replayed
	// through the harness, not the hinted r1 before it, nor the replay
	// without an interface.
	writeOutcome(recs[:4])
	sum, got = export()
	if len(got) != 1 || got[0].Rollout != "gate-r3" || got[0].Hint || got[0].TeacherKind != KindScripted || got[0].ReplayOf != filepath.Join(dir, recs[3].Trajectory) ||
		!strings.Contains(got[0].Messages[0].Content, "devices http://127.0.0.1:") || sum.Replayed != 1 {
		t.Fatalf("want r3 through the harness: %+v", got)
	}
	harnessRecord(t, got[0])
	// r5 clicks an element the harness does not number and r6's replay
	// fails V: both give way to the hinted r1, and say why.
	writeOutcome([]pool.RolloutRecord{recs[0], recs[5], recs[6]})
	if _, got = export(); len(got) != 1 || got[0].Rollout != "gate-r1" || !got[0].Hint || !strings.Contains(got[0].Messages[1].Content, "Hint: ") {
		t.Fatalf("want r1: %+v", got)
	}
	writeOutcome([]pool.RolloutRecord{recs[5], recs[6]})
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	sum, err := x.Export(context.Background(), out)
	why := sum.Failed[tk.ID]
	if err == nil || !strings.Contains(why, "r5: the harness cannot replay it") || !strings.Contains(why, "has no number in browser_read") || !strings.Contains(why, "r6: replayed through the harness: outcome done, V 0") {
		t.Fatalf("no replay passes: %v, %q", err, why)
	}
	// No success at all: nothing to write is an error, and the output of
	// an earlier export stays as it was.
	writeOutcome(recs[1:3])
	if err := os.WriteFile(out, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sum, err = x.Export(context.Background(), out)
	var nothing *NothingError
	if !errors.As(err, &nothing) || sum.WithoutSuccess != 2 || !strings.Contains(sum.Failed[tk.ID], "V passed none of the 2") || !strings.Contains(err.Error(), "is left as it was") {
		t.Fatalf("no success: %+v, %v; want a NothingError", sum, err)
	}
	if b, _ := os.ReadFile(out); string(b) != "{}\n" {
		t.Errorf("the earlier export was overwritten: %q", b)
	}
}

// tokens is the test model's tokenizer: a role token, then a token per 4
// bytes of each text; a chat's prompt ends with the assistant's start.
const asstStart, msgEnd = 1, 2

func textTokens(s string) []int {
	var out []int
	for i := 0; i < len(s); i += 4 {
		h := fnv.New32a()
		h.Write([]byte(s[i:min(i+4, len(s))]))
		out = append(out, 1000+int(h.Sum32()%50000))
	}
	return out
}

func msgTokens(role, content string, calls []fake.WireToolCall) []int {
	out := []int{map[string]int{"system": 10, "user": 11, "assistant": asstStart, "tool": 13}[role]}
	out = append(out, textTokens(content)...)
	for _, c := range calls {
		out = append(out, textTokens(c.Function.Name+c.Function.Arguments)...)
	}
	return append(out, msgEnd)
}

func promptTokens(msgs []fake.Message) []int {
	var out []int
	for _, m := range msgs {
		out = append(out, msgTokens(m.Role, m.Content, m.ToolCalls)...)
	}
	return append(out, asstStart)
}

// replyTurn is the model's reply with the token ids an engine would give.
func replyTurn(r fake.Request, content string, calls []fake.ToolCall) fake.Turn {
	var wire []fake.WireToolCall
	for _, c := range calls {
		var w fake.WireToolCall
		w.Function.Name, w.Function.Arguments = c.Name, c.Arguments
		wire = append(wire, w)
	}
	return fake.Turn{Content: content, ToolCalls: calls, PromptTokenIDs: promptTokens(r.Messages),
		CompletionTokenIDs: msgTokens("assistant", content, wire)[1:]}
}

// referenceModel is a model that performs the task's reference completion
// through the harness's tools: a browser action's CSS selector becomes the
// ref the last browser_read gave the element (probed in the session's
// browser), and it summarises when the harness compacts.
func referenceModel(t *testing.T, tk *task.Task, br func() *fakebrowser.Browser) func(fake.Request) fake.Turn {
	var mu sync.Mutex
	next := 0
	ref := func(sel string) int {
		for n := 1; n < 500; n++ {
			if _, err := br().Text(context.Background(), fmt.Sprintf(`%s[data-wa-ref="%d"]`, sel, n)); err == nil {
				return n
			}
		}
		t.Errorf("no ref for %s", sel)
		return 0
	}
	return func(r fake.Request) fake.Turn {
		mu.Lock()
		defer mu.Unlock()
		if last := r.Messages[len(r.Messages)-1]; last.Role == "user" && last.Content == compactPrompt {
			return replyTurn(r, fmt.Sprintf("summary: %d of %d steps done", next, len(tk.Reference)), nil)
		}
		if next == len(tk.Reference) {
			return replyTurn(r, tk.Answer, nil)
		}
		s := tk.Reference[next]
		next++
		name, args := s.Tool, map[string]any{}
		sel, _ := s.Args["selector"].(string)
		switch s.Tool {
		case "browser.open":
			name, args = "browser_navigate", map[string]any{"url": s.Args["url"]}
		case "browser.read", "browser.snapshot":
			name = "browser_read"
		case "browser.fill":
			name, args = "browser_type", map[string]any{"ref": ref(sel), "text": s.Args["value"]}
		case "browser.click":
			name, args = "browser_click", map[string]any{"ref": ref(sel)}
		case "shell.run":
			name, args = "shell", s.Args
		default:
			if !strings.HasPrefix(s.Tool, "mcp.") {
				t.Errorf("the test model cannot do %s", s.Tool)
			}
			name, args = strings.TrimPrefix(s.Tool, "mcp."), s.Args
		}
		b, _ := json.Marshal(args)
		return replyTurn(r, "", []fake.ToolCall{{ID: fmt.Sprintf("call_%d", next), Name: name, Arguments: string(b)}})
	}
}

// TestExportLiveModel: a model teacher (the local OpenAI-compatible fake)
// solves a task through the harness with compaction; with token ids the
// export is rl.Segments' samples, each turn's completion trainable exactly
// once; without, the rendered chats are the requests the harness sent.
func TestExportLiveModel(t *testing.T) {
	f := fixture(t)
	for _, ids := range []bool{true, false} {
		t.Run(fmt.Sprintf("token-ids=%t", ids), func(t *testing.T) { liveModel(t, f, ids) })
	}
}

func liveModel(t *testing.T, f *pooltest.Fixture, tokenIDs bool) {
	p := sftPool(t, f, "wishlist-balance")
	tk := f.Tasks["wishlist-balance"]
	var mu sync.Mutex
	var last *fakebrowser.Browser
	work := filepath.Join(filepath.Dir(f.Dir), fmt.Sprintf("work-sft-model-%t", tokenIDs))
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	env := &rollout.Env{Store: f.Env.Store, Materializer: f.Env.Materializer, CatalogDir: f.Env.CatalogDir, WorkDir: work, Self: f.Env.Self,
		Services: f.Env.Services, UIDs: f.Env.UIDs,
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			b, err := fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
			mu.Lock()
			last = b
			mu.Unlock()
			return b, err
		}}
	srv := fake.NewResponder(t, referenceModel(t, tk, func() *fakebrowser.Browser { mu.Lock(); defer mu.Unlock(); return last }))
	h := &agent.Harness{Model: srv.Client(t, nil), ModelName: "teacher-8b", TokenIDs: tokenIDs, ContextTokens: 2400, MaxTokens: 400}
	trajs := t.TempDir()
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	x := &Exporter{Pool: p, Source: SourceLive, TrajectoryDir: trajs, Env: func(*task.Task) (Rollouts, error) { return env, nil },
		Teacher: func(*task.Task, int) (rollout.Policy, error) { return policy.Model{Harness: h}, nil }}
	sum, err := x.Export(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	if sum.WithTeacher != 1 || sum.Dropped != 0 {
		t.Fatalf("summary %+v (failed: %v)", sum, sum.Failed)
	}
	tr, err := agent.LoadTrajectory(filepath.Join(trajs, tk.ID, "sft-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Compactions) == 0 {
		t.Fatalf("no compaction in %d turns", len(tr.Turns))
	}
	recs := readRecords(t, out)
	if len(recs) != sum.Segments || len(recs) < len(tr.Segments)+len(tr.Compactions) {
		t.Fatalf("%d records (summary %d) for %d segments and %d compactions", len(recs), sum.Segments, len(tr.Segments), len(tr.Compactions))
	}
	t.Logf("%d turns, %d compactions, %d records, %d steps", len(tr.Turns), len(tr.Compactions), len(recs), len(tr.Steps))
	chats := srv.Chats()
	completions, trainable, turns, cut := 0, 0, 0, 0
	for _, tu := range tr.Turns {
		completions += len(tu.CompletionTokenIDs)
	}
	for i, r := range recs {
		if r.Teacher != "model:teacher-8b" || r.TeacherKind != KindModel || r.Harness != agent.HarnessName || r.SegmentIndex != i || r.SegmentCount != len(recs) || r.V != 1 || r.Mapping != nil {
			t.Fatalf("record %d: %+v", i, r)
		}
		turns += r.LastTurn - r.FirstTurn + 1
		if tokenIDs {
			if len(r.LossMask) != len(r.ResponseIDs) || r.Tokens != len(r.PromptIDs)+len(r.ResponseIDs) || r.TokensEstimated {
				t.Fatalf("record %d: %d mask, %d response, %d tokens", i, len(r.LossMask), len(r.ResponseIDs), r.Tokens)
			}
			trainable += r.Trainable
		} else if r.PromptIDs != nil || !r.TokensEstimated {
			t.Fatalf("record %d has token ids without an engine's", i)
		}
		// The rendered chat is the request of the segment's last turn and
		// its reply, the teacher's messages after the first request trainable.
		req := chats[r.LastTurn-1].Messages
		if len(r.Messages) != len(req)+1 {
			t.Fatalf("record %d: %d messages for a request of %d", i, len(r.Messages), len(req))
		}
		for j, w := range req {
			m := r.Messages[j]
			// Every message exactly, a long observation cut as the harness
			// cut it included.
			same := m.Role == w.Role && m.ToolCallID == w.ToolCallID && len(m.ToolCalls) == len(w.ToolCalls) && m.Content == w.Content
			if m.Role == "tool" && len(w.Content) > agent.DefaultMaxObservation {
				cut++
			}
			if !same {
				t.Fatalf("record %d message %d:\n%+v\nthe harness sent\n%+v", i, j, m, w)
			}
		}
		if end := r.Messages[len(r.Messages)-1]; end.Role != "assistant" || !end.Train {
			t.Fatalf("record %d ends with %+v", i, end)
		}
	}
	if turns != len(tr.Turns) {
		t.Fatalf("the records hold %d turns of %d", turns, len(tr.Turns))
	}
	t.Logf("%d tool messages the harness cut", cut)
	if tokenIDs && trainable != completions {
		t.Fatalf("%d trainable tokens, the turns completed %d: each completion is trained once", trainable, completions)
	}

	// A limit below the longest segment drops exactly those over it (the
	// token counts do not depend on what the chat renders).
	if !tokenIDs {
		return
	}
	longest, over := 0, 0
	for _, r := range recs {
		longest = max(longest, r.Tokens)
	}
	for _, r := range recs {
		if r.Tokens > longest-1 {
			over++
		}
	}
	b, err := Build(tr, Context{Instruction: tk.Instruction}, longest-1)
	if err != nil || b.Dropped != over || b.Segments != len(recs) || len(b.Records) != len(recs)-over {
		t.Fatalf("limit %d: dropped %d of %d, want %d: %v", longest-1, b.Dropped, b.Segments, over, err)
	}
}

// TestReplayCompacts: a script replayed through the harness under a small
// context budget is compacted as a model would be: the harness asks for
// the summary, the script writes one, the trajectory has several
// segments, every record holds to the harness, and V still passes.
func TestReplayCompacts(t *testing.T) {
	f := fixture(t)
	p := sftPool(t, f, "cafe-near-venue")
	out := filepath.Join(t.TempDir(), "sft.jsonl")
	trajs := t.TempDir()
	x := &Exporter{Pool: p, Source: SourceLive, ContextTokens: 2500, CompletionTokens: 1000, TrajectoryDir: trajs,
		Env: func(*task.Task) (Rollouts, error) { return f.Env, nil },
		Teacher: func(tk *task.Task, attempt int) (rollout.Policy, error) {
			return policy.NewReplay("oracle", tk, policy.ErrorModel{}, uint64(attempt)), nil
		}}
	sum, err := x.Export(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	tr, err := agent.LoadTrajectory(filepath.Join(trajs, f.Tasks["cafe-near-venue"].ID, "sft-1.json"))
	if err != nil {
		t.Fatal(err)
	}
	recs := readRecords(t, out)
	if len(tr.Compactions) == 0 || len(recs) < 2 || sum.Segments != len(recs) {
		t.Fatalf("%d compactions, %d records: want the replay compacted", len(tr.Compactions), len(recs))
	}
	if !strings.HasPrefix(tr.Compactions[0].Summary, "Task: ") || !strings.Contains(tr.Compactions[0].Summary, "Calls so far:") {
		t.Fatalf("the script's summary: %q", tr.Compactions[0].Summary)
	}
	for _, r := range recs {
		if err := Check(r); err != nil || r.V != 1 {
			t.Fatalf("record %d: V %d, %v", r.SegmentIndex, r.V, err)
		}
	}
}
