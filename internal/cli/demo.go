package cli

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
)

func (e *env) demoCmd() *cobra.Command {
	var dir string
	var noInstall bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Build the paper's case-study world and task, run 6 rollouts and the gates",
		Long: `Run the whole pipeline once, for real, on the paper's case study: a freelance AV
technician must order the approved rack surge protector. It grows the persona's
world day by day in a world run under --dir (through the store, with the replay
and produces checks), writes the task with the case-study task family and
self-checks it (as syn tasks --check does), then gates it as pool run does:
six scripted rollouts (3 with the hint, 3 without) in live instances (the shop
in Chromium, all eight services over MCP, a bubblewrap shell), judged three ways
(V, the offline replay judge, the offline observer), the counterfactual probe,
the five gates, and the checks beyond them: the image-ablation check (the
scripted procedure with the product photos withheld must fail, and with them
shown must pass), the oracle, the answer-only shortcut, the interfaces and the
mutation check. It prints a report.
No model, network or GPU is needed; on Debian as root, missing system
packages (chromium, bubblewrap, poppler-utils, libfaketime) are installed first.
Everything is written under --dir; rerunning reads back what is done.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := e.ensureDeps(ctx, noInstall); err != nil {
				return err
			}
			start := time.Now()
			cs, done, err := e.caseStudy(ctx, dir, false)
			if err != nil {
				return err
			}
			defer done()
			prepared := time.Since(start)
			// The pool's own gater and its default ensemble, the shortcut
			// agents on the case study's declared facts.
			g := &pool.Gater{Env: func(*task.Task) (pool.Worlds, error) { return cs.env, nil }, Progress: e.progress}
			pool.Defaults(g)
			o, err := g.Do(ctx, pool.Job{TaskDir: cs.taskDir, Seed: 1})
			if err != nil {
				return err
			}
			e.printDemo(dir, cs, o, prepared, time.Since(start))
			if !o.Accepted {
				return fmt.Errorf("the task failed the gates: %s", strings.Join(o.Report.FailedGates(), ", "))
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "wildawm-demo", "the world run the store, world, task, trajectories and gate report are written to")
	c.Flags().BoolVar(&noInstall, "no-install", false, "never install missing system packages")
	return c
}

func (e *env) setupCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "setup",
		Short: "Install the system packages the demo and the tests need (as root on Debian)",
		Long: `Check for chromium, bubblewrap, poppler-utils, libfaketime and python3 and, as
root on a Debian-like system, install the missing ones with apt-get; elsewhere,
print the command that would. Then check that the sandbox runs. The README's
test command runs it first, so that a fresh machine runs every test instead of
skipping the ones that need these tools.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := e.ensureDeps(cmd.Context(), false); err != nil {
				return err
			}
			fmt.Fprintln(e.stdout, "setup: chromium, bubblewrap, poppler-utils, libfaketime and python3 are present; the sandbox runs")
			return nil
		},
	}
}

