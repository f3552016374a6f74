package rollout

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/verify"
	"github.com/wildawm/wildawm/internal/vision"
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
	// Services is the library of service definitions worlds may name.
	Services *service.Library
	// NewBrowser opens a fresh browser for one session (a tab in a browser
	// context of its own, of a shared Chromium) that reaches origins only:
	// the instance's websites.
	NewBrowser func(ctx context.Context, origins []string) (Browser, error)
	// Timeout bounds one rollout (default 5 minutes, or a Budgeted policy's
	// wall budget and a minute, whichever is longer).
	Timeout time.Duration
	// Vision, when set, is the sessions' vision tool (agent.ModelVision);
	// nil is the offline analyser of the pixels.
	Vision func(ctx context.Context, img []byte) (*vision.Description, error)
	// Artifacts, when set, keeps each rollout's artifacts (screenshots) in
	// Artifacts/<rollout id>/, named in its steps relative to Artifacts.
	Artifacts string
	// BeforePolicy, if set, runs after a rollout's session opens and before
	// its policy starts, with the attempt number (1 for the first). Tests
	// use it to inject an infrastructure fault (closing the instance or the
	// session's browser).
	BeforePolicy func(ctx context.Context, spec Spec, attempt int, inst *runtime.Instance, sess *Session)
	// UIDs hands out the unprivileged uids of the instances' shells and the
	// verifier's scripts, one per sandbox, so that one sandbox's processes
	// never count against another's process limit. Every Env of a process
	// shares the process's one (Factory gives it); nil is a private
	// allocator from sandbox.DefaultFirstUID, for an Env alone in its
	// process.
	UIDs *sandbox.UIDs
	// SandboxHost, when set, is the mount namespace the instances' shells
	// and the verifier's scripts are sandboxed from (sandbox.NewHost); the
	// Env's owner closes it.
	SandboxHost *sandbox.Host
	// ShellSetups, when set, caps the sandboxes set up at once for the
	// instances' shells and the verifier's scripts (sandbox.Options.Setups);
	// Envs may share one.
	ShellSetups *semaphore.Weighted
	// ShellNice is the instances' shells' CPU priority
	// (runtime.Options.ShellNice; 0 leaves it at the process's own).
	ShellNice int

	ownUIDs sync.Once
}

// NewUID returns a sandbox uid no other sandbox of the Env's allocator
// has: for a sandbox of the caller's own (a mutation check's scripts).
func (e *Env) NewUID() (int, error) {
	e.ownUIDs.Do(func() {
		if e.UIDs == nil {
			e.UIDs = &sandbox.UIDs{}
		}
	})
	return e.UIDs.Next()
}

// Policy decides a rollout's actions through env's tools and returns the
// final answer. A policy that gives up returns ErrStopped; a failure of the
// harness under it wraps agent.ErrInfra. (internal/policy has the scripted
// ones; the rollout harness and the judges never import it.)
type Policy interface {
	Name() string
	Run(ctx context.Context, env *agent.Env, t task.Public) (answer string, err error)
}

// Budgeted is a policy with a wall-time budget of its own.
type Budgeted interface {
	WallBudget() time.Duration
}

// ErrStopped is returned by a policy that gave up before finishing.
var ErrStopped = errors.New("policy stopped early")

// Spec is one rollout to run.
type Spec struct {
	ID     string
	Policy Policy
	Hint   bool
	// AblateImages runs the rollout with the images' information removed
	// from the vision tool (agent.Env.AblateImages).
	AblateImages bool
}

// Result is one finished rollout.
type Result struct {
	Spec       Spec              `json:"-"`
	Trajectory *agent.Trajectory `json:"-"`
	// Final is the snapshot of the final world; the initial world when the
	// agent made its final world unsnapshottable (Trajectory.Fault says
	// how: judge the rollout with Env.Judge, never by verifying Final).
	Final world.ID `json:"final"`
	// Wall is the rollout's wall time, instance start to final snapshot.
	Wall time.Duration `json:"wall"`
}

// Session is one agent session on a live instance: a browser, an MCP
// client session and the shell, recorded into a trajectory.
type Session struct {
	Env     *agent.Env
	browser Browser
	mcp     map[string]*mcp.ClientSession
	closed  bool
}

