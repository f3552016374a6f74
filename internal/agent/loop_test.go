package agent

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/world"
)

// pageBrowser is a Browser over fixed pages: enough for the loop's tests
// (internal/browser/fake speaks HTTP to real sites).
type pageBrowser struct {
	pages   map[string]string // URL -> snapshot text
	url     string
	history []string
	clicked []string
	values  map[string]string
	images  map[string][]byte // selector -> image bytes
	closed  bool
}

func (b *pageBrowser) Navigate(ctx context.Context, url string) error {
	if _, ok := b.pages[url]; !ok {
		return fmt.Errorf("navigate to %s: 404", url)
	}
	if b.url != "" {
		b.history = append(b.history, b.url)
	}
	b.url = url
	return nil
}
func (b *pageBrowser) Click(ctx context.Context, sel string) error {
	b.clicked = append(b.clicked, sel)
	return nil
}
func (b *pageBrowser) SetValue(ctx context.Context, sel, v string) error {
	if b.values == nil {
		b.values = map[string]string{}
	}
	b.values[sel] = v
	return nil
}
func (b *pageBrowser) Select(ctx context.Context, sel, v string) error {
	return b.SetValue(ctx, sel, v)
}
func (b *pageBrowser) Submit(ctx context.Context, sel string) error { return b.Click(ctx, sel) }
func (b *pageBrowser) Text(ctx context.Context, sel string) (string, error) {
	return b.pages[b.url], nil
}
func (b *pageBrowser) ImageBytes(ctx context.Context, sel string) ([]byte, error) {
	if img, ok := b.images[sel]; ok {
		return img, nil
	}
	return nil, errors.New("no images here")
}
func (b *pageBrowser) HTML(ctx context.Context) (string, error) { return "<html></html>", nil }
func (b *pageBrowser) URL(ctx context.Context) (string, error)  { return b.url, nil }
func (b *pageBrowser) Snapshot(ctx context.Context) (string, error) {
	if b.url == "" {
		return "URL: about:blank", nil
	}
	return "URL: " + b.url + "\n" + b.pages[b.url], nil
}
func (b *pageBrowser) Scroll(ctx context.Context, dy int) error { return nil }
func (b *pageBrowser) Back(ctx context.Context) error {
	if len(b.history) == 0 {
		return errors.New("no previous page")
	}
	b.url, b.history = b.history[len(b.history)-1], b.history[:len(b.history)-1]
	return nil
}
func (b *pageBrowser) Screenshot(ctx context.Context) ([]byte, error) { return []byte("\x89PNG"), nil }

// testEnv is an Env with a page browser on http://site.test, a bash shell
// in a temporary home (the sandbox is internal/sandbox's business), the
// home's files, and the MCP sessions given.
func testEnv(t *testing.T, sessions map[string]*mcp.ClientSession) (*Env, *pageBrowser, string) {
	home := t.TempDir()
	b := &pageBrowser{pages: map[string]string{
		"http://site.test/":      `Title: Shop\n[1] link "Orders" -> /orders`,
		"http://site.test/login": `Title: Log in\n[1] textbox "Username"\n[2] button "Log in"`,
	}}
	env := &Env{Browser: b, BaseURL: "http://site.test", Sites: map[string]string{"shop": "http://site.test"}, MCP: sessions,
		Files: HomeFiles{Dir: home, UID: os.Getuid(), GID: os.Getgid()}, Traj: &Trajectory{Version: TrajectoryVersion},
		Shell: func(ctx context.Context, command string) (*sandbox.Result, error) {
			out, err := runBash(ctx, home, command)
			return out, err
		}}
	return env, b, home
}

func runBash(ctx context.Context, dir, command string) (*sandbox.Result, error) {
	cmd := execCommand(ctx, dir, command)
	out, err := cmd.Output()
	code := 0
	var ee interface{ ExitCode() int }
	if errors.As(err, &ee) {
		code, err = ee.ExitCode(), nil
	}
	return &sandbox.Result{Stdout: out, ExitCode: code}, err
}

