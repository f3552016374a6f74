package trainer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
)

// product is what a batch decided, apart from timings and the counts of
// how it got there (reused, outages): two computations of one request
// must agree on it.
func product(b *Batch) string {
	var s strings.Builder
	fmt.Fprintf(&s, "%s %s ready %d mastered %d exhausted %d abandoned %d filled %d\n", b.Status, b.Error, b.Stats.Ready, b.Stats.Mastered, b.Stats.Exhausted, b.Stats.Abandoned, b.Stats.Filled)
	for _, g := range b.Groups {
		fmt.Fprintf(&s, "group %d %s %s kappa %v -> %v K %d rewards %v selected %v\n", g.Index, g.TaskID, g.State, g.Kappa, g.NextKappa, g.K, g.Rewards, g.Selected)
	}
	for _, smp := range b.Samples {
		fmt.Fprintf(&s, "sample %s %d/%d reward %v advantage %v\n", smp.RolloutID, smp.SegmentIndex, smp.SegmentCount, smp.Reward, smp.Advantage)
	}
	return s.String()
}

// alternating rewards tell a group's slots apart: every group is ready.
func alternating(_ string, slot int) float64 { return float64(slot % 2) }

// TestStepsInOrder: a step whose predecessor was never requested is
// refused naming the missing step (409 with missing_step over HTTP), and
// nothing is computed; --allow-gaps accepts it; a step after a running one
// is accepted and queued.
func TestStepsInOrder(t *testing.T) {
	f := fixture(t)
	s := open(t, f, Options{Rollout: scripted(alternating, nil)})
	req := func(step int) Request { return Request{Step: step, Tasks: 1, Policy: PolicyReplayEnsemble} }
	_, _, err := s.Submit(req(3))
	var gap *GapError
	if !errors.As(err, &gap) || gap.Missing != 1 || !strings.Contains(err.Error(), "--allow-gaps") {
		t.Fatalf("step 3 first: %v, want a gap naming step 1", err)
	}
	if _, err := s.Batch(context.Background(), req(1)); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	code, body := call(t, "POST", srv.URL+"/v1/batches", `{"step": 5, "tasks": 1, "policy": "scripted:replay-ensemble"}`)
	if code != http.StatusConflict || body["missing_step"] != float64(2) || !strings.Contains(body["error"].(string), "step 2 was never requested") {
		t.Fatalf("step 5 after 1: %d %v", code, body)
	}
	if steps, _ := s.Steps(); !slices.Equal(steps, []int{1}) {
		t.Errorf("saved %v after refusals, want [1]", steps)
	}
	// Step 2 while nothing runs, then 3 at once behind it: both accepted.
	if _, _, err := s.Submit(req(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Batch(context.Background(), req(3)); err != nil {
		t.Fatalf("step 3 behind a requested step 2: %v", err)
	}

	g := open(t, f, Options{AllowGaps: true, Rollout: scripted(alternating, nil)})
	if _, err := g.Batch(context.Background(), req(4)); err != nil {
		t.Errorf("with AllowGaps: %v", err)
	}
}

// TestStateNeverSaved: the state after a step never saved is a 404 that
// says so and names the last saved step, not an older step's state.
func TestStateNeverSaved(t *testing.T) {
	f := fixture(t)
	s := open(t, f, Options{Rollout: scripted(alternating, nil)})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	if code, body := call(t, "GET", srv.URL+"/v1/state?step=1", ""); code != http.StatusNotFound || !strings.Contains(body["error"].(string), "no step is yet") {
		t.Errorf("before any step: %d %v", code, body)
	}
	for step := 1; step <= 2; step++ {
		if _, err := s.Batch(context.Background(), Request{Step: step, Tasks: 1, Policy: PolicyReplayEnsemble}); err != nil {
			t.Fatal(err)
		}
	}
	code, body := call(t, "GET", srv.URL+"/v1/state?step=999", "")
	if code != http.StatusNotFound || body["last_saved"] != float64(2) || !strings.Contains(body["error"].(string), "step 999 was never saved: the last saved step is 2") {
		t.Errorf("step 999: %d %v", code, body)
	}
	if code, body := call(t, "GET", srv.URL+"/v1/state?step=2", ""); code != http.StatusOK || body["step"] != float64(2) {
		t.Errorf("step 2: %d %v", code, body)
	}
	if code, body := call(t, "GET", srv.URL+"/v1/state?step=0", ""); code != http.StatusOK || len(body["kappa"].(map[string]any)) != 0 {
		t.Errorf("step 0: %d %v", code, body)
	}
}

// gate is a scripted rollout function that blocks after n rollouts until
// released, so a test can stop a service mid-step.
type gate struct {
	n       int64
	ran     atomic.Int64
	reached chan struct{}
	once    sync.Once
	release chan struct{}
}

func newGate(n int64) *gate {
	return &gate{n: n, reached: make(chan struct{}), release: make(chan struct{})}
}

func (g *gate) rollout(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
	if g.ran.Add(1) > g.n {
		g.once.Do(func() { close(g.reached) })
		select {
		case <-g.release:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return scripted(alternating, nil)(ctx, j)
}

// TestRestartResumesStep: a service stopped mid-step (its worker's
// context cancelled, as a killed process loses it) leaves the step's
// request and finished rollouts behind; the next service on the directory
// answers the step as running at once, reads the finished rollouts back
// instead of running them again, and computes the same batch as an
// uninterrupted run. A step dir nobody asked for is swept.
func TestRestartResumesStep(t *testing.T) {
	f := fixture(t)
	req := Request{Step: 1, Tasks: 3, Policy: PolicyReplayEnsemble}
	whole := open(t, f, Options{Parallel: 1, Rollout: scripted(alternating, nil)})
	want, err := whole.Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}

	state := t.TempDir()
	dead := filepath.Join(state, "rollouts", "step-000007")
	if err := os.MkdirAll(dead, 0o755); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dead, "s000007-g00-r00.json"), []byte("{}"), 0o644)
	g := newGate(5)
	s, err := Open(context.Background(), Options{Dir: f.Dir, StateDir: state, Parallel: 1, Rollout: g.rollout, Env: nil})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead step's trajectories are still there: %v", err)
	}
	if _, _, err := s.Submit(req); err != nil {
		t.Fatal(err)
	}
	<-g.reached
	s.Close(context.Background())
	if b, _, _, _ := s.Lookup(1); b.Status != StatusFailed {
		t.Fatalf("the stopped step: %s", b.Status)
	}
	if _, err := os.Stat(filepath.Join(state, "requests", "step-000001.json")); err != nil {
		t.Fatalf("the stopped step's request is gone: %v", err)
	}

	var ran atomic.Int64
	var logs []string
	var mu sync.Mutex
	s2 := open(t, f, Options{StateDir: state, Parallel: 1, Rollout: scripted(alternating, &ran), Progress: func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	srv := httptest.NewServer(s2.Handler())
	defer srv.Close()
	code, body := call(t, "GET", srv.URL+"/v1/batches/step-000001?wait=30", "")
	if code != http.StatusOK || body["status"] != StatusDone {
		t.Fatalf("the resumed step: %d %v", code, body["status"])
	}
	got, _, _, _ := s2.Lookup(1)
	if product(got) != product(want) {
		t.Errorf("resumed:\n%s\nuninterrupted:\n%s", product(got), product(want))
	}
	if got.Stats.Reused != 5 || ran.Load() != int64(want.Stats.Rollouts)-5 {
		t.Errorf("reused %d, ran %d more; the whole step ran %d", got.Stats.Reused, ran.Load(), want.Stats.Rollouts)
	}
	mu.Lock()
	defer mu.Unlock()
	if !slices.ContainsFunc(logs, func(l string) bool { return strings.Contains(l, "resuming step 1") }) {
		t.Errorf("no resume line in %q", logs)
	}
	if _, err := os.Stat(filepath.Join(state, "requests", "step-000001.json")); !os.IsNotExist(err) {
		t.Errorf("the saved step's request marker is left: %v", err)
	}
}

// TestOutageWaitsForEngine: rollouts the engine's outage stops are sent
// back to the queue, not counted as tries or rewards; while it lasts the
// step answers 503, retriable, with Retry-After; when the engine answers
// the step finishes as a healthy engine's would. An outage past the limit
// fails the step unsaved and retriable, and a re-POST finishes it,
// reusing what had finished.
func TestOutageWaitsForEngine(t *testing.T) {
	f := fixture(t)
	req := Request{Step: 1, Tasks: 2, Policy: PolicyReplayEnsemble}
	want, err := open(t, f, Options{Parallel: 1, Rollout: scripted(alternating, nil)}).Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}

	var calls atomic.Int64
	seen := make(chan struct{})
	down := 3
	outage := func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		n := calls.Add(1)
		if n == 3 {
			<-seen // the test saw the 503 before the engine comes back
		}
		if n >= 2 && n < int64(2+down) {
			return nil, &OutageError{Engine: "sglang+http://10.0.0.2:30000/v1#m", Err: errors.New("connection refused")}
		}
		return scripted(alternating, nil)(ctx, j)
	}
	s := open(t, f, Options{Parallel: 1, Rollout: outage, OutageBackoff: 50 * time.Millisecond})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	if _, _, err := s.Submit(req); err != nil {
		t.Fatal(err)
	}
	var code int
	var body map[string]any
	for range 200 {
		resp, err := http.Get(srv.URL + "/v1/batches/step-000001?wait=0")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusServiceUnavailable {
			if resp.Header.Get("Retry-After") == "" {
				t.Error("503 without Retry-After")
			}
			code, body = call(t, "GET", srv.URL+"/v1/batches/step-000001?wait=0", "")
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	close(seen)
	if code != http.StatusServiceUnavailable || body["retriable"] != true || !strings.Contains(body["error"].(string), "connection refused") {
		t.Fatalf("during the outage: %d %v", code, body)
	}
	b, err := s.Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if product(b) != product(want) {
		t.Errorf("after the outage:\n%s\nhealthy:\n%s", product(b), product(want))
	}
	if b.Stats.Outages != down || b.Stats.Retried != 0 {
		t.Errorf("outages %d retried %d, want %d and 0", b.Stats.Outages, b.Stats.Retried, down)
	}

	// An outage past the limit: failed, retriable, unsaved; a re-POST
	// finishes it.
	var dead atomic.Bool
	dead.Store(true)
	var ran atomic.Int64
	flaky := func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		if ran.Add(1) > 2 && dead.Load() {
			return nil, &OutageError{Engine: "e", Err: errors.New("503 Service Unavailable")}
		}
		return scripted(alternating, nil)(ctx, j)
	}
	s = open(t, f, Options{Parallel: 1, Rollout: flaky, OutageBackoff: time.Millisecond, OutageLimit: 30 * time.Millisecond})
	srv2 := httptest.NewServer(s.Handler())
	defer srv2.Close()
	code, body = call(t, "POST", srv2.URL+"/v1/batches", `{"step": 1, "tasks": 2, "policy": "scripted:replay-ensemble"}`)
	if code != http.StatusAccepted {
		t.Fatalf("POST: %d %v", code, body)
	}
	code, body = call(t, "GET", srv2.URL+"/v1/batches/step-000001?wait=30", "")
	if code != http.StatusServiceUnavailable || body["status"] != StatusFailed || body["retriable"] != true || !strings.Contains(body["error"].(string), "POST the same request again") {
		t.Fatalf("past the limit: %d %v", code, body)
	}
	if steps, _ := s.Steps(); len(steps) != 0 {
		t.Fatalf("an outage's step was saved: %v", steps)
	}
	dead.Store(false)
	b, err = s.Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if product(b) != product(want) || b.Stats.Reused != 2 {
		t.Errorf("re-POSTed (reused %d):\n%s\nhealthy:\n%s", b.Stats.Reused, product(b), product(want))
	}
}

// TestInfraRetriedGroupKept: a slot whose infrastructure fails three
// times is run a fourth time in a fresh instance and its group is kept,
// ready, with the tries counted; one that fails in every run abandons it.
func TestInfraRetriedGroupKept(t *testing.T) {
	f := fixture(t)
	p, _ := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	var tries atomic.Int64
	fails := int64(3)
	rollouts := func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		if j.TaskID == p.Tasks[0].ID && j.Slot == 1 && tries.Add(1) <= fails {
			if j.Try != int(tries.Load())-1 || !strings.HasSuffix(j.RolloutID, fmt.Sprintf("-t%d", j.Try)) && j.Try > 0 {
				t.Errorf("try %d of %s: the rerun is not a fresh rollout of its own", j.Try, j.RolloutID)
			}
			return &RolloutResult{RolloutID: j.RolloutID, Outcome: rollout.OutcomeInfra, Failure: agent.FailInfra, Error: "sandbox died", Trajectory: newTestTrajectory(j)}, nil
		}
		return scripted(alternating, nil)(ctx, j)
	}
	req := Request{Step: 1, Tasks: 3, TaskIDs: nil, Policy: PolicyReplayEnsemble}
	b, err := open(t, f, Options{Rollout: rollouts}).Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	for _, g := range b.Groups {
		if g.TaskID == p.Tasks[0].ID && (g.State != "ready" || g.Tries != 3) {
			t.Errorf("the retried group: %s tries %d, want ready after 3", g.State, g.Tries)
		}
	}
	if b.Stats.Abandoned != 0 || b.Stats.Retried != 3 {
		t.Errorf("stats %+v", b.Stats)
	}
	tries.Store(0)
	fails = MaxTries
	b, err = open(t, f, Options{Rollout: rollouts}).Batch(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if b.Stats.Abandoned != 1 || tries.Load() != MaxTries {
		t.Errorf("a slot failing every run: abandoned %d after %d runs", b.Stats.Abandoned, tries.Load())
	}
}

// TestFillAndTaskChoice: fill "ready" samples further tasks when one is
// mastered; task_ids runs the named tasks in order; task_filter narrows
// the split; unknown ids and empty filters are refused naming the field.
func TestFillAndTaskChoice(t *testing.T) {
	f := fixture(t)
	p, _ := pool.LoadPool(filepath.Join(f.Dir, pool.File))
	var ids []string
	for _, e := range p.Tasks {
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	mastered := ids[1]
	rewards := func(id string, slot int) float64 {
		if id == mastered {
			return 1
		}
		return alternating(id, slot)
	}
	s := open(t, f, Options{Rollout: scripted(rewards, nil)})
	b, err := s.Batch(context.Background(), Request{Step: 1, TaskIDs: []string{mastered, ids[0]}, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Groups) != 2 || b.Groups[0].TaskID != mastered || b.Groups[1].TaskID != ids[0] || b.Stats.Ready != 1 || b.Stats.Mastered != 1 {
		t.Fatalf("task_ids: %+v", b.Groups)
	}
	b, err = s.Batch(context.Background(), Request{Step: 2, Tasks: 2, Fill: FillReady, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	checkBatch(t, b)
	if b.Stats.Ready != 2 || b.Stats.Mastered+b.Stats.Filled != 2*b.Stats.Mastered || len(b.Groups) != 2+b.Stats.Filled {
		t.Errorf("fill ready: stats %+v, %d groups", b.Stats, len(b.Groups))
	}
	// Without fill the mastered task's group is just dropped.
	d := open(t, f, Options{Rollout: scripted(rewards, nil)})
	b, err = d.Batch(context.Background(), Request{Step: 1, Tasks: 3, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	if b.Stats.Ready != 2 || b.Stats.Filled != 0 {
		t.Errorf("drop: %+v", b.Stats)
	}
	// All three, one mastered: fill runs out of tasks and says so in Ready.
	b, err = d.Batch(context.Background(), Request{Step: 2, Tasks: 3, Fill: FillReady, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	if b.Stats.Ready != 2 || b.Stats.Filled != 0 {
		t.Errorf("fill with no task left: %+v", b.Stats)
	}
	b, err = d.Batch(context.Background(), Request{Step: 3, Tasks: 1, TaskFilter: mastered, Policy: PolicyReplayEnsemble})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Groups) != 1 || b.Groups[0].TaskID != mastered {
		t.Errorf("task_filter %q: %+v", mastered, b.Groups)
	}
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Step: 4, TaskIDs: []string{"no-such-task"}, Policy: PolicyReplayEnsemble}, `task_ids[0]: "no-such-task" is not a task`},
		{Request{Step: 4, TaskIDs: []string{ids[0], ids[0]}, Policy: PolicyReplayEnsemble}, "task_ids[1]"},
		{Request{Step: 4, Tasks: 3, TaskIDs: []string{ids[0]}, Policy: PolicyReplayEnsemble}, "tasks: 3 with 1 task_ids"},
		{Request{Step: 4, Tasks: 1, TaskFilter: "zzz*", Policy: PolicyReplayEnsemble}, `task_filter: task_filter "zzz*" matches 0 tasks`},
		{Request{Step: 4, Tasks: 1, TaskFilter: "[", Policy: PolicyReplayEnsemble}, "not a glob"},
		{Request{Step: 4, Tasks: 1, Fill: "pad", Policy: PolicyReplayEnsemble}, `fill: "pad"`},
		{Request{Step: 4, TaskIDs: []string{ids[0]}, Fill: FillReady, Policy: PolicyReplayEnsemble}, "fill"},
		{Request{Step: 4, Tasks: 1, MaxStaleness: 99, Policy: PolicyReplayEnsemble}, "max_staleness"},
	} {
		if _, _, err := d.Submit(c.req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.req, err, c.want)
		}
	}
}

// TestPrefetchWithinStaleness: with max_staleness 1 the service computes
// step N+1 with step N's request as soon as N is done; the trainer's
// request for N+1 with its newer policy version gets that batch, marked
// prefetched and 1 version stale; the service never runs more than one
// step ahead of the trainer; a request that differs otherwise is refused.
func TestPrefetchWithinStaleness(t *testing.T) {
	f := fixture(t)
	state := t.TempDir()
	s := open(t, f, Options{StateDir: state, Rollout: scripted(alternating, nil)})
	req := func(step int) Request {
		return Request{Step: step, Tasks: 1, Engine: "sglang+http://127.0.0.1:1/v1#m", PolicyVersion: fmt.Sprint(step - 1), MaxStaleness: 1}
	}
	if _, err := s.Batch(context.Background(), req(1)); err != nil {
		t.Fatal(err)
	}
	var b *Batch
	for range 500 {
		if _, _, done, ok := s.Lookup(2); ok {
			<-done
			b, _, _, _ = s.Lookup(2)
			break
		}
		time.Sleep(2 * time.Millisecond)
	}
	if b == nil || b.Status != StatusDone || !b.Prefetched || b.Stats.Staleness != 1 || b.Request.PolicyVersion != "0" {
		t.Fatalf("step 2 computed ahead: %+v", b)
	}
	time.Sleep(50 * time.Millisecond)
	if _, _, _, ok := s.Lookup(3); ok {
		t.Fatal("step 3 computed two steps ahead of the trainer")
	}
	got, err := s.Batch(context.Background(), req(2))
	if err != nil {
		t.Fatal(err)
	}
	if product(got) != product(b) {
		t.Errorf("the trainer's step 2 is not the prefetched batch")
	}
	// The client's re-POST after a timeout or a restart is the same ask.
	if _, err := s.Batch(context.Background(), req(2)); err != nil {
		t.Errorf("step 2 asked again: %v", err)
	}
	if _, err := open(t, f, Options{StateDir: state, Rollout: scripted(alternating, nil)}).Batch(context.Background(), req(2)); err != nil {
		t.Errorf("step 2 asked again of a restarted service: %v", err)
	}
	bad := req(2)
	bad.Tasks = 2
	if _, _, err := s.Submit(bad); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "computed ahead") {
		t.Errorf("a changed request for a prefetched step: %v", err)
	}
	// Asking for 2 lets 3 run ahead.
	for range 500 {
		if _, _, _, ok := s.Lookup(3); ok {
			return
		}
		time.Sleep(2 * time.Millisecond)
	}
	t.Error("step 3 was not computed ahead once the trainer asked for 2")
}

// TestExportMarksTokens: each exported line says whether it carries
// token ids.
func TestExportMarksTokens(t *testing.T) {
	f := fixture(t)
	state := t.TempDir()
	s := open(t, f, Options{StateDir: state, Rollout: scripted(alternating, nil)})
	if _, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 1, Policy: PolicyReplayEnsemble}); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "x.jsonl")
	if n, _, err := Export(filepath.Join(state, "batches"), out, 1, 0); err != nil || n == 0 {
		t.Fatal(n, err)
	}
	data, _ := os.ReadFile(out)
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !strings.Contains(line, `"tokens":false`) {
			t.Errorf("a scripted sample's line does not say it has no tokens: %.200s", line)
		}
	}
}

