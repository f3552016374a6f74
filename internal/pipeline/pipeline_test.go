package pipeline

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

func needTools(t *testing.T) {
	t.Helper()
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, "chromium is not installed (wildawm setup installs it): "+err.Error())
	}
	runtime.SkipUnlessInstancesRun(t)
}

// variant writes a copy of the task with its verifier changed by edit and
// returns the task and its verifier directory.
func variant(t *testing.T, p *Prepared, edit func(*task.Task)) (*task.Task, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "task")
	if err := verify.CopyDir(context.Background(), p.TaskDir, dir); err != nil {
		t.Fatal(err)
	}
	b, err := p.Task.Encode()
	if err != nil {
		t.Fatal(err)
	}
	v, err := task.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	edit(v)
	if err := v.Save(dir); err != nil {
		t.Fatal(err)
	}
	return v, filepath.Join(dir, "verifier")
}

func failed(rep *gate.Report, name string) bool {
	g, ok := rep.Gate(name)
	return ok && !g.Passed
}

// TestCaseStudy runs the case study end to end with real Chromium,
// bubblewrap, pdftotext, SQLite and the MCP SDK, checks that the task
// passes every gate for the right reason (hard: only the oracle, which
// looks at the photos, succeeds hint-free; without the photo the oracle
// fails), then proves each gate and each probe outcome fails where it
// should, end to end.
func TestCaseStudy(t *testing.T) {
	needTools(t)
	ctx := context.Background()
	dir := t.TempDir()
	p, err := Prepare(ctx, Options{Dir: dir, Progress: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
	ref, _, err := p.Reference(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, err := p.Env.Verify(ctx, p.Task, p.VerifierDir, ref, p.Task.Answer); err != nil || v.V != 1 {
		t.Fatalf("the reference completion does not pass the verifier: %v %+v", err, v)
	}
	rj, err := p.ReplayJudge(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	results, err := p.RunRollouts(ctx, policy.Ensemble())
	if err != nil {
		t.Fatal(err)
	}
	ablated, err := p.Ablate(ctx, p.Task)
	if err != nil || ablated == nil {
		t.Fatalf("the image-ablation rollout did not run: %v", err)
	}
	judgeAndGate := func(tk *task.Task, vdir string, rs []*rollout.Result, pj ProbeJudge) *gate.Report {
		t.Helper()
		rolled, err := p.Judge(ctx, tk, vdir, rj, rs)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := p.Gates(ctx, tk, vdir, rolled, ablated, pj)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	rep := judgeAndGate(p.Task, p.VerifierDir, results, ProbeJudge{})
	if !rep.Passed {
		b, _ := rep.Encode()
		t.Fatalf("the case study fails the gates %v:\n%s", rep.FailedGates(), b)
	}
	for _, r := range rep.Rollouts {
		if r.V == 1 && len(r.InterfacesUsed) != 3 {
			t.Errorf("rollout %s succeeded with interfaces %v", r.ID, r.InterfacesUsed)
		}
		if r.ID == "r2" && r.V != 0 {
			t.Errorf("the image-blind rollout r2 succeeded hint-free: the photo does not decide the task")
		}
	}
	if g, ok := rep.Gate(gate.GateImageAblation); !ok || !g.Passed {
		t.Errorf("the image-ablation gate is missing or failed: %+v", g)
	}
	if rep.Difficulty != "hard" {
		t.Errorf("difficulty %s, want hard: only the oracle, which looks at the photos, should succeed hint-free", rep.Difficulty)
	}
	if rep.Probe.Outcome != gate.OutcomeNotApplicable || rep.Probe.NotApplicable != DeterministicInspector {
		t.Errorf("probe outcome %s (%s), want not_applicable: the offline inspector is deterministic", rep.Probe.Outcome, rep.Probe.NotApplicable)
	}
	t.Logf("accepted, difficulty %s", rep.Difficulty)

	t.Run("satisfied at W0", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria = []task.Criterion{{ID: "todo", Kind: task.KindFile, Path: "notes/todo.md"}}
		})
		rep := judgeAndGate(tk, vdir, results, ProbeJudge{})
		if !failed(rep, gate.GateInitialUnsatisfaction) {
			t.Errorf("initial_unsatisfaction passed for a task satisfied at W0: %v", rep.Gates)
		}
	})
	t.Run("verifier disagrees with the judges", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria[0].Expect = json.RawMessage(fmt.Sprintf(`[[%q, 2]]`, catalog.CandidateBlack))
		})
		rep := judgeAndGate(tk, vdir, results, ProbeJudge{})
		if !failed(rep, gate.GateJudgeConsistency) {
			t.Errorf("judge_consistency passed with a wrong verifier: %v", rep.Gates)
		}
	})
	t.Run("unsolvable", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria[0].Expect = json.RawMessage(`[["NO-0000", 7]]`)
		})
		rep := judgeAndGate(tk, vdir, results, ProbeJudge{})
		if !failed(rep, gate.GateSolvability) {
			t.Errorf("solvability passed for an unsolvable task: %v", rep.Gates)
		}
	})
	t.Run("too easy", func(t *testing.T) {
		extra, err := p.RunRollouts(ctx, []rollout.Spec{{ID: "o2", Policy: policy.Oracle()}, {ID: "o3", Policy: policy.Oracle()}})
		if err != nil {
			t.Fatal(err)
		}
		easy := []*rollout.Result{results[0], extra[0], extra[1], results[3], results[4], results[5]}
		rep := judgeAndGate(p.Task, p.VerifierDir, easy, ProbeJudge{})
		if !failed(rep, gate.GateDifficulty) {
			t.Errorf("difficulty passed with 3/3 hint-free successes: %v", rep.Gates)
		}
	})
	// A verifier that accepts either look-alike does not need the photo:
	// the image-ablated oracle passes it, and the inspector, which checks
	// the look the rubric asks for, disagrees with it blind on r2.
	t.Run("image not decisive", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			var keep []task.Criterion
			for _, c := range tk.Verifier.Criteria {
				if strings.HasPrefix(c.ID, "shortlist") {
					keep = append(keep, c)
				}
			}
			tk.Verifier.Criteria = append(keep, task.Criterion{ID: "either", Kind: task.KindSQL, DB: "shop",
				Query:  fmt.Sprintf("SELECT COUNT(*) FROM cart_items WHERE sku IN ('%s', '%s') AND qty = 2", catalog.CandidateWhite, catalog.CandidateBlack),
				Expect: json.RawMessage(`1`)})
		})
		rep := judgeAndGate(tk, vdir, results, ProbeJudge{})
		if !failed(rep, gate.GateImageAblation) {
			t.Errorf("image_ablation passed for a task the image does not decide: %v", rep.Gates)
		}
		if rep.Probe.Outcome != gate.OutcomeBlindMismatch {
			t.Errorf("probe outcome %s, want blind_mismatch (the inspector sees r2 bought the wrong look): %+v", rep.Probe.Outcome, rep.Probe.PerRollout)
		}
	})
	probeCase := func(t *testing.T, pj ProbeJudge, want string) *gate.Report {
		t.Helper()
		tk, vdir := variant(t, p, func(*task.Task) {})
		before, err := gate.DigestFS(os.DirFS(vdir))()
		if err != nil {
			t.Fatal(err)
		}
		rep := judgeAndGate(tk, vdir, results, pj)
		if !failed(rep, gate.GateCounterfactualProbe) || rep.Probe.Outcome != want {
			t.Errorf("probe outcome %s (gates %v), want %s: %+v", rep.Probe.Outcome, rep.FailedGates(), want, rep.Probe.PerRollout)
		}
		after, err := gate.DigestFS(os.DirFS(vdir))()
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(before, after) {
			t.Errorf("the judge changed the task's own verifier, not its copy")
		}
		return rep
	}
	t.Run("probe: a judge built to cave", func(t *testing.T) {
		probeCase(t, ProbeJudge{Pressure: judge.Defer}, gate.OutcomeCaved)
	})
	t.Run("probe: a judge that edits its verifier copy", func(t *testing.T) {
		rep := probeCase(t, ProbeJudge{Pressure: judge.Tamper}, gate.OutcomeCaveFilesChanged)
		if len(rep.Probe.ChangedFiles) == 0 {
			t.Error("no changed file reported")
		}
	})
	// The default judge weighs the framing by its rule, so it gets no
	// pressure phase; without a vision tool it cannot see the look, so its
	// blind re-judge calls the oracle's rollout failed: the probe fails.
	t.Run("probe: a judge that cannot see the photo", func(t *testing.T) {
		rep := probeCase(t, ProbeJudge{NoVision: true}, gate.OutcomeBlindMismatch)
		got := map[string]string{}
		for _, pr := range rep.Probe.PerRollout {
			got[pr.RolloutID] = pr.Outcome
		}
		if got["r1"] != gate.OutcomeBlindMismatch || got["r2"] != gate.OutcomeNotApplicable || got["r3"] != gate.OutcomeNotApplicable {
			t.Errorf("per-rollout outcomes %v, want r1 blind_mismatch, r2 and r3 not_applicable", got)
		}
	})
	t.Run("infrastructure is never difficulty", func(t *testing.T) {
		faults := map[string]int{"flaky": 2, "broken": rollout.MaxAttempts, "tab-dies": 1}
		p.Env.BeforePolicy = func(ctx context.Context, s rollout.Spec, attempt int, inst *runtime.Instance, sess *rollout.Session) {
			switch {
			case attempt > faults[s.ID]:
			case s.ID == "tab-dies":
				sess.Browser().Close(ctx) // the browser dies under the agent
			default:
				inst.Close(ctx) // the instance dies under the agent
			}
		}
		defer func() { p.Env.BeforePolicy = nil }()
		rs, err := p.RunRollouts(ctx, []rollout.Spec{{ID: "flaky", Policy: policy.Oracle()}, {ID: "broken", Policy: policy.Oracle()}, {ID: "tab-dies", Policy: policy.Oracle()}})
		if err != nil {
			t.Fatal(err)
		}
		if tr := rs[0].Trajectory; tr.Outcome != rollout.OutcomeDone || tr.Attempts != 3 || len(tr.InfraErrors) != 2 {
			t.Errorf("flaky: outcome %s after %d attempts (%v), want done on the third", tr.Outcome, tr.Attempts, tr.InfraErrors)
		}
		if tr := rs[2].Trajectory; tr.Outcome != rollout.OutcomeDone || tr.Attempts != 2 || len(tr.InfraErrors) != 1 || !strings.Contains(tr.InfraErrors[0], "browser is gone") {
			t.Errorf("tab-dies: outcome %s after %d attempts (%v), want done on the second after a browser failure", tr.Outcome, tr.Attempts, tr.InfraErrors)
		}
		if tr := rs[1].Trajectory; tr.Outcome != rollout.OutcomeInfra || tr.Attempts != rollout.MaxAttempts {
			t.Errorf("broken: outcome %s after %d attempts, want infra_error after %d", tr.Outcome, tr.Attempts, rollout.MaxAttempts)
		}
		// r1 (the one hint-free success) replaced by the broken rollout.
		mixed := []*rollout.Result{rs[1], results[1], results[2], results[3], results[4], results[5]}
		rep := judgeAndGate(p.Task, p.VerifierDir, mixed, ProbeJudge{})
		if rep.Passed || rep.Difficulty != gate.Infrastructure || !failed(rep, gate.GateDifficulty) {
			t.Errorf("a task whose hint-free rollout never ran: passed %t, difficulty %s, want rejected for infrastructure", rep.Passed, rep.Difficulty)
		}
		if !slices.Equal(rep.InfraErrors, []string{"broken"}) {
			t.Errorf("infra errors %v", rep.InfraErrors)
		}
	})
}

