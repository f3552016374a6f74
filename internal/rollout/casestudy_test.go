package rollout_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/taskgen/casestudytest"
	"github.com/wildawm/wildawm/internal/world"
)

// The case study's live tests: rollouts on real instances of the paper's
// case study (Chromium, bubblewrap, the MCP services), by a model through
// the harness, by opencode, cancelled, and the sessions' reach.

// shared is one prepared case study the tests share (each takes
// seconds); a test that changes its Env restores it.
var shared struct {
	once sync.Once
	f    *casestudytest.Fixture
}

func needTools(t *testing.T) {
	t.Helper()
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, "chromium is not installed (wildawm setup installs it): "+err.Error())
	}
	runtime.SkipUnlessInstancesRun(t)
}

func sharedCaseStudy(t *testing.T) *casestudytest.Fixture {
	t.Helper()
	needTools(t)
	shared.once.Do(func() { shared.f = casestudytest.New(t, "") })
	if shared.f == nil {
		t.Fatal("the shared case study could not be prepared (see the first test that tried)")
	}
	e := shared.f.Env
	newBrowser, before, artifacts, timeout := e.NewBrowser, e.BeforePolicy, e.Artifacts, e.Timeout
	t.Cleanup(func() {
		// What a test changed of the shared Env goes back.
		e.NewBrowser, e.BeforePolicy, e.Artifacts, e.Timeout = newBrowser, before, artifacts, timeout
	})
	return shared.f
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared.f != nil {
		shared.f.Close()
	}
	os.Exit(code)
}

var (
	textboxRE = regexp.MustCompile(`\[(\d+)\] textbox "([^"]*)"`)
	buttonRE  = regexp.MustCompile(`\[(\d+)\] button "([^"]*)"`)
	loginRE   = regexp.MustCompile("shop: user `([^`]+)`, password `([^`]+)`")
)

// lastTool is the content of the request's last tool message.
func lastTool(r fake.Request) string {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		if r.Messages[i].Role == "tool" {
			return r.Messages[i].Content
		}
	}
	return ""
}

// refOf finds the number of the element whose name contains name.
func refOf(re *regexp.Regexp, page, name string) string {
	for _, m := range re.FindAllStringSubmatch(page, -1) {
		if strings.Contains(strings.ToLower(m[2]), strings.ToLower(name)) {
			return m[1]
		}
	}
	return ""
}

