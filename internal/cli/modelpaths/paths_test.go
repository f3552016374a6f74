package modelpaths

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/cli"
	"github.com/wildawm/wildawm/internal/eval"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/trainer"
)

// The model paths end to end: every model flag of the command line
// through to its product, against a model server of which one chat in N
// fails the way a real one does (a 503 from its proxy, a reply cut
// mid-way). With retries every failure is retried and the product is the
// healthy server's; without, the command still finishes, records the
// failure as infrastructure (never as the task's quality), keeps what it
// finished, and a rerun against a healthy server completes.

// flakyEvery is the N of "one chat in N fails".
const flakyEvery = 4

// flaky answers chats with respond, except every nth, which fails in a way
// the client retries: alternately an HTTP 503 "no healthy upstream" and
// respond's reply cut mid-way (HTTP 200). A request that failed once is
// answered the next time it comes (the same body: the client's retry), so
// one retry always recovers it whatever the interleaving of parallel
// rollouts.
// respond must answer from the request alone (a retried request gets the
// same answer).
type flaky struct {
	n int64
	// Chats from down to up fail, whatever they are: an outage.
	down, up int64
	respond  func(fake.Request) fake.Turn
	calls    atomic.Int64
	fails    atomic.Int64
	retried  atomic.Int64 // requests sent again after they failed: the client's retries
	healthy  atomic.Bool
	mu       sync.Mutex
	failed   map[string]bool
}

func newFlaky(n int64, respond func(fake.Request) fake.Turn) *flaky {
	return &flaky{n: n, respond: respond, failed: map[string]bool{}}
}

// newOutage is a server whose chats from the nth fail, k of them, the way
// flaky's do, retries and all; it answers the others with respond.
func newOutage(n, k int64, respond func(fake.Request) fake.Turn) *flaky {
	return &flaky{down: n, up: n + k - 1, respond: respond, failed: map[string]bool{}}
}

// server starts the fake model server that f answers, and returns it with
// its model spec.
func (f *flaky) server(t *testing.T) (*fake.Server, string) {
	srv := fake.NewResponder(t, f.turn)
	return srv, srv.URL() + "#" + fake.DefaultModel
}

func (f *flaky) turn(r fake.Request) fake.Turn {
	call := f.calls.Add(1)
	f.mu.Lock()
	retry := f.failed[string(r.Body)]
	f.mu.Unlock()
	if retry {
		f.retried.Add(1)
	}
	switch {
	case f.healthy.Load():
		return f.respond(r)
	case f.down <= call && call <= f.up:
	case retry || f.n == 0 || call%f.n != 0:
		return f.respond(r)
	}
	f.mu.Lock()
	f.failed[string(r.Body)] = true
	f.mu.Unlock()
	return f.fail(r)
}

// fail is a failure the client retries: alternately a 503 and the reply
// cut mid-way.
func (f *flaky) fail(r fake.Request) fake.Turn {
	if f.fails.Add(1)%2 == 1 {
		return fake.Turn{Status: 503, Error: "no healthy upstream"}
	}
	t := f.respond(r)
	t.CutAfter = 40
	return t
}

// hasTool reports whether the request offers a tool of that name.
func hasTool(r fake.Request, name string) bool {
	return slices.ContainsFunc(r.Tools, func(tl fake.Tool) bool { return tl.Name == name })
}

