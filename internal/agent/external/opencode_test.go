package external

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// opencodeBin skips the test when opencode is not installed, or fails it
// when WILDAWM_CI is set (CI installs it). The tests that run opencode run
// in parallel: most of their time is its start-up.
func opencodeBin(t *testing.T) string {
	t.Helper()
	t.Parallel()
	bin, err := FindOpencode()
	if err != nil {
		if os.Getenv("WILDAWM_CI") != "" {
			t.Fatalf("WILDAWM_CI is set but %v", err)
		}
		t.Skip(err)
	}
	return bin
}

// toolMessages returns the contents of a request's tool messages.
func toolMessages(r fake.Request) []string {
	var out []string
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out = append(out, m.Content)
		}
	}
	return out
}

func TestOpencodeEndToEnd(t *testing.T) {
	bin := opencodeBin(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "hello.txt"), []byte("hello from the home directory\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	gw, notes := newGateway(t, home), newNotes(t)
	const modelName = "org/fake-model" // a slash, as hub names have
	srv := fake.New(t,
		fake.Turn{Reasoning: "The file first.", ToolCalls: []fake.ToolCall{{ID: "call_a", Name: "wildawm_shell", Arguments: `{"command":"cat hello.txt"}`}}},
		fake.Turn{ToolCalls: []fake.ToolCall{{ID: "call_b", Name: "wildawm_read_file", Arguments: `{"path":"missing.txt"}`}}},
		fake.Turn{Content: "Let me look at the notes.", ToolCalls: []fake.ToolCall{{ID: "call_c", Name: "notes_list_notes", Arguments: `{"limit":2}`}}},
		fake.Turn{Content: "The file says hello; the first two notes are groceries and surge protector."},
	)
	srv.SetModels(modelName)

	work := filepath.Join(t.TempDir(), "run")
	temperature := 0.25
	oc := &Opencode{Bin: bin}
	res, err := oc.Run(context.Background(), Run{
		Prompt:       "Read hello.txt and list two notes.\nThen answer.",
		System:       "You are the wildawm test agent.",
		Temperature:  &temperature,
		ModelBaseURL: srv.URL(),
		Model:        modelName,
		APIKey:       "sk-test-key",
		OutputTokens: 2048,
		MCP:          map[string]string{Gateway: gw.URL, "notes": notes.URL},
		WorkDir:      work,
		Timeout:      2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("Run: %v (log %s)", err, tail(res))
	}
	tr := res.Trajectory
	if tr.Outcome != "done" || tr.Error != "" {
		t.Fatalf("outcome %q, error %q; log: %s", tr.Outcome, tr.Error, tail(res))
	}

	chats := srv.Chats()
	if len(chats) != 4 {
		t.Fatalf("the model got %d chat requests, want 4 (no title request)", len(chats))
	}
	first := chats[0]
	if !first.Stream {
		t.Error(`opencode did not ask for "stream": true`)
	}
	if got := first.Header.Get("Authorization"); got != "Bearer sk-test-key" {
		t.Errorf("Authorization %q", got)
	}
	if first.MaxTokens == nil || *first.MaxTokens != 2048 {
		t.Errorf("max_tokens %v, want 2048", first.MaxTokens)
	}
	if first.Temperature == nil || *first.Temperature != 0.25 {
		t.Errorf("temperature %v, want 0.25", first.Temperature)
	}
	var names []string
	for _, tool := range first.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	if want := []string{"notes_list_notes", "wildawm_read_file", "wildawm_shell"}; !slices.Equal(names, want) {
		t.Errorf("tools offered %v, want only the MCP servers' %v", names, want)
	}
	if sys := first.Messages[0]; sys.Role != "system" || !strings.HasPrefix(sys.Content, "You are the wildawm test agent.") {
		t.Errorf("the system message %q does not start with Run.System", sys.Content[:min(len(sys.Content), 200)])
	}
	var user string
	for _, m := range first.Messages {
		if m.Role == "user" {
			user = m.Content
		}
	}
	if user != "Read hello.txt and list two notes.\nThen answer." {
		t.Errorf("the user message is %q, not the prompt verbatim", user)
	}
	// Each tool's result is in the next request.
	if got := toolMessages(chats[1]); len(got) != 1 || !strings.Contains(got[0], "hello from the home directory") {
		t.Errorf("request 2's tool results %q, want the shell's output", got)
	}
	if got := toolMessages(chats[2]); len(got) != 2 || !strings.Contains(got[1], "no file missing.txt") {
		t.Errorf("request 3's tool results %q, want read_file's error", got)
	}
	if got := toolMessages(chats[3]); len(got) != 3 || !strings.Contains(got[2], "surge protector") || strings.Contains(got[2], "trip") {
		t.Errorf("request 4's tool results %q, want two notes", got)
	}
	if c := gw.Calls(); !slices.Equal(c, []string{"shell", "read_file"}) {
		t.Errorf("gateway calls %v", c)
	}
	if c := notes.Calls(); !slices.Equal(c, []string{"list_notes"}) {
		t.Errorf("notes calls %v", c)
	}

	if len(tr.Steps) != 3 {
		t.Fatalf("%d steps, want 3: %+v", len(tr.Steps), tr.Steps)
	}
	want := []struct{ iface, tool, arg string }{
		{agent.CLI, "shell.run", "command"},
		{"file", "file.read", "path"},
		{agent.MCP, "mcp.notes__list_notes", "limit"},
	}
	for i, w := range want {
		s := tr.Steps[i]
		if s.Index != i || s.Interface != w.iface || s.Tool != w.tool || s.Args[w.arg] == nil {
			t.Errorf("step %d: %+v, want %s %s with %s", i, s, w.iface, w.tool, w.arg)
		}
	}
	if s := tr.Steps[0]; !strings.Contains(s.Observation, "hello from the home directory") || s.Error != "" {
		t.Errorf("shell step: %+v", s)
	}
	if s := tr.Steps[1]; !strings.Contains(s.Error, "no file missing.txt") {
		t.Errorf("read_file step should carry the tool's error: %+v", s)
	}
	if s := tr.Steps[2]; !strings.Contains(s.Observation, "surge protector") {
		t.Errorf("notes step: %+v", s)
	}
	if tr.Answer != "The file says hello; the first two notes are groceries and surge protector." {
		t.Errorf("answer %q", tr.Answer)
	}
	if len(tr.Turns) != 4 || tr.Turns[0].Reasoning != "The file first." || tr.Turns[0].ToolCalls[0].ID != "call_a" ||
		tr.Steps[2].Turn != 3 || tr.Harness != HarnessName || tr.Model != modelName {
		t.Errorf("turns %+v; harness %q, model %q", tr.Turns, tr.Harness, tr.Model)
	}
	if got := tr.InterfacesUsed(); !slices.Equal(got, []string{agent.CLI, agent.MCP}) {
		t.Errorf("interfaces used %v", got)
	}

	// The files: the trajectory next to the raw transcript, no API key
	// written down, nothing outside the work directory.
	saved, err := agent.LoadTrajectory(res.TrajectoryPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(saved.Steps) != 3 || filepath.Dir(res.Transcript) != filepath.Dir(res.TrajectoryPath) {
		t.Errorf("saved trajectory %s, transcript %s", res.TrajectoryPath, res.Transcript)
	}
	cfg, err := os.ReadFile(res.Config)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), "sk-test-key") {
		t.Error("the API key is written in the configuration")
	}
	if _, err := os.Stat(filepath.Join(work, "home", ".local", "share", "opencode")); err != nil {
		t.Errorf("opencode's data is not under the run's home: %v", err)
	}
}

func TestOpencodeProviderErrorIsInfraError(t *testing.T) {
	bin := opencodeBin(t)
	// A server that fails every request, asking for a retry after a
	// second: opencode retries a few times, then gives up.
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{Status: http.StatusInternalServerError, Error: "the fake model is down", RetryAfter: time.Second}
	})
	gw := newGateway(t, t.TempDir())
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "hi", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: gw.URL}, WorkDir: t.TempDir(), Timeout: 90 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Outcome != "infra_error" || !strings.Contains(tr.Error, "the fake model is down") {
		t.Fatalf("outcome %q, error %q; want infra_error with the server's message", tr.Outcome, tr.Error)
	}
	if n := len(srv.Chats()); n < 2 {
		t.Errorf("%d requests: opencode did not retry", n)
	}
	if res.ExitCode == 0 {
		t.Error("opencode exited 0 after the provider failed")
	}
}