// Open starts a session on inst: a browser, and an MCP client session on
// every service the instance serves, namespaced by service name.
func (e *Env) Open(ctx context.Context, inst *runtime.Instance, traj *agent.Trajectory) (*Session, error) {
	origins := slices.Sorted(maps.Values(inst.SiteURLs))
	b, err := e.NewBrowser(ctx, origins)
	if err != nil {
		return nil, fmt.Errorf("%w: start browser: %v", agent.ErrInfra, err)
	}
	s := &Session{browser: b, mcp: map[string]*mcp.ClientSession{}}
	client := mcp.NewClient(&mcp.Implementation{Name: "wildawm-agent", Version: "1"}, nil)
	for _, name := range Services(inst.Dir()) {
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: inst.MCPURL + "/" + name, MaxRetries: -1}, nil)
		if err != nil {
			s.Close(ctx)
			return nil, fmt.Errorf("%w: connect MCP service %s: %v", agent.ErrInfra, name, err)
		}
		s.mcp[name] = cs
	}
	// A path opens on the shop, the case study's website; a full URL on any.
	uid, gid := inst.SandboxIDs()
	s.Env = &agent.Env{Browser: b, BaseURL: inst.SiteURL("shop"), Sites: maps.Clone(inst.SiteURLs), MCP: s.mcp, Shell: inst.Shell,
		Files: agent.HomeFiles{Dir: filepath.Join(inst.Dir(), world.HomeDir), UID: uid, GID: gid}, Describe: e.Vision, Traj: traj}
	return s, nil
}

// Services lists the MCP services the world at dir has a database for, in
// the registry's order, then those its manifest serves from definitions:
// the services an instance of it serves.
func Services(dir string) []string {
	var out []string
	for _, spec := range service.All() {
		if _, err := os.Stat(world.DBPath(dir, spec.Name)); err == nil {
			out = append(out, spec.Name)
		}
	}
	if m, err := world.ReadManifest(dir); err == nil {
		for _, ref := range m.Services {
			if _, err := os.Stat(world.DBPath(dir, ref.Name)); err == nil {
				out = append(out, ref.Name)
			}
		}
	}
	return out
}

// Browser is the session's browser.
func (s *Session) Browser() Browser { return s.browser }

// Close ends the session's browser and MCP sessions; it is safe to call
// more than once.
func (s *Session) Close(ctx context.Context) error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	for _, cs := range s.mcp {
		errs = append(errs, cs.Close())
	}
	return errors.Join(append(errs, s.browser.Close(context.WithoutCancel(ctx)))...)
}

// Instance is a live instance (runtime.Instance), named here so that a
// consumer of the narrow interfaces below need not import the runtime.
type Instance = runtime.Instance

// Lower materialises the world of snapshot id read-only (through the
// environment's Materializer) and returns its directory.
func (e *Env) Lower(ctx context.Context, id world.ID) (string, error) {
	return e.Materializer.Lower(ctx, id)
}

// TempDir makes a fresh directory under the environment's work directory
// (os.MkdirTemp's pattern), searchable and readable by the sandbox's uids
// (mode 0755): a checker's scratch its scripts reach.
func (e *Env) TempDir(pattern string) (string, error) {
	d, err := os.MkdirTemp(e.WorkDir, pattern)
	if err != nil {
		return "", err
	}
	if err := os.Chmod(d, 0o755); err != nil {
		os.RemoveAll(d)
		return "", err
	}
	return d, nil
}

// CatalogDB is the path of the catalog database the verifier's SQL
// criteria read as schema catalog ("" without a catalog).
func (e *Env) CatalogDB() string {
	if e.CatalogDir == "" {
		return ""
	}
	return world.DBPath(e.CatalogDir, catalog.DBName)
}

// Snapshot stores the world of the live instance inst, a day after base,
// in the environment's store and returns its snapshot (SnapshotWorld).
func (e *Env) Snapshot(ctx context.Context, inst *Instance, base world.ID) (world.ID, error) {
	return SnapshotWorld(ctx, e.Store, inst.Dir(), base)
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
	uid, err := e.NewUID()
	if err != nil {
		return nil, err
	}
	return runtime.Start(ctx, runtime.Options{Materializer: e.Materializer, Snapshot: snapshot, CatalogDir: e.CatalogDir, Dir: dir, Self: e.Self, SandboxUID: uid, SandboxGID: uid, Services: e.Services, SandboxHost: e.SandboxHost, ShellSetups: e.ShellSetups, ShellNice: e.ShellNice})
}