// TestPredecessorFailed: a step queued behind one that fails is not
// computed from the older state: it fails, retriable, and both finish once
// asked for again in order.
func TestPredecessorFailed(t *testing.T) {
	f := fixture(t)
	var broken atomic.Bool
	broken.Store(true)
	g := newGate(0)
	rollouts := func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		if j.Step == 1 && broken.Load() {
			if _, err := g.rollout(ctx, j); err != nil {
				return nil, err
			}
			return nil, errors.New("the store is full")
		}
		return scripted(alternating, nil)(ctx, j)
	}
	s := open(t, f, Options{Parallel: 1, Rollout: rollouts})
	req := func(step int) Request { return Request{Step: step, Tasks: 1, Policy: PolicyReplayEnsemble} }
	if _, _, err := s.Submit(req(1)); err != nil {
		t.Fatal(err)
	}
	<-g.reached
	if _, _, err := s.Submit(req(2)); err != nil {
		t.Fatal(err)
	}
	close(g.release)
	if _, err := s.Batch(context.Background(), req(2)); err == nil || !strings.Contains(err.Error(), "step 1 has no saved state") {
		t.Fatalf("step 2 behind a failed step 1: %v", err)
	}
	if steps, _ := s.Steps(); len(steps) != 0 {
		t.Fatalf("saved %v", steps)
	}
	broken.Store(false)
	for step := 1; step <= 2; step++ {
		if _, err := s.Batch(context.Background(), req(step)); err != nil {
			t.Fatalf("step %d again: %v", step, err)
		}
	}
}

// TestStateRepaired: a batch saved without its state (a crash between
// the two writes) gets its state back from the batch at the next start.
func TestStateRepaired(t *testing.T) {
	f := fixture(t)
	state := t.TempDir()
	s := open(t, f, Options{StateDir: state, Rollout: scripted(alternating, nil)})
	if _, err := s.Batch(context.Background(), Request{Step: 1, Tasks: 2, Policy: PolicyReplayEnsemble}); err != nil {
		t.Fatal(err)
	}
	want, _ := s.LoadState(1)
	s.Close(context.Background())
	os.Remove(filepath.Join(state, "state", "step-000001.json"))
	got, err := open(t, f, Options{StateDir: state, Rollout: scripted(alternating, nil)}).LoadState(1)
	if err != nil || fmt.Sprint(got.Kappa) != fmt.Sprint(want.Kappa) || len(want.Kappa) != 2 {
		t.Errorf("repaired state %+v (%v), saved %+v", got, err, want)
	}
}