// TestModelDrivesARealInstance: a fake model, through tool calls only,
// reads the logins file in the sandboxed shell, lists the message threads
// over MCP, logs in to the shop in Chromium by the numbers of the page's
// accessible text, and writes a file; the rollout's trajectory records it
// all by interface, turn and token ids, and the final world has the file.
func TestModelDrivesARealInstance(t *testing.T) {
	ctx := context.Background()
	p := sharedCaseStudy(t)
	var user, pass string
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		calls := func(cs ...fake.ToolCall) fake.Turn {
			return fake.Turn{ToolCalls: cs, PromptTokenIDs: []int{1, 2}, CompletionTokenIDs: []int{3}}
		}
		obs := lastTool(r)
		switch n := r.N; {
		case n == 1:
			return calls(fake.ToolCall{ID: "a", Name: "shell", Arguments: `{"command":"cat notes/logins.md"}`})
		case n == 2:
			m := loginRE.FindStringSubmatch(obs)
			if m == nil {
				return fake.Turn{Content: "no login found in: " + obs}
			}
			user, pass = m[1], m[2]
			return calls(fake.ToolCall{ID: "b", Name: "messages__list_threads", Arguments: `{"limit":5}`},
				fake.ToolCall{ID: "c", Name: "browser_navigate", Arguments: `{"url":"/login"}`})
		case n == 3:
			u, pw, btn := refOf(textboxRE, obs, "user"), refOf(textboxRE, obs, "password"), refOf(buttonRE, obs, "log in")
			if u == "" || pw == "" || btn == "" {
				return fake.Turn{Content: "no login form in: " + obs}
			}
			return calls(fake.ToolCall{ID: "d", Name: "browser_type", Arguments: fmt.Sprintf(`{"ref":%s,"text":%q}`, u, user)},
				fake.ToolCall{ID: "e", Name: "browser_type", Arguments: fmt.Sprintf(`{"ref":%s,"text":%q}`, pw, pass)},
				fake.ToolCall{ID: "f", Name: "browser_click", Arguments: fmt.Sprintf(`{"ref":%s}`, btn)})
		case n == 4:
			return calls(fake.ToolCall{ID: "g", Name: "write_file", Arguments: `{"path":"notes/harness.md","content":"logged in\n"}`})
		}
		return fake.Turn{Content: "Logged in and noted it."}
	})
	h := &agent.Harness{Model: srv.Client(t, nil), ModelName: "fake-model", TokenIDs: true}
	res, err := p.Env.Run(ctx, p.Task, rollout.Spec{ID: "model", Policy: policy.Model{Harness: h}})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Outcome != rollout.OutcomeDone || tr.Answer != "Logged in and noted it." || tr.Policy != "model:fake-model" {
		t.Fatalf("outcome %s (%s), answer %q, policy %s", tr.Outcome, tr.Error, tr.Answer, tr.Policy)
	}
	for _, s := range tr.Steps {
		if s.Error != "" {
			t.Errorf("step %d %s failed: %s", s.Index, s.Tool, s.Error)
		}
	}
	if got := tr.InterfacesUsed(); strings.Join(got, ",") != "cli,file,gui,mcp" {
		t.Fatalf("interfaces %v", got)
	}
	// After the click the page is the logged-in shop, not the login form.
	var after string
	for _, s := range tr.Steps {
		if s.Tool == "browser.snapshot" && s.Turn == 3 {
			after = s.Observation
		}
	}
	if after == "" || strings.Contains(after, `textbox "Password"`) || !strings.Contains(strings.ToLower(after), "log out") {
		t.Fatalf("the login did not go through; the page after it:\n%s", after)
	}
	if len(tr.Turns) != 5 || fmt.Sprint(tr.Turns[0].PromptTokenIDs) != "[1 2]" {
		t.Fatalf("turns %+v", tr.Turns)
	}
	dir, err := p.Env.Materializer.Lower(ctx, res.Final)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, world.HomeDir, "notes/harness.md")); err != nil || string(b) != "logged in\n" {
		t.Fatalf("the final world's notes/harness.md: %q, %v", b, err)
	}
	// A call that cannot be parsed ends the rollout as a format failure:
	// not retried, not judged, the world left as the model had it.
	bad := fake.New(t, fake.Turn{ToolCalls: []fake.ToolCall{{ID: "x", Name: "shell", Arguments: `{"command": "ls`}}})
	h = &agent.Harness{Model: bad.Client(t, nil), ModelName: "fake-model"}
	res, err = p.Env.Run(ctx, p.Task, rollout.Spec{ID: "malformed", Policy: policy.Model{Harness: h}})
	if err != nil {
		t.Fatal(err)
	}
	if tr := res.Trajectory; tr.Outcome != rollout.OutcomeFormat || tr.Failure != agent.FailFormat || tr.Attempts != 1 || tr.Countable() || len(tr.Steps) != 0 {
		t.Fatalf("malformed call: outcome %s, failure %s, attempts %d, %d steps", tr.Outcome, tr.Failure, tr.Attempts, len(tr.Steps))
	}
}

// trackedBrowser records whether its session closed it.
type trackedBrowser struct {
	rollout.Browser
	mu     sync.Mutex
	closed bool
}

func (b *trackedBrowser) Close(ctx context.Context) error {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	return b.Browser.Close(ctx)
}