func TestOpencodeCancelKillsProcessGroup(t *testing.T) {
	bin := opencodeBin(t)
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{Content: "too late", Delay: 5 * time.Minute}
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for len(srv.Chats()) == 0 && ctx.Err() == nil {
			time.Sleep(50 * time.Millisecond)
		}
		cancel()
	}()
	start := time.Now()
	res, err := (&Opencode{Bin: bin}).Run(ctx, Run{
		Prompt: "hi", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: newGateway(t, t.TempDir()).URL}, WorkDir: t.TempDir(), Timeout: 2 * time.Minute,
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Run after cancel: %v", err)
	}
	if d := time.Since(start); d > time.Minute {
		t.Errorf("Run took %s to return after the cancel", d)
	}
	if res == nil || res.PID == 0 {
		t.Fatal("no result with the process id")
	}
	if p := groupAlive(res.PID); len(p) > 0 {
		t.Errorf("opencode's process group %d is still there: %v", res.PID, p)
	}
	if tr := res.Trajectory; tr.Outcome != "infra_error" || !strings.Contains(tr.Error, "cancelled") {
		t.Errorf("outcome %q, error %q", tr.Outcome, tr.Error)
	}
}

func TestOpencodeTimeout(t *testing.T) {
	bin := opencodeBin(t)
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{Content: "too late", Delay: 5 * time.Minute}
	})
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "hi", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: newGateway(t, t.TempDir()).URL}, WorkDir: t.TempDir(), Timeout: 3 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Trajectory; tr.Outcome != agent.OutcomeBudget || tr.Failure != agent.FailAgent || !strings.Contains(tr.Error, "timed out after 3s") {
		t.Errorf("outcome %q, error %q", tr.Outcome, tr.Error)
	}
	if p := groupAlive(res.PID); len(p) > 0 {
		t.Errorf("opencode's process group %d is still there after the timeout: %v", res.PID, p)
	}
}