// giveUp is an agent that reads its notes, then says it could not finish;
// as a judge (the request offers the verdict tool) it says the task
// failed.
func giveUp(r fake.Request) fake.Turn {
	if hasTool(r, "verdict") {
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"failed","reason":"the task is not done"}`}}}
	}
	if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
		return fake.Turn{Content: "I read my notes and could not finish this task."}
	}
	return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_file", Arguments: `{"path":"notes/logins.md"}`}}}
}

// copyTask copies the task directory dir to a sibling named name, so that
// one task is gated afresh several times.
func copyTask(t *testing.T, dir, name string) string {
	t.Helper()
	to := filepath.Join(filepath.Dir(dir), name)
	if err := os.CopyFS(to, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	return to
}

// gateProduct is what a gating decided, apart from its timings: the
// gates' results and each rollout's outcome, verdicts and judges' errors.
func gateProduct(t *testing.T, dir string) (*pool.Outcome, string) {
	t.Helper()
	o, err := pool.LoadOutcome(dir)
	if err != nil {
		t.Fatalf("no outcome in %s: %v", dir, err)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "accepted %t\n", o.Accepted)
	for _, g := range o.Report.Gates {
		fmt.Fprintf(&b, "gate %s passed %t verdict %s\n", g.Name, g.Passed, g.Verdict)
	}
	for _, r := range o.Rollouts {
		fmt.Fprintf(&b, "rollout %s %s outcome %s failure %s V %d (%d/%d) llm %s agent %s steps %d judge error %q\n",
			r.ID, r.Policy, r.Outcome, r.Failure, r.V, r.Passed, r.Total, r.VLLM, r.VAgent, r.Steps, r.JudgeError)
	}
	return o, b.String()
}

// TestModelPathGate: `gate --ensemble-model --judge-model` against one
// flaky server. With --model-retries 2 the outcome is the healthy
// server's, no rollout without a verdict, no rejection for
// infrastructure; with --model-retries 0 the gating still ends with an
// outcome, its failures recorded as infrastructure (a rollout's
// infrastructure failure or a judge's error, never the task's quality),
// and gating again with the server healthy clears them.
func TestModelPathGate(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	task := f.TaskDirs["model-pick"]
	gate := func(dir, spec, retries string) (string, error) {
		_, stderr, err := run(t, t.TempDir(), "gate", "--dir", f.Dir, "--task", dir, "--fake-browser", "--max-revisions", "0",
			"--ensemble-model", spec, "--judge-model", spec, "--model-retries", retries, "--model-backoff", "1ms")
		if err != nil && !strings.Contains(err.Error(), "rejected") {
			t.Fatalf("gate %s (--model-retries %s): %v\n%s", dir, retries, err, stderr)
		}
		return stderr, err
	}
	healthyDir, retriedDir, unretriedDir := copyTask(t, task, "healthy"), copyTask(t, task, "retried"), copyTask(t, task, "unretried")

	healthy := newFlaky(flakyEvery, giveUp)
	healthy.healthy.Store(true)
	_, spec := healthy.server(t)
	gate(healthyDir, spec, "0")
	_, want := gateProduct(t, healthyDir)

	fl := newFlaky(flakyEvery, giveUp)
	srv, spec := fl.server(t)
	gate(retriedDir, spec, "2")
	o, got := gateProduct(t, retriedDir)
	if fl.fails.Load() == 0 {
		t.Fatalf("the flaky server failed no chat of %d", len(srv.Chats()))
	}
	if got != want {
		t.Errorf("gated with %d of %d chats failed and retried:\n%s\nwith a healthy server:\n%s", fl.fails.Load(), len(srv.Chats()), got, want)
	}
	if infra := o.InfraRejected(); len(infra) != 0 {
		t.Errorf("rejected for infrastructure by %v though every failure was retried", infra)
	}
	t.Logf("retried: %d failed chats of %d", fl.fails.Load(), len(srv.Chats()))

	fl = newFlaky(flakyEvery, giveUp)
	srv, spec = fl.server(t)
	stderr, _ := gate(unretriedDir, spec, "0")
	o, got = gateProduct(t, unretriedDir)
	if fl.fails.Load() == 0 {
		t.Fatalf("the flaky server failed no chat of %d", len(srv.Chats()))
	}
	judged, infra := 0, 0
	for _, r := range o.Rollouts {
		switch {
		case r.JudgeError != "":
			judged++
		case agent.FailureOf(r.Outcome) == agent.FailInfra:
			infra++
		}
	}
	t.Logf("unretried: %d failed chats of %d; %d rollouts without a verdict, %d failed on the infrastructure; infrastructure rejections %v",
		fl.fails.Load(), len(srv.Chats()), judged, infra, o.InfraRejected())
	if judged+infra == 0 {
		t.Errorf("%d chats failed unretried and no rollout records it:\n%s\n%s", fl.fails.Load(), got, stderr)
	}
	if len(o.InfraRejected()) == 0 {
		t.Errorf("rejected by %v with failed chats unretried; want a rejection for infrastructure:\n%s", o.Report.FailedGates(), got)
	}
	fl.healthy.Store(true)
	gate(unretriedDir, spec, "0")
	if _, got = gateProduct(t, unretriedDir); got != want {
		t.Errorf("gated again with the server healthy:\n%s\nwant:\n%s", got, want)
	}
}

// sandboxDir is a directory the sandbox's uids reach (t.TempDir's parents
// are private), removed at the test's end.
func sandboxDir(t *testing.T) string {
	t.Helper()
	root, err := os.MkdirTemp("", "wildawm-modelpaths-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(root) })
	os.Chmod(root, 0o755)
	return root
}

// evalProduct is what an evaluation found, apart from its timings: each
// rollout's verdict and outcome, in order, and by task and index.
func evalProduct(t *testing.T, out string) (*eval.Report, string, map[string]string) {
	t.Helper()
	rep, err := eval.Load(filepath.Join(out, "eval.json"))
	if err != nil {
		t.Fatalf("no report in %s: %v", out, err)
	}
	rs := slices.Clone(rep.Rollouts)
	slices.SortFunc(rs, func(a, b eval.Record) int { return cmp.Or(strings.Compare(a.Task, b.Task), a.Index-b.Index) })
	var b strings.Builder
	fmt.Fprintf(&b, "complete %t, %d counted, %d infra, %d setup\n", rep.Complete, rep.Overall.Counted, rep.Overall.Infra, rep.Overall.Setup)
	by := map[string]string{}
	for _, r := range rs {
		line := fmt.Sprintf("%s #%d %s V %d (%d/%d) outcome %s failure %s steps %d\n", r.Task, r.Index, r.Policy, r.V, r.Passed, r.Total, r.Outcome, r.Failure, r.Steps)
		b.WriteString(line)
		by[fmt.Sprintf("%s #%d", r.Task, r.Index)] = line
	}
	return rep, b.String(), by
}

// TestModelPathEval: `eval --agent MODEL` against a flaky server. With
// --model-retries 2 the report is the healthy server's and the command
// succeeds; with --model-retries 0 it still finishes, counts the rollouts
// the infrastructure failed apart from the rates, and fails exactly when
// one stayed failed, saying so; the same command against a healthy server
// then runs only those.
func TestModelPathEval(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, func(string) string { return pool.SplitVal })
	root := sandboxDir(t)
	st := t.TempDir()
	evalArgs := func(spec, out, retries, parallel string) []string {
		return []string{"eval", "--dir", f.Dir, "--split", "val", "--agent", spec, "-k", "4", "--parallel", parallel, "--fake-browser",
			"--out", filepath.Join(root, out), "--model-retries", retries, "--model-backoff", "1ms"}
	}

	healthy := newFlaky(flakyEvery, giveUp)
	healthy.healthy.Store(true)
	_, spec := healthy.server(t)
	mustRun(t, st, evalArgs(spec, "healthy", "0", "2")...)
	_, want, wantBy := evalProduct(t, filepath.Join(root, "healthy"))

	fl := newFlaky(flakyEvery, giveUp)
	srv, spec := fl.server(t)
	mustRun(t, st, evalArgs(spec, "retried", "2", "2")...)
	if _, got, _ := evalProduct(t, filepath.Join(root, "retried")); got != want {
		t.Errorf("evaluated with %d of %d chats failed and retried:\n%s\nwith a healthy server:\n%s", fl.fails.Load(), len(srv.Chats()), got, want)
	}
	t.Logf("retried: %d failed chats of %d", fl.fails.Load(), len(srv.Chats()))

	// Unretried, the rollouts' own attempts (rollout.MaxAttempts) may
	// still recover: whatever is lost is counted apart, and the command
	// fails exactly when something was.
	fl = newFlaky(flakyEvery, giveUp)
	_, spec = fl.server(t)
	unretried(t, st, evalArgs(spec, "unretried", "0", "2"), filepath.Join(root, "unretried"), fl, want, wantBy)

	// An outage of the first three chats, one rollout at a time: the
	// first rollout fails on the infrastructure in its three attempts,
	// the others finish.
	fl = newOutage(1, rollout.MaxAttempts, giveUp)
	_, spec = fl.server(t)
	if lost := unretried(t, st, evalArgs(spec, "outage", "0", "1"), filepath.Join(root, "outage"), fl, want, wantBy); lost != 1 {
		t.Errorf("%d rollouts lost to an outage of %d chats, want 1", lost, rollout.MaxAttempts)
	}
}

// unretried runs an evaluation against fl without retries and checks what
// it lost, then runs it again with the server healthy; it returns how many
// rollouts the first run lost.
func unretried(t *testing.T, st string, args []string, out string, fl *flaky, want string, wantBy map[string]string) int {
	t.Helper()
	_, stderr, err := run(t, st, args...)
	rep, got, gotBy := evalProduct(t, out)
	t.Logf("%s: %d failed chats of %d: %v\n%s", filepath.Base(out), fl.fails.Load(), fl.calls.Load(), err, got)
	if fl.fails.Load() == 0 {
		t.Fatal("the flaky server failed no chat")
	}
	lost := rep.Overall.Infra + rep.Overall.Setup
	switch {
	case lost == 0 && err != nil:
		t.Errorf("every rollout counted, yet eval failed: %v\n%s", err, stderr)
	case lost > 0 && (err == nil || !strings.Contains(err.Error(), fmt.Sprintf("%d of %d rollouts failed on the infrastructure", lost, rep.Overall.Rollouts)) || !strings.Contains(err.Error(), "run the same command again")):
		t.Errorf("%d rollouts lost to the infrastructure; eval says %v", lost, err)
	}
	for _, r := range rep.Rollouts {
		key := fmt.Sprintf("%s #%d", r.Task, r.Index)
		if r.Counted() && gotBy[key] != wantBy[key] {
			t.Errorf("a rollout with failed chats counted as another result than the healthy server's: %s want %s", gotBy[key], wantBy[key])
		}
		if !r.Counted() && r.Failure != agent.FailInfra {
			t.Errorf("rollout %s lost as %s, not the infrastructure's: %s", key, r.Failure, r.Error)
		}
	}
	fl.healthy.Store(true)
	_, stderr = mustRunErr(t, st, args...)
	if !strings.Contains(stderr, fmt.Sprintf("%d to run, %d kept", lost, rep.Overall.Rollouts-lost)) {
		t.Errorf("rerun with the server healthy:\n%s", stderr)
	}
	if _, got, _ = evalProduct(t, out); got != want {
		t.Errorf("evaluated again with the server healthy:\n%s\nwant:\n%s", got, want)
	}
	return lost
}

// mustRunErr is mustRun returning stderr too.
func mustRunErr(t *testing.T, storeDir string, args ...string) (string, string) {
	t.Helper()
	out, stderr, err := run(t, storeDir, args...)
	if err != nil {
		t.Fatalf("wildawm %s: %v\nstderr: %s", strings.Join(args, " "), err, stderr)
	}
	return out, stderr
}

// serverURL is a fake server's URL in a text.
var serverURL = regexp.MustCompile(`http://127\.0\.0\.1:[0-9]+/v1`)

// rateProduct is what a rating decided, apart from when and against which
// server: pool.json's ratings and the rollouts stored.
func rateProduct(t *testing.T, f *pooltest.Fixture) string {
	t.Helper()
	p, err := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range p.Tasks {
		fmt.Fprintf(&b, "task %s difficulty %s\n", e.ID, e.Difficulty)
		for _, r := range e.Ratings {
			fmt.Fprintf(&b, "rating %s %s k %d level %s hint-free %d with hint %d infrastructure retries %d config %s\n",
				r.Agent, r.Slug, r.K, r.Level, r.HintFree, r.WithHint, r.InfraRetries, serverURL.ReplaceAllString(r.Config, "SERVER"))
		}
		recs, _ := filepath.Glob(filepath.Join(f.Dir, "tasks", e.Dir, pool.RateDir, "*", "[rh][0-9].json"))
		for _, rec := range recs {
			fmt.Fprintf(&b, "stored %s\n", filepath.Base(rec))
		}
	}
	return b.String()
}

// TestModelPathPoolRate: `pool rate --agent MODEL` against a flaky
// server. With --model-retries 2 the rating is the healthy server's, no
// attempt retried in a fresh instance; with --model-retries 0 the failed
// attempts are retried as rollouts and counted as infrastructure retries,
// never as the task's difficulty; an outage a rollout's attempts do not
// outlive ends the rating with the failure in infra.json, pool.json as it
// was and the finished rollouts kept, and the same command against a
// healthy server completes the rating.
func TestModelPathPoolRate(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, nil)
	index := filepath.Join(f.Dir, pool.File)
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	rateDir := filepath.Join(f.TaskDirs["model-pick"], pool.RateDir)
	reset := func() {
		t.Helper()
		if err := os.WriteFile(index, before, 0o644); err != nil {
			t.Fatal(err)
		}
		os.RemoveAll(rateDir)
	}
	st := t.TempDir()
	rate := func(spec, retries string) (string, error) {
		_, stderr, err := run(t, st, "pool", "rate", "--dir", f.Dir, "--fake-browser", "--agent", spec, "-k", "2", "--parallel", "1",
			"--model-retries", retries, "--model-backoff", "1ms")
		return stderr, err
	}

	healthy := newFlaky(flakyEvery, giveUp)
	healthy.healthy.Store(true)
	_, spec := healthy.server(t)
	if stderr, err := rate(spec, "0"); err != nil {
		t.Fatalf("pool rate with a healthy server: %v\n%s", err, stderr)
	}
	want := rateProduct(t, f)
	if !strings.Contains(want, "infrastructure retries 0") {
		t.Fatalf("no rating:\n%s", want)
	}

	for _, c := range []struct {
		name    string
		fl      *flaky
		retries string
	}{
		{"retried", newFlaky(flakyEvery, giveUp), "2"},
		{"unretried", newFlaky(flakyEvery, giveUp), "0"},
	} {
		reset()
		_, spec := c.fl.server(t)
		if stderr, err := rate(spec, c.retries); err != nil {
			t.Fatalf("%s: pool rate with %d failed chats: %v\n%s", c.name, c.fl.fails.Load(), err, stderr)
		}
		got := rateProduct(t, f)
		t.Logf("%s: %d failed chats of %d\n%s", c.name, c.fl.fails.Load(), c.fl.calls.Load(), got)
		if c.fl.fails.Load() == 0 {
			t.Fatalf("%s: the flaky server failed no chat", c.name)
		}
		if c.retries == "0" {
			// The failed attempts are the rating's infrastructure
			// retries, and nothing else changes.
			p, _ := pool.LoadPool(index)
			n := p.Tasks[0].Ratings[0].InfraRetries
			if n == 0 {
				t.Errorf("%s: %d failed chats unretried and no infrastructure retry counted", c.name, c.fl.fails.Load())
			}
			got = strings.Replace(got, fmt.Sprintf("infrastructure retries %d", n), "infrastructure retries 0", 1)
		}
		if got != want {
			t.Errorf("%s: rated:\n%s\nwith a healthy server:\n%s", c.name, got, want)
		}
	}

	// An outage over the second rollout's three attempts: the first is
	// kept, the rating stops with the failure recorded, pool.json as it
	// was; the same command with the server back completes it.
	reset()
	fl := newOutage(3, rollout.MaxAttempts, giveUp)
	_, spec = fl.server(t)
	stderr, err := rate(spec, "0")
	if err == nil || !strings.Contains(err.Error(), "run the same command again") || !strings.Contains(err.Error(), "rollout r2") {
		t.Fatalf("pool rate through an outage: %v\n%s", err, stderr)
	}
	if b, _ := os.ReadFile(index); string(b) != string(before) {
		t.Errorf("the outage changed pool.json:\n%s", b)
	}
	slug := fake.DefaultModel + ".wildawm"
	if b, err := os.ReadFile(filepath.Join(rateDir, slug, pool.RateInfraFile)); err != nil || !strings.Contains(string(b), "no healthy upstream") {
		t.Errorf("the outage is not in infra.json: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(rateDir, slug, "r1.json")); err != nil {
		t.Errorf("the rollout finished before the outage was lost: %v", err)
	}
	fl.healthy.Store(true)
	stderr, err = rate(spec, "0")
	if err != nil || !strings.Contains(stderr, "3 to run, 1 kept") {
		t.Fatalf("pool rate with the server back: %v\n%s", err, stderr)
	}
	if got := rateProduct(t, f); got != want {
		t.Errorf("rated after the outage:\n%s\nwith a healthy server:\n%s", got, want)
	}
}

// snapshotLine is an element's line of a page's text: [N] role "name".
var snapshotLine = regexp.MustCompile(`(?m)^\[([0-9]+)\] ([a-z]+) "((?:[^"\\]|\\.)*)"`)

// pageRef is the ref of the element sel names on the last page the
// request shows (a tool result), or 0: the login form's fields and
// button by their labels, a kit action's button by its action's name.
func pageRef(r fake.Request, sel string) int {
	for i := len(r.Messages) - 1; i >= 0; i-- {
		m := r.Messages[i]
		if m.Role != "tool" || !strings.Contains(m.Content, "URL: ") {
			continue
		}
		for _, l := range snapshotLine.FindAllStringSubmatch(m.Content, -1) {
			role, name := l[2], strings.ToLower(l[3])
			action, isAction := strings.CutPrefix(sel, `form[action="/do/`)
			action, _, _ = strings.Cut(action, `"`)
			ok := false
			switch {
			case sel == "#login-username":
				ok = role == "textbox" && name == "username"
			case sel == "#login-password":
				ok = role == "textbox" && name == "password"
			case sel == "#login-submit":
				ok = role == "button" && name == "log in"
			case isAction:
				ok = role == "button" && strings.HasPrefix(name, action)
			}
			if ok {
				n, _ := strconv.Atoi(l[1])
				return n
			}
		}
		return 0
	}
	return 0
}

// referenceTeacher is a model that performs tk's reference completion
// through the wildawm harness's tools, one step a turn, and then answers:
// the step is the count of its earlier turns, so that it answers from the
// request alone.
func referenceTeacher(tk *task.Task) func(fake.Request) fake.Turn {
	return func(r fake.Request) fake.Turn {
		i := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				i++
			}
		}
		if i >= len(tk.Reference) {
			return fake.Turn{Content: tk.Answer}
		}
		s := tk.Reference[i]
		name, args := s.Tool, map[string]any{}
		sel, _ := s.Args["selector"].(string)
		switch s.Tool {
		case "browser.open":
			name, args = "browser_navigate", map[string]any{"url": s.Args["url"]}
		case "browser.read", "browser.snapshot":
			name = "browser_read"
		case "browser.fill":
			name, args = "browser_type", map[string]any{"ref": pageRef(r, sel), "text": s.Args["value"]}
		case "browser.click":
			name, args = "browser_click", map[string]any{"ref": pageRef(r, sel)}
		case "shell.run":
			name, args = "shell", s.Args
		default:
			name, args = strings.TrimPrefix(s.Tool, "mcp."), s.Args
		}
		b, _ := json.Marshal(args)
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: fmt.Sprintf("call_%d", i), Name: name, Arguments: string(b)}}}
	}
}