// TestCancelTearsDownTheRollout: cancelling a rollout while its model
// waits in a long shell command stops the command, closes the session's
// browser context and its MCP sessions, and returns promptly.
func TestCancelTearsDownTheRollout(t *testing.T) {
	ctx := context.Background()
	p := sharedCaseStudy(t)
	var tabs []*trackedBrowser
	newTab := p.Env.NewBrowser
	p.Env.NewBrowser = func(ctx context.Context, origins []string) (rollout.Browser, error) {
		b, err := newTab(ctx, origins)
		if err != nil {
			return nil, err
		}
		tb := &trackedBrowser{Browser: b}
		tabs = append(tabs, tb)
		return tb, nil
	}
	var sess *rollout.Session
	var sandboxUID atomic.Int64
	p.Env.BeforePolicy = func(ctx context.Context, spec rollout.Spec, attempt int, inst *runtime.Instance, s *rollout.Session) {
		sess = s
		uid, _ := inst.SandboxIDs()
		sandboxUID.Store(int64(uid))
	}
	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{{ID: "a", Name: "browser_navigate", Arguments: `{"url":"/"}`}}},
		fake.Turn{ToolCalls: []fake.ToolCall{{ID: "b", Name: "shell", Arguments: `{"command":"sleep 300"}`}}},
	)
	h := &agent.Harness{Model: srv.Client(t, nil), ModelName: "fake-model"}
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := p.Env.Run(rctx, p.Task, rollout.Spec{ID: "cancel", Policy: policy.Model{Harness: h}})
		done <- err
	}()
	// Wait for the sleep to be running in the sandbox.
	deadline := time.Now().Add(60 * time.Second)
	for !sleeping(int(sandboxUID.Load())) {
		if time.Now().After(deadline) {
			t.Fatal("the shell command never started")
		}
		time.Sleep(50 * time.Millisecond)
	}
	start := time.Now()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Run after cancel: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Run did not return within 20s of the cancel")
	}
	t.Logf("returned %v after the cancel", time.Since(start))
	if len(tabs) != 1 || !tabs[0].closed {
		t.Fatalf("the browser context was not closed (%d tabs)", len(tabs))
	}
	if _, err := tabs[0].Browser.URL(ctx); err == nil {
		t.Fatal("the closed tab still answers")
	}
	for name, cs := range sess.Env.MCP {
		if err := cs.Ping(ctx, nil); err == nil {
			t.Fatalf("MCP session %s still answers after the cancel", name)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if sleeping(int(sandboxUID.Load())) {
		t.Fatal("the shell command outlived the rollout")
	}
}

// sleeping reports whether a "sleep 300" runs as uid.
func sleeping(uid int) bool {
	if uid == 0 {
		return false
	}
	out, _ := exec.Command("pgrep", "-u", fmt.Sprint(uid), "-f", "sleep 300").Output()
	return len(strings.TrimSpace(string(out))) > 0
}

// TestOpencodeDrivesARealInstance: the opencode CLI, its model the fake
// server, acts on a real instance through the gateway alone (the shell, an
// MCP service, Chromium, the files); the steps are the gateway's records,
// with opencode's turns, and the final world has the file it wrote.
func TestOpencodeDrivesARealInstance(t *testing.T) {
	bin, err := external.FindOpencode()
	if err != nil {
		runtime.SkipOutsideCI(t, err.Error())
	}
	ctx := context.Background()
	p := sharedCaseStudy(t)
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		tool := func(suffix string) string {
			for _, tl := range r.Tools {
				if strings.HasSuffix(tl.Name, suffix) {
					return tl.Name
				}
			}
			return "missing-" + suffix
		}
		acts := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" && len(m.ToolCalls) > 0 {
				acts++
			}
		}
		switch acts {
		case 0:
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "a", Name: tool("_shell"), Arguments: `{"command":"cat notes/logins.md"}`}}}
		case 1:
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "b", Name: tool("messages__list_threads"), Arguments: `{"limit":3}`}}}
		case 2:
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c", Name: tool("_browser_navigate"), Arguments: `{"url":"/login"}`}}}
		case 3:
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "d", Name: tool("_write_file"), Arguments: `{"path":"notes/opencode.md","content":"was here\n"}`}}}
		}
		return fake.Turn{Content: "All four done."}
	})
	pol := &policy.Opencode{Harness: external.Opencode{Bin: bin}, ModelBaseURL: srv.URL(), Model: fake.DefaultModel, OutputTokens: 1024,
		WorkDir: t.TempDir(), WallTime: 3 * time.Minute}
	res, err := p.Env.Run(ctx, p.Task, rollout.Spec{ID: "opencode", Policy: pol})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Outcome != rollout.OutcomeDone || tr.Answer != "All four done." || tr.Harness != external.HarnessName {
		t.Fatalf("outcome %s (%s), answer %q, harness %q", tr.Outcome, tr.Error, tr.Answer, tr.Harness)
	}
	var got []string
	for _, s := range tr.Steps {
		if s.Error != "" {
			t.Errorf("step %s: %s", s.Tool, s.Error)
		}
		got = append(got, s.Interface+":"+s.Tool)
	}
	if w := "cli:shell.run mcp:mcp.messages__list_threads gui:browser.open gui:browser.snapshot file:file.write"; strings.Join(got, " ") != w {
		t.Fatalf("steps %v, want %s", got, w)
	}
	if len(tr.Turns) < 5 || tr.Steps[0].Turn == 0 || !strings.Contains(tr.Steps[3].Observation, "textbox") {
		t.Fatalf("turns %d, first step's turn %d, login page %.200q", len(tr.Turns), tr.Steps[0].Turn, tr.Steps[3].Observation)
	}
	dir, err := p.Env.Materializer.Lower(ctx, res.Final)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dir, world.HomeDir, "notes/opencode.md")); err != nil || string(b) != "was here\n" {
		t.Fatalf("the final world's notes/opencode.md: %q, %v", b, err)
	}
}