// notesService is a one-tool MCP service in memory.
func notesService(t *testing.T) *mcp.ClientSession {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1"}, nil)
	type in struct {
		Query string `json:"query"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "search_notes", Description: "search the notes"}, func(ctx context.Context, req *mcp.CallToolRequest, a in) (*mcp.CallToolResult, any, error) {
		if a.Query == "" {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "query is empty"}}}, nil, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"notes":[{"title":"rack","body":"order 2"}]}`}}}, nil, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	if _, err := s.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

func call(id, name, args string) fake.ToolCall {
	return fake.ToolCall{ID: id, Name: name, Arguments: args}
}

// TestHarnessDrivesEveryInterface: a model's tool calls reach the browser,
// an MCP service, the shell and the files; each observation comes back as
// the tool message of its call; the answer ends the rollout; the
// trajectory has every step with its interface and turn, and every turn's
// token ids, logprobs and weight version.
func TestHarnessDrivesEveryInterface(t *testing.T) {
	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{
			call("c1", "browser_navigate", `{"url":"/login"}`),
			call("c2", "browser_type", `{"ref":1,"text":"ana"}`),
			call("c3", "notes__search_notes", `{"query":"rack"}`),
		}, PromptTokenIDs: []int{1, 2, 3}, CompletionTokenIDs: []int{4, 5}, Logprobs: []float64{-0.5, -0.25}},
		fake.Turn{ToolCalls: []fake.ToolCall{
			call("c4", "write_file", `{"path":"notes/plan.md","content":"order 2\n"}`),
			call("c5", "shell", `{"command":"cat notes/plan.md | tr a-z A-Z"}`),
			call("c6", "read_file", `{"path":"notes/missing.md"}`),
		}},
		fake.Turn{Content: "Ordered 2."},
	)
	env, b, home := testEnv(t, map[string]*mcp.ClientSession{"notes": notesService(t)})
	h := &Harness{Model: srv.Client(t, nil), ModelName: "test-model", TokenIDs: true, WeightVersion: "step-7"}
	answer, err := h.Run(context.Background(), env, "Order what the note says.", "")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "Ordered 2." {
		t.Fatalf("answer = %q", answer)
	}
	if got, _ := os.ReadFile(filepath.Join(home, "notes/plan.md")); string(got) != "order 2\n" {
		t.Fatalf("write_file wrote %q", got)
	}
	if b.values[Ref(1)] != "ana" {
		t.Fatalf("browser_type set %v", b.values)
	}
	tr := env.Traj
	var tools []string
	for _, s := range tr.Steps {
		tools = append(tools, fmt.Sprintf("%s:%s@%d", s.Interface, s.Tool, s.Turn))
	}
	want := "gui:browser.open@1 gui:browser.snapshot@1 gui:browser.fill@1 mcp:mcp.notes__search_notes@1 file:file.write@2 cli:shell.run@2 file:file.read@2"
	if strings.Join(tools, " ") != want {
		t.Fatalf("steps:\n got %s\nwant %s", strings.Join(tools, " "), want)
	}
	if s := tr.Steps[5]; s.Observation != "ORDER 2\n" || s.CallID != "c5" {
		t.Fatalf("shell step = %+v", s)
	}
	if s := tr.Steps[6]; !strings.Contains(s.Error, "does not exist") {
		t.Fatalf("read of a missing file: %+v", s)
	}
	// The observations came back, in call order, as tool messages.
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	var got []string
	for _, m := range reqs[2].Messages {
		if m.Role == "tool" {
			got = append(got, m.ToolCallID+"="+abbrev(m.Content, 50))
		}
	}
	if len(got) != 6 || !strings.HasPrefix(got[0], "c1=URL: http://site.test/login") || got[4] != "c5=ORDER 2\n" || !strings.HasPrefix(got[5], "c6=error: notes/missing.md does not exist") {
		t.Fatalf("tool messages: %q", got)
	}
	// The tools offered: the harness's own and the service's, namespaced.
	names := map[string]bool{}
	for _, tl := range reqs[0].Tools {
		names[tl.Name] = true
	}
	for _, n := range []string{"browser_navigate", "browser_read", "browser_click", "shell", "read_file", "write_file", "describe_image", "notes__search_notes"} {
		if !names[n] {
			t.Errorf("tool %s not offered (offered %v)", n, names)
		}
	}
	if !reqs[0].ReturnTokenIDs || !reqs[0].Logprobs {
		t.Errorf("token ids and logprobs not asked for")
	}
	if len(tr.Turns) != 3 || tr.Turns[0].Kind != "act" || fmt.Sprint(tr.Turns[0].PromptTokenIDs) != "[1 2 3]" ||
		fmt.Sprint(tr.Turns[0].CompletionTokenIDs) != "[4 5]" || fmt.Sprint(tr.Turns[0].Logprobs) != "[-0.5 -0.25]" || tr.Turns[0].WeightVersion != "step-7" {
		t.Fatalf("turns = %+v", tr.Turns)
	}
	if len(tr.Segments) != 1 || tr.Segments[0].FirstTurn != 1 || tr.Segments[0].LastTurn != 3 || tr.Harness != HarnessName || tr.Model != "test-model" {
		t.Fatalf("segments %+v harness %q model %q", tr.Segments, tr.Harness, tr.Model)
	}
	if ifs := tr.InterfacesUsed(); fmt.Sprint(ifs) != "[cli file gui mcp]" {
		t.Fatalf("interfaces %v", ifs)
	}
}