// tail is the end of a run's log, for failure messages.
func tail(res *Result) string {
	if res == nil {
		return "(no result)"
	}
	b, _ := os.ReadFile(res.Log)
	if len(b) > 3000 {
		b = b[len(b)-3000:]
	}
	return string(b)
}

// TestOpencodeMaxTurns: a model that never stops calling tools is stopped
// at the turn budget (opencode has none of its own: it once looped for
// minutes), as budget, the agent's failure, its process group gone.
func TestOpencodeMaxTurns(t *testing.T) {
	bin := opencodeBin(t)
	home := t.TempDir()
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: fmt.Sprintf("call_%d", r.N), Name: "wildawm_shell", Arguments: `{"command":"echo again"}`}}}
	})
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "Keep going.", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: newGateway(t, home).URL}, WorkDir: t.TempDir(), Timeout: 2 * time.Minute, MaxTurns: 3,
	})
	if err != nil {
		t.Fatalf("Run: %v (log %s)", err, tail(res))
	}
	tr := res.Trajectory
	if tr.Outcome != agent.OutcomeBudget || tr.Failure != agent.FailAgent || !strings.Contains(tr.Error, "turn budget of 3") {
		t.Fatalf("outcome %q, failure %q, error %q; want the turn budget", tr.Outcome, tr.Failure, tr.Error)
	}
	// The run is killed at the fourth turn's start; under load a few
	// more requests are in flight by then (6 seen), never the thousands
	// of a run without the budget.
	if n := len(srv.Chats()); n > 10 {
		t.Errorf("the model got %d requests past a budget of 3 turns", n)
	}
	if p := groupAlive(res.PID); len(p) > 0 {
		t.Errorf("opencode's process group %d is still there: %v", res.PID, p)
	}
}

// TestOpencodeBadArgumentsAreAFormatFailure: arguments that are not JSON
// end a rollout as a format failure under opencode as under the wildawm
// harness (once an agent failure here, a format failure there).
func TestOpencodeBadArgumentsAreAFormatFailure(t *testing.T) {
	bin := opencodeBin(t)
	home := t.TempDir()
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if r.N == 1 {
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "call_1", Name: "wildawm_shell", Arguments: `{"command": "echo`}}}
		}
		return fake.Turn{Content: "done"}
	})
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "Go.", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: newGateway(t, home).URL}, WorkDir: t.TempDir(), Timeout: 2 * time.Minute, MaxTurns: 5,
	})
	if err != nil {
		t.Fatalf("Run: %v (log %s)", err, tail(res))
	}
	tr := res.Trajectory
	if tr.Outcome != agent.OutcomeFormat || tr.Failure != agent.FailFormat || !strings.Contains(tr.Error, "not a JSON object") {
		t.Fatalf("outcome %q, failure %q, error %q; want a format failure", tr.Outcome, tr.Failure, tr.Error)
	}
}

// TestOpencodeFlakyServer: opencode against a model server of which every
// second chat fails with a 503 finishes its run: its provider retries.
// (One that never recovers: opencode tries 6 times over about 80 s, then
// ends with the provider's error, the infrastructure's failure, as
// TestOpencodeProviderErrorIsInfraError checks on a quicker failure.)
func TestOpencodeFlakyServer(t *testing.T) {
	bin := opencodeBin(t)
	home := t.TempDir()
	var calls, fails atomic.Int64
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if calls.Add(1)%2 == 0 {
			fails.Add(1)
			return fake.Turn{Status: 503, Error: "no healthy upstream"}
		}
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fake.Turn{Content: "done"}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: fmt.Sprintf("call_%d", r.N), Name: "wildawm_shell", Arguments: `{"command":"echo hi"}`}}}
	})
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "Go.", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: newGateway(t, home).URL}, WorkDir: t.TempDir(), Timeout: 2 * time.Minute, MaxTurns: 5,
	})
	if err != nil {
		t.Fatalf("Run: %v (log %s)", err, tail(res))
	}
	if tr := res.Trajectory; tr.Outcome != agent.OutcomeDone || tr.Answer != "done" || fails.Load() == 0 {
		t.Fatalf("outcome %q answer %q error %q after %d failed chats; want done", tr.Outcome, tr.Answer, tr.Error, fails.Load())
	}

}