// sftProduct is an export's records, apart from where the trajectories
// and the instances were: the same teacher's same work reads the same.
func sftProduct(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("no export: %v", err)
	}
	s := regexp.MustCompile(`"trajectory":"[^"]*"`).ReplaceAllString(string(b), `"trajectory":"T"`)
	return regexp.MustCompile(`127\.0\.0\.1:[0-9]+`).ReplaceAllString(s, "HOST")
}

// TestModelPathSFTExport: `sft export --from live --teacher MODEL` with a
// teacher that performs the task, against a flaky server. With
// --model-retries 2 the segments are the healthy server's; with
// --model-retries 0 a flaky server's failures are the rollout's retried
// attempts, and an outage its attempts do not outlive is the task's
// infrastructure failure: nothing to write, the earlier export left as
// it was; the same command against a healthy server writes it again.
func TestModelPathSFTExport(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, func(string) string { return pool.SplitSFT })
	teacher := referenceTeacher(f.Tasks["model-pick"])
	st := t.TempDir()
	outs := t.TempDir()
	export := func(spec, out, retries string) (string, error) {
		_, stderr, err := run(t, st, "sft", "export", "--dir", f.Dir, "--out", filepath.Join(outs, out), "--from", "live", "--teacher", spec,
			"--attempts", "1", "--token-ids=false", "--fake-browser", "--model-retries", retries, "--model-backoff", "1ms")
		return stderr, err
	}

	healthy := newFlaky(flakyEvery, teacher)
	healthy.healthy.Store(true)
	_, spec := healthy.server(t)
	if stderr, err := export(spec, "healthy.jsonl", "0"); err != nil {
		t.Fatalf("sft export with a healthy server: %v\n%s", err, stderr)
	}
	want := sftProduct(t, filepath.Join(outs, "healthy.jsonl"))

	for _, c := range []struct {
		name    string
		retries string
	}{{"retried", "2"}, {"unretried", "0"}} {
		fl := newFlaky(flakyEvery, teacher)
		_, spec := fl.server(t)
		stderr, err := export(spec, c.name+".jsonl", c.retries)
		t.Logf("%s: %d failed chats of %d: %v", c.name, fl.fails.Load(), fl.calls.Load(), err)
		if fl.fails.Load() == 0 {
			t.Fatalf("%s: the flaky server failed no chat", c.name)
		}
		if err != nil && c.retries == "0" {
			// Unretried, one chat in flakyEvery may fail each of the
			// rollout's attempts: the task's failure is the
			// infrastructure's, and nothing is written.
			if !strings.Contains(err.Error(), "no segment to write") || !strings.Contains(stderr, "outcome "+agent.OutcomeInfra) {
				t.Errorf("%s: sft export: %v\n%s", c.name, err, stderr)
			}
			if _, err := os.Stat(filepath.Join(outs, c.name+".jsonl")); !os.IsNotExist(err) {
				t.Errorf("%s: a failed export wrote its file: %v", c.name, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: sft export: %v\n%s", c.name, err, stderr)
			continue
		}
		if got := sftProduct(t, filepath.Join(outs, c.name+".jsonl")); got != want {
			t.Errorf("%s: exported:\n%s\nwith a healthy server:\n%s", c.name, got, want)
		}
	}

	// An outage over the rollout's three attempts: nothing to write, and
	// the earlier export stays.
	out := filepath.Join(outs, "healthy.jsonl")
	before, _ := os.ReadFile(out)
	fl := newOutage(2, rollout.MaxAttempts, teacher)
	_, spec = fl.server(t)
	stderr, err := export(spec, "healthy.jsonl", "0")
	if err == nil || !strings.Contains(err.Error(), "no segment to write") || !strings.Contains(stderr, agent.OutcomeInfra) {
		t.Fatalf("sft export through an outage: %v\n%s", err, stderr)
	}
	if after, _ := os.ReadFile(out); string(after) != string(before) {
		t.Errorf("an export through an outage changed %s", out)
	}
	fl.healthy.Store(true)
	if stderr, err := export(spec, "healthy.jsonl", "0"); err != nil {
		t.Fatalf("sft export with the server back: %v\n%s", err, stderr)
	}
	if got := sftProduct(t, out); got != want {
		t.Errorf("exported after the outage:\n%s\nwant:\n%s", got, want)
	}
}

// contractOf reads the persona and the day of an author's job.
var contractOf = regexp.MustCompile(`\(persona ([^)]+)\), day ([0-9]+),`)

// familyAuthor is an author model that writes the task its sketch's
// family would (the offline author's draft, handed in with submit_task):
// it reads the sketch and the state from the job, and authors on the
// run's worlds, opened apart from the command's.
func familyAuthor(t *testing.T, dir string) func(fake.Request) fake.Turn {
	src, closeSrc, err := taskgen.OpenSource(context.Background(), dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeSrc)
	worlds := map[string]*taskgen.World{}
	for _, st := range src.States {
		w, err := src.World(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		worlds[fmt.Sprintf("%s %d", w.Manifest.Persona, st.Day)] = w
	}
	return func(r fake.Request) fake.Turn {
		job := r.Messages[1].Content
		refuse := fake.Turn{ToolCalls: []fake.ToolCall{{Name: taskgen.SubmitTaskTool, Arguments: `{"instruction": ""}`}}}
		rest, ok := strings.CutPrefix(job, "# The sketch\n\n")
		rest, _, ok2 := strings.Cut(rest, "\n\n# The computer")
		m := contractOf.FindStringSubmatch(job)
		var sk taskgen.Sketch
		if !ok || !ok2 || m == nil || json.Unmarshal([]byte(rest), &sk) != nil {
			t.Errorf("an author's job without its sketch or state:\n%s", job)
			return refuse
		}
		w, fam := worlds[m[1]+" "+m[2]], taskgen.Family(nil)
		if f, err := taskgen.Lookup(sk.Family); err == nil {
			fam = f
		}
		if w == nil || fam == nil {
			t.Errorf("no world %s day %s or family %s", m[1], m[2], sk.Family)
			return refuse
		}
		d, err := fam.Author(w, sk)
		if err != nil {
			return refuse
		}
		b, _ := json.Marshal(taskgen.SubmissionOf(d))
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: taskgen.SubmitTaskTool, Arguments: string(b)}}}
	}
}