// TestHarnessMalformedCallIsFormatFailure: arguments that are not JSON end
// the rollout as a format failure, with the call kept in the turn and
// nothing run.
func TestHarnessMalformedCallIsFormatFailure(t *testing.T) {
	srv := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{call("c0", "write_file", `{"path":"x","content":"y"}`), call("c1", "shell", `{"command": "rm -rf notes`)}})
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: srv.Client(t, nil)}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("err = %v, want a format failure", err)
	}
	if len(env.Traj.Steps) != 0 {
		t.Fatalf("a call of the malformed turn ran: %+v", env.Traj.Steps)
	}
	if tc := env.Traj.Turns[0].ToolCalls; len(tc) != 2 || tc[1].Error == "" || tc[1].Arguments != `{"command": "rm -rf notes` {
		t.Fatalf("the malformed call was not kept: %+v", tc)
	}
}

// TestHarnessTextToolCallIsFormatFailure: a tool call written as text
// (a server without a tool-call parser) ends the rollout as a format
// failure naming the server flag, not as the final answer; an answer with
// inline reasoning is the answer without it.
func TestHarnessTextToolCallIsFormatFailure(t *testing.T) {
	for _, text := range []string{
		`<tool_call>{"name": "shell", "arguments": {"command": "ls"}}</tool_call>`,
		"```json\n{\"name\": \"shell\", \"arguments\": {\"command\": \"ls\"}}\n```",
	} {
		srv := fake.New(t, fake.Turn{Content: text})
		env, _, _ := testEnv(t, nil)
		ans, err := (&Harness{Model: srv.Client(t, nil)}).Run(context.Background(), env, "task", "")
		if !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "--tool-call-parser") {
			t.Errorf("%q: answer %q, err %v; want a format failure naming the parser flag", text, ans, err)
		}
	}
	srv := fake.New(t, fake.Turn{Content: "<think>Cafe Uno? No.</think>Bean There"})
	env, _, _ := testEnv(t, nil)
	ans, err := (&Harness{Model: srv.Client(t, nil)}).Run(context.Background(), env, "task", "")
	if err != nil || ans != "Bean There" || env.Traj.Turns[0].Reasoning != "Cafe Uno? No." {
		t.Errorf("answer %q, err %v, turn %+v; want the answer without its reasoning, the reasoning in the turn", ans, err, env.Traj.Turns[0])
	}
}

