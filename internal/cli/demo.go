package cli

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/pipeline"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) demoCmd() *cobra.Command {
	var dir string
	var noInstall bool
	c := &cobra.Command{
		Use:   "demo",
		Short: "Build the paper's case-study world and task, run 6 rollouts and the five gates",
		Long: `Run the whole pipeline once, for real, on the paper's case study: a freelance AV
technician must order the approved rack surge protector. It builds the catalog
and the persona's world day by day (through the store, with the replay and
produces checks), authors the task with its verifier, runs the reference
completion and six scripted rollouts (3 with the hint, 3 without) in live
instances (the shop in Chromium, all eight services over MCP, a bubblewrap
shell), judges each (V, an offline replay judge, an offline inspector), runs
the oracle with the product photos withheld (the image-ablation gate), the
counterfactual probe and the five gates, and prints a report.
No model, network or GPU is needed; on Debian as root, missing system
packages (chromium, bubblewrap, poppler-utils, libfaketime) are installed first.
Everything is written under --dir; rerunning after an interruption works.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if err := e.ensureDeps(ctx, noInstall); err != nil {
				return err
			}
			start := time.Now()
			// The live instances go below a root of this process's own,
			// under the run directory the pipeline would pick; the roots
			// of killed predecessors are swept first.
			abs, err := filepath.Abs(dir)
			if err != nil {
				return err
			}
			runDir, release, err := e.ownScratch(filepath.Join(os.TempDir(), "wildawm-run-"+world.Hash([]byte(abs)).Short()))
			if err != nil {
				return err
			}
			defer release()
			s, err := pipeline.Run(ctx, pipeline.Options{Dir: dir, RunDir: runDir, Progress: e.progress})
			if err != nil {
				return err
			}
			e.printDemo(s, time.Since(start))
			if !s.Report.Passed {
				return fmt.Errorf("the task failed the gates: %s", strings.Join(s.Report.FailedGates(), ", "))
			}
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", "wildawm-demo", "where the store, world, task, trajectories and report are written")
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

func (e *env) printDemo(s *pipeline.Summary, wall time.Duration) {
	w := e.stdout
	r := s.Report
	fmt.Fprintf(w, "\nwildawm demo: the case study, end to end (%s)\n\n", wall.Round(time.Millisecond))
	fmt.Fprintf(w, "world   W0 snapshot %s, world hash %s\n", s.W0.Short(), s.WorldHash.Short())
	fmt.Fprintf(w, "task    %s (reference completion: V=%d)\n\n", s.TaskID, s.ReferenceV)
	fmt.Fprintf(w, "%-4s %-22s %-5s %-3s %-16s %-16s %-12s %s\n", "", "policy (scripted)", "hint", "V", "replay judge", "inspector", "interfaces", "wall")
	for _, ro := range s.Rolled {
		g := ro.Gate
		hint := "no"
		if g.Hint {
			hint = "yes"
		}
		fmt.Fprintf(w, "%-4s %-22s %-5s %-3d %-16s %-16s %-12s %s\n", g.ID, strings.TrimPrefix(g.Policy, "scripted:"), hint, g.V, g.VLLM, g.VAgent,
			strings.Join(g.InterfacesUsed, ","), ro.Result.Wall.Round(time.Millisecond))
	}
	fmt.Fprintln(w)
	for _, g := range r.Gates {
		mark := "PASS"
		if !g.Passed {
			mark = "FAIL"
		}
		fmt.Fprintf(w, "gate %-24s %s  %s\n", g.Name, mark, g.Verdict)
	}
	verdict := "ACCEPTED"
	if !r.Passed {
		verdict = "REJECTED"
	}
	// The demo's ensemble is scripted agents and its judges are offline:
	// the difficulty says so (docs/pool.md rates with a model).
	fmt.Fprintf(w, "\ntask %s, difficulty %s (rated by scripted agents; judged by the offline replay judge and inspector)\n", verdict, r.Difficulty)
	t := s.Timings
	var rollouts time.Duration
	for _, d := range t.Rollouts {
		rollouts += d
	}
	fmt.Fprintf(w, "\ntimings: catalog %s, world %s, task %s, reference %s, rollouts %s, image ablation %s, verification %s, judges %s, gates+probe %s\n",
		t.Catalog.Round(time.Millisecond), t.World.Round(time.Millisecond), t.Task.Round(time.Millisecond), t.Reference.Round(time.Millisecond),
		rollouts.Round(time.Millisecond), t.Ablation.Round(time.Millisecond), t.Verify.Round(time.Millisecond), t.Judges.Round(time.Millisecond), t.Gates.Round(time.Millisecond))
	var ifs []string
	for k := range s.Steps {
		ifs = append(ifs, k)
	}
	sort.Strings(ifs)
	for _, k := range ifs {
		l := s.Steps[k]
		fmt.Fprintf(w, "step latency %-3s: %3d steps, p50 %.1f ms, max %.1f ms\n", k, l.Steps, l.P50MS, l.MaxMS)
	}
	fmt.Fprintf(w, "\nfiles: %s/{gate-report.json,summary.json,task/,rollouts/,store/}\n", s.Dir)
}
