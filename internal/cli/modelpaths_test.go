package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
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
// answered the next time it comes (the same body: a retry), so one retry
// always recovers it whatever the interleaving of parallel rollouts.
// respond must answer from the request alone (a retried request gets the
// same answer).
type flaky struct {
	n       int64
	respond func(fake.Request) fake.Turn
	calls   atomic.Int64
	fails   atomic.Int64
	healthy atomic.Bool
	mu      sync.Mutex
	failed  map[string]bool
}

func newFlaky(n int64, respond func(fake.Request) fake.Turn) *flaky {
	return &flaky{n: n, respond: respond, failed: map[string]bool{}}
}

// server starts the fake model server that f answers, and returns it with
// its model spec.
func (f *flaky) server(t *testing.T) (*fake.Server, string) {
	srv := fake.NewResponder(t, f.turn)
	return srv, srv.URL() + "#" + fake.DefaultModel
}

func (f *flaky) turn(r fake.Request) fake.Turn {
	if f.calls.Add(1)%f.n != 0 || f.healthy.Load() {
		return f.respond(r)
	}
	f.mu.Lock()
	again := f.failed[string(r.Body)]
	f.failed[string(r.Body)] = true
	f.mu.Unlock()
	if again {
		return f.respond(r)
	}
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
