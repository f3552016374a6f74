package judge_test

import (
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// live is a small world-synthesis run, shared by the tests that need live
// instances: built on first use, removed by TestMain.
var live struct {
	once    sync.Once
	err     error
	dirs    []string // removed at the end
	src     *taskgen.Source
	closeFn func()
	env     *rollout.Env
}

func TestMain(m *testing.M) {
	code := m.Run()
	if live.closeFn != nil {
		live.closeFn()
	}
	for _, d := range live.dirs {
		os.RemoveAll(d)
	}
	os.Exit(code)
}

// liveEnv returns the shared run's source and an environment whose
// sessions use the fake browser, skipping where instances cannot run.
func liveEnv(t *testing.T) (*taskgen.Source, *rollout.Env) {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	if _, err := exec.LookPath("python3"); err != nil {
		runtime.SkipOutsideCI(t, "the references' shell steps and the verifiers' scripts need python3 (apt-get install -y python3)")
	}
	live.once.Do(func() { live.err = buildLive() })
	if live.err != nil {
		t.Fatal(live.err)
	}
	return live.src, live.env
}

func buildLive() error {
	ctx := context.Background()
	var dirs [3]string
	for i := range dirs {
		// The sandbox's uid must reach the cache and the work directory.
		d, err := os.MkdirTemp("", "wildawm-judge-")
		if err != nil {
			return err
		}
		os.Chmod(d, 0o755)
		live.dirs = append(live.dirs, d)
		dirs[i] = d
	}
	run, cache, work := dirs[0], dirs[1], dirs[2]
	if _, err := catalog.Build(ctx, filepath.Join(run, "catalog"), generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		return err
	}
	r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: run, Seed: 3})
	if err != nil {
		return err
	}
	ps, _, err := r.Personas(ctx, 3, func(int) int { return 10 }, "")
	if err == nil {
		err = r.Worlds(ctx, ps, 2)
	}
	closeRun()
	if err != nil {
		return err
	}
	src, closeSrc, err := taskgen.OpenSource(ctx, run, cache)
	if err != nil {
		return err
	}
	live.src, live.closeFn = src, closeSrc
	live.env = &rollout.Env{Store: src.Run.Store, Materializer: src.Materializer, CatalogDir: src.CatalogDir, WorkDir: work,
		Services: src.Run.Defs.Library,
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}}
	return nil
}

// familyTask authors fam's first task on the run's last days, saves it
// and runs taskgen's self-check, which gives the reference's final world.
func familyTask(t *testing.T, name string) (*task.Task, string, world.ID) {
	t.Helper()
	src, env := liveEnv(t)
	ctx := context.Background()
	fam, err := taskgen.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	for _, st := range src.States {
		if st.Day < st.Persona.Days-3 {
			continue
		}
		w, err := src.World(ctx, st)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := fam.Sketch(w, rand.New(rand.NewPCG(uint64(st.Day), 1)))
		if err != nil || len(sk) == 0 {
			continue
		}
		d, err := fam.Author(w, sk[0])
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(env.WorkDir, "task-"+d.Task.ID)
		if err := d.Save(dir); err != nil {
			t.Fatal(err)
		}
		env.Self = st.Persona.Name
		c, err := taskgen.CheckTask(ctx, env, d, dir)
		if err != nil || !c.OK {
			t.Fatalf("%s: self-check: %+v, %v", d.Task.ID, c, err)
		}
		return d.Task, filepath.Join(dir, "verifier"), c.Final
	}
	t.Fatalf("no %s task on the test run", name)
	return nil, "", world.ID{}
}

// replay is a rollout policy that replays steps, as an agent would do them.
type replay struct {
	name   string
	steps  []task.Step
	answer string
}

func (p replay) Name() string { return p.name }

func (p replay) Run(ctx context.Context, env *agent.Env, _ task.Public) (string, error) {
	for _, st := range p.steps {
		if err := env.Do(ctx, st.Tool, st.Args); err != nil {
			return "", err
		}
	}
	return p.answer, nil
}

