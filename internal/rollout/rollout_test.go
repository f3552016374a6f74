package rollout_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// tinyWorld is a store holding one small world of files (notes/todo.txt),
// a catalog without rows beside it, and a verifier directory with one
// script: the least a live instance runs on.
type tinyWorld struct {
	root, catalog, verifier string
	st                      *store.Store
	w0                      world.ID
}

func newTinyWorld(t *testing.T) *tinyWorld {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	ctx := context.Background()
	// Below the system temporary directory: the sandbox uids reach it.
	root, err := os.MkdirTemp("", "wildawm-rollout-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { reset.Remove(root) })
	os.Chmod(root, 0o755)
	st, err := store.Init(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	todo := "buy milk\n"
	d := &delta.Delta{Version: delta.Version, Persona: "robin", Day: 0, Clock: "2026-03-01T18:00:00Z", Ops: []delta.Op{
		{Op: delta.OpFileWrite, Path: "notes/todo.txt", Content: &todo}}}
	w := filepath.Join(root, "w0")
	if err := delta.ApplyCopy(ctx, "", w, d, &delta.Options{}); err != nil {
		t.Fatal(err)
	}
	sum, err := state.Summarize(ctx, w)
	if err != nil {
		t.Fatal(err)
	}
	w0, err := st.Snapshot(ctx, w, store.Meta{Kind: store.KindWorld, WorldHash: sum.Hash, Persona: "robin", Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	cat := filepath.Join(root, "catalog")
	os.MkdirAll(filepath.Join(cat, world.DBDir), 0o755)
	db, err := state.OpenDB(world.DBPath(cat, "catalog"), false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("CREATE TABLE empty (id INTEGER PRIMARY KEY)"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	vdir := filepath.Join(root, "verifier")
	os.MkdirAll(filepath.Join(vdir, "scripts"), 0o755)
	if err := verify.WriteSDK(vdir); err != nil {
		t.Fatal(err)
	}
	// The script passes when the final home has notes/done.txt.
	script := `import os
from _verify_sdk import FINAL, result
result(os.path.exists(os.path.join(FINAL, "home", "notes", "done.txt")), "done.txt")
`
	if err := os.WriteFile(filepath.Join(vdir, "scripts", "done.py"), []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	return &tinyWorld{root: root, catalog: cat, verifier: vdir, st: st, w0: w0}
}

// factory is a rollout factory over the tiny world with the HTTP browser.
func (w *tinyWorld) factory(uids *sandbox.UIDs) *rollout.Factory {
	return &rollout.Factory{Store: w.st, Materializer: &reset.Materializer{Store: w.st, CacheDir: filepath.Join(w.root, "cache")},
		CatalogDir: w.catalog, WorkDir: filepath.Join(w.root, "work"), UIDs: uids, Timeout: time.Minute,
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}}
}

func (w *tinyWorld) env(t *testing.T) *rollout.Env {
	t.Helper()
	env, err := w.factory(nil).Env("robin", "Robin Vale")
	if err != nil {
		t.Fatal(err)
	}
	return env
}

// task asks for notes/done.txt mentioning milk, checked by a file
// criterion and, with script, also by the verifier's script.
func (w *tinyWorld) task(script bool) *task.Task {
	cs := []task.Criterion{{ID: "done", Kind: "file", Path: "notes/done.txt", Contains: []string{"milk"}}}
	if script {
		cs = append(cs, task.Criterion{ID: "script", Kind: "script", Script: "scripts/done.py"})
	}
	return &task.Task{Version: task.Version, ID: "note-done", Instruction: "Write notes/done.txt once the milk is bought.", Interfaces: []string{"cli"},
		Verifier: task.Verifier{Criteria: cs}, Provenance: task.Provenance{Snapshot: w.w0}}
}

// policyFunc is a scripted policy of a test.
type policyFunc func(ctx context.Context, env *agent.Env, attempt int) (string, error)

type testPolicy struct {
	name string
	mu   sync.Mutex
	runs int
	f    policyFunc
}

func (p *testPolicy) Name() string { return p.name }
func (p *testPolicy) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	p.mu.Lock()
	p.runs++
	n := p.runs
	p.mu.Unlock()
	return p.f(ctx, env, n)
}

func writes(content string) *testPolicy {
	return &testPolicy{name: "writer", f: func(ctx context.Context, env *agent.Env, _ int) (string, error) {
		_, err := env.WriteFile(ctx, "notes/done.txt", content)
		return "done", err
	}}
}

// TestRunVerifiesTheFinalWorld: a rollout that writes the file passes V
// on its own final world, one that writes something else fails the
// criterion that reads it, and one that does nothing leaves W0 as it was
// and fails V.
func TestRunVerifiesTheFinalWorld(t *testing.T) {
	w := newTinyWorld(t)
	env := w.env(t)
	ctx := context.Background()
	tk := w.task(true)
	for _, c := range []struct {
		name   string
		policy *testPolicy
		v      int
		failed []string
	}{
		{"solves", writes("milk bought"), 1, nil},
		{"wrong content", writes("bread bought"), 0, []string{"done"}},
		{"idle", &testPolicy{name: "idle", f: func(context.Context, *agent.Env, int) (string, error) { return "", nil }}, 0, []string{"done", "script"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := env.Run(ctx, tk, rollout.Spec{ID: strings.ReplaceAll(c.name, " ", "-"), Policy: c.policy})
			if err != nil {
				t.Fatal(err)
			}
			tr := res.Trajectory
			if tr.Outcome != rollout.OutcomeDone || tr.Attempts != 1 || tr.Policy != c.policy.name || tr.Start != w.w0 {
				t.Fatalf("trajectory: outcome %s, attempts %d, policy %s, start %s (%s)", tr.Outcome, tr.Attempts, tr.Policy, tr.Start.Short(), tr.Error)
			}
			final, err := w.st.Load(res.Final)
			if err != nil {
				t.Fatal(err)
			}
			initial, _ := w.st.Load(w.w0)
			if final.Parent != w.w0 || (final.WorldHash != initial.WorldHash) != (c.name != "idle") {
				t.Errorf("final %s (parent %s, world %s), W0 %s (world %s): the final world is W0's child, changed when a file was written",
					res.Final.Short(), final.Parent.Short(), final.WorldHash.Short(), w.w0.Short(), initial.WorldHash.Short())
			}
			vr, err := env.Judge(ctx, tk, w.verifier, res)
			if err != nil {
				t.Fatal(err)
			}
			var failed []string
			for _, cr := range vr.Criteria {
				if !cr.Pass {
					failed = append(failed, cr.ID)
				}
			}
			if vr.V != c.v || fmt.Sprint(failed) != fmt.Sprint(c.failed) {
				t.Errorf("V %d, failed %v; want V %d, failed %v (%+v)", vr.V, failed, c.v, c.failed, vr.Criteria)
			}
		})
	}
}

// TestRunOutcomes: how a policy ends is the trajectory's outcome and
// failure, never an error of Run; a policy that outlives the rollout's
// timeout ends on the budget.
func TestRunOutcomes(t *testing.T) {
	w := newTinyWorld(t)
	env := w.env(t)
	env.Timeout = 2 * time.Second
	ctx := context.Background()
	fails := func(err error) *testPolicy {
		return &testPolicy{name: "fails", f: func(context.Context, *agent.Env, int) (string, error) { return "", err }}
	}
	for _, c := range []struct {
		name             string
		policy           *testPolicy
		outcome, failure string
		countable        bool
	}{
		{"stopped", fails(fmt.Errorf("enough: %w", rollout.ErrStopped)), rollout.OutcomeStopped, agent.FailAgent, true},
		{"budget", fails(fmt.Errorf("40 turns: %w", agent.ErrBudget)), rollout.OutcomeBudget, agent.FailureOf(rollout.OutcomeBudget), true},
		{"format", fails(fmt.Errorf("no tool call: %w", agent.ErrFormat)), rollout.OutcomeFormat, agent.FailFormat, false},
		{"gave-up", fails(errors.New("confused")), rollout.OutcomeGaveUp, agent.FailAgent, true},
		{"timeout", &testPolicy{name: "slow", f: func(ctx context.Context, _ *agent.Env, _ int) (string, error) {
			<-ctx.Done()
			return "", ctx.Err()
		}}, rollout.OutcomeBudget, agent.FailureOf(rollout.OutcomeBudget), true},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := env.Run(ctx, w.task(false), rollout.Spec{ID: c.name, Policy: c.policy})
			if err != nil {
				t.Fatalf("Run: %v (a policy's ending is a value)", err)
			}
			tr := res.Trajectory
			if tr.Outcome != c.outcome || tr.Failure != c.failure || tr.Countable() != c.countable || tr.Attempts != 1 {
				t.Errorf("outcome %s, failure %s, countable %t, attempts %d; want %s, %s, %t, 1 (%s)", tr.Outcome, tr.Failure, tr.Countable(), tr.Attempts,
					c.outcome, c.failure, c.countable, tr.Error)
			}
			if c.name == "timeout" && !strings.Contains(tr.Error, "ran out") {
				t.Errorf("a timed-out rollout's error %q does not say the time ran out", tr.Error)
			}
		})
	}
}

// TestRunRetriesInfrastructure: a harness failure is retried in a fresh
// instance, MaxAttempts in all, and recorded; when every attempt fails so,
// the rollout is infrastructure's, its final world W0, never the agent's
// failure. A missing initial snapshot is the task's set-up failure, not
// retried.
func TestRunRetriesInfrastructure(t *testing.T) {
	w := newTinyWorld(t)
	env := w.env(t)
	ctx := context.Background()
	var instances sync.Map
	env.BeforePolicy = func(_ context.Context, spec rollout.Spec, attempt int, inst *runtime.Instance, _ *rollout.Session) {
		instances.Store(fmt.Sprintf("%s/%d", spec.ID, attempt), inst.Dir())
	}
	flaky := &testPolicy{name: "flaky", f: func(ctx context.Context, env *agent.Env, n int) (string, error) {
		if n < 3 {
			return "", fmt.Errorf("browser crashed: %w", agent.ErrInfra)
		}
		_, err := env.WriteFile(ctx, "notes/done.txt", "milk bought")
		return "done", err
	}}
	res, err := env.Run(ctx, w.task(false), rollout.Spec{ID: "flaky", Policy: flaky})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Outcome != rollout.OutcomeDone || tr.Attempts != 3 || len(tr.InfraErrors) != 2 || !strings.Contains(tr.InfraErrors[0], "attempt 1: ") {
		t.Errorf("flaky: outcome %s, attempts %d, infra errors %q", tr.Outcome, tr.Attempts, tr.InfraErrors)
	}
	d1, _ := instances.Load("flaky/1")
	d3, _ := instances.Load("flaky/3")
	if d1 == nil || d1 == d3 {
		t.Errorf("attempts 1 and 3 ran in instances %v and %v: each attempt needs a fresh one", d1, d3)
	}
	if vr, err := env.Judge(ctx, w.task(false), w.verifier, res); err != nil || vr.V != 1 {
		t.Errorf("the third attempt's world: V %v, %v", vr, err)
	}

	broken := &testPolicy{name: "broken", f: func(ctx context.Context, env *agent.Env, _ int) (string, error) {
		env.WriteFile(ctx, "notes/done.txt", "milk bought")
		return "", fmt.Errorf("MCP transport closed: %w", agent.ErrInfra)
	}}
	res, err = env.Run(ctx, w.task(false), rollout.Spec{ID: "broken", Policy: broken})
	if err != nil {
		t.Fatal(err)
	}
	tr = res.Trajectory
	if tr.Outcome != rollout.OutcomeInfra || tr.Failure != agent.FailInfra || tr.Countable() || tr.Attempts != rollout.MaxAttempts || res.Final != w.w0 {
		t.Errorf("broken: outcome %s, failure %s, attempts %d, final %s (W0 %s)", tr.Outcome, tr.Failure, tr.Attempts, res.Final.Short(), w.w0.Short())
	}
	if broken.runs != rollout.MaxAttempts {
		t.Errorf("the broken policy ran %d times, want %d", broken.runs, rollout.MaxAttempts)
	}

	missing := w.task(false)
	missing.Provenance.Snapshot = world.Hash([]byte("no such world"))
	never := &testPolicy{name: "never", f: func(context.Context, *agent.Env, int) (string, error) { return "", nil }}
	res, err = env.Run(ctx, missing, rollout.Spec{ID: "missing", Policy: never})
	if err != nil {
		t.Fatal(err)
	}
	tr = res.Trajectory
	if tr.Outcome != rollout.OutcomeSetup || tr.Failure != agent.FailSetup || tr.Attempts != 1 || never.runs != 0 {
		t.Errorf("missing snapshot: outcome %s, failure %s, attempts %d, policy runs %d", tr.Outcome, tr.Failure, tr.Attempts, never.runs)
	}
}

// TestAgentFaultIsScoredWithoutVerifying: an answer over
// verify.MaxAnswerBytes is the agent's fault, recorded in the trajectory:
// Judge gives V 0 with every criterion failed, even though the world is
// solved.
func TestAgentFaultIsScoredWithoutVerifying(t *testing.T) {
	w := newTinyWorld(t)
	env := w.env(t)
	ctx := context.Background()
	huge := &testPolicy{name: "huge", f: func(ctx context.Context, env *agent.Env, _ int) (string, error) {
		_, err := env.WriteFile(ctx, "notes/done.txt", "milk bought")
		return strings.Repeat("a", verify.MaxAnswerBytes+1), err
	}}
	res, err := env.Run(ctx, w.task(false), rollout.Spec{ID: "huge", Policy: huge})
	if err != nil {
		t.Fatal(err)
	}
	tr := res.Trajectory
	if tr.Fault == "" || tr.Failure != agent.FailAgent {
		t.Fatalf("fault %q, failure %q: an over-long answer is the agent's fault", tr.Fault, tr.Failure)
	}
	vr, err := env.Judge(ctx, w.task(false), w.verifier, res)
	if err != nil {
		t.Fatal(err)
	}
	if vr.V != 0 || vr.Passed != 0 {
		t.Errorf("judged V %d with %d criteria passed, want 0 and 0", vr.V, vr.Passed)
	}
}

// TestFactory: one Env per key, each with a work directory of its own,
// all sharing the factory's allocator; a key that is no name is refused.
func TestFactory(t *testing.T) {
	f := &rollout.Factory{WorkDir: t.TempDir(), UIDs: sandbox.NewUIDs(700000, 0)}
	a, err := f.Env("robin", "Robin Vale")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := f.Env("sam", "Sam Reyes")
	again, _ := f.Env("robin", "Robin Vale")
	if a != again || a == b || a.WorkDir == b.WorkDir || a.UIDs != f.UIDs || b.UIDs != f.UIDs || a.Self != "Robin Vale" {
		t.Errorf("envs: robin %p (again %p), sam %p; work %s, %s", a, again, b, a.WorkDir, b.WorkDir)
	}
	if fi, err := os.Stat(a.WorkDir); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("work directory %s: %v (the sandbox uids read instances there: 0755)", a.WorkDir, err)
	}
	for _, bad := range []string{"../up", "", "a/b", ".hidden"} {
		if _, err := f.Env(bad, "x"); err == nil || !strings.Contains(err.Error(), "environment key") {
			t.Errorf("key %q: %v", bad, err)
		}
	}
}

// TestNoTwoSandboxesShareAUID: a factory's Envs hand out uids to 1,200
// instances and to the script runners of verifiers and mutation checks
// at once, and no uid comes twice; then live rollouts in two Envs run in
// instances of distinct uids, with verifiers of their own.
func TestNoTwoSandboxesShareAUID(t *testing.T) {
	f := &rollout.Factory{WorkDir: t.TempDir(), UIDs: sandbox.NewUIDs(800000, 0)}
	var envs []*rollout.Env
	for _, k := range []string{"a", "b", "c", "d"} {
		env, err := f.Env(k, k)
		if err != nil {
			t.Fatal(err)
		}
		envs = append(envs, env)
	}
	var mu sync.Mutex
	seen := map[int]string{}
	take := func(uid int, who string) {
		mu.Lock()
		defer mu.Unlock()
		if prev, ok := seen[uid]; ok {
			t.Errorf("uid %d given to %s and to %s", uid, prev, who)
		}
		seen[uid] = who
	}
	var wg sync.WaitGroup
	for i := range 1200 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid, err := envs[i%len(envs)].NewUID()
			if err != nil {
				t.Error(err)
				return
			}
			take(uid, fmt.Sprintf("instance %d", i))
		}()
		if i%100 == 0 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r, err := envs[(i/100)%len(envs)].ScriptRunner()
				if err != nil {
					t.Error(err)
					return
				}
				take(r.UID, fmt.Sprintf("script runner %d", i/100))
			}()
		}
	}
	wg.Wait()
	if len(seen) != 1212 || f.UIDs.Taken() != 1212 {
		t.Fatalf("%d distinct uids of %d taken, want 1212", len(seen), f.UIDs.Taken())
	}

	w := newTinyWorld(t)
	lf := w.factory(sandbox.NewUIDs(810000, 0))
	robin, _ := lf.Env("robin", "Robin Vale")
	sam, _ := lf.Env("sam", "Sam Reyes")
	uids := map[int]string{}
	var umu sync.Mutex
	hook := func(_ context.Context, spec rollout.Spec, _ int, inst *runtime.Instance, _ *rollout.Session) {
		uid, _ := inst.SandboxIDs()
		umu.Lock()
		defer umu.Unlock()
		if prev, ok := uids[uid]; ok {
			t.Errorf("rollouts %s and %s ran as uid %d", prev, spec.ID, uid)
		}
		uids[uid] = spec.ID
	}
	robin.BeforePolicy, sam.BeforePolicy = hook, hook
	var rwg sync.WaitGroup
	for i := range 6 {
		env := robin
		if i%2 == 1 {
			env = sam
		}
		rwg.Add(1)
		go func() {
			defer rwg.Done()
			res, err := env.Run(context.Background(), w.task(true), rollout.Spec{ID: fmt.Sprintf("r%d", i), Policy: writes("milk bought")})
			if err != nil {
				t.Error(err)
				return
			}
			vr, err := env.Judge(context.Background(), w.task(true), w.verifier, res)
			if err != nil || vr.V != 1 {
				t.Errorf("rollout r%d: V %v, %v", i, vr, err)
			}
		}()
	}
	rwg.Wait()
	// Six instances and six verifiers' scripts, each a uid of its own.
	if len(uids) != 6 || lf.UIDs.Taken() != 12 {
		t.Errorf("%d instance uids, %d uids taken; want 6 and 12", len(uids), lf.UIDs.Taken())
	}
}

// TestScoreKeepsTheFault: a stored rollout is scored with its fault. The
// same solved world and answer pass V without one, and with the fault a
// rollout carries (the agent made its final world unsnapshottable) are V 0:
// a regrade from a pool's record never turns the agent's fault into a pass.
func TestScoreKeepsTheFault(t *testing.T) {
	w := newTinyWorld(t)
	env := w.env(t)
	ctx := context.Background()
	tk := w.task(true)
	res, err := env.Run(ctx, tk, rollout.Spec{ID: "solves", Policy: writes("milk bought")})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		fault string
		v     int
	}{{"", 1}, {"snapshot the final world: a home file name the store cannot keep", 0}} {
		vr, err := env.Score(ctx, tk, w.verifier, res.Final, res.Trajectory.Answer, c.fault)
		if err != nil {
			t.Fatal(err)
		}
		if vr.V != c.v || (c.fault != "" && vr.Fault == "") {
			t.Errorf("fault %q: V %d (fault %q), want V %d", c.fault, vr.V, vr.Fault, c.v)
		}
	}
}