// TestHarnessWrongCallsAreObservations: an unknown tool, an unknown
// argument, a missing one, a wrong type and an off-site URL are errors the
// model sees and can correct, not the end of the rollout.
func TestHarnessWrongCallsAreObservations(t *testing.T) {
	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{
			call("c1", "browser_fly", `{}`),
			call("c2", "shell", `{"cmd":"ls"}`),
			call("c3", "browser_click", `{}`),
			call("c4", "browser_click", `{"ref":"two"}`),
			call("c5", "browser_navigate", `{"url":"http://evil.test/"}`),
			call("c6", "nosuch__tool", `{}`),
			call("c7", "browser_click", `{"ref":"2"}`),
		}},
		fake.Turn{Content: "done"},
	)
	env, b, _ := testEnv(t, nil)
	if _, err := (&Harness{Model: srv.Client(t, nil)}).Run(context.Background(), env, "task", ""); err != nil {
		t.Fatal(err)
	}
	wants := []string{`no tool "browser_fly"`, `no argument "cmd": it takes command`, `argument "ref" is missing`, `"ref" must be an integer`, `refused: "http://evil.test/"`, `no MCP service "nosuch"`}
	var msgs []string
	for _, m := range srv.Requests()[1].Messages {
		if m.Role == "tool" {
			msgs = append(msgs, m.Content)
		}
	}
	for i, w := range wants {
		if !strings.HasPrefix(msgs[i], "error: ") || !strings.Contains(msgs[i], w) {
			t.Errorf("call %d: observation %q, want an error with %q", i+1, msgs[i], w)
		}
	}
	// A quoted number is taken.
	if len(b.clicked) != 1 || b.clicked[0] != Ref(2) {
		t.Fatalf("clicked %v", b.clicked)
	}
}

