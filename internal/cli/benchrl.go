package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/trainer"
)

// benchRLResult is one side of bench rl: rollouts, their wall time.
type benchRLResult struct {
	Rollouts int
	Wall     time.Duration
}

func (r benchRLResult) perHour() float64 {
	if r.Wall <= 0 {
		return 0
	}
	return float64(r.Rollouts) / r.Wall.Hours()
}

func (e *env) benchRLCmd() *cobra.Command {
	var f rlFlags
	var steps, tasks, g int
	var policy string
	c := &cobra.Command{
		Use:   "rl [--dir RUN] [--steps 3] [--tasks 8] [--g 4] [--parallel 4]",
		Short: "Rollouts per hour through the rollout service against the same rollouts run directly, side by side",
		Long: `Measure the rollout service with an offline policy (default the scripted replay
ensemble, never a model): each step is requested over the HTTP API and
long-polled, as a trainer does, and the service runs the adaptive scheduler
over fresh instances. Side by side, step by step, the baseline runs the same
rollouts the service's pools kept (the same task, slot and seed) straight
through Service.Rollout (a fresh instance, the policy, the verifier) with the
same parallelism and no scheduler, no HTTP, no samples; the rollouts the
service cancelled or dropped count as its overhead. Prints rollouts per hour of each, their
ratio, and the scheduler's own time per step (recording, deciding, selecting,
advantages, samples). The service's state goes to a fresh temporary
directory.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if steps < 1 || tasks < 1 || g < 1 {
				return fmt.Errorf("--steps, --tasks and --g must be at least 1")
			}
			if f.stateDir == "" {
				tmp, err := os.MkdirTemp("", "wildawm-bench-rl-")
				if err != nil {
					return err
				}
				defer os.RemoveAll(tmp)
				f.stateDir = tmp
			}
			svc, closeSvc, err := e.rlService(cmd, &f, "rl-bench")
			if err != nil {
				return err
			}
			defer closeSvc()
			srv := httptest.NewServer(svc.Handler())
			defer srv.Close()
			var service, direct benchRLResult
			var schedMS []float64
			fmt.Fprintf(e.stdout, "%-5s %-26s %-26s %s\n", "step", "service (kept (+dropped), s)", "direct (rollouts, s)", "scheduler ms")
			for step := 1; step <= steps; step++ {
				req := trainer.Request{Step: step, Tasks: tasks, G: g, Policy: policy, Seed: 1}
				t0 := time.Now()
				b, err := postAndPoll(ctx, srv.URL, req)
				if err != nil {
					return fmt.Errorf("step %d: %w", step, err)
				}
				ws := time.Since(t0)
				// The baseline runs exactly the rollouts the service's pools
				// kept (the same task, slot and seed: the same rollouts),
				// without the scheduler; the service's cancelled and dropped
				// rollouts count as its overhead.
				var jobs []trainer.RolloutJob
				for _, gr := range b.Groups {
					for _, slot := range gr.Slots {
						jobs = append(jobs, trainer.RolloutJob{Step: step, TaskID: gr.TaskID, Group: gr.Index, Slot: slot,
							RolloutID: fmt.Sprintf("direct-s%06d-g%02d-r%02d", step, gr.Index, slot), Request: req})
					}
				}
				service.Rollouts += len(jobs)
				service.Wall += ws
				schedMS = append(schedMS, b.Stats.SchedulerMS)
				t1 := time.Now()
				n, err := runDirect(ctx, svc, jobs, f.parallel)
				if err != nil {
					return fmt.Errorf("step %d, direct: %w", step, err)
				}
				wd := time.Since(t1)
				direct.Rollouts += n
				direct.Wall += wd
				fmt.Fprintf(e.stdout, "%-5d %-26s %-26s %.2f\n", step, fmt.Sprintf("%d (+%d) in %.1f", len(jobs), b.Stats.Rollouts-len(jobs), ws.Seconds()),
					fmt.Sprintf("%d in %.1f", n, wd.Seconds()), b.Stats.SchedulerMS)
			}
			slices.Sort(schedMS)
			fmt.Fprintf(e.stdout, "service: %.0f rollouts/hour; direct: %.0f rollouts/hour; service/direct %.3f; scheduler per step: median %.2f ms, max %.2f ms (%s, %d tasks x G=%d, %d at a time)\n",
				service.perHour(), direct.perHour(), service.perHour()/direct.perHour(), schedMS[len(schedMS)/2], schedMS[len(schedMS)-1], policy, tasks, g, f.parallel)
			return nil
		},
	}
	f.register(c, "rl-bench")
	c.Flags().IntVar(&steps, "steps", 3, "train steps")
	c.Flags().IntVar(&tasks, "tasks", 8, "tasks per step")
	c.Flags().IntVar(&g, "g", 4, "G")
	c.Flags().StringVar(&policy, "policy", trainer.PolicyReplayEnsemble, "the offline policy: "+trainer.PolicyReplayEnsemble+" or "+trainer.PolicySoftmax)
	return c
}

// postAndPoll requests a batch over the HTTP API and long-polls it.
func postAndPoll(ctx context.Context, base string, req trainer.Request) (*trainer.Batch, error) {
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	hr, err := http.NewRequestWithContext(ctx, "POST", base+"/v1/batches", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	url := ""
	for {
		resp, err := http.DefaultClient.Do(hr)
		if err != nil {
			return nil, err
		}
		data, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, err
		}
		switch resp.StatusCode {
		case http.StatusOK:
			var b trainer.Batch
			if err := json.Unmarshal(data, &b); err != nil {
				return nil, err
			}
			if b.Status != trainer.StatusDone {
				return nil, fmt.Errorf("batch %s: %s", b.Status, b.Error)
			}
			return &b, nil
		case http.StatusAccepted:
			var v struct{ ID string }
			json.Unmarshal(data, &v)
			if url == "" {
				url = base + "/v1/batches/" + v.ID + "?wait=60"
			}
			if hr, err = http.NewRequestWithContext(ctx, "GET", url, nil); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("%s: %s", resp.Status, data)
		}
	}
}

// runDirect runs jobs through Service.Rollout, parallel at a time, and
// returns how many finished.
func runDirect(ctx context.Context, svc *trainer.Service, jobs []trainer.RolloutJob, parallel int) (int, error) {
	var mu sync.Mutex
	var firstErr error
	n := 0
	next := make(chan trainer.RolloutJob)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range next {
				_, err := svc.Rollout(ctx, j)
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				} else if err == nil {
					n++
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		next <- j
	}
	close(next)
	wg.Wait()
	return n, firstErr
}
