package pool

import (
	"fmt"

	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// EnsembleSize is the paper's ensemble: six rollouts, the first three
// without the hint and the last three with it.
const EnsembleSize = 6

// ModelEnsemble draws a task's six rollouts from combinations (each makes
// a fresh policy: a model through a harness), cycling through them from
// an offset the seed picks, so that a task's rollouts come from several
// combinations and different tasks start at different ones.
func ModelEnsemble(combos []func() rollout.Policy) (func(t *task.Task, seed uint64) []rollout.Spec, error) {
	if len(combos) == 0 {
		return nil, fmt.Errorf("pool: a model ensemble needs at least one model x harness combination")
	}
	return func(t *task.Task, seed uint64) []rollout.Spec {
		off := int(seed % uint64(len(combos)))
		specs := make([]rollout.Spec, EnsembleSize)
		for i := range specs {
			specs[i] = rollout.Spec{ID: fmt.Sprintf("r%d", i+1), Policy: combos[(off+i)%len(combos)](), Hint: i >= EnsembleSize/2}
		}
		return specs
	}, nil
}
