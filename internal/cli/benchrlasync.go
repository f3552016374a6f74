package cli

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/trainer"
)

func (e *env) benchRLAsyncCmd() *cobra.Command {
	var f rlFlags
	var steps, tasks, g int
	var policy string
	var train time.Duration
	c := &cobra.Command{
		Use:   "rl-async [--dir RUN] [--steps 4] [--tasks 4] [--g 4] [--train-time D]",
		Short: "Rollouts per hour through the rollout service with async steps (max_staleness 1) against strictly alternating ones, side by side",
		Long: `Run the same train steps (the same tasks, seeds and offline policy, default the
scripted replay ensemble, never a model) through two rollout services over
the HTTP API, as a trainer does: one strictly alternating (the trainer asks
for step N+1 after it trained on step N), one with max_staleness 1 (the
service computes step N+1 while the trainer trains on step N). The trainer's
training is a wait of --train-time per step (default: the alternating run's
mean step time, where overlap can at best halve the wall). Prints each
step's wait for its batch, the rollouts per hour of each run (finished
rollouts over the whole wall, training included), their ratio, and the
prefetched batches' staleness. Each service's state goes to a fresh
temporary directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if steps < 2 || tasks < 1 || g < 1 || train < 0 {
				return fmt.Errorf("--steps at least 2, --tasks and --g at least 1, --train-time not negative")
			}
			tmp, err := os.MkdirTemp("", "wildawm-bench-rl-async-")
			if err != nil {
				return err
			}
			defer os.RemoveAll(tmp)
			type run struct {
				rollouts int
				wall     time.Duration
				waits    []time.Duration
				stale    []int
			}
			side := func(name string, staleness int, train time.Duration) (*run, error) {
				rf := f
				rf.stateDir = filepath.Join(tmp, name)
				svc, closeSvc, err := e.rlService(cmd, &rf, "rl-bench")
				if err != nil {
					return nil, err
				}
				defer closeSvc()
				srv := httptest.NewServer(svc.Handler())
				defer srv.Close()
				r := &run{}
				start := time.Now()
				for step := 1; step <= steps; step++ {
					t0 := time.Now()
					b, err := postAndPoll(ctx, srv.URL, trainer.Request{Step: step, Tasks: tasks, G: g, Policy: policy, Seed: 1, MaxStaleness: staleness})
					if err != nil {
						return nil, fmt.Errorf("%s, step %d: %w", name, step, err)
					}
					r.waits = append(r.waits, time.Since(t0))
					r.rollouts += b.Stats.Rollouts
					r.stale = append(r.stale, b.Stats.Staleness)
					if step < steps {
						select { // the trainer trains on the batch
						case <-time.After(train):
						case <-ctx.Done():
							return nil, ctx.Err()
						}
					}
				}
				r.wall = time.Since(start)
				return r, nil
			}
			alt, err := side("alternating", 0, train)
			if err != nil {
				return err
			}
			if train == 0 {
				// Measured, then both sides are run with it.
				var sum time.Duration
				for _, w := range alt.waits {
					sum += w
				}
				train = sum / time.Duration(len(alt.waits))
				if alt, err = side("alternating-2", 0, train); err != nil {
					return err
				}
			}
			async, err := side("async", 1, train)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%-5s %-22s %-22s %s\n", "step", "alternating wait (s)", "async wait (s)", "async staleness")
			for i := range steps {
				fmt.Fprintf(e.stdout, "%-5d %-22.2f %-22.2f %d\n", i+1, alt.waits[i].Seconds(), async.waits[i].Seconds(), async.stale[i])
			}
			perHour := func(r *run) float64 { return float64(r.rollouts) / r.wall.Hours() }
			fmt.Fprintf(e.stdout, "alternating: %d rollouts in %.1f s, %.0f rollouts/hour; async (max_staleness 1): %d rollouts in %.1f s, %.0f rollouts/hour; async/alternating %.2f (%s, %d steps of %d tasks x G=%d, %d at a time, training %.1f s a step)\n",
				alt.rollouts, alt.wall.Seconds(), perHour(alt), async.rollouts, async.wall.Seconds(), perHour(async), perHour(async)/perHour(alt),
				policy, steps, tasks, g, f.parallel, train.Seconds())
			return nil
		},
	}
	f.register(c, "rl-bench")
	c.Flags().IntVar(&steps, "steps", 4, "train steps")
	c.Flags().IntVar(&tasks, "tasks", 4, "tasks per step")
	c.Flags().IntVar(&g, "g", 4, "G")
	c.Flags().StringVar(&policy, "policy", trainer.PolicyReplayEnsemble, "the offline policy")
	c.Flags().DurationVar(&train, "train-time", 0, "the trainer's time per step (0: the alternating run's mean step time)")
	return c
}
