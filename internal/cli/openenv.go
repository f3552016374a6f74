package cli

import (
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/openenv"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/task"
)

func (e *env) openenvCmd() *cobra.Command {
	c := &cobra.Command{Use: "openenv", Short: "Serve the pool's tasks to OpenEnv clients (TRL, SkyRL, ART) over WebSocket"}
	c.AddCommand(e.openenvServeCmd())
	c.AddCommand(e.openenvTRLCmd())
	return c
}

// openenvFlags are openenv serve's flags.
type openenvFlags struct {
	dir, split              string
	plane                   planeFlags
	fakeBrowser             bool
	maxSessions, maxSteps   int
	idleTimeout, stepTimout time.Duration
	seed                    uint64
}

func (e *env) openenvServeCmd() *cobra.Command {
	var f openenvFlags
	c := &cobra.Command{
		Use:   "serve --dir RUN [--split rl] [--addr 127.0.0.1:8010]",
		Short: "Serve a split of the pool as an OpenEnv environment",
		Long: `Serve the tasks of one split of a world run's pool (DIR/pool/pool.json, written
by wildawm pool run) as an OpenEnv environment: GET /health, /metadata, /schema
and the WebSocket /ws, where each connection is a session of reset, step, state
and close messages (docs/openenv.md). A reset starts a fresh instance of a
task's initial world; the answer action or the step budget ends the episode,
which is verified: the last observation carries the verifier's results and the
reward. Prints the base URL the listener bound as the first line, then serves
until interrupted; every instance is torn down on exit. With --token-file every
request but GET /health (the WebSocket upgrade too) needs "Authorization:
Bearer TOKEN"; listening beyond loopback (--addr 0.0.0.0:8010) requires it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pl, err := e.listenPlane(&f.plane)
			if err != nil {
				return err
			}
			opts, closeEnv, err := e.openenvOptions(cmd, &f)
			if err != nil {
				pl.close()
				return err
			}
			defer closeEnv()
			srv, err := openenv.New(opts)
			if err != nil {
				pl.close()
				return err
			}
			what := fmt.Sprintf("%d tasks as OpenEnv (WebSocket /ws)", srv.Metadata().Tasks)
			return e.servePlane(cmd.Context(), pl, srv.Handler(), what, srv.Close)
		},
	}
	c.Flags().StringVar(&f.dir, "dir", defaultRunDir, "the world run whose pool is served (DIR/"+pool.File+")")
	c.Flags().StringVar(&f.split, "split", pool.SplitRL, "the pool split served: "+pool.SplitSFT+", "+pool.SplitRL+" or "+pool.SplitVal)
	f.plane.register(c, "127.0.0.1:8010")
	c.Flags().BoolVar(&f.fakeBrowser, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium, no script) instead of Chromium")
	c.Flags().IntVar(&f.maxSessions, "max-sessions", openenv.DefaultMaxSessions, "WebSocket sessions at once; more connections get CAPACITY_REACHED")
	c.Flags().IntVar(&f.maxSteps, "max-steps", openenv.DefaultMaxSteps, "an episode's step budget: after so many actions it ends and is verified")
	c.Flags().DurationVar(&f.idleTimeout, "idle-timeout", openenv.DefaultIdleTimeout, "close a session that sends nothing for so long")
	c.Flags().DurationVar(&f.stepTimout, "step-timeout", openenv.DefaultStepTimeout, "bound on one message's work (a reset, a step, the verification)")
	c.Flags().Uint64Var(&f.seed, "seed", 1, "the seed of the order in which resets without a task_id take the split's tasks")
	return c
}

// openenvOptions opens the world run and its pool and returns the server's
// options over the split's tasks, and what closes the browser.
func (e *env) openenvOptions(cmd *cobra.Command, f *openenvFlags) (openenv.Options, func(), error) {
	ctx := cmd.Context()
	if f.maxSessions < 1 || f.maxSteps < 1 || f.idleTimeout <= 0 || f.stepTimout <= 0 {
		return openenv.Options{}, nil, errors.New("--max-sessions and --max-steps must be at least 1, --idle-timeout and --step-timeout positive")
	}
	p, err := pool.LoadPool(filepath.Join(f.dir, pool.File))
	if err != nil {
		return openenv.Options{}, nil, fmt.Errorf("--dir %s: %w (wildawm pool run --dir %s builds the pool)", f.dir, err, f.dir)
	}
	entries := p.Split(f.split)
	if len(entries) == 0 {
		return openenv.Options{}, nil, fmt.Errorf("--split %s: the pool of %s has no such task (its splits: %v)", f.split, f.dir, p.Counts)
	}
	src, closeSrc, err := e.openSource(ctx, f.dir)
	if err != nil {
		return openenv.Options{}, nil, err
	}
	personas := map[string]*persona.Persona{}
	for _, st := range src.States {
		personas[st.Persona.ID] = st.Persona
	}
	opts := openenv.Options{Split: f.split, MaxSessions: f.maxSessions, MaxSteps: f.maxSteps, IdleTimeout: f.idleTimeout, StepTimeout: f.stepTimout,
		Seed: f.seed, Logger: slog.New(slog.NewTextHandler(e.stderr, nil))}
	for _, en := range entries {
		t, err := task.Load(p.TaskDir(en))
		if err != nil {
			closeSrc()
			return openenv.Options{}, nil, fmt.Errorf("pool entry %s: %w", en.ID, err)
		}
		if personas[t.Provenance.Persona] == nil {
			closeSrc()
			return openenv.Options{}, nil, fmt.Errorf("task %s: persona %q is not in %s: serve a pool with the world run it was built from (--dir)", t.ID, t.Provenance.Persona, f.dir)
		}
		opts.Tasks = append(opts.Tasks, openenv.Task{Task: t, Dir: p.TaskDir(en)})
	}
	envs, closeEnvs, err := e.rolloutEnvs(ctx, src, f.dir, filepath.Join(f.dir, "openenv-work"), f.fakeBrowser)
	if err != nil {
		closeSrc()
		return openenv.Options{}, nil, err
	}
	opts.Env = func(t *task.Task) (openenv.Episodes, error) { return envs.task(t, "serve") }
	return opts, func() { closeEnvs(); closeSrc() }, nil
}
