package pool

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"

	"github.com/wildawm/wildawm/internal/judge"
	"github.com/wildawm/wildawm/internal/mutate"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Worlds is what the gater and its checks do with a task's rollout
// environment: run a rollout, verify and score a world, lower a snapshot,
// self-check a revision (taskgen.Checker), observe a world (judge.Worlds),
// and give a checker a sandbox uid and a scratch. A *rollout.Env is one.
type Worlds interface {
	taskgen.Checker
	judge.Worlds
	Run(ctx context.Context, t *task.Task, spec rollout.Spec) (*rollout.Result, error)
	Judge(ctx context.Context, t *task.Task, verifierDir string, res *rollout.Result) (*verify.Result, error)
	Score(ctx context.Context, t *task.Task, verifierDir string, final world.ID, answer, fault string) (*verify.Result, error)
	CatalogDB() string
	ScriptRunner() (rollout.SandboxRunner, error)
	TempDir(pattern string) (string, error)
}

var _ Worlds = (*rollout.Env)(nil)

// Defaults fills the gater's unset judges and checks with the offline
// ones: the mutation check of internal/mutate and the observer of
// internal/judge.
func Defaults(g *Gater) {
	if g.Mutate == nil {
		g.Mutate = MutateCheck
	}
	if g.Observer == nil {
		g.Observer = DefaultObserver
	}
}

// MutateCheck is the mutation check of internal/mutate, its scripts run in
// the sandbox as a uid of their own from the environment's allocator.
func MutateCheck(ctx context.Context, env Worlds, t *task.Task, verifierDir, initial, solved string) (*Mutation, error) {
	scratch, err := env.TempDir("mutate-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	// The scripts run as the sandbox uid, which may not reach the task's
	// directory: check a copy.
	vdir := filepath.Join(scratch, "verifier")
	if err := verify.CopyDir(ctx, verifierDir, vdir); err != nil {
		return nil, err
	}
	runner, err := env.ScriptRunner()
	if err != nil {
		return nil, err
	}
	r, err := mutate.Check(ctx, mutate.Input{Task: t, VerifierDir: vdir, Initial: initial, Solved: solved, Runner: runner, Catalog: env.CatalogDB(), Scratch: filepath.Join(scratch, "work")})
	if err != nil {
		return nil, err
	}
	m := &Mutation{Passed: r.Passed, Evaluations: r.Evaluations, Evidence: r.Evidence, Entangled: map[string][]string{}}
	if r.Problem != "" {
		m.Evidence = append([]string{r.Problem}, m.Evidence...)
	}
	for _, c := range r.Criteria {
		switch c.Status {
		case mutate.Isolated:
			m.Isolated = append(m.Isolated, c.ID)
		case mutate.Entangled:
			m.Entangled[c.ID] = c.Entangled
		case mutate.Untargeted:
			m.Untargeted = append(m.Untargeted, c.ID)
		}
	}
	m.Detail, _ = json.Marshal(r)
	return m, nil
}

// DefaultObserver is the offline interface-inspection judge.
func DefaultObserver(env Worlds, t *task.Task, ref world.ID, verifierCopy string) WorldJudge {
	return &judge.Observer{Env: env, Task: t, Reference: ref, VerifierDir: verifierCopy}
}

// keepEarlierGate keeps a gate directory that done did not read back (an
// outcome of another version, of another task, or a gating cut short) as
// the task's next version (taskgen.KeepVersion) before the task is gated
// again: a rerun never overwrites earlier evidence.
func keepEarlierGate(dir string) error {
	if _, err := os.Lstat(filepath.Join(dir, GateDir)); err != nil {
		return nil
	}
	why := "gated again: the earlier gate directory holds no outcome this build reads back"
	o, err := LoadOutcome(dir)
	switch {
	case err != nil:
		why += " (" + err.Error() + ")"
	case len(o.InfraRejected()) > 0:
		why = "gated again: the earlier gating was rejected for infrastructure (" + strings.Join(o.InfraRejected(), ", ") + "), an outage, not the task"
	}
	if _, err := taskgen.KeepVersion(dir, why); err != nil {
		return err
	}
	return os.RemoveAll(filepath.Join(dir, GateDir))
}
