package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) verifyCmd() *cobra.Command {
	var taskDir, w0, w, answer string
	c := &cobra.Command{
		Use:   "verify --task DIR --w SNAPSHOT [--w0 SNAPSHOT] [--answer TEXT]",
		Short: "Compute V(W0, W, a) of a task on two stored world states",
		Long: `Run a task's verifier (docs/verifier.md) on the initial world W0 (default the
task's provenance snapshot) and a final world W, both snapshots of the store
(--store), with the final answer a. Script criteria run in the sandbox. Prints the
result as JSON (v, passed, total, every criterion's evidence); exits non-zero when
V is 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
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
			env := &rollout.Env{Store: st, Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(work, "cache")}, WorkDir: work}
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
	return c
}
