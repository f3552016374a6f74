package pool

import (
	"context"
	"errors"
	"path/filepath"
	"sync"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// Runner is a whole pool run: task synthesis with the self-check, and
// every task it writes gated as soon as it is written, parallel workers
// for each stage.
type Runner struct {
	Synth    *taskgen.Synth
	Gater    *Gater
	Parallel int
	// Count stops the run after this many accepted tasks (0: none).
	Count int
	// Seed seeds each task's ensemble (with a hash of the task's ID).
	Seed uint64
	// SynthProgress is told of each synthesis job; Gated of each outcome.
	SynthProgress func(done int, r *taskgen.Result)
	Gated         func(o *Outcome)
}

// Run synthesizes jobs and gates what they write. Tasks already gated by
// an earlier run are read back (a rerun resumes). It returns every
// outcome, in the order the tasks were gated.
func (r *Runner) Run(ctx context.Context, jobs []taskgen.Job) ([]*Outcome, error) {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	cond := sync.NewCond(&mu)
	var queue []string
	synthDone := false
	var synthErr error
	go func() {
		_, err := r.Synth.Run(ctx, jobs, r.Parallel, func(done int, res *taskgen.Result) {
			mu.Lock()
			for _, p := range res.Tasks {
				queue = append(queue, p.Dir)
			}
			cond.Broadcast()
			mu.Unlock()
			if r.SynthProgress != nil {
				r.SynthProgress(done, res)
			}
		})
		mu.Lock()
		synthDone, synthErr = true, err
		cond.Broadcast()
		mu.Unlock()
	}()
	var outs []*Outcome
	accepted := 0
	var gateErr error
	var wg sync.WaitGroup
	for range max(r.Parallel, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				for len(queue) == 0 && !synthDone && ctx.Err() == nil {
					cond.Wait()
				}
				if len(queue) == 0 || ctx.Err() != nil {
					mu.Unlock()
					return
				}
				dir := queue[0]
				queue = queue[1:]
				mu.Unlock()
				// The worlds the gating reads are held while it runs, then
				// left to the cache's collection.
				jctx, release := reset.Scope(ctx)
				o, err := r.Gater.Do(jctx, Job{TaskDir: dir, Seed: r.Seed ^ idHash(filepath.Base(dir))})
				release()
				mu.Lock()
				switch {
				case err != nil && ctx.Err() == nil:
					if gateErr == nil {
						gateErr = err
					}
					cancel()
				case err == nil:
					outs = append(outs, o)
					if o.Accepted {
						accepted++
					}
					if r.Gated != nil {
						r.Gated(o)
					}
					if r.Count > 0 && accepted >= r.Count {
						cancel()
					}
				}
				cond.Broadcast()
				mu.Unlock()
			}
		}()
	}
	// Wake the workers when the context ends.
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		cond.Broadcast()
		mu.Unlock()
	})
	defer stop()
	wg.Wait()
	cancel()
	mu.Lock()
	for !synthDone {
		cond.Wait()
	}
	mu.Unlock()
	if gateErr != nil {
		return outs, gateErr
	}
	if r.Count > 0 && accepted >= r.Count {
		return outs, nil
	}
	if synthErr != nil && !errors.Is(synthErr, context.Canceled) {
		return outs, synthErr
	}
	return outs, parent.Err()
}
