package pipeline

import (
	"context"
	"encoding/json"
	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/state"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
)

func needTools(t *testing.T) {
	t.Helper()
	if err := browser.Available(); err != nil {
		t.Skipf("chromium is not installed (.ci/run installs it): %v", err)
	}
	if err := sandbox.Available(); err != nil {
		t.Skipf("the sandbox cannot run here (.ci/run installs bubblewrap): %v", err)
	}
	if os.Geteuid() != 0 {
		t.Skip("instances mount overlayfs and the sandbox drops from root: run as root (CI does)")
	}
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
// passes all five gates, then proves each gate fails where it should.
func TestCaseStudy(t *testing.T) {
	needTools(t)
	ctx := context.Background()
	dir := t.TempDir()
	p, err := Prepare(ctx, Options{Dir: dir, Progress: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
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
	results, err := p.RunRollouts(ctx, rollout.Ensemble())
	if err != nil {
		t.Fatal(err)
	}
	judgeAndGate := func(tk *task.Task, vdir string, rs []*rollout.Result, during func()) *gate.Report {
		t.Helper()
		rolled, err := p.Judge(ctx, tk, vdir, rj, rs)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := p.Gates(ctx, tk, vdir, rolled, during)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}

	rep := judgeAndGate(p.Task, p.VerifierDir, results, nil)
	if !rep.Passed {
		b, _ := rep.Encode()
		t.Fatalf("the case study fails the gates %v:\n%s", rep.FailedGates(), b)
	}
	for _, r := range rep.Rollouts {
		if r.V == 1 && len(r.InterfacesUsed) != 3 {
			t.Errorf("rollout %s succeeded with interfaces %v", r.ID, r.InterfacesUsed)
		}
	}
	t.Logf("accepted, difficulty %s", rep.Difficulty)

	t.Run("satisfied at W0", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria = []task.Criterion{{ID: "todo", Kind: task.KindFile, Path: "notes/todo.md"}}
		})
		rep := judgeAndGate(tk, vdir, results, nil)
		if !failed(rep, gate.GateInitialUnsatisfaction) {
			t.Errorf("initial_unsatisfaction passed for a task satisfied at W0: %v", rep.Gates)
		}
	})
	t.Run("verifier disagrees with the judges", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria[0].Expect = json.RawMessage(`[["RG8-1002", 2]]`)
		})
		rep := judgeAndGate(tk, vdir, results, nil)
		if !failed(rep, gate.GateJudgeConsistency) {
			t.Errorf("judge_consistency passed with a wrong verifier: %v", rep.Gates)
		}
	})
	t.Run("unsolvable", func(t *testing.T) {
		tk, vdir := variant(t, p, func(tk *task.Task) {
			tk.Verifier.Criteria[0].Expect = json.RawMessage(`[["NO-0000", 7]]`)
		})
		rep := judgeAndGate(tk, vdir, results, nil)
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
		rep := judgeAndGate(p.Task, p.VerifierDir, easy, nil)
		if !failed(rep, gate.GateDifficulty) {
			t.Errorf("difficulty passed with 3/3 hint-free successes: %v", rep.Gates)
		}
	})
	t.Run("verifier script edited during the probe", func(t *testing.T) {
		tk, vdir := variant(t, p, func(*task.Task) {})
		edited := false
		rep := judgeAndGate(tk, vdir, results, func() {
			if !edited {
				edited = true
				f, err := os.OpenFile(filepath.Join(vdir, "scripts", "check_cart.py"), os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				f.WriteString("# the judge was here\n")
				f.Close()
			}
		})
		if !failed(rep, gate.GateCounterfactualProbe) || rep.Probe.Outcome != gate.OutcomeCaveFilesChanged {
			t.Errorf("probe did not catch the edited script: %v", rep.Probe)
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
	if _, err := env.CallTool(ctx, "send_message", map[string]any{"thread": "dm-nobody", "body": "hi"}); err == nil {
		t.Error("send_message to an unknown thread succeeded")
	}
	if _, err := env.CallTool(ctx, "send_message", map[string]any{"to": "Priya Mehta", "thread": "dm-priya-mehta", "body": "x"}); err == nil {
		t.Error("send_message with both thread and to succeeded")
	}
	if _, err := env.CallTool(ctx, "search_messages", map[string]any{"query": "'; DROP TABLE messages; --"}); err != nil {
		t.Errorf("search with SQL-looking text: %v", err)
	}
	if _, err := env.Run(ctx, "exit 3"); err == nil {
		t.Error("a failing command is not an error observation")
	}
	if _, err := env.Run(ctx, "rm -rf /usr/bin/python3 /etc/passwd"); err == nil {
		t.Error("removing system files succeeded")
	}
	// Not logged in: adding to the cart is refused.
	if err := env.Open(ctx, "/p/RG8-1001"); err != nil {
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
