package external

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
)

// testdata/opencode-run.jsonl is opencode 1.18's transcript of
// TestOpencodeEndToEnd's conversation: a shell call, a read_file call the
// tool rejects, a notes service call after some text, the answer.
func TestParseOpencode(t *testing.T) {
	f, err := os.Open("testdata/opencode-run.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	tr, err := ParseOpencode(f, []string{Gateway, "notes"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.Step{
		{Index: 0, Interface: agent.CLI, Tool: "shell.run", Args: map[string]any{"command": "cat hello.txt"},
			Observation: "hello from the home directory\n", Turn: 1, CallID: "call_a", DurationMS: 30},
		{Index: 1, Interface: agent.File, Tool: "file.read", Args: map[string]any{"path": "missing.txt"},
			Observation: "read_file: no file missing.txt", Error: "read_file: no file missing.txt", Turn: 2, CallID: "call_b", DurationMS: 20},
		{Index: 2, Interface: agent.MCP, Tool: "mcp.notes__list_notes", Args: map[string]any{"limit": json.Number("2")},
			Observation: `{"notes":[{"id":1,"title":"groceries"},{"id":2,"title":"surge protector"}]}`, Turn: 3, CallID: "call_c", DurationMS: 13},
	}
	got, _ := json.Marshal(tr.Steps)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("steps\n got %s\nwant %s", got, exp)
	}
	if tr.Answer != "The file says hello; the first two notes are groceries and surge protector." {
		t.Errorf("answer %q", tr.Answer)
	}
	if len(tr.Turns) != 4 || tr.Turns[2].Content != "Let me look at the notes." || len(tr.Turns[2].ToolCalls) != 1 ||
		tr.Turns[2].ToolCalls[0].Name != "notes_list_notes" || tr.Turns[3].FinishReason != "stop" {
		t.Errorf("turns %+v", tr.Turns)
	}
	if tr.Session == "" || tr.Finish != "stop" || len(tr.Errors) != 0 {
		t.Errorf("session %q, finish %q, errors %q", tr.Session, tr.Finish, tr.Errors)
	}
}

