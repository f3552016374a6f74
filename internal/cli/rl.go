package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/trainer"
	"github.com/wildawm/wildawm/internal/world"
)

func (e *env) rlCmd() *cobra.Command {
	c := &cobra.Command{Use: "rl", Short: "Serve RL trainers: the rollout service, its JSONL export, the offline learning check"}
	c.AddCommand(e.rlServeCmd(), e.rlExportCmd(), e.rlLearnCmd())
	return c
}

// rlFlags are the flags of the commands that run the rollout service.
type rlFlags struct {
	dir, split, stateDir string
	parallel             int
	fakeBrowser          bool
	// rl serve's own: the order of steps and engine outages.
	allowGaps                  bool
	outageBackoff, outageLimit time.Duration
}

// registerServe adds the flags only a long-lived service takes.
func (f *rlFlags) registerServe(c *cobra.Command) {
	c.Flags().BoolVar(&f.allowGaps, "allow-gaps", false, "accept a step whose predecessor was never requested (it starts from the last saved state); without it such a step is a 409 naming the missing step")
	c.Flags().DurationVar(&f.outageBackoff, "outage-backoff", trainer.DefaultOutageBackoff, "the first wait before a rollout the engine's outage stopped runs again (doubled, at most a minute)")
	c.Flags().DurationVar(&f.outageLimit, "outage-limit", trainer.DefaultOutageLimit, "how long an engine outage may last before its step fails, unsaved and retriable")
}

func (f *rlFlags) register(c *cobra.Command, stateDefault string) {
	c.Flags().StringVar(&f.dir, "dir", defaultRunDir, "the world run whose pool's tasks are trained on (DIR/"+pool.File+")")
	c.Flags().StringVar(&f.split, "split", pool.SplitRL, "the pool split tasks are sampled from")
	c.Flags().StringVar(&f.stateDir, "state", "", "where batches, scheduler state and trajectories are kept (default DIR/"+stateDefault+")")
	c.Flags().IntVar(&f.parallel, "parallel", 4, "rollouts at a time")
	c.Flags().BoolVar(&f.fakeBrowser, "fake-browser", false, "drive the websites with the HTTP browser (no Chromium) instead of Chromium")
}

// service opens the rollout service over the run's split.
func (e *env) rlService(cmd *cobra.Command, f *rlFlags, stateDefault string) (*trainer.Service, func(), error) {
	if f.parallel < 1 {
		return nil, nil, fmt.Errorf("--parallel %d: give at least 1", f.parallel)
	}
	if f.outageBackoff < 0 || f.outageLimit < 0 {
		return nil, nil, fmt.Errorf("--outage-backoff %v --outage-limit %v: give positive durations (0: the defaults)", f.outageBackoff, f.outageLimit)
	}
	// The engine a request names acts as the agent: --model-timeout's
	// agent stage, --model-retries and --model-backoff.
	mopts, err := e.models.options("--agent")
	if err != nil {
		return nil, nil, err
	}
	src, closeSrc, err := e.openSource(cmd.Context(), f.dir)
	if err != nil {
		return nil, nil, err
	}
	envs, closeEnv, err := e.rolloutEnvs(cmd.Context(), src, f.dir, filepath.Join(f.dir, "check-work"), f.fakeBrowser)
	if err != nil {
		closeSrc()
		return nil, nil, err
	}
	state := f.stateDir
	if state == "" {
		state = filepath.Join(f.dir, stateDefault)
	}
	svc, err := trainer.Open(cmd.Context(), trainer.Options{Dir: f.dir, StateDir: state, Split: f.split, Parallel: f.parallel, Progress: e.progress, Model: mopts,
		AllowGaps: f.allowGaps, OutageBackoff: f.outageBackoff, OutageLimit: f.outageLimit,
		Env: func(t *task.Task) (trainer.Rollouts, error) { return envs.task(t, "train on") }})
	if err != nil {
		closeEnv()
		closeSrc()
		return nil, nil, err
	}
	return svc, func() { svc.Close(context.Background()); closeEnv(); closeSrc() }, nil
}

