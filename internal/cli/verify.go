package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) verifyCmd() *cobra.Command {
	var taskDir, w0, w, answer string
	var regrade bool
	c := &cobra.Command{
		Use:   "verify --task DIR (--w SNAPSHOT [--w0 SNAPSHOT] [--answer TEXT] | --regrade)",
		Short: "Compute V(W0, W, a) of a task on two stored world states",
		Long: `Run a task's verifier (docs/verifier.md) on the initial world W0 (default the
task's provenance snapshot) and a final world W, both snapshots of the store
(--store), with the final answer a. Script criteria run in the sandbox. Prints the
result as JSON (v, passed, total, every criterion's evidence); exits non-zero when
V is 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if regrade {
				return e.regrade(cmd, taskDir)
			}
			if taskDir == "" || w == "" {
				return fmt.Errorf("--task and --w are required: the task's directory and the final world's snapshot")
			}
			t, err := task.Load(taskDir)
			if err != nil {
				return err
			}
			st, err := e.openStore(false)
			if err != nil {
				return err
			}
			resolve := func(flag, s string) (world.ID, error) {
				id, err := st.Resolve(s)
				if err != nil {
					return world.ID{}, fmt.Errorf("%s: %w", flag, err)
				}
				return id, nil
			}
			if w0 != "" {
				if t.Provenance.Snapshot, err = resolve("--w0", w0); err != nil {
					return err
				}
			}
			final, err := resolve("--w", w)
			if err != nil {
				return err
			}
			work, err := os.MkdirTemp("", "wildawm-verify-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(work)
			if err := os.Chmod(work, 0o755); err != nil {
				return err
			}
			env := &rollout.Env{Store: st, Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(work, "cache")}, WorkDir: work, UIDs: e.uids}
			res, err := env.Verify(ctx, t, filepath.Join(taskDir, "verifier"), final, answer)
			if err != nil {
				return err
			}
			b, _ := json.MarshalIndent(res, "", "  ")
			fmt.Fprintln(e.stdout, string(b))
			if res.V != 1 {
				return fmt.Errorf("V = 0: %d of %d criteria passed", res.Passed, res.Total)
			}
			return nil
		},
	}
	c.Flags().StringVar(&taskDir, "task", "", "the task's directory (task.json and verifier/)")
	c.Flags().StringVar(&w0, "w0", "", "the initial world's snapshot (default the task's provenance)")
	c.Flags().StringVar(&w, "w", "", "the final world's snapshot")
	c.Flags().StringVar(&answer, "answer", "", "the final answer")
	c.Flags().BoolVar(&regrade, "regrade", false, "re-verify a gated task's stored rollouts (DIR/gate/) with its current verifier, without new rollouts; the store is --store (the world run's DIR/store)")
	e.runStoreFlag(c)
	return c
}

// regrade re-verifies a gated task's stored rollouts.
func (e *env) regrade(cmd *cobra.Command, taskDir string) error {
	if taskDir == "" {
		return fmt.Errorf("--regrade needs --task: a gated task's directory")
	}
	st, err := e.openStore(false)
	if err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "wildawm-regrade-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if err := os.Chmod(work, 0o755); err != nil {
		return err
	}
	env := &rollout.Env{Store: st, Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(work, "cache")}, WorkDir: work, UIDs: e.uids}
	rg, err := pool.RegradeTask(cmd.Context(), env, taskDir, gate.Config{})
	if err != nil {
		return err
	}
	changed := 0
	for _, r := range rg.Rollouts {
		mark := ""
		if r.Before != r.After {
			mark = "  (changed)"
			changed++
		}
		fmt.Fprintf(e.stdout, "%s\tV %d -> %d\t%s%s\n", r.ID, r.Before, r.After, r.Evidence, mark)
	}
	verdict := "passes"
	if !rg.Report.Passed {
		verdict = "fails " + strings.Join(rg.Report.FailedGates(), ", ")
	}
	fmt.Fprintf(e.stdout, "%d of %d stored rollouts change verdict; the paper's gates on the stored evidence: %s\n", changed, len(rg.Rollouts), verdict)
	return nil
}