// MaxAttempts is how many times Run tries a rollout whose harness failed
// (the paper allows three): each attempt is a fresh instance.
const MaxAttempts = 3

// Run runs one rollout of t in a fresh instance of its initial world and
// snapshots the final world. A policy that fails or gives up is a value in
// the trajectory, not an error. A failure of the harness (the instance, the
// browser, an MCP transport or the sandbox) is retried in a fresh instance,
// MaxAttempts in all; if every attempt fails so, the result's trajectory
// has outcome "infra_error", Final is the initial world and the rollout
// must not be counted as the agent's failure. A final world the agent made
// unsnapshottable (an error wrapping world.ErrAgentFault) or an answer over
// verify.MaxAnswerBytes is the agent's failure, final: Trajectory.Fault
// says why and Judge scores it V 0. The error is for a cancelled ctx or a
// store that cannot take the final world.
func (e *Env) Run(ctx context.Context, t *task.Task, spec Spec) (*Result, error) {
	start := time.Now()
	var infra []string
	for attempt := 1; ; attempt++ {
		res, err := e.attempt(ctx, t, spec, attempt)
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if errors.Is(err, ErrSetup) {
			traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.ID, Rollout: spec.ID, Policy: spec.Policy.Name(), Hint: spec.Hint,
				Start: t.Provenance.Snapshot, Outcome: OutcomeSetup, Failure: agent.FailSetup, Error: err.Error(), Attempts: attempt, InfraErrors: infra}
			res := &Result{Spec: spec, Final: t.Provenance.Snapshot, Trajectory: traj, Wall: time.Since(start)}
			traj.WallMS = float64(res.Wall.Microseconds()) / 1000
			return res, nil
		}
		if err != nil && !errors.Is(err, agent.ErrInfra) {
			return nil, err
		}
		if err == nil && res.Trajectory.Outcome != OutcomeInfra {
			res.Trajectory.Attempts, res.Trajectory.InfraErrors = attempt, infra
			res.Wall = time.Since(start)
			res.Trajectory.WallMS = float64(res.Wall.Microseconds()) / 1000
			return res, nil
		}
		why := ""
		if err != nil {
			why = err.Error()
		} else {
			why = res.Trajectory.Error
		}
		infra = append(infra, fmt.Sprintf("attempt %d: %s", attempt, why))
		if attempt == MaxAttempts {
			if res == nil {
				res = &Result{Spec: spec, Final: t.Provenance.Snapshot, Trajectory: &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.ID,
					Rollout: spec.ID, Policy: spec.Policy.Name(), Hint: spec.Hint, Start: t.Provenance.Snapshot}}
			}
			res.Final = t.Provenance.Snapshot
			res.Trajectory.Outcome, res.Trajectory.Failure = OutcomeInfra, agent.FailInfra
			res.Trajectory.Error = fmt.Sprintf("infrastructure failed in all %d attempts: %s", MaxAttempts, strings.Join(infra, "; "))
			res.Trajectory.Attempts, res.Trajectory.InfraErrors = attempt, infra
			res.Wall = time.Since(start)
			res.Trajectory.WallMS = float64(res.Wall.Microseconds()) / 1000
			return res, nil
		}
	}
}

// Trajectory outcomes (agent's, under the names rollout's callers use).
const (
	OutcomeDone    = agent.OutcomeDone
	OutcomeStopped = agent.OutcomeStop
	OutcomeGaveUp  = agent.OutcomeGaveUp
	OutcomeBudget  = agent.OutcomeBudget
	OutcomeFormat  = agent.OutcomeFormat
	OutcomeSetup   = agent.OutcomeSetup
	OutcomeInfra   = agent.OutcomeInfra
)

// ErrSetup marks a rollout whose initial world cannot be made (its
// snapshot is not in the store): the task's failure, not retried, not the
// agent's.
var ErrSetup = errors.New("set-up failure")

