package trainer

import (
	"context"
	"testing"
)

// BenchmarkSchedulerStep is the service's own cost of one step with
// instant rollouts: sampling the tasks, the scheduling loop with its
// chunks and cancellations, selection, advantages, samples, and saving
// the batch and the state. The fixture's 3 tasks, G = 4: one task's base
// rollouts all fail alike, so it takes a chunk of 8 more.
func BenchmarkSchedulerStep(b *testing.B) {
	f := fixture(b)
	ids := []string{}
	for _, tk := range f.Tasks {
		ids = append(ids, tk.ID)
	}
	s, err := Open(context.Background(), Options{Dir: f.Dir, StateDir: b.TempDir(), Parallel: 4, Rollout: scripted(func(id string, slot int) float64 {
		if id == ids[0] && slot < 4 {
			return 0
		}
		return float64(slot%3) / 2
	}, nil)})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close(context.Background())
	b.ResetTimer()
	for i := range b.N {
		if _, err := s.Batch(context.Background(), Request{Step: i + 1, Tasks: 3, G: 4, Policy: PolicyReplayEnsemble}); err != nil {
			b.Fatal(err)
		}
	}
}