// TestHarnessCompacts: a long conversation outgrows the context budget,
// the model summarises, and the next request starts a new segment from
// the task and the summary; every turn belongs to its segment.
func TestHarnessCompacts(t *testing.T) {
	n := 0
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		n++
		last := r.Messages[len(r.Messages)-1]
		if last.Role == "user" && strings.Contains(last.Content, "about to be cut") {
			if len(r.Tools) != 0 {
				t.Errorf("the compaction request offers tools")
			}
			return fake.Turn{Content: fmt.Sprintf("summary %d: counted to %d", n, n), Usage: model.Usage{PromptTokens: 900, CompletionTokens: 10}}
		}
		if n > 12 {
			return fake.Turn{Content: "finished", Usage: model.Usage{PromptTokens: 300, CompletionTokens: 2}}
		}
		// The prompt grows 150 tokens a turn.
		return fake.Turn{ToolCalls: []fake.ToolCall{call(fmt.Sprintf("c%d", n), "shell", `{"command":"echo step"}`)},
			Usage: model.Usage{PromptTokens: 150 * len(r.Messages), CompletionTokens: 20}}
	})
	env, _, _ := testEnv(t, nil)
	h := &Harness{Model: srv.Client(t, nil), ContextTokens: 1200, MaxTokens: 200}
	answer, err := h.Run(context.Background(), env, "count", "")
	if err != nil || answer != "finished" {
		t.Fatalf("answer %q, err %v", answer, err)
	}
	tr := env.Traj
	if len(tr.Compactions) == 0 {
		t.Fatal("no compaction")
	}
	if len(tr.Segments) != len(tr.Compactions)+1 {
		t.Fatalf("%d segments for %d compactions", len(tr.Segments), len(tr.Compactions))
	}
	reqs := srv.Requests()
	for i, c := range tr.Compactions {
		ct := tr.Turns[c.Turn-1]
		if ct.Kind != "compaction" || ct.Segment != i || c.Tokens+h.MaxTokens <= h.ContextTokens || !strings.HasPrefix(c.Summary, "summary") {
			t.Fatalf("compaction %d = %+v, turn %+v", i, c, ct)
		}
		seg := tr.Segments[i+1]
		if seg.Reason != "compaction" || seg.FirstTurn != c.Turn+1 || seg.Summary != c.Summary {
			t.Fatalf("segment %d = %+v after %+v", i+1, seg, c)
		}
		// The request after the compaction holds the system prompt, the
		// task and the summary, nothing else.
		next := reqs[c.Turn].Messages
		if len(next) != 3 || next[0].Role != "system" || next[1].Content != "count" || !strings.Contains(next[2].Content, c.Summary) {
			t.Fatalf("request after compaction %d: %+v", i, next)
		}
	}
	for _, turn := range tr.Turns {
		seg := tr.Segments[turn.Segment]
		if turn.Index < seg.FirstTurn || turn.Index > seg.LastTurn {
			t.Fatalf("turn %d (segment %d) outside %+v", turn.Index, turn.Segment, seg)
		}
	}
	// Each compaction came exactly at the first act turn after which the
	// context (the turn's usage and its one observation, "step\n", 2
	// tokens) left less than the completion's reserve: not a turn early,
	// not a turn late.
	compactAfter := map[int]bool{}
	for _, c := range tr.Compactions {
		compactAfter[c.AfterTurn] = true
	}
	for _, turn := range tr.Turns {
		if turn.Kind != "act" || len(turn.ToolCalls) == 0 {
			continue
		}
		over := turn.PromptTokens+turn.CompletionTokens+2+h.MaxTokens > h.ContextTokens
		if over != compactAfter[turn.Index] {
			t.Fatalf("turn %d: %d+%d tokens, compaction after it %t, want %t", turn.Index, turn.PromptTokens, turn.CompletionTokens, compactAfter[turn.Index], over)
		}
	}
}

// TestHarnessBudgets: the turn budget and the wall-time budget end a
// rollout as ErrBudget.
func TestHarnessBudgets(t *testing.T) {
	loop := func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{call("c", "browser_read", `{}`)}}
	}
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: fake.NewResponder(t, loop).Client(t, nil), MaxTurns: 3}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrBudget) || len(env.Traj.Turns) != 3 {
		t.Fatalf("turn budget: err %v after %d turns", err, len(env.Traj.Turns))
	}
	slow := fake.NewResponder(t, func(r fake.Request) fake.Turn { t := loop(r); t.Delay = 300 * time.Millisecond; return t })
	env, _, _ = testEnv(t, nil)
	start := time.Now()
	_, err = (&Harness{Model: slow.Client(t, nil), WallTime: 500 * time.Millisecond}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrBudget) || time.Since(start) > 5*time.Second {
		t.Fatalf("wall budget: err %v after %v", err, time.Since(start))
	}
}

// TestHarnessBudgetInATool: the wall time runs out during a shell command
// (the command is killed, the rollout ends as budget); the caller's cancel
// during a tool that then succeeds ends it as cancelled, never as an
// answer.
func TestHarnessBudgetInATool(t *testing.T) {
	sleep := func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{call("s", "shell", `{"command":"sleep 5"}`)}}
	}
	env, _, _ := testEnv(t, nil)
	start := time.Now()
	_, err := (&Harness{Model: fake.NewResponder(t, sleep).Client(t, nil), WallTime: 400 * time.Millisecond}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrBudget) || time.Since(start) > 3*time.Second {
		t.Fatalf("err %v after %v", err, time.Since(start))
	}
	ctx, cancel := context.WithCancel(context.Background())
	env, _, _ = testEnv(t, nil)
	env.Shell = func(context.Context, string) (*sandbox.Result, error) {
		cancel() // the caller gives up while the command runs; it still ends well
		return &sandbox.Result{Stdout: []byte("ok\n")}, nil
	}
	answer, err := (&Harness{Model: fake.NewResponder(t, sleep).Client(t, nil)}).Run(ctx, env, "task", "")
	if !errors.Is(err, context.Canceled) || answer != "" {
		t.Fatalf("after a cancel: answer %q, err %v", answer, err)
	}
}