// TestModelJudgesOnRealRollouts: the agent judge, its model the fake
// server, inspects a real rollout's final world with its read-only tools
// (the cart in the shop's database) and the LLM judge reads the real
// trajectory and V's evidence: the oracle's rollout is judged completed,
// the rollout that stops after the shortlist failed, as V says.
func TestModelJudgesOnRealRollouts(t *testing.T) {
	ctx := context.Background()
	p := sharedCaseStudy(t)
	w0, err := p.Env.Materializer.Lower(ctx, p.W0())
	if err != nil {
		t.Fatal(err)
	}
	// The judge's model looks at the cart, then decides from what it saw.
	agentModel := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if obs := lastTool(r); obs != "" {
			v := "failed"
			if strings.Contains(obs, catalog.CandidateWhite) {
				v = "completed"
			}
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"` + v + `","reason":"the cart: ` + strings.ReplaceAll(obs, `"`, `'`) + `"}`}}}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "q", Name: "sql", Arguments: `{"world":"final","db":"shop","query":"SELECT sku, qty FROM cart_items"}`}}}
	})
	llmModel := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		v := "failed"
		if strings.Contains(r.Messages[1].Content, "V=1") && strings.Contains(r.Messages[1].Content, "browser.click") {
			v = "completed"
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"` + v + `","reason":"read the trajectory"}`}}}
	})
	for _, c := range []struct {
		spec rollout.Spec
		want gate.Verdict
	}{
		{rollout.Spec{ID: "judged-oracle", Policy: policy.Oracle()}, gate.Completed},
		{rollout.Spec{ID: "judged-quitter", Policy: policy.Quitter()}, gate.Failed},
	} {
		res, err := p.Env.Run(ctx, p.Task, c.spec)
		if err != nil {
			t.Fatal(err)
		}
		v, err := p.Env.Verify(ctx, p.Task, p.VerifierDir, res.Final, res.Trajectory.Answer)
		if err != nil {
			t.Fatal(err)
		}
		final, err := p.Env.Materializer.Lower(ctx, res.Final)
		if err != nil {
			t.Fatal(err)
		}
		av, err := (&judge.AgentJudge{Model: agentModel.Client(t, nil)}).Judge(ctx, p.Task, w0, final, res.Trajectory.Answer, v, "")
		if err != nil {
			t.Fatal(err)
		}
		lv, _, err := (&judge.LLMJudge{Model: llmModel.Client(t, nil)}).Judge(ctx, p.Task, res.Trajectory, v)
		if err != nil {
			t.Fatal(err)
		}
		wantV := 0
		if c.want == gate.Completed {
			wantV = 1
		}
		if av.Verdict != c.want || lv != c.want || v.V != wantV {
			t.Fatalf("%s: V=%d, agent judge %s (%v), LLM judge %s; want %s", c.spec.ID, v.V, av.Verdict, av.Evidence, lv, c.want)
		}
	}
}

// TestSessionReachesEveryService: an agent's session exposes every MCP
// service of the instance, namespaced, not only the messages service.
func TestSessionReachesEveryService(t *testing.T) {
	ctx := context.Background()
	p := sharedCaseStudy(t)
	inst, err := p.Env.Start(ctx, p.W0(), "services")
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	sess, err := p.Env.Open(ctx, inst, &agent.Trajectory{Version: agent.TrajectoryVersion})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	served := rollout.Services(inst.Dir())
	if len(served) != 8 {
		t.Fatalf("the case study's world has %d services (%v), want all 8", len(served), served)
	}
	if got := sess.Env.Services(); !slices.Equal(got, slices.Sorted(slices.Values(served))) {
		t.Fatalf("the session reaches %v, want %v", got, served)
	}
	tools, err := sess.Env.ListTools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	adapterName := regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`) // OpenAI's and Anthropic's rule for tool names
	for _, tl := range tools {
		if !adapterName.MatchString(tl.Name) {
			t.Errorf("tool name %q is refused by model APIs (want %s)", tl.Name, adapterName)
		}
		svc, _, _ := strings.Cut(tl.Name, agent.ToolSep)
		per[svc]++
	}
	for _, svc := range served {
		if per[svc] == 0 {
			t.Errorf("no tools of %s in the session's list %v", svc, per)
		}
	}
	// A call to every service reaches it: each has a tool to list things.
	for _, tl := range tools {
		svc, name, _ := strings.Cut(tl.Name, agent.ToolSep)
		if per[svc] < 0 || !strings.HasPrefix(name, "list_") {
			continue
		}
		if _, err := sess.Env.CallTool(ctx, tl.Name, map[string]any{}); err != nil {
			t.Errorf("%s: %v", tl.Name, err)
		}
		per[svc] = -1
	}
	for svc, n := range per {
		if n >= 0 {
			t.Errorf("no list_ tool of %s was called", svc)
		}
	}
	if _, err := sess.Env.CallTool(ctx, "nosuch__list_things", nil); err == nil || !strings.Contains(err.Error(), "calendar") {
		t.Errorf("an unknown service: %v (want the error to list the services)", err)
	}
}