// attempt is one try of a rollout in a fresh instance. Its error wraps
// agent.ErrInfra when the instance or session could not start.
func (e *Env) attempt(ctx context.Context, t *task.Task, spec Spec, attempt int) (*Result, error) {
	// Named after the task and the rollout: one Env runs many tasks' rollouts
	// at once.
	name := "rollout-" + t.ID + "-" + spec.ID
	if attempt > 1 {
		name += fmt.Sprintf("-attempt%d", attempt)
	}
	inst, err := e.Start(ctx, t.Provenance.Snapshot, name)
	if errors.Is(err, store.ErrNoSnapshot) {
		return nil, fmt.Errorf("%w: start instance: %v", ErrSetup, err)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: start instance: %v", agent.ErrInfra, err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: t.ID, Rollout: spec.ID, Policy: spec.Policy.Name(), Hint: spec.Hint, Start: t.Provenance.Snapshot}
	sess, err := e.Open(ctx, inst, traj)
	if err != nil {
		return nil, err
	}
	sess.Env.AblateImages = spec.AblateImages
	if e.Artifacts != "" {
		sess.Env.Artifacts, sess.Env.ArtifactsRel = filepath.Join(e.Artifacts, spec.ID), spec.ID
	}
	if e.BeforePolicy != nil {
		e.BeforePolicy(ctx, spec, attempt, inst, sess)
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = 5 * time.Minute
	}
	// A policy with a wall budget of its own (a model's harness) ends on it
	// as a budget outcome; the rollout's timeout is only the backstop.
	if b, ok := spec.Policy.(Budgeted); ok && b.WallBudget()+time.Minute > timeout {
		timeout = b.WallBudget() + time.Minute
	}
	rctx, cancel := context.WithTimeout(ctx, timeout)
	answer, perr := spec.Policy.Run(rctx, sess.Env, t.Public(spec.Hint))
	timedOut := rctx.Err() != nil && ctx.Err() == nil
	cancel()
	sess.Close(ctx)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	traj.Answer = answer
	switch {
	case perr == nil:
		traj.Outcome = OutcomeDone
	case errors.Is(perr, ErrStopped):
		traj.Outcome = OutcomeStopped
	case errors.Is(perr, agent.ErrFormat):
		traj.Outcome, traj.Error = OutcomeFormat, perr.Error()
	case errors.Is(perr, agent.ErrBudget):
		traj.Outcome, traj.Error = OutcomeBudget, perr.Error()
	case timedOut:
		traj.Outcome, traj.Error = OutcomeBudget, fmt.Sprintf("the rollout's %v ran out: %v", timeout, perr)
	case errors.Is(perr, agent.ErrServerConfig):
		// The server was not started for this stage (tool calling off):
		// every rollout would fail alike until it is restarted, so the
		// stage stops here, naming the flag, instead of recording one
		// infrastructure failure per rollout.
		return nil, fmt.Errorf("rollout %s: %w", spec.ID, perr)
	case errors.Is(perr, agent.ErrInfra):
		traj.Outcome, traj.Error = OutcomeInfra, perr.Error()
		return &Result{Spec: spec, Trajectory: traj}, nil
	default:
		traj.Outcome, traj.Error = OutcomeGaveUp, perr.Error()
	}
	traj.Failure = agent.FailureOf(traj.Outcome)
	res, err := e.SnapshotFinal(ctx, t, inst.Dir(), traj)
	if err != nil {
		return nil, err
	}
	res.Spec = spec
	return res, nil
}

// SnapshotFinal ends a rollout whose answer is in traj: it snapshots the
// final world at dir (an instance's, its session closed) as the result's
// Final. When the agent made that world unsnapshottable (an error wrapping
// world.ErrAgentFault, such as a name the store cannot keep) or its answer
// is over verify.MaxAnswerBytes, traj.Fault says so: the agent's failure,
// final, never an infrastructure failure to retry; Final is then the
// snapshot, or the initial world when there is none. Judge scores it. The
// error is for the harness: a cancelled ctx, a store that cannot take the
// world.
func (e *Env) SnapshotFinal(ctx context.Context, t *task.Task, dir string, traj *agent.Trajectory) (*Result, error) {
	if err := verify.CheckAnswer(traj.Answer); err != nil {
		traj.Fault = err.Error()
	}
	final, err := SnapshotWorld(ctx, e.Store, dir, t.Provenance.Snapshot)
	if errors.Is(err, world.ErrAgentFault) && ctx.Err() == nil {
		traj.Fault = "snapshot the final world: " + err.Error()
		final, err = t.Provenance.Snapshot, nil
	}
	if err != nil {
		return nil, fmt.Errorf("snapshot final world: %w", err)
	}
	if traj.Fault != "" && traj.Failure == "" {
		traj.Failure = agent.FailAgent
	}
	return &Result{Trajectory: traj, Final: final}, nil
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

// Judge computes V for a finished rollout: Verify on its final world and
// answer, or, when its agent made them unverifiable (Trajectory.Fault),
// verify.Unverifiable without running anything: V 0, every criterion
// failed. A fault Verify finds (an answer over verify.MaxAnswerBytes) is
// recorded in the trajectory's Fault. The error is for the harness only: a
// scorer counts it as infrastructure; everything the agent did is in the
// result.
func (e *Env) Judge(ctx context.Context, t *task.Task, verifierDir string, res *Result) (*verify.Result, error) {
	tr := res.Trajectory
	vr, err := e.Score(ctx, t, verifierDir, res.Final, tr.Answer, tr.Fault)
	if err != nil {
		return nil, err
	}
	tr.Fault = vr.Fault
	return vr, nil
}

// Score is Judge over a stored rollout: its final world, its answer and
// its fault (Trajectory.Fault, kept with the record). A rollout with a
// fault is verify.Unverifiable whatever its world and answer would pass:
// a final world the agent made unsnapshottable is stored as the initial
// one, and an answer-only task would pass there on the answer alone.
func (e *Env) Score(ctx context.Context, t *task.Task, verifierDir string, final world.ID, answer, fault string) (*verify.Result, error) {
	if fault != "" {
		return verify.Unverifiable(t, errors.New(fault)), nil
	}
	return e.Verify(ctx, t, verifierDir, final, answer)
}

// Verify computes V(W0, W, a) for a final snapshot. What the agent did to
// its answer or final world is a result, never an error: an answer over
// verify.MaxAnswerBytes, or a final world that cannot be restored for a
// cause wrapping world.ErrAgentFault, is verify.Unverifiable.
func (e *Env) Verify(ctx context.Context, t *task.Task, verifierDir string, final world.ID, answer string) (*verify.Result, error) {
	// The two worlds are held while V runs, then left to the cache's
	// collection (reset.Scope).
	ctx, release := reset.Scope(ctx)
	defer release()
	w0, err := e.Materializer.Lower(ctx, t.Provenance.Snapshot)
	if err != nil {
		return nil, err
	}
	if err := verify.CheckAnswer(answer); err != nil {
		return verify.Unverifiable(t, err), nil
	}
	w, err := e.Materializer.Lower(ctx, final)
	if errors.Is(err, world.ErrAgentFault) && ctx.Err() == nil {
		return verify.Unverifiable(t, fmt.Errorf("restore the final world: %w", err)), nil
	}
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
	runner, err := e.ScriptRunner()
	if err != nil {
		return nil, err
	}
	return verify.Verify(ctx, t, verify.Input{Initial: w0, Final: w, Answer: answer, Catalog: e.CatalogDB(), VerifierDir: filepath.Join(vdir, "v"), Runner: runner, Scratch: scratch})
}

// ScriptRunner runs scripts of the caller's (a verifier's, a mutation
// check's) in the Env's sandboxes, as a uid of their own from the Env's
// allocator.
func (e *Env) ScriptRunner() (SandboxRunner, error) {
	uid, err := e.NewUID()
	if err != nil {
		return SandboxRunner{}, err
	}
	return SandboxRunner{UID: uid, Host: e.SandboxHost, Setups: e.ShellSetups}, nil
}

// SandboxRunner runs verifier scripts in internal/sandbox as UID (0 means
// the sandbox's default unprivileged uid).
type SandboxRunner struct {
	UID    int
	Host   *sandbox.Host
	Setups *semaphore.Weighted // sandbox.Options.Setups
}

// Run implements verify.Runner.
func (r SandboxRunner) Run(ctx context.Context, home string, mounts []verify.Mount, env map[string]string, command string, timeout time.Duration) (verify.RunResult, error) {
	ro := make([]sandbox.Mount, len(mounts))
	for i, m := range mounts {
		ro[i] = sandbox.Mount{Host: m.Host, Path: m.Path}
	}
	if err := sandbox.PrepareHome(home, r.UID, r.UID); err != nil {
		return verify.RunResult{}, err
	}
	res, err := sandbox.Run(ctx, sandbox.Options{Home: home, ReadOnly: ro, Env: env, Timeout: timeout, UID: r.UID, GID: r.UID, Host: r.Host, Setups: r.Setups}, command)
	if err != nil {
		return verify.RunResult{}, err
	}
	return verify.RunResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, TimedOut: res.TimedOut}, nil
}