func TestParseOpencodeErrorsAndOwnTools(t *testing.T) {
	in := `{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"invalid","callID":"c1","state":{"status":"error","input":{"tool":"bash"},"error":"Model tried to call unavailable tool 'bash'.","time":{"start":1,"end":2}}}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"my_svc_do_it","callID":"c2","state":{"status":"completed","input":{},"output":"ok","time":{"start":5,"end":9}}}}

{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"boom","statusCode":500,"isRetryable":true}}}
{"type":"some_future_event","sessionID":"s"}
`
	tr, err := ParseOpencode(strings.NewReader(in), []string{"my", "my.svc"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Steps) != 2 {
		t.Fatalf("steps %+v", tr.Steps)
	}
	if s := tr.Steps[0]; s.Interface != "" || s.Tool != "opencode.invalid" || !strings.Contains(s.Error, "unavailable tool") {
		t.Errorf("opencode's own tool: %+v", s)
	}
	// The longest server wins: my.svc (sanitized my_svc), not my.
	if s := tr.Steps[1]; s.Interface != agent.MCP || s.Tool != "mcp.my.svc__do_it" || s.DurationMS != 4 {
		t.Errorf("service tool: %+v", s)
	}
	if len(tr.Errors) != 1 || tr.Errors[0] != "APIError: boom (HTTP 500)" {
		t.Errorf("errors %q", tr.Errors)
	}
}

// TestParseOpencodeUnparsedArguments: a call whose arguments are not a
// JSON object (opencode keeps the text as {"value": TEXT} and answers it
// as a call of its "invalid" tool) is a format error of the transcript; a
// failed call with an object input is not, nor is a call to a tool that
// does not exist.
func TestParseOpencodeUnparsedArguments(t *testing.T) {
	in := `{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"wildawm_shell","callID":"c1","state":{"status":"error","input":{"value":"{\"command\": \"echo"},"error":"Model tried to call unavailable tool 'invalid'. Available tools: wildawm_shell.","time":{"start":1,"end":2}}}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"wildawm_shell","callID":"c2","state":{"status":"error","input":{"value":"{}"},"error":"Model tried to call unavailable tool 'invalid'.","time":{"start":1,"end":2}}}}
{"type":"tool_use","sessionID":"s","part":{"type":"tool","tool":"wildawm_shell","callID":"c3","state":{"status":"error","input":{"command":"false"},"error":"exit 1","time":{"start":1,"end":2}}}}
`
	tr, err := ParseOpencode(strings.NewReader(in), []string{"wildawm"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.FormatErrors) != 1 || !strings.Contains(tr.FormatErrors[0], `arguments are not a JSON object: {"command": "echo`) {
		t.Errorf("format errors %q", tr.FormatErrors)
	}
}

func TestParseOpencodeBadLine(t *testing.T) {
	in := `{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}
permission requested: bash (*); auto-rejecting
`
	tr, err := ParseOpencode(strings.NewReader(in), nil, nil)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || le.Unterminated || !strings.Contains(err.Error(), "line 2") {
		t.Fatalf("err %v, want one naming line 2", err)
	}
	if len(tr.Turns) != 1 {
		t.Errorf("the events before the bad line are lost: %+v", tr)
	}
	_, err = ParseOpencode(strings.NewReader(`{"type":"step_start"}`+"\n"+`{"type":"tool_use","part":{"tool":"wil`), nil, nil)
	if !errors.As(err, &le) || le.Line != 2 || !le.Unterminated {
		t.Fatalf("err %v, want an unterminated line 2", err)
	}
	_, err = ParseOpencode(strings.NewReader(`{"type":"tool_use","part":{"tool":"x"}}`), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Fatalf("err %v, want one naming line 1", err)
	}
}

func TestCut(t *testing.T) {
	s := strings.Repeat("é", MaxObservation) // 2 bytes each
	c := cut(s)
	if !strings.HasPrefix(c, strings.Repeat("é", MaxObservation/2)+"... [") {
		t.Errorf("cut %q...", c[:40])
	}
	if cut("short") != "short" {
		t.Error("a short observation was cut")
	}
}

func TestTableRouter(t *testing.T) {
	r := DefaultRouter()
	for _, c := range []struct {
		server, tool string
		want         Route
	}{
		{Gateway, "shell", Route{agent.CLI, "shell.run"}},
		{Gateway, "write_file", Route{agent.File, "file.write"}},
		{Gateway, "browser_navigate", Route{agent.GUI, "browser.open"}},
		{Gateway, "browser_click", Route{agent.GUI, "browser.click"}},
		{Gateway, "describe_image", Route{agent.GUI, "vision.describe"}},
		{Gateway, "calendar__list_events", Route{agent.MCP, "mcp.calendar__list_events"}},
		{Gateway, "mystery", Route{agent.MCP, "mcp.wildawm__mystery"}},
		{"calendar", "list_events", Route{agent.MCP, "mcp.calendar__list_events"}},
		{"calendar", "shell", Route{agent.MCP, "mcp.calendar__shell"}},
	} {
		if got := r(c.server, c.tool); got != c.want {
			t.Errorf("%s %s: %+v, want %+v", c.server, c.tool, got, c.want)
		}
	}
}

func TestOpencodeConfig(t *testing.T) {
	b, err := OpencodeConfig(Run{ModelBaseURL: "http://gpu:8000/v1", Model: "Qwen/Qwen3-8B", APIKey: "secret",
		ContextTokens: 32768, OutputTokens: 4096,
		MCP: map[string]string{Gateway: "http://127.0.0.1:1/mcp", "calendar": "http://127.0.0.1:2/mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if strings.Contains(s, "secret") || !strings.Contains(s, `"apiKey": "{env:`+apiKeyEnv+`}"`) {
		t.Errorf("the API key must come from the environment:\n%s", s)
	}
	// Permission rules in order: deny everything, then allow the servers'.
	i, j, k := strings.Index(s, `"*": "deny"`), strings.Index(s, `"calendar_*": "allow"`), strings.Index(s, `"wildawm_*": "allow"`)
	if i < 0 || j < i || k < j {
		t.Errorf("permission rules out of order:\n%s", s)
	}
	var cfg struct {
		Autoupdate bool   `json:"autoupdate"`
		Share      string `json:"share"`
		Model      string `json:"model"`
		Provider   map[string]struct {
			NPM     string         `json:"npm"`
			Options map[string]any `json:"options"`
			Models  map[string]struct {
				Limit struct{ Context, Output int } `json:"limit"`
			} `json:"models"`
		} `json:"provider"`
		MCP map[string]struct {
			Type, URL string
		} `json:"mcp"`
	}
	if err := json.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	p := cfg.Provider[Provider]
	if cfg.Autoupdate || cfg.Share != "disabled" || cfg.Model != "wildawm/Qwen/Qwen3-8B" || p.NPM != "@ai-sdk/openai-compatible" ||
		p.Options["baseURL"] != "http://gpu:8000/v1" || p.Models["Qwen/Qwen3-8B"].Limit.Output != 4096 ||
		cfg.MCP["calendar"].Type != "remote" || cfg.MCP[Gateway].URL != "http://127.0.0.1:1/mcp" {
		t.Errorf("config:\n%s", s)
	}
	if _, err := OpencodeConfig(Run{Model: "m"}); err == nil {
		t.Error("a config without a base URL")
	}
}

// alive reports whether a process runs: it exists and is not a zombie
// (a killed orphan stays one until whoever adopted it reaps it).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	rest := string(b[bytes.LastIndexByte(b, ')')+1:])
	return !strings.HasPrefix(strings.TrimSpace(rest), "Z")
}

// groupAlive lists the running (not zombie) processes of a process group.
func groupAlive(pgid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil {
			continue
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			continue
		}
		// after "(comm)": state ppid pgrp ...
		f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
		if len(f) > 2 && f[0] != "Z" && f[2] == fmt.Sprint(pgid) {
			out = append(out, pid)
		}
	}
	return out
}

// script writes an executable shell script standing in for opencode.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "opencode")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func testRun(t *testing.T) Run {
	return Run{Prompt: "hi", ModelBaseURL: "http://127.0.0.1:1/v1", Model: "m",
		MCP: map[string]string{Gateway: "http://127.0.0.1:2/mcp"}, WorkDir: filepath.Join(t.TempDir(), "run"), Timeout: time.Minute}
}

func TestRunBadTranscript(t *testing.T) {
	bin := script(t, `echo '{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}'
echo 'permission requested: bash (*); auto-rejecting'
`)
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), testRun(t))
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 {
		t.Fatalf("err %v, want a LineError of line 2", err)
	}
	if res == nil || res.Transcript == "" {
		t.Fatal("no result to find the transcript by")
	}
	if b, _ := os.ReadFile(res.Transcript); !strings.Contains(string(b), "auto-rejecting") {
		t.Errorf("the raw transcript is not kept: %q", b)
	}
}