// TestKilledRunReruns SIGKILLs a run in the middle of its rollouts (leaving
// mounted instances behind) and checks that running again completes.
func TestKilledRunReruns(t *testing.T) {
	needTools(t)
	if os.Getenv("WILDAWM_PIPELINE_CHILD") != "" {
		Run(context.Background(), Options{Dir: os.Getenv("WILDAWM_PIPELINE_CHILD")})
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunReruns$")
	cmd.Env = append(os.Environ(), "WILDAWM_PIPELINE_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(3 * time.Minute)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child run ended before its rollouts: %v", err)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("the child run never reached its rollouts")
		case <-time.After(20 * time.Millisecond):
			if _, err := os.Stat(filepath.Join(dir, "rollouts", "r2.json")); err == nil {
				break wait
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	s, err := Run(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("rerun after a kill: %v", err)
	}
	if !s.Report.Passed {
		t.Fatalf("rerun: gates failed: %v", s.Report.FailedGates())
	}
	if strings.TrimSpace(s.TaskID) == "" {
		t.Fatal("no task")
	}
}

// TestSessionReachesEveryService: an agent's session exposes every MCP
// service of the instance, namespaced, not only the messages service.
func TestSessionReachesEveryService(t *testing.T) {
	ctx := context.Background()
	p := sharedPrepared(t)
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

func TestBadGateConfigStopsAtStartup(t *testing.T) {
	dir := t.TempDir()
	_, err := Prepare(context.Background(), Options{Dir: dir, Gates: gate.Config{Levels: []gate.DifficultyLevel{{Name: "hard", Min: 0, Max: 1}, {Name: "medium", Min: 1, Max: 2}}}})
	if err == nil || !strings.Contains(err.Error(), "gate configuration") {
		t.Fatalf("overlapping levels accepted: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); err == nil {
		t.Error("work started before the configuration was checked")
	}
}

// TestRejectedActionsChangeNothing: actions the site, the service or the
// shell reject are error observations and leave the world as it was.
func TestRejectedActionsChangeNothing(t *testing.T) {
	needTools(t)
	ctx := context.Background()
	dir := t.TempDir()
	p, err := Prepare(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(ctx)
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
