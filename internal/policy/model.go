package policy

import (
	"context"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/task"
)

// Model is the policy of a model acting through the wildawm harness
// (agent.Harness): what the model decides is what happens. Its trajectory
// names the model and the harness, never "scripted".
type Model struct {
	Harness *agent.Harness
}

// Name implements rollout.Policy.
func (m Model) Name() string { return "model:" + m.Harness.ModelName }

// Run implements rollout.Policy.
func (m Model) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	return m.Harness.Run(ctx, env, t.Instruction, t.Hint)
}

// WallBudget implements rollout.Budgeted.
func (m Model) WallBudget() time.Duration {
	if m.Harness.WallTime > 0 {
		return m.Harness.WallTime
	}
	return agent.DefaultWallTime
}