// TestHarnessRefusesImpossibleBudgets: a context budget that cannot hold
// two completions is an error naming both, before any request.
func TestHarnessRefusesImpossibleBudgets(t *testing.T) {
	srv := fake.New(t)
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: srv.Client(t, nil), ContextTokens: 4096, MaxTokens: 4096}).Run(context.Background(), env, "task", "")
	if err == nil || !strings.Contains(err.Error(), "--context-tokens") || !strings.Contains(err.Error(), "--max-tokens") || len(srv.Requests()) != 0 {
		t.Fatalf("err %v, %d requests", err, len(srv.Requests()))
	}
}

// TestHomeFilesStayHome: no path, absolute path or symlink leads the file
// tools out of the home, for reading or writing; a replaced file keeps its
// mode; a long file reads in parts.
func TestHomeFilesStayHome(t *testing.T) {
	env, _, home := testEnv(t, nil)
	outside := t.TempDir()
	os.WriteFile(filepath.Join(outside, "secret"), []byte("s3cret"), 0o644)
	os.Symlink(filepath.Join(outside, "secret"), filepath.Join(home, "link"))
	os.Symlink(outside, filepath.Join(home, "dirlink"))
	ctx := context.Background()
	for _, p := range []string{"../secret", "/etc/passwd", "link", "dirlink/secret", "a/../../secret"} {
		if obs, err := env.Call(ctx, "read_file", fmt.Sprintf(`{"path":%q}`, p)); err == nil || strings.Contains(obs, "s3cret") || strings.Contains(obs, "root:") {
			t.Errorf("read %s: %q, %v", p, obs, err)
		}
	}
	for _, p := range []string{"../x", "/tmp/x", "dirlink/x"} {
		if _, err := env.Call(ctx, "write_file", fmt.Sprintf(`{"path":%q,"content":"pwned"}`, p)); err == nil {
			t.Errorf("write %s succeeded", p)
		}
	}
	// Writing a symlink's name replaces the link with a file of the home.
	if _, err := env.Call(ctx, "write_file", `{"path":"link","content":"mine"}`); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Lstat(filepath.Join(home, "link")); !st.Mode().IsRegular() || st.Mode().Perm() != 0o644 {
		t.Fatalf("link after the write: %v", st.Mode())
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret")); string(b) != "s3cret" {
		t.Fatalf("a write went through a symlink: %q", b)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 1 {
		t.Fatalf("a write left the home: %v", entries)
	}
	os.WriteFile(filepath.Join(home, "run.sh"), []byte("#!/bin/sh\n"), 0o755)
	if _, err := env.Call(ctx, "write_file", `{"path":"run.sh","content":"#!/bin/sh\necho hi\n"}`); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(filepath.Join(home, "run.sh")); st.Mode().Perm() != 0o755 {
		t.Fatalf("the replaced script's mode is %v", st.Mode().Perm())
	}
	long := strings.Repeat("é", 3000) // 6000 bytes, two bytes a character
	os.WriteFile(filepath.Join(home, "long.txt"), []byte(long), 0o644)
	first, err := env.Call(ctx, "read_file", `{"path":"long.txt"}`)
	if err != nil || !strings.Contains(first, "read on with offset") || !utf8.ValidString(first) {
		t.Fatalf("first part: %v %.80q", err, first)
	}
	var next int
	fmt.Sscanf(first[strings.LastIndex(first, "offset ")+7:], "%d", &next)
	rest, err := env.Call(ctx, "read_file", fmt.Sprintf(`{"path":"long.txt","offset":%d}`, next))
	if err != nil || first[:next]+rest != long {
		t.Fatalf("the two parts are not the file: %d + %d bytes, %v", next, len(rest), err)
	}
}

// TestHarnessModelFailureIsInfra: a model server that fails after its
// retries is the harness's failure, not the agent's.
func TestHarnessModelFailureIsInfra(t *testing.T) {
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Status: 503, Error: "overloaded"} })
	env, _, _ := testEnv(t, nil)
	_, err := (&Harness{Model: srv.Client(t, &model.Options{MaxRetries: 1})}).Run(context.Background(), env, "task", "")
	if !errors.Is(err, ErrInfra) || !strings.Contains(err.Error(), "overloaded") {
		t.Fatalf("err = %v", err)
	}
}

