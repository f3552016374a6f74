package rollout

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/world"
)

// Browser is a browser the harness drives and then closes.
type Browser interface {
	agent.Browser
	Close(ctx context.Context) error
}

// Env is what rollouts run against.
type Env struct {
	Store        *store.Store
	Materializer *reset.Materializer
	CatalogDir   string
	// WorkDir holds instances and trajectories.
	WorkDir string
	// Self is the persona's name as a message sender.
	Self string
	// NewBrowser starts a fresh browser for one session.
	NewBrowser func(ctx context.Context) (Browser, error)
	// Timeout bounds one rollout (default 5 minutes).
	Timeout time.Duration
	// FirstUID is the first of the unprivileged uids given to instances'
	// shells, one per instance, so that one instance's processes never count
	// against another's process limit (default 200000).
	FirstUID int
	uids     atomic.Int64
}

// nextUID returns a fresh sandbox uid.
func (e *Env) nextUID() int {
	base := e.FirstUID
	if base == 0 {
		base = 200000
	}
	return base + int(e.uids.Add(1))
}

// Spec is one rollout to run.
type Spec struct {
	ID     string
	Policy policy.Policy
	Hint   bool
}

// Ensemble is the default six rollouts: three without the hint, three with
// it, drawn from the scripted oracle and its degraded variants.
func Ensemble() []Spec {
	return []Spec{
		{ID: "r1", Policy: policy.Oracle()},
		{ID: "r2", Policy: policy.ImageBlind()},
		{ID: "r3", Policy: policy.ShellOnly()},
		{ID: "r4", Policy: policy.ImageBlind(), Hint: true},
		{ID: "r5", Policy: policy.ApprovalSkipper(), Hint: true},
		{ID: "r6", Policy: policy.Quitter(), Hint: true},
	}
}

// Result is one finished rollout.
type Result struct {
	Spec       Spec              `json:"-"`
	Trajectory *agent.Trajectory `json:"-"`
	// Final is the snapshot of the final world.
	Final world.ID `json:"final"`
	// Wall is the rollout's wall time, instance start to final snapshot.
	Wall time.Duration `json:"wall"`
}

// Session is one agent session on a live instance: a browser, an MCP
// client session and the shell, recorded into a trajectory.
type Session struct {
	Env     *agent.Env
	browser Browser
	mcp     *mcp.ClientSession
}

// Open starts a session on inst.
func (e *Env) Open(ctx context.Context, inst *runtime.Instance, traj *agent.Trajectory) (*Session, error) {
	b, err := e.NewBrowser(ctx)
	if err != nil {
		return nil, fmt.Errorf("start browser: %w", err)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "wildawm-agent", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: inst.MCPURL, MaxRetries: -1}, nil)
	if err != nil {
		b.Close(ctx)
		return nil, fmt.Errorf("connect MCP: %w", err)
	}
	return &Session{
		Env:     &agent.Env{Browser: b, BaseURL: inst.ShopURL, MCP: cs, Shell: inst.Shell, Traj: traj},
		browser: b, mcp: cs,
	}, nil
}

// Close ends the session's browser and MCP session.
func (s *Session) Close(ctx context.Context) error {
	return errors.Join(s.mcp.Close(), s.browser.Close(context.WithoutCancel(ctx)))
}

// Start starts a fresh instance of snapshot under the work directory.
func (e *Env) Start(ctx context.Context, snapshot world.ID, name string) (*runtime.Instance, error) {
	dir := filepath.Join(e.WorkDir, "instances", name)
	// A run killed half-way may have left this instance mounted.
	if err := reset.Remove(dir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return nil, err
	}
	uid := e.nextUID()
	return runtime.Start(ctx, runtime.Options{Materializer: e.Materializer, Snapshot: snapshot, CatalogDir: e.CatalogDir, Dir: dir, Self: e.Self, SandboxUID: uid, SandboxGID: uid})
}