// tasksProduct is the tasks a run wrote into out, each task.json and
// sketch.json (out itself written OUT).
func tasksProduct(t *testing.T, out string) (int, string) {
	t.Helper()
	paths, _ := filepath.Glob(filepath.Join(out, "*", "task.json"))
	var b strings.Builder
	for _, p := range paths {
		tj, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sj, _ := os.ReadFile(filepath.Join(filepath.Dir(p), taskgen.SketchFile))
		fmt.Fprintf(&b, "%s\n%s\n%s\n", filepath.Base(filepath.Dir(p)), tj, sj)
	}
	return len(paths), strings.ReplaceAll(b.String(), out, "OUT")
}

// TestModelPathSynTasksAuthor: `syn tasks --author-model` with an author
// that writes its sketches' tasks, against a server that fails every
// chat's first attempt. With
// --model-retries 2 the tasks written are the healthy server's; with
// --model-retries 0 the sketches whose author failed are left unwritten,
// the run says a rerun writes them, and the rerun against a healthy server
// writes the healthy server's tasks.
func TestModelPathSynTasksAuthor(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	st := filepath.Join(t.TempDir(), "unused-store")
	mustRun(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "3", "--no-health")
	author := familyAuthor(t, dir)
	outs := t.TempDir()
	synTasks := func(spec, out, retries string) (string, error) {
		_, stderr, err := run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2", "--out", filepath.Join(outs, out), "--parallel", "1",
			"--author-model", spec, "--model-retries", retries, "--model-backoff", "1ms")
		return stderr, err
	}

	healthy := newFlaky(flakyEvery, author)
	healthy.healthy.Store(true)
	_, spec := healthy.server(t)
	if stderr, err := synTasks(spec, "healthy", "0"); err != nil {
		t.Fatalf("syn tasks with a healthy server: %v\n%s", err, stderr)
	}
	n, want := tasksProduct(t, filepath.Join(outs, "healthy"))
	if n == 0 {
		t.Fatal("the author wrote no task")
	}

	// The run authors few sketches (the diversity gate drops the rest):
	// every chat's first attempt fails.
	fl := newFlaky(1, author)
	_, spec = fl.server(t)
	if stderr, err := synTasks(spec, "retried", "2"); err != nil {
		t.Fatalf("syn tasks with failed chats retried: %v\n%s", err, stderr)
	}
	if _, got := tasksProduct(t, filepath.Join(outs, "retried")); got != want || fl.fails.Load() == 0 {
		t.Errorf("%d failed chats of %d retried; tasks:\n%s\nwith a healthy server:\n%s", fl.fails.Load(), fl.calls.Load(), got, want)
	}
	t.Logf("retried: %d failed chats of %d, %d tasks", fl.fails.Load(), fl.calls.Load(), n)

	fl = newFlaky(1, author)
	_, spec = fl.server(t)
	stderr, err := synTasks(spec, "unretried", "0")
	if err == nil || !strings.Contains(err.Error(), "because the author model failed") || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("syn tasks with %d failed chats unretried: %v\n%s", fl.fails.Load(), err, stderr)
	}
	if !strings.Contains(stderr, "0 without a valid task from the author") || !strings.Contains(stderr, "sketches not written because the author model failed, in") {
		t.Errorf("a failed chat counted as the author's rejection:\n%s", stderr)
	}
	kept, _ := tasksProduct(t, filepath.Join(outs, "unretried"))
	t.Logf("unretried: %d failed chats of %d, %d of %d tasks written: %v", fl.fails.Load(), fl.calls.Load(), kept, n, err)
	if kept >= n {
		t.Errorf("%d tasks written of %d with chats failed", kept, n)
	}
	fl.healthy.Store(true)
	if stderr, err := synTasks(spec, "unretried", "0"); err != nil {
		t.Fatalf("syn tasks again with the server healthy: %v\n%s", err, stderr)
	}
	if _, got := tasksProduct(t, filepath.Join(outs, "unretried")); got != want {
		t.Errorf("tasks after the rerun:\n%s\nwith a healthy server:\n%s", got, want)
	}
}