// run runs steps as a rollout of tk in a fresh instance of W0.
func run(t *testing.T, env *rollout.Env, tk *task.Task, id string, steps []task.Step) *rollout.Result {
	t.Helper()
	res, err := env.Run(context.Background(), tk, rollout.Spec{ID: id, Policy: replay{name: "replay-" + id, steps: steps, answer: tk.Answer}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Trajectory.Outcome != rollout.OutcomeDone {
		t.Fatalf("rollout %s: %s %s", id, res.Trajectory.Outcome, res.Trajectory.Error)
	}
	return res
}

// withoutLastWrite is the reference with its last world-changing step
// left out: the last step whose removal leaves a world other than W_ref.
func withoutLastWrite(t *testing.T, env *rollout.Env, tk *task.Task, wref world.ID) (*rollout.Result, task.Step) {
	t.Helper()
	ctx := context.Background()
	ref, err := env.Materializer.Lower(ctx, wref)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(tk.Reference) - 1; i >= 0; i-- {
		st := tk.Reference[i]
		if st.Tool == "browser.fill" || st.Tool == "browser.read" {
			continue // a form's field or a read: the click or the call is the write
		}
		res := run(t, env, tk, "cut", slices.Delete(slices.Clone(tk.Reference), i, i+1))
		got, err := env.Materializer.Lower(ctx, res.Final)
		if err != nil {
			t.Fatal(err)
		}
		if d, err := state.Compare(ctx, ref, got); err != nil {
			t.Fatal(err)
		} else if !d.Empty() {
			return res, st
		}
	}
	t.Fatalf("%s: no reference step changes the world", tk.ID)
	return nil, task.Step{}
}

// TestObserverJudgesFamilies: on tasks of several families (different
// sites, services and files), the observer says completed on a second run
// of the reference, failed on the initial world and failed on the
// reference without its last write, with evidence that names the probe;
// a re-judgment of a world it saw opens no session.
func TestObserverJudgesFamilies(t *testing.T) {
	for _, name := range []string{"wishlist-balance", "course-deadlines", "library-contact", "kept-calcs"} {
		t.Run(name, func(t *testing.T) {
			tk, _, wref := familyTask(t, name)
			_, env := liveEnv(t)
			ctx := context.Background()
			obs := &judge.Observer{Env: env, Task: tk, Reference: wref}
			again := run(t, env, tk, "again", tk.Reference)
			v, ev, err := obs.Judge(ctx, again.Final, "")
			if err != nil || v != gate.Completed {
				t.Fatalf("a second run of the reference: %s, %v\n%s", v, err, strings.Join(ev, "\n"))
			}
			t.Logf("completed: %s", strings.Join(ev, "\n"))
			v, ev, err = obs.Judge(ctx, tk.Provenance.Snapshot, "")
			if err != nil || v != gate.Failed {
				t.Fatalf("the initial world: %s, %v\n%s", v, err, strings.Join(ev, "\n"))
			}
			if !slices.ContainsFunc(ev, func(s string) bool { return strings.Contains(s, "as after the reference completion") }) {
				t.Fatalf("the initial world's evidence names no probe's expected and seen values:\n%s", strings.Join(ev, "\n"))
			}
			cut, step := withoutLastWrite(t, env, tk, wref)
			v, ev, err = obs.Judge(ctx, cut.Final, "")
			if err != nil || v != gate.Failed {
				t.Fatalf("without %s %v: %s, %v\n%s", step.Tool, step.Args, v, err, strings.Join(ev, "\n"))
			}
			t.Logf("without %s: %s", step.Tool, strings.Join(ev, "\n"))
			n := obs.Sessions
			if v2, _, err := obs.Judge(ctx, cut.Final, gate.PressureCompleted); err != nil || v2 != gate.Failed || obs.Sessions != n {
				t.Fatalf("re-judged under pressure: %s, %v, %d sessions after %d", v2, err, obs.Sessions, n)
			}
		})
	}
}

// judged is a rollout judged as the pipeline does: V by the verifier at
// vdir, V_LLM by the replay judge, V_agent by the observer.
func judged(t *testing.T, env *rollout.Env, tk *task.Task, vdir string, rj *judge.ReplayJudge, obs *judge.Observer, res *rollout.Result) gate.Rollout {
	t.Helper()
	ctx := context.Background()
	vr, err := env.Verify(ctx, tk, vdir, res.Final, res.Trajectory.Answer)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := env.Materializer.Lower(ctx, res.Final)
	if err != nil {
		t.Fatal(err)
	}
	vllm, _, err := rj.Judge(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	vagent, ev, err := obs.Judge(ctx, res.Final, "")
	if err != nil {
		t.Fatal(err)
	}
	return gate.Rollout{ID: res.Spec.ID, Policy: res.Spec.Policy.Name(), V: vr.V, VLLM: vllm, VAgent: vagent,
		InterfacesUsed: res.Trajectory.InterfacesUsed(), Evidence: map[string]string{"v_agent": strings.Join(ev, " ")}}
}

// TestObserverRejectsLaxVerifier, end to end: a task whose verifier keeps
// only the checks the reference without its order still passes is
// rejected by the gates, because the observer sees the missing order
// where V does not; the feedback to the task's author names the probe.
func TestObserverRejectsLaxVerifier(t *testing.T) {
	tk, vdir, wref := familyTask(t, "wishlist-balance")
	_, env := liveEnv(t)
	ctx := context.Background()
	full := run(t, env, tk, "r1", tk.Reference)
	cut, _ := withoutLastWrite(t, env, tk, wref)
	cut.Spec.ID = "r2"
	vr, err := env.Verify(ctx, tk, vdir, cut.Final, tk.Answer)
	if err != nil {
		t.Fatal(err)
	}
	lax := *tk
	lax.Verifier.Criteria = nil
	for i, c := range vr.Criteria {
		if c.Pass {
			lax.Verifier.Criteria = append(lax.Verifier.Criteria, tk.Verifier.Criteria[i])
		}
	}
	if len(lax.Verifier.Criteria) == 0 {
		t.Fatalf("no criterion of %s passes without the order: %+v", tk.ID, vr)
	}
	w0, _ := env.Materializer.Lower(ctx, tk.Provenance.Snapshot)
	ref, _ := env.Materializer.Lower(ctx, wref)
	rj := &judge.ReplayJudge{W0: w0, Ref: ref}
	obs := &judge.Observer{Env: env, Task: &lax, Reference: wref}
	c := gate.Candidate{TaskID: lax.ID, Interfaces: lax.Interfaces}
	for _, res := range []*rollout.Result{full, cut} {
		c.Rollouts = append(c.Rollouts, judged(t, env, &lax, vdir, rj, obs, res))
	}
	if r := c.Rollouts[1]; r.V != 1 || r.VAgent != gate.Failed {
		t.Fatalf("the rollout without the order: V=%d, observer %s", r.V, r.VAgent)
	}
	if c.Rollouts[0].VAgent != gate.Completed {
		t.Fatalf("the full rollout: observer %s", c.Rollouts[0].VAgent)
	}
	initial, err := env.Verify(ctx, &lax, vdir, lax.Provenance.Snapshot, "")
	if err != nil {
		t.Fatal(err)
	}
	c.InitialV = initial.V
	c.Probe, err = gate.Probe(ctx, obs.ProbeJudge(map[string]world.ID{"r1": full.Final, "r2": cut.Final}), c.Rollouts, func() (map[string]string, error) { return map[string]string{}, nil })
	if err != nil {
		t.Fatal(err)
	}
	rep, err := gate.Evaluate(c, gate.Config{Rollouts: 2, HintFree: 2})
	if err != nil {
		t.Fatal(err)
	}
	failed := rep.FailedGates()
	if rep.Passed || !slices.Contains(failed, gate.GateJudgeConsistency) || !slices.Contains(failed, gate.GateCounterfactualProbe) {
		t.Fatalf("a lax verifier: passed %v, failed gates %v", rep.Passed, failed)
	}
	fb := gate.Feedback(rep)
	if !strings.Contains(fb, "rollout r2: V=1, V_LLM=failed, V_agent=failed") || !strings.Contains(fb, "GUI: the devices page /orders shows other identifiers and numbers") {
		t.Fatalf("the feedback does not name the disagreement and the probe:\n%s", fb)
	}
}

// TestObserverUnderPressure: over an honest verifier's rollouts (the
// reference, V=1; the reference without its order, V=0) the probe says
// not_applicable for the observer that weighs the framing by its rule (a
// deterministic judge: no pressure phase, never "held"), its blind
// re-judge observing each final world again in a fresh session; and it
// catches the one that defers to the framing and the one that rewrites
// its verifier copy.
func TestObserverUnderPressure(t *testing.T) {
	tk, vdir, wref := familyTask(t, "wishlist-balance")
	_, env := liveEnv(t)
	ctx := context.Background()
	full := run(t, env, tk, "r1", tk.Reference)
	cut, _ := withoutLastWrite(t, env, tk, wref)
	finals := map[string]world.ID{"r1": full.Final, "r2": cut.Final}
	rollouts := []gate.Rollout{{ID: "r1", V: 1}, {ID: "r2", V: 0}}
	for _, tc := range []struct {
		pressure judge.Pressure
		outcome  string
	}{{judge.Weigh, gate.OutcomeNotApplicable}, {judge.Defer, gate.OutcomeCaved}, {judge.Tamper, gate.OutcomeCaveFilesChanged}} {
		copyDir := filepath.Join(t.TempDir(), "verifier")
		if err := verify.CopyDir(ctx, vdir, copyDir); err != nil {
			t.Fatal(err)
		}
		obs := &judge.Observer{Env: env, Task: tk, Reference: wref, VerifierDir: copyDir, Pressure: tc.pressure}
		for id, final := range finals { // the judgment before the probe, cached
			if _, _, err := obs.Judge(ctx, final, ""); err != nil {
				t.Fatalf("judge %s: %v", id, err)
			}
		}
		before := obs.Sessions
		res, err := gate.Probe(ctx, obs.ProbeJudge(finals), rollouts, gate.DigestFS(os.DirFS(copyDir)))
		if err != nil {
			t.Fatal(err)
		}
		if res.Outcome != tc.outcome {
			t.Fatalf("pressure %d: outcome %s, want %s: %+v", tc.pressure, res.Outcome, tc.outcome, res.PerRollout)
		}
		if obs.Sessions-before < len(finals) {
			t.Errorf("pressure %d: the blind re-judge opened %d fresh sessions for %d rollouts: it reused the cached observation", tc.pressure, obs.Sessions-before, len(finals))
		}
		if tc.pressure == judge.Weigh && res.NotApplicable != judge.DeterministicObserver {
			t.Errorf("not_applicable without its reason: %q", res.NotApplicable)
		}
	}
	weigh := &judge.Observer{Env: env, Task: tk, Reference: wref}
	if v, ev, err := weigh.Judge(ctx, full.Final, gate.PressureFailed); err != nil || v != gate.Completed || !strings.Contains(strings.Join(ev, " "), "kept what its evidence shows") {
		t.Fatalf("Weigh, told a complete rollout failed: %s, %v, %v", v, ev, err)
	}
	deferring := &judge.Observer{Env: env, Task: tk, Reference: wref, Pressure: judge.Defer}
	if v, _, err := deferring.Judge(ctx, tk.Provenance.Snapshot, gate.PressureCompleted); err != nil || v != gate.Completed {
		t.Fatalf("Defer, told the initial world is completed: %s, %v", v, err)
	}
}

// TestObserverCannotObserve: a final world no instance can start (not in
// the store) is world-imperfect after every attempt, not a failure of the
// agent; weighing, the framing settles what it could not check.
func TestObserverCannotObserve(t *testing.T) {
	tk, _, wref := familyTask(t, "kept-calcs")
	_, env := liveEnv(t)
	ctx := context.Background()
	obs := &judge.Observer{Env: env, Task: tk, Reference: wref}
	missing := world.Hash([]byte("a world that was never stored"))
	v, ev, err := obs.Judge(ctx, missing, "")
	if err != nil || v != gate.WorldImperfect || !strings.Contains(strings.Join(ev, " "), "could not complete its observation") {
		t.Fatalf("an unstartable world: %s, %v\n%s", v, err, strings.Join(ev, "\n"))
	}
	if v, _, err := obs.Judge(ctx, missing, gate.PressureCompleted); err != nil || v != gate.Completed {
		t.Fatalf("an unstartable world, told it is completed: %s, %v", v, err)
	}
}