// Run runs one rollout of t in a fresh instance of its initial world and
// snapshots the final world. A policy that fails or gives up is a value in
// the trajectory, not an error; an error means the harness itself failed.
func (e *Env) Run(ctx context.Context, t *task.Task, spec Spec) (*Result, error) {
	start := time.Now()
	inst, err := e.Start(ctx, t.Provenance.Snapshot, "rollout-"+spec.ID)
	if err != nil {
		return nil, err
	}
	defer inst.Close(context.WithoutCancel(ctx))
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.ID, Rollout: spec.ID, Policy: spec.Policy.Name(), Hint: spec.Hint, Start: t.Provenance.Snapshot}
	sess, err := e.Open(ctx, inst, traj)
	if err != nil {
		return nil, err
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	answer, perr := spec.Policy.Run(rctx, sess.Env, t.Public(spec.Hint))
	cancel()
	sess.Close(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	traj.Answer = answer
	switch {
	case perr == nil:
		traj.Outcome = "done"
	case errors.Is(perr, policy.ErrStopped):
		traj.Outcome = "stopped"
	case errors.Is(perr, agent.ErrInfra):
		traj.Outcome, traj.Error = "infra_error", perr.Error()
	default:
		traj.Outcome, traj.Error = "gave_up", perr.Error()
	}
	final, err := SnapshotWorld(ctx, e.Store, inst.Dir(), t.Provenance.Snapshot)
	if err != nil {
		return nil, fmt.Errorf("snapshot final world: %w", err)
	}
	traj.WallMS = float64(time.Since(start).Microseconds()) / 1000
	return &Result{Spec: spec, Trajectory: traj, Final: final, Wall: time.Since(start)}, nil
}

// SnapshotWorld stores the world at dir as a child of parent.
func SnapshotWorld(ctx context.Context, st *store.Store, dir string, parent world.ID) (world.ID, error) {
	sum, err := state.Summarize(ctx, dir)
	if err != nil {
		return world.ID{}, err
	}
	m, err := world.ReadManifest(dir)
	if err != nil {
		return world.ID{}, err
	}
	return st.Snapshot(ctx, dir, store.Meta{Kind: store.KindWorld, Parent: parent, WorldHash: sum.Hash, Persona: m.Persona, Day: m.Day, Catalog: m.Catalog})
}

// Verify computes V(W0, W, a) for a final snapshot.
func (e *Env) Verify(ctx context.Context, t *task.Task, verifierDir string, final world.ID, answer string) (*verify.Result, error) {
	w0, err := e.Materializer.Lower(ctx, t.Provenance.Snapshot)
	if err != nil {
		return nil, err
	}
	w, err := e.Materializer.Lower(ctx, final)
	if err != nil {
		return nil, err
	}
	scratch := filepath.Join(e.WorkDir, "verify-scratch")
	if err := os.MkdirAll(scratch, 0o755); err != nil {
		return nil, err
	}
	// The scripts run as the sandbox uid, which may not reach the task's
	// directory: verify a copy in the work directory.
	vdir, err := os.MkdirTemp(scratch, "verifier-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(vdir)
	if err := os.Chmod(vdir, 0o755); err != nil {
		return nil, err
	}
	if err := verify.CopyDir(ctx, verifierDir, filepath.Join(vdir, "v")); err != nil {
		return nil, err
	}
	return verify.Verify(ctx, t, verify.Input{Initial: w0, Final: w, Answer: answer, VerifierDir: filepath.Join(vdir, "v"), Runner: SandboxRunner{UID: e.nextUID()}, Scratch: scratch})
}

// SandboxRunner runs verifier scripts in internal/sandbox as UID (0 means
// the sandbox's default unprivileged uid).
type SandboxRunner struct{ UID int }

// Run implements verify.Runner.
func (r SandboxRunner) Run(ctx context.Context, home string, mounts []verify.Mount, env map[string]string, command string, timeout time.Duration) (verify.RunResult, error) {
	ro := make([]sandbox.Mount, len(mounts))
	for i, m := range mounts {
		ro[i] = sandbox.Mount{Host: m.Host, Path: m.Path}
	}
	if err := sandbox.PrepareHome(home, r.UID, r.UID); err != nil {
		return verify.RunResult{}, err
	}
	res, err := sandbox.Run(ctx, sandbox.Options{Home: home, ReadOnly: ro, Env: env, Timeout: timeout, UID: r.UID, GID: r.UID}, command)
	if err != nil {
		return verify.RunResult{}, err
	}
	return verify.RunResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, TimedOut: res.TimedOut}, nil
}