// TestGatewayServesTheTools: an MCP client of the gateway reaches the same
// tools, recorded as the same steps; a refused call is a tool error.
func TestGatewayServesTheTools(t *testing.T) {
	env, _, _ := testEnv(t, map[string]*mcp.ClientSession{"notes": notesService(t)})
	ctx := context.Background()
	g, err := NewGateway(ctx, env, true)
	if err != nil {
		t.Fatal(err)
	}
	ct, st := mcp.NewInMemoryTransports()
	if _, err := g.Server().Connect(ctx, st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "cli", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lt.Tools) != len(builtins)+1 {
		t.Fatalf("%d tools", len(lt.Tools))
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "echo hi"}})
	if err != nil || res.IsError || res.Content[0].(*mcp.TextContent).Text != "hi\n" {
		t.Fatalf("shell: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__search_notes", Arguments: map[string]any{"query": "rack"}})
	if err != nil || res.IsError {
		t.Fatalf("service: %v %+v", err, res)
	}
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "browser_navigate", Arguments: map[string]any{"url": "file:///etc/passwd"}})
	if err != nil || !res.IsError {
		t.Fatalf("off-site navigation: %v %+v", err, res)
	}
	steps := g.Steps()
	if len(steps) != 3 || steps[0].Interface != CLI || steps[1].Interface != MCP || steps[2].Error == "" {
		b, _ := json.Marshal(steps)
		t.Fatalf("steps %s", b)
	}
	if calls := g.Calls(); len(calls) != 3 || calls[2].Tool != "browser_navigate" || calls[2].First != 2 || calls[2].End != 3 {
		t.Fatalf("calls %+v", calls)
	}
	// The harness failing under a call is a protocol error to the client
	// and the rollout's failure, whatever the client does with it.
	if g.Err() != nil {
		t.Fatalf("Err before any failure: %v", g.Err())
	}
	env.Shell = func(context.Context, string) (*sandbox.Result, error) { return nil, errors.New("bwrap died") }
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "shell", Arguments: map[string]any{"command": "true"}}); err == nil {
		t.Fatal("an infrastructure failure reached the client as a tool result")
	}
	if err := g.Err(); !errors.Is(err, ErrInfra) {
		t.Fatalf("Err = %v", err)
	}
	g.Close()
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "read_file", Arguments: map[string]any{"path": "x"}})
	if err == nil && !res.IsError {
		t.Fatal("a call after Close ran")
	}
	if n := len(g.Steps()); n != 4 {
		t.Fatalf("%d steps after Close, want the 4 before it", n)
	}
}

func execCommand(ctx context.Context, dir, command string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", command)
	cmd.Dir = dir
	return cmd
}