// TestRejectedActionsChangeNothing: actions the site, the service or the
// shell reject are error observations and leave the world as it was.
func TestRejectedActionsChangeNothing(t *testing.T) {
	ctx := context.Background()
	p := sharedCaseStudy(t)
	inst, err := p.Env.Start(ctx, p.W0(), "rejects")
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close(ctx)
	before, err := state.Hash(ctx, inst.Dir())
	if err != nil {
		t.Fatal(err)
	}
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion}
	sess, err := p.Env.Open(ctx, inst, traj)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close(ctx)
	env := sess.Env
	if _, err := env.CallTool(ctx, "messages__send_message", map[string]any{"thread": "dm-nobody", "body": "hi"}); err == nil {
		t.Error("send_message to an unknown thread succeeded")
	}
	if _, err := env.CallTool(ctx, "messages__send_message", map[string]any{"to": "Priya Mehta", "thread": "dm-priya-mehta", "body": "x"}); err == nil {
		t.Error("send_message with both thread and to succeeded")
	}
	if _, err := env.CallTool(ctx, "send_message", map[string]any{"body": "x"}); err == nil || !strings.Contains(err.Error(), "SERVICE__TOOL") {
		t.Errorf("an un-namespaced tool name: %v", err)
	}
	if _, err := env.CallTool(ctx, "messages__search_messages", map[string]any{"query": "'; DROP TABLE messages; --"}); err != nil {
		t.Errorf("search with SQL-looking text: %v", err)
	}
	if _, err := env.Run(ctx, "exit 3"); err == nil {
		t.Error("a failing command is not an error observation")
	}
	if _, err := env.Run(ctx, "rm -rf /usr/bin/python3 /etc/passwd"); err == nil {
		t.Error("removing system files succeeded")
	}
	// Not logged in: adding to the cart is refused.
	if err := env.Open(ctx, "/p/"+catalog.CandidateWhite); err != nil {
		t.Fatal(err)
	}
	env.Fill(ctx, "#qty", "500")
	env.Click(ctx, "#add-to-cart")
	if err := policy.Login(ctx, env, "alex.rivera", "wrong password"); err != nil {
		t.Fatal(err)
	}
	if err := env.Open(ctx, "/p/NO-SUCH-SKU"); err != nil {
		t.Fatal(err)
	}
	errors := 0
	for _, s := range traj.Steps {
		if s.Error != "" {
			errors++
		}
	}
	if errors < 4 {
		t.Errorf("want the rejected MCP and shell actions recorded as errors, got %d: %+v", errors, traj.Steps)
	}
	after, err := state.Hash(ctx, inst.Dir())
	if err != nil {
		t.Fatal(err)
	}
	if after != before {
		d, _ := state.Compare(ctx, p.Env.Materializer.CacheDir+"/"+p.W0().String(), inst.Dir())
		t.Fatalf("rejected actions changed the world: %s", d.First())
	}
}