// flakyEmbeddings is a proxy in front of a fake server whose every nth
// embeddings request fails the way flaky's chats do (a 503, or the reply
// cut mid-way), a request that failed once passing the next time; every
// other request reaches the server.
type flakyEmbeddings struct {
	n       int64
	calls   atomic.Int64
	fails   atomic.Int64
	healthy atomic.Bool
	mu      sync.Mutex
	failed  map[string]bool
}

// serve starts the proxy in front of srv and returns its model spec.
func (f *flakyEmbeddings) serve(t *testing.T, srv *fake.Server) string {
	f.failed = map[string]bool{}
	up, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: up.Scheme, Host: up.Host})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if !strings.HasSuffix(r.URL.Path, "/embeddings") || f.healthy.Load() || f.calls.Add(1)%f.n != 0 {
			proxy.ServeHTTP(w, r)
			return
		}
		f.mu.Lock()
		again := f.failed[string(body)]
		f.failed[string(body)] = true
		f.mu.Unlock()
		if again {
			proxy.ServeHTTP(w, r)
			return
		}
		if f.fails.Add(1)%2 == 1 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"error":{"message":"no healthy upstream","type":"ServiceUnavailableError","code":"503"}}`)
			return
		}
		rec := httptest.NewRecorder()
		proxy.ServeHTTP(rec, r)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(rec.Body.Len()))
		w.WriteHeader(rec.Code)
		w.Write(rec.Body.Bytes()[:min(40, rec.Body.Len())])
		w.(http.Flusher).Flush()
		if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
			conn.Close()
		}
	}))
	t.Cleanup(ts.Close)
	return ts.URL + "/v1#" + fake.DefaultModel
}

// TestModelPathSynTasksEmbeddings: `syn tasks --embeddings` (the diversity
// gate's embedding model) against a flaky embeddings endpoint. With
// --model-retries 2 the tasks written are the healthy endpoint's; with
// --model-retries 0 a failed request is its sketch's loss, not the run's
// end: the run goes on, fails saying how many sketches the embedding model
// left ungated, keeps the tasks it wrote, and a rerun against a healthy
// endpoint writes the healthy endpoint's tasks.
func TestModelPathSynTasksEmbeddings(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "run")
	st := filepath.Join(t.TempDir(), "unused-store")
	mustRun(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "3", "--no-health")
	srv := fake.New(t)
	outs := t.TempDir()
	synTasks := func(spec, out, retries string) (string, error) {
		_, stderr, err := run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2", "--out", filepath.Join(outs, out), "--parallel", "1",
			"--embeddings", spec, "--model-retries", retries, "--model-backoff", "1ms")
		return stderr, err
	}
	stderr, err := synTasks(srv.URL()+"#"+fake.DefaultModel, "healthy", "0")
	if err != nil {
		t.Fatalf("syn tasks with a healthy endpoint: %v\n%s", err, stderr)
	}
	healthySketches := regexp.MustCompile(`([0-9]+) sketches, `).FindStringSubmatch(stderr)[1]
	n, want := tasksProduct(t, filepath.Join(outs, "healthy"))
	if n == 0 || srv.EmbedCalls() == 0 {
		t.Fatalf("%d tasks, %d embedding requests", n, srv.EmbedCalls())
	}

	fl := &flakyEmbeddings{n: 2}
	spec := fl.serve(t, srv)
	if stderr, err := synTasks(spec, "retried", "2"); err != nil {
		t.Fatalf("syn tasks with failed embeddings retried: %v\n%s", err, stderr)
	}
	if _, got := tasksProduct(t, filepath.Join(outs, "retried")); got != want || fl.fails.Load() == 0 {
		t.Errorf("%d failed embedding requests of %d retried; tasks:\n%s\nwith a healthy endpoint:\n%s", fl.fails.Load(), fl.calls.Load(), got, want)
	}
	t.Logf("retried: %d failed embedding requests of %d, %d tasks", fl.fails.Load(), fl.calls.Load(), n)

	fl = &flakyEmbeddings{n: 2}
	spec = fl.serve(t, srv)
	stderr, err = synTasks(spec, "unretried", "0")
	kept, _ := tasksProduct(t, filepath.Join(outs, "unretried"))
	t.Logf("unretried: %d failed embedding requests of %d, %d of %d tasks written: %v\n%s", fl.fails.Load(), fl.calls.Load(), kept, n, err, stderr)
	if err == nil || !strings.Contains(err.Error(), "not gated because the embedding model (--embeddings) failed") || !strings.Contains(err.Error(), "run the same command again") {
		t.Errorf("syn tasks with %d failed embedding requests unretried: %v", fl.fails.Load(), err)
	}
	if sketches := regexp.MustCompile(`([0-9]+) sketches, `).FindStringSubmatch(stderr); sketches == nil || sketches[1] != healthySketches {
		t.Errorf("%v sketches, want %s: the run ended at the first failed request", sketches, healthySketches)
	}
	fl.healthy.Store(true)
	if stderr, err := synTasks(spec, "unretried", "0"); err != nil {
		t.Fatalf("syn tasks again with the endpoint healthy: %v\n%s", err, stderr)
	}
	if _, got := tasksProduct(t, filepath.Join(outs, "unretried")); got != want {
		t.Errorf("tasks after the rerun:\n%s\nwith a healthy endpoint:\n%s", got, want)
	}
}

// tokenized gives respond's turns the token ids an engine returns: a role
// token and the bytes of each message, so that a turn's prompt extends the
// last turn's prompt and completion.
func tokenized(respond func(fake.Request) fake.Turn) func(fake.Request) fake.Turn {
	return func(r fake.Request) fake.Turn { return fake.ByteTokens(r, respond(r)) }
}

// rlServe starts `wildawm rl serve` in-process on a free port, with the
// root flags given, and returns its base URL; it ends with the test.
func rlServe(t *testing.T, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, append([]string{"--store", t.TempDir()}, append(args, "--addr", "127.0.0.1:0")...), pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		cancel()
		t.Fatalf("rl serve printed no URL: %v\n%s", <-done, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	t.Cleanup(func() { cancel(); <-done })
	return strings.TrimSpace(line)
}

// batchProduct is what a train step's batch decided, apart from timings,
// token ids (the prompts carry the instances' ports) and the engine's URL.
func batchProduct(b *trainer.Batch) string {
	var s strings.Builder
	fmt.Fprintf(&s, "status %s %s; rollouts %d retried %d succeeded %d; groups ready %d mastered %d exhausted %d abandoned %d\n",
		b.Status, b.Error, b.Stats.Rollouts, b.Stats.Retried, b.Stats.Succeeded, b.Stats.Ready, b.Stats.Mastered, b.Stats.Exhausted, b.Stats.Abandoned)
	for _, g := range b.Groups {
		fmt.Fprintf(&s, "group %d %s %s %s kappa %v -> %v launched %d\n", g.Index, g.TaskID, g.State, g.Why, g.Kappa, g.NextKappa, g.Launched)
	}
	for _, smp := range b.Samples {
		fmt.Fprintf(&s, "sample %s segment %d/%d reward %v status %s\n", smp.RolloutID, smp.SegmentIndex, smp.SegmentCount, smp.Reward, smp.Status)
	}
	return s.String()
}

// batch asks the service at base for train step 1 with the engine spec and
// waits for it.
func batch(t *testing.T, base, engine string) *trainer.Batch {
	t.Helper()
	body := fmt.Sprintf(`{"step": 1, "tasks": 1, "g": 2, "engine": %q, "sampling": {"max_turns": 8, "seed": 0}}`, engine)
	resp, err := http.Post(base+"/v1/batches", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		t.Fatalf("POST /v1/batches: %s: %s", resp.Status, b)
	}
	for range 20 {
		resp, err := http.Get(base + "/v1/batches/step-000001?wait=30")
		if err != nil {
			t.Fatal(err)
		}
		var out trainer.Batch
		err = json.NewDecoder(resp.Body).Decode(&out)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if out.Status != trainer.StatusRunning {
			return &out
		}
	}
	t.Fatal("the batch is still running")
	return nil
}

// TestModelPathRLServe: `rl serve` computing a train step's batch with a
// trainer's engine (the request's, not a flag's) that fails one chat in
// flakyEvery. With --model-retries 2 the batch is the healthy engine's;
// with --model-retries 0 the failed chats are the rollouts' infrastructure
// failures, retried in fresh instances or the group abandoned, never a
// reward.
func TestModelPathRLServe(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, nil)
	serve := func(retries string) string {
		return rlServe(t, "rl", "serve", "--dir", f.Dir, "--state", filepath.Join(t.TempDir(), "rl"), "--fake-browser", "--parallel", "2",
			"--model-retries", retries, "--model-backoff", "1ms")
	}
	engine := func(fl *flaky) string {
		srv, _ := fl.server(t)
		srv.SetEngine(model.EngineSGLang)
		return "sglang+" + srv.URL() + "#" + fake.DefaultModel
	}
	respond := tokenized(giveUp)

	healthy := newFlaky(flakyEvery, respond)
	healthy.healthy.Store(true)
	want := batchProduct(batch(t, serve("0"), engine(healthy)))
	if !strings.Contains(want, "status done") {
		t.Fatalf("the healthy engine's batch:\n%s", want)
	}

	fl := newFlaky(flakyEvery, respond)
	got := batchProduct(batch(t, serve("2"), engine(fl)))
	t.Logf("retried: %d failed chats of %d\n%s", fl.fails.Load(), fl.calls.Load(), got)
	if fl.fails.Load() == 0 {
		t.Fatal("the flaky engine failed no chat")
	}
	if got != want {
		t.Errorf("the batch with failed chats retried:\n%s\nwith a healthy engine:\n%s", got, want)
	}
	if fl.retried.Load() != fl.fails.Load() {
		t.Errorf("%d of %d failed chats retried", fl.retried.Load(), fl.fails.Load())
	}

	fl = newFlaky(flakyEvery, respond)
	b := batch(t, serve("0"), engine(fl))
	got = batchProduct(b)
	t.Logf("unretried: %d failed chats of %d\n%s", fl.fails.Load(), fl.calls.Load(), got)
	if b.Status != trainer.StatusDone {
		t.Errorf("the batch with failed chats unretried: %s %s", b.Status, b.Error)
	}
	if n := fl.retried.Load(); n != 0 {
		t.Errorf("%d failed chats sent again with --model-retries 0", n)
	}
	for _, smp := range b.Samples {
		if smp.Reward != 0 || smp.Status == agent.OutcomeInfra {
			t.Errorf("sample %s: reward %v status %s: a failed chat trained on", smp.RolloutID, smp.Reward, smp.Status)
		}
	}
}

// sketcher is a sketch agent that proposes two sketches of its state (the
// day in the title) and then ends its session; as an author (the request
// offers submit_task) it writes no valid task.
func sketcher(r fake.Request) fake.Turn {
	if hasTool(r, taskgen.SubmitTaskTool) {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: taskgen.SubmitTaskTool, Arguments: `{"instruction": ""}`}}}
	}
	if slices.ContainsFunc(r.Messages, func(m fake.Message) bool { return m.Role == "tool" }) {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: taskgen.DoneTool, Arguments: `{}`}}}
	}
	day := contractDay.FindString(r.Messages[len(r.Messages)-1].Content)
	var calls []fake.ToolCall
	for i, what := range []string{"Buy the dearest device", "Plan the course week"} {
		b, _ := json.Marshal(map[string]any{"title": fmt.Sprintf("%s (%s)", what, day), "core": []string{fmt.Sprintf("item %d %s", i, day)},
			"params":     map[string]string{"note": "notes/logins.md"},
			"interfaces": map[string]string{"gui": "read it on the site", "mcp": "look it up in the app", "cli": "a script decides"}})
		calls = append(calls, fake.ToolCall{Name: taskgen.ProposeSketchTool, Arguments: string(b)})
	}
	return fake.Turn{ToolCalls: calls}
}

// contractDay is the day a sketch session's job names.
var contractDay = regexp.MustCompile(`day [0-9]+`)

// synSummary is syn tasks' summary line without its time.
func synSummary(stderr string) string {
	m := regexp.MustCompile(`(?m)^[0-9]+ sketches, .*, in `).FindString(stderr)
	return strings.TrimSuffix(m, ", in ")
}

// TestModelPathSynTasksSketch: `syn tasks --sketch-model --author-model`
// (the sketch agent exploring live instances) against a flaky server. With
// --model-retries 2 the run counts what the healthy server's did; with
// --model-retries 0 a failed session or author is that job's or sketch's
// loss, not the run's end: it finishes and says a rerun writes the rest.
func TestModelPathSynTasksSketch(t *testing.T) {
	t.Parallel()
	st := filepath.Join(t.TempDir(), "unused-store")
	root := sandboxDir(t)
	var synTasksIn func(fl *flaky, dir, retries string) (string, error)
	runs := 0
	var dir string
	synTasks := func(fl *flaky, retries string) (string, error) {
		runs++
		dir = filepath.Join(root, fmt.Sprint(runs))
		mustRun(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "2", "--no-health")
		return synTasksIn(fl, dir, retries)
	}
	synTasksIn = func(fl *flaky, dir, retries string) (string, error) {
		_, spec := fl.server(t)
		_, stderr, err := run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..1", "--fake-browser", "--parallel", "1",
			"--sketch-model", spec, "--author-model", spec, "--model-retries", retries, "--model-backoff", "1ms")
		return stderr, err
	}
	healthy := newFlaky(flakyEvery, sketcher)
	healthy.healthy.Store(true)
	stderr, err := synTasks(healthy, "0")
	want := synSummary(stderr)
	if err != nil || want == "" {
		t.Fatalf("syn tasks with a healthy server: %v\n%s", err, stderr)
	}
	fl := newFlaky(flakyEvery, sketcher)
	stderr, err = synTasks(fl, "2")
	if got := synSummary(stderr); err != nil || got != want {
		t.Errorf("%d failed chats of %d retried: %v, %q; with a healthy server %q\n%s", fl.fails.Load(), fl.calls.Load(), err, got, want, stderr)
	}
	fl = newFlaky(flakyEvery, sketcher)
	stderr, err = synTasks(fl, "0")
	t.Logf("unretried: %d failed chats of %d: %v\n%s", fl.fails.Load(), fl.calls.Load(), err, synSummary(stderr))
	if synSummary(stderr) == "" {
		t.Errorf("syn tasks with failed chats unretried ended without its summary: %v\n%s", err, stderr)
	}
	if err == nil || !strings.Contains(err.Error(), "run the same command again") || strings.Contains(err.Error(), "taskgen: ") {
		t.Errorf("syn tasks with %d failed chats unretried: %v; want the run to go on and say what a rerun writes", fl.fails.Load(), err)
	}
	fl.healthy.Store(true)
	stderr, err = synTasksIn(fl, dir, "0")
	if got := synSummary(stderr); err != nil || got != want {
		t.Errorf("syn tasks again with the server healthy: %v, %q; want %q\n%s", err, got, want, stderr)
	}
}
