package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/openenv"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/world"
)

// openenvTRLCmd is wildawm openenv trl-env: the TRL environment class of a
// pool split's tools (openenv.WriteTRL).
func (e *env) openenvTRLCmd() *cobra.Command {
	f := openenvFlags{maxSessions: 1, maxSteps: openenv.DefaultMaxSteps, idleTimeout: openenv.DefaultIdleTimeout, stepTimout: openenv.DefaultStepTimeout}
	var out, url, class string
	c := &cobra.Command{
		Use:   "trl-env --dir RUN [--split rl] --out FILE.py [--url http://127.0.0.1:8010] [--class WildawmEnv]",
		Short: "Write a TRL environment_factory class for a pool split's tools",
		Long: `Write a Python module (standard library only) with an environment class for
TRL's GRPOTrainer(environment_factory=...): one method per tool the split's
tasks can meet (the harness's tools, every MCP service's tools of their
worlds, and answer; listed from one instance of each initial world, started
and torn down), each with the typed arguments and the Google docstring TRL
turns into the schema the model sees, plus reset and get_reward. The class
talks to wildawm openenv serve over HTTP POST /mcp; --url is the server it
defaults to (WILDAWM_OPENENV_URL overrides it at run time). docs/openenv.md,
"TRL", is the contract.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("--out FILE.py is required: where to write the module")
			}
			opts, closeEnv, err := e.openenvOptions(cmd, &f)
			if err != nil {
				return err
			}
			defer closeEnv()
			srv, err := openenv.New(opts)
			if err != nil {
				return err
			}
			defer func() {
				ctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), time.Minute)
				defer cancel()
				srv.Close(ctx)
			}()
			tools, err := srv.PoolTools(cmd.Context())
			if err != nil {
				return err
			}
			var b bytes.Buffer
			if err := openenv.WriteTRL(&b, tools, openenv.TRLOptions{Class: class, URL: url, Source: fmt.Sprintf("split %s of %s, %d tasks", f.split, f.dir, len(opts.Tasks))}); err != nil {
				return err
			}
			if err := world.WriteFileAtomic(out, b.Bytes(), 0o644); err != nil {
				return fmt.Errorf("--out %s: %w", out, err)
			}
			fmt.Fprintf(e.stdout, "wrote %s: class %s with %d tools for %d tasks of split %s\n", out, class, len(tools), len(opts.Tasks), f.split)
			return nil
		},
	}
	c.Flags().StringVar(&f.dir, "dir", defaultRunDir, "the world run whose pool the class is for (DIR/"+pool.File+")")
	c.Flags().StringVar(&f.split, "split", pool.SplitRL, "the pool split: "+pool.SplitSFT+", "+pool.SplitRL+" or "+pool.SplitVal)
	c.Flags().BoolVar(&f.fakeBrowser, "fake-browser", false, "list the tools with the HTTP browser (no Chromium); the tools are the same")
	c.Flags().StringVar(&out, "out", "", "the Python module to write, e.g. wildawm_env.py")
	c.Flags().StringVar(&url, "url", "http://127.0.0.1:8010", "the base URL of wildawm openenv serve the class defaults to")
	c.Flags().StringVar(&class, "class", "WildawmEnv", "the environment class's name")
	return c
}
