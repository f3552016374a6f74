package taskgen

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// CheckFile is the self-check's result, beside task.json.
const CheckFile = "check.json"

// Check is the author's self-check of a saved task on live instances:
// the initial world must not satisfy V, nor the expected answer with the
// world untouched (an answer-only shortcut), and the reference completion,
// run through the harness on a fresh instance of W0, must pass V.
type Check struct {
	OK          bool     `json:"ok"`
	InitialV    int      `json:"initial_v"`
	AnswerOnlyV int      `json:"answer_only_v"`
	ReferenceV  int      `json:"reference_v"`
	Final       world.ID `json:"reference_final,omitzero"`
	// Failed lists the criteria the reference's final world fails.
	Failed []string `json:"failed,omitempty"`
	// Problem says why the check failed.
	Problem string `json:"problem,omitempty"`
}

// Checker is what the self-check needs of a rollout environment
// (*rollout.Env is one): fresh instances, sessions in them, their worlds
// stored, and V.
type Checker interface {
	Start(ctx context.Context, snapshot world.ID, name string) (*rollout.Instance, error)
	Open(ctx context.Context, inst *rollout.Instance, traj *agent.Trajectory) (*rollout.Session, error)
	Snapshot(ctx context.Context, inst *rollout.Instance, base world.ID) (world.ID, error)
	Verify(ctx context.Context, t *task.Task, verifierDir string, final world.ID, answer string) (*verify.Result, error)
}

var _ Checker = (*rollout.Env)(nil)

// CheckTask runs the self-check of the task saved at dir through env.
func CheckTask(ctx context.Context, env Checker, d *Draft, dir string) (*Check, error) {
	t := d.Task
	vdir := filepath.Join(dir, "verifier")
	c := &Check{}
	if err := LintNaturalKeys(t); err != nil {
		c.Problem = err.Error()
		return c, nil
	}
	v0, err := env.Verify(ctx, t, vdir, t.Provenance.Snapshot, "")
	if err != nil {
		return nil, err
	}
	va, err := env.Verify(ctx, t, vdir, t.Provenance.Snapshot, t.Answer)
	if err != nil {
		return nil, err
	}
	c.InitialV, c.AnswerOnlyV = v0.V, va.V
	inst, err := env.Start(ctx, t.Provenance.Snapshot, "check-"+t.ID)
	if err != nil {
		return nil, err
	}
	defer inst.Close(context.WithoutCancel(ctx))
	sess, err := env.Open(ctx, inst, &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.ID, Rollout: "reference"})
	if err != nil {
		return nil, err
	}
	for i, st := range t.Reference {
		if err := sess.Env.Do(ctx, st.Tool, st.Args); err != nil {
			sess.Close(ctx)
			if ctx.Err() != nil || errors.Is(err, agent.ErrInfra) {
				return nil, err
			}
			c.Problem = fmt.Sprintf("reference step %d (%s) was refused: %v", i, st.Tool, err)
			return c, nil
		}
	}
	sess.Close(ctx)
	final, err := env.Snapshot(ctx, inst, t.Provenance.Snapshot)
	if err != nil {
		return nil, err
	}
	vr, err := env.Verify(ctx, t, vdir, final, t.Answer)
	if err != nil {
		return nil, err
	}
	c.ReferenceV, c.Final = vr.V, final
	for _, cr := range vr.Criteria {
		if !cr.Pass {
			c.Failed = append(c.Failed, fmt.Sprintf("%s: %s%s", cr.ID, cr.Evidence, cr.Error))
		}
	}
	switch {
	case c.InitialV != 0:
		c.Problem = "the initial world already satisfies V"
	case c.AnswerOnlyV != 0:
		c.Problem = "the expected answer alone, the world untouched, satisfies V"
	case c.ReferenceV != 1:
		c.Problem = fmt.Sprintf("the reference completion does not pass V: %v", c.Failed)
	}
	c.OK = c.Problem == ""
	return c, nil
}