// ensureDeps checks the system tools the demo needs and, as root on a
// Debian-like system, installs the missing ones with apt-get.
func (e *env) ensureDeps(ctx context.Context, noInstall bool) error {
	missing := map[string]string{}
	if browser.Available() != nil {
		missing["chromium"] = "a real browser for the shop website"
	}
	if _, err := exec.LookPath("bwrap"); err != nil {
		missing["bubblewrap"] = "the sandboxed shell"
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		missing["poppler-utils"] = "pdftotext inside the sandbox"
	}
	if sandbox.ClockAvailable() != nil {
		missing["libfaketime"] = "the frozen clock inside the sandbox"
	}
	if _, err := os.Stat("/usr/bin/python3"); err != nil {
		missing["python3"] = "the verifiers' scripts inside the sandbox"
	}
	if len(missing) > 0 {
		var names []string
		for n := range missing {
			names = append(names, n)
		}
		sort.Strings(names)
		_, aptErr := exec.LookPath("apt-get")
		if noInstall || os.Geteuid() != 0 || aptErr != nil {
			return fmt.Errorf("missing system packages: %s; install them (e.g. `apt-get install -y %s`) or run as root on Debian to let the demo install them",
				strings.Join(names, ", "), strings.Join(names, " "))
		}
		e.progress("installing missing system packages with apt-get: %s", strings.Join(names, ", "))
		for _, args := range [][]string{{"update", "-qq"}, append([]string{"install", "-y", "-qq"}, names...)} {
			cmd := exec.CommandContext(ctx, "apt-get", args...)
			cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("apt-get %s: %w\n%s", strings.Join(args, " "), err, tail(out, 2000))
			}
		}
	}
	if err := sandbox.Available(); err != nil {
		return fmt.Errorf("the sandboxed shell cannot run here: %w", err)
	}
	if err := browser.Available(); err != nil {
		return err
	}
	return nil
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (e *env) printDemo(dir string, cs *caseStudy, o *pool.Outcome, prepared, wall time.Duration) {
	w := e.stdout
	r := o.Report
	fmt.Fprintf(w, "\nwildawm demo: the case study, end to end (%s)\n\n", wall.Round(time.Millisecond))
	fmt.Fprintf(w, "world   W0 snapshot %s, world hash %s\n", cs.w0().Short(), cs.worldHash.Short())
	refV := 0
	if g, ok := r.Gate(pool.GateOracle); ok && g.Passed {
		refV = 1
	}
	fmt.Fprintf(w, "task    %s (reference completion: V=%d)\n\n", o.TaskID, refV)
	fmt.Fprintf(w, "%-4s %-22s %-5s %-3s %-16s %-16s %-12s %s\n", "", "policy (scripted)", "hint", "V", "replay judge", "observer", "interfaces", "wall")
	var checks []string
	for _, ro := range o.Rollouts {
		if !ro.Ensemble() {
			checks = append(checks, fmt.Sprintf("%s V=%d", ro.ID, ro.V))
			continue
		}
		hint := "no"
		if ro.Hint {
			hint = "yes"
		}
		fmt.Fprintf(w, "%-4s %-22s %-5s %-3d %-16s %-16s %-12s %s\n", ro.ID, strings.TrimPrefix(ro.Policy, "scripted:"), hint, ro.V, ro.VLLM, ro.VAgent,
			strings.Join(ro.Interfaces, ","), (time.Duration(ro.WallMS) * time.Millisecond).Round(time.Millisecond))
	}
	fmt.Fprintf(w, "checks: %s\n\n", strings.Join(checks, ", "))
	for _, g := range r.Gates {
		mark := "PASS"
		if !g.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "gate %-24s %s  %s\n", g.Name, mark, g.Verdict)
	}
	verdict := "ACCEPTED"
	if !o.Accepted {
		verdict = "REJECTED"
	}
	if n := len(o.Revisions); n > 0 {
		verdict += fmt.Sprintf(" after %d revisions", n)
	}
	// The demo's ensemble is scripted agents and its judges are offline:
	// the difficulty says so (docs/pool.md rates with a model).
	fmt.Fprintf(w, "\ntask %s, difficulty %s (rated by shortcut agents; judged by the offline replay judge and observer)\n", verdict, o.Difficulty)
	t := o.Timings
	msd := func(v float64) time.Duration {
		return (time.Duration(v*1000) * time.Microsecond).Round(time.Millisecond)
	}
	fmt.Fprintf(w, "\ntimings: world and task %s, rollouts %s, verification %s, judges %s, probe %s, mutation check %s, gating %s\n",
		prepared.Round(time.Millisecond), msd(t.RolloutsMS), msd(t.VerifyMS), msd(t.JudgesMS), msd(t.ProbeMS), msd(t.MutationMS), msd(t.TotalMS))
	steps := e.stepLatencies(cs.taskDir, o)
	for _, k := range slices.Sorted(maps.Keys(steps)) {
		l := steps[k]
		fmt.Fprintf(w, "step latency %-3s: %3d steps, p50 %.1f ms, max %.1f ms\n", k, l.steps, l.p50, l.max)
	}
	fmt.Fprintf(w, "\nfiles: %s/{outcome.json,report.json,rollouts/} (the gating), %s (the task), %s (the store)\n",
		filepath.Join(cs.taskDir, pool.GateDir), cs.taskDir, filepath.Join(dir, "store"))
}

// latency summarises step durations of one interface.
type latency struct {
	steps    int
	p50, max float64
}

// stepLatencies are the step durations of a gated task's ensemble
// rollouts, by interface.
func (e *env) stepLatencies(taskDir string, o *pool.Outcome) map[string]latency {
	by := map[string][]float64{}
	for _, r := range o.Rollouts {
		if !r.Ensemble() {
			continue
		}
		tr, err := agent.LoadTrajectory(filepath.Join(taskDir, r.Trajectory))
		if err != nil {
			e.progress("step latencies: %v", err)
			continue
		}
		for _, s := range tr.Steps {
			by[s.Interface] = append(by[s.Interface], s.DurationMS)
		}
	}
	out := map[string]latency{}
	for k, ds := range by {
		slices.Sort(ds)
		out[k] = latency{steps: len(ds), p50: ds[(len(ds)-1)/2], max: ds[len(ds)-1]}
	}
	return out
}