// TestVisionTools: describe_image reads an image file of the home with the
// offline analyser by default, and with ModelVision sends the picture to a
// vision model as an image part and returns its words.
func TestVisionTools(t *testing.T) {
	env, _, home := testEnv(t, nil)
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for y := range 30 {
		for x := range 40 {
			c := color.RGBA{250, 250, 250, 255} // the background
			if x > 10 && x < 30 && y > 8 && y < 22 {
				c = color.RGBA{200, 40, 40, 255} // a red body
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	png.Encode(&buf, img)
	os.WriteFile(filepath.Join(home, "photo.png"), buf.Bytes(), 0o644)
	obs, err := env.Call(context.Background(), "describe_image", `{"path":"photo.png"}`)
	if err != nil || !strings.Contains(obs, "red") {
		t.Fatalf("offline: %q, %v", obs, err)
	}
	srv := fake.New(t, fake.Turn{Content: "A red box on a white ground."})
	env.Describe = ModelVision(srv.Client(t, nil))
	obs, err = env.Call(context.Background(), "describe_image", `{"path":"photo.png"}`)
	if err != nil || obs != "A red box on a white ground." {
		t.Fatalf("model: %q, %v", obs, err)
	}
	raw := string(srv.Requests()[0].Messages[0].RawContent)
	if !strings.Contains(raw, `"image_url"`) || !strings.Contains(raw, "data:image/png;base64,"+base64.StdEncoding.EncodeToString(buf.Bytes())[:40]) {
		t.Fatalf("the request carried no image part: %.300s", raw)
	}
	if _, err := env.Call(context.Background(), "describe_image", `{}`); err == nil {
		t.Fatal("describe_image without ref or path")
	}
}

// TestHarnessOnTheShopWithoutChromium: the fake browser (HTTP, no
// Chromium, no root) serves the harness the real shop: a model logs in by
// the numbers of the page's text and the shop answers as logged in.
func TestHarnessOnTheShopWithoutChromium(t *testing.T) {
	catDir := catalog.WriteTest(t)
	w := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	s, err := shop.New(shop.Options{CatalogDir: catDir, WorldDir: w, Clock: world.FixedClock(time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	site := httptest.NewServer(s.Handler())
	defer site.Close()
	fb, err := fakebrowser.New(fakebrowser.Options{AllowOrigins: []string{site.URL}})
	if err != nil {
		t.Fatal(err)
	}
	ref := func(page, kind, name string) string {
		m := regexp.MustCompile(`\[(\d+)\] ` + kind + ` "` + name).FindStringSubmatch(page)
		if m == nil {
			return "0"
		}
		return m[1]
	}
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		page := ""
		for _, m := range r.Messages {
			if m.Role == "tool" {
				page = m.Content
			}
		}
		switch r.N {
		case 1:
			return fake.Turn{ToolCalls: []fake.ToolCall{call("a", "browser_navigate", `{"url":"/login"}`)}}
		case 2:
			return fake.Turn{ToolCalls: []fake.ToolCall{
				call("b", "browser_type", fmt.Sprintf(`{"ref":%s,"text":%q}`, ref(page, "textbox", "Username"), shop.TestUser)),
				call("c", "browser_type", fmt.Sprintf(`{"ref":%s,"text":%q}`, ref(page, "textbox", "Password"), shop.TestPassword)),
				call("d", "browser_click", fmt.Sprintf(`{"ref":%s}`, ref(page, "button", "Log in")))}}
		}
		return fake.Turn{Content: "logged in"}
	})
	env := &Env{Browser: fb, BaseURL: site.URL, Sites: map[string]string{"shop": site.URL}, Traj: &Trajectory{Version: TrajectoryVersion}}
	if _, err := (&Harness{Model: srv.Client(t, nil)}).Run(context.Background(), env, "log in", ""); err != nil {
		t.Fatal(err)
	}
	last := env.Traj.Steps[len(env.Traj.Steps)-1]
	for _, s := range env.Traj.Steps {
		if s.Error != "" {
			t.Fatalf("step %s: %s", s.Tool, s.Error)
		}
	}
	if last.Tool != "browser.snapshot" || !strings.Contains(strings.ToLower(last.Observation), "log out") {
		t.Fatalf("after the login the page is:\n%s", last.Observation)
	}
}