func TestRunExitStatus(t *testing.T) {
	bin := script(t, `cat >/dev/null
echo 'timestamp=x level=ERROR message="stream error" error.error="AI_APICallError: connection refused"' >&2
exit 3
`)
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), testRun(t))
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Outcome != agent.OutcomeInfra || tr.Failure != agent.FailInfra || !strings.Contains(tr.Error, "exit status 3") ||
		!strings.Contains(tr.Error, "connection refused") || res.ExitCode != 3 {
		t.Errorf("outcome %q (%q), error %q, exit %d", tr.Outcome, tr.Failure, tr.Error, res.ExitCode)
	}
	if _, err := agent.LoadTrajectory(res.TrajectoryPath); err != nil {
		t.Errorf("the trajectory is not saved: %v", err)
	}
	// The work directory holds one run.
	r := testRun(t)
	r.WorkDir = filepath.Dir(res.Transcript)
	if _, err := (&Opencode{Bin: bin}).Run(context.Background(), r); err == nil || !strings.Contains(err.Error(), "earlier run") {
		t.Errorf("a second run in the same directory: %v", err)
	}
}

// TestRunKillsProcessGroup checks, without opencode, that cancelling kills
// what the harness started too, and that its environment is its own.
func TestRunKillsProcessGroup(t *testing.T) {
	dir := t.TempDir()
	bin := script(t, `env > `+dir+`/env
sleep 300 &
echo $! > `+dir+`/child
echo '{"type":"step_start","sessionID":"s","part":{"type":"step-start"}}'
printf '{"type":"text","part":{"text":"unfinish'
wait
`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if b, err := os.ReadFile(dir + "/child"); err == nil && len(b) > 0 {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		cancel()
	}()
	r := testRun(t)
	r.APIKey = "sk-secret"
	res, err := (&Opencode{Bin: bin}).Run(ctx, r)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	b, err := os.ReadFile(dir + "/child")
	if err != nil {
		t.Fatal(err)
	}
	var child int
	fmt.Sscan(string(b), &child)
	if alive(child) || len(groupAlive(res.PID)) > 0 {
		t.Errorf("the harness's child %d outlived the cancel", child)
	}
	if tr := res.Trajectory; tr.Outcome != agent.OutcomeInfra || len(tr.Turns) != 1 {
		t.Errorf("outcome %q, turns %d: the cut last line should be dropped, the rest kept", tr.Outcome, len(tr.Turns))
	}
	env, _ := os.ReadFile(dir + "/env")
	home := filepath.Join(r.WorkDir, "home")
	for _, want := range []string{"HOME=" + home, "XDG_CONFIG_HOME=" + home + "/.config", "OPENCODE_CONFIG=" + filepath.Join(r.WorkDir, ConfigFile),
		"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_PROJECT_CONFIG=1", "npm_config_offline=true", apiKeyEnv + "=sk-secret"} {
		if !strings.Contains(string(env), want+"\n") {
			t.Errorf("the harness's environment lacks %s", want)
		}
	}
}