func (e *env) rlServeCmd() *cobra.Command {
	var f rlFlags
	var pf planeFlags
	c := &cobra.Command{
		Use:   "serve [--dir RUN] [--addr 127.0.0.1:8020] [--token-file FILE]",
		Short: "Serve a trainer the batches of its train steps (docs/segment.md)",
		Long: `Serve the rollout service: a trainer POSTs /v1/batches with the train step, the
number of tasks, G, its inference engine ([ENGINE+]URL#MODEL), sampling
parameters and policy version, and long-polls GET /v1/batches/step-N. wildawm
samples tasks of the pool's RL split, runs the adaptive rollout scheduler over
fresh instances with the harness pointed at the engine, verifies every rollout,
and returns G selected rollouts per ready task as segment samples with rewards
and advantages. Batches and the scheduler state are kept by train step under
--state, so a restarted service (and a resumed trainer) continues. Prints the
base URL the listener bound as the first line, then serves until interrupted.
With --token-file every request but GET /health needs "Authorization: Bearer
TOKEN"; listening beyond loopback (--addr 0.0.0.0:8020) requires it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			pl, err := e.listenPlane(&pf)
			if err != nil {
				return err
			}
			svc, closeSvc, err := e.rlService(cmd, &f, "rl")
			if err != nil {
				pl.close()
				return err
			}
			defer closeSvc()
			// Long polls end with the command: their requests' context is
			// cancelled on interrupt.
			return e.servePlane(cmd.Context(), pl, svc.Handler(), fmt.Sprintf("%d %s tasks (POST /v1/batches)", svc.Tasks(), f.split), nil)
		},
	}
	f.register(c, "rl")
	f.registerServe(c)
	pf.register(c, "127.0.0.1:8020")
	return c
}

func (e *env) rlExportCmd() *cobra.Command {
	var dir, state, out string
	var from, to int
	c := &cobra.Command{
		Use:   "export --out FILE.jsonl [--dir RUN] [--from N] [--to M]",
		Short: "Write the saved batches' segment samples as JSONL, one sample a line, for offline SFT/RL",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return errors.New("--out is required: the JSONL file to write")
			}
			if state == "" {
				state = filepath.Join(dir, "rl")
			}
			n, steps, err := trainer.Export(filepath.Join(state, "batches"), out, from, to)
			if err != nil {
				return err
			}
			e.progress("wrote %d samples of %d steps to %s", n, steps, out)
			return nil
		},
	}
	c.Flags().StringVar(&dir, "dir", defaultRunDir, "the world run the service ran on")
	c.Flags().StringVar(&state, "state", "", "the service's state directory (default DIR/rl)")
	c.Flags().StringVar(&out, "out", "", "the JSONL file to write")
	c.Flags().IntVar(&from, "from", 1, "the first train step")
	c.Flags().IntVar(&to, "to", 0, "the last train step (default the last saved)")
	return c
}

func (e *env) rlLearnCmd() *cobra.Command {
	var f rlFlags
	var o trainer.LearnOptions
	var curveOut string
	c := &cobra.Command{
		Use:   "learn [--dir RUN] [--steps 30] [--tasks 4] [--g 4] [--policy learned:softmax|learned:observe]",
		Short: "The offline learning check: train a small policy by wildawm's GRPO objective on live instances",
		Long: `Train the learnable softmax policy (learned:softmax: at each step of a task's
reference completion it does the step, slips an argument, skips it or stops,
with probabilities by interface) with wildawm's own GRPO objective on the
batches of the rollout service: the adaptive scheduler, verifier rewards,
G-subsets, advantages, segment samples and loss weights, on live instances. No
model and no GPU: it shows the loop closes end to end. Prints the learning
curve, one line per step (the G base rollouts' success rate), and writes it
as JSON (--curve, default STATE/learn.json). The service's state is kept apart
from rl serve's (default DIR/rl-learn); remove it to start over.

--policy learned:observe trains the observation policy instead: a log-linear
softmax over hashed features that chooses among the actions the observations
offer (websites, the page's links, buttons and forms with values seen
before, MCP tools with arguments seen before, the files listed), never
the task's reference. --lr 0 is its control.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.Steps < 1 || o.Tasks < 1 || o.G < 1 || o.LR < 0 {
				return errors.New("--steps, --tasks and --g must be at least 1, --lr at least 0")
			}
			if o.Policy != trainer.PolicySoftmax && o.Policy != trainer.PolicyObserve {
				return fmt.Errorf("--policy %q: give %s or %s", o.Policy, trainer.PolicySoftmax, trainer.PolicyObserve)
			}
			if o.Policy == trainer.PolicyObserve && !cmd.Flags().Changed("lr") {
				o.LR = trainer.ObserveLR
			}
			o.Frozen = o.LR == 0
			svc, closeSvc, err := e.rlService(cmd, &f, "rl-learn")
			if err != nil {
				return err
			}
			defer closeSvc()
			last := "P(do) gui/mcp/cli"
			if o.Policy == trainer.PolicyObserve {
				last = "the update"
			}
			fmt.Fprintf(e.stdout, "%-5s %-10s %-8s %-8s %-6s %s\n", "step", "success", "reward", "rollouts", "ready", last)
			o.Progress = func(p trainer.LearnPoint) {
				fmt.Fprintf(e.stdout, "%-5d %-10s %-8.3f %-8d %-6d %.3f/%.3f/%.3f\n", p.Step, fmt.Sprintf("%d/%d", p.BaseSuccesses, p.BaseRollouts),
					p.MeanReward, p.Rollouts, p.Ready, p.PDo["gui"], p.PDo["mcp"], p.PDo["cli"])
			}
			start := time.Now()
			var curve []trainer.LearnPoint
			var final any
			switch o.Policy {
			case trainer.PolicySoftmax:
				curve, final, err = trainer.Learn(cmd.Context(), svc, o)
			default: // trainer.PolicyObserve
				o.Progress = func(p trainer.LearnPoint) {
					fmt.Fprintf(e.stdout, "%-5d %-10s %-8.3f %-8d %-6d decisions %d entropy %.3f logprob gap %.1e\n", p.Step, fmt.Sprintf("%d/%d", p.BaseSuccesses, p.BaseRollouts),
						p.MeanReward, p.Rollouts, p.Ready, p.Observe.Decisions, p.Observe.Entropy, p.Observe.MaxLogprobGap)
				}
				curve, final, err = trainer.LearnObserve(cmd.Context(), svc, o)
			}
			if err != nil {
				return err
			}
			if curveOut == "" {
				state := f.stateDir
				if state == "" {
					state = filepath.Join(f.dir, "rl-learn")
				}
				curveOut = filepath.Join(state, "learn.json")
			}
			data, err := json.MarshalIndent(map[string]any{"curve": curve, "final": final, "options": o, "wall_s": time.Since(start).Seconds()}, "", " ")
			if err != nil {
				return err
			}
			if err := world.WriteFileAtomic(curveOut, append(data, '\n'), 0o644); err != nil {
				return err
			}
			e.progress("learning curve in %s (%s)", curveOut, time.Since(start).Round(time.Second))
			return nil
		},
	}
	f.register(c, "rl-learn")
	c.Flags().IntVar(&o.Steps, "steps", 30, "train steps")
	c.Flags().IntVar(&o.Tasks, "tasks", 4, "tasks per step")
	c.Flags().IntVar(&o.G, "g", 4, "base rollouts per task, and rollouts trained on per ready task")
	c.Flags().Float64Var(&o.LR, "lr", 4, "the step size of the policy's update (0: never update, the control run; learned:observe's default is 50)")
	c.Flags().Uint64Var(&o.Seed, "seed", 1, "the seed of the tasks sampled and the policy's draws")
	c.Flags().StringVar(&curveOut, "curve", "", "the learning curve's JSON file")
	c.Flags().StringVar(&o.Policy, "policy", trainer.PolicySoftmax, "the policy trained: "+trainer.PolicySoftmax+" (over the reference's steps) or "+trainer.PolicyObserve+" (over the actions the observations offer)")
	return c
}
