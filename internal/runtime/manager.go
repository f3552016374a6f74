package runtime

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// ErrNoInstance is returned for an unknown instance id.
var ErrNoInstance = errors.New("no such instance")

// ErrTooManyInstances is wrapped by Create's error when MaxInstances
// instances are live (or being created).
var ErrTooManyInstances = errors.New("too many live instances")

// DefaultMaxInstances is ManagerOptions.MaxInstances's default: with the
// default 256 MiB tmpfs per instance, far more than a machine's RAM would
// hold were each instance's changes to fill it, yet above what the load
// test runs (256).
const DefaultMaxInstances = 512

// ManagerOptions configure a Manager. Zero values mean defaults.
type ManagerOptions struct {
	Store        *store.Store
	Materializer *reset.Materializer
	CatalogDir   string
	// WorkDir holds the instance directories.
	WorkDir string
	// Self is the persona's name as a message sender.
	Self string
	// Services is the library of service definitions worlds may name
	// (Options.Services).
	Services *service.Library
	// IdleTimeout reclaims instances nobody used for this long (30 min).
	IdleTimeout time.Duration
	// SessionTimeout closes idle MCP sessions (10 min).
	SessionTimeout time.Duration
	// ShellTimeout bounds one agent shell command (60 s).
	ShellTimeout time.Duration
	// UnsafeShell runs agents' commands unsandboxed when bubblewrap cannot
	// run (see Options.UnsafeShell).
	UnsafeShell bool
	// MaxInstances caps the live instances (DefaultMaxInstances); Create
	// refuses one more with ErrTooManyInstances.
	MaxInstances int
	// UIDs hands out the unprivileged uids of the instances' shells, one
	// per instance, so that a fork bomb in one instance hits only its own
	// process limit: the process's one allocator (nil: one of the
	// Manager's own, from 300000).
	UIDs *sandbox.UIDs
	// SandboxHost is the instances' sandbox host (Options.SandboxHost);
	// the caller owns it.
	SandboxHost *sandbox.Host
	// ShellNice is the instances' Options.ShellNice: 0 means
	// DefaultShellNice, a negative value leaves the commands at the
	// process's own priority.
	ShellNice int
	// MaxShellSetups caps the shell commands' sandboxes being set up at
	// once across every instance (Options.ShellSetups): the CPU- and
	// mount-heavy start of a command, not its run. 0 means
	// DefaultShellSetups; a negative value leaves them uncapped.
	MaxShellSetups int
	Logger         *slog.Logger
}

// DefaultShellSetups is ManagerOptions.MaxShellSetups's default: one
// sandbox set up at a time per CPU the process may use.
func DefaultShellSetups() int { return goruntime.GOMAXPROCS(0) }

// ShellDefaults maps ManagerOptions.MaxShellSetups and ShellNice to what a
// Manager uses: 0 gives the default (DefaultShellSetups, DefaultShellNice);
// a negative value gives no cap (-1) and the process's own priority (0).
func ShellDefaults(maxSetups, nice int) (setups, niceness int) {
	switch {
	case maxSetups == 0:
		setups = DefaultShellSetups()
	case maxSetups < 0:
		setups = -1
	default:
		setups = maxSetups
	}
	switch {
	case nice == 0:
		niceness = DefaultShellNice
	case nice > 0:
		niceness = nice
	}
	return setups, niceness
}

// DefaultShellNice is ManagerOptions.ShellNice's default: agents' commands
// take the CPU after the runtime's own work (resets, MCP calls, the
// websites), which keeps that work's latency under load without costing
// throughput (docs/BENCHMARKS.md, issue 17).
const DefaultShellNice = 10

// Manager hosts many instances in one process: they share the catalog, the
// application code and the snapshot cache, and hold only their own state.
// The manager reads the wall clock for idle reclaim only; instances' worlds
// read their frozen clocks.
type Manager struct {
	opts ManagerOptions
	log  *slog.Logger
	// shellSetups caps the sandboxes set up at once (MaxShellSetups); nil
	// when uncapped.
	shellSetups *semaphore.Weighted

	mu      sync.Mutex
	insts   map[string]*managed
	byToken map[string]*managed
	next    int
	// starting counts the instances Create is starting: they hold a slot
	// of MaxInstances too.
	starting int

	stop chan struct{}
	wg   sync.WaitGroup
}

type managed struct {
	id       string
	token    string // the agent's unguessable address of this instance
	snapshot world.ID
	inst     *Instance
	lastUsed atomic.Int64 // unix nanoseconds
	// ops serialises the control operations (reset, snapshot, diff,
	// destroy). Agent requests do not take it: a streaming MCP request may
	// stay open indefinitely and must not block a reset.
	ops     sync.Mutex
	closed  atomic.Bool
	crashes atomic.Int64
	active  atomic.Int64 // agent requests in flight
}

// NewManager returns a manager; Close tears everything down.
func NewManager(opts ManagerOptions) *Manager {
	if opts.IdleTimeout == 0 {
		opts.IdleTimeout = 30 * time.Minute
	}
	if opts.SessionTimeout == 0 {
		opts.SessionTimeout = 10 * time.Minute
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.UIDs == nil {
		opts.UIDs = sandbox.NewUIDs(300000, 0)
	}
	if opts.MaxInstances <= 0 {
		opts.MaxInstances = DefaultMaxInstances
	}
	opts.MaxShellSetups, opts.ShellNice = ShellDefaults(opts.MaxShellSetups, opts.ShellNice)
	m := &Manager{opts: opts, log: opts.Logger, insts: map[string]*managed{}, byToken: map[string]*managed{}, stop: make(chan struct{})}
	if opts.MaxShellSetups > 0 {
		m.shellSetups = semaphore.NewWeighted(int64(opts.MaxShellSetups))
	}
	m.wg.Add(1)
	go m.reaper()
	return m
}

// Info describes an instance. ID names it on the control API; Token is
// its unguessable address on the agent listener, given only to the agent
// that works in it.
type Info struct {
	ID       string   `json:"id"`
	Snapshot world.ID `json:"snapshot"`
	Token    string   `json:"token"`
	// SiteHosts maps each site of the registry (site.All) to the Host it
	// answers to on the agent listener: NAME.TOKEN.localhost.
	SiteHosts map[string]string `json:"site_hosts"`
	// MCPPath is where the MCP services are on the agent listener: service
	// NAME at MCPPath/NAME.
	MCPPath string `json:"mcp_path"`
	// ShellPath is the path of the agent shell endpoint.
	ShellPath string    `json:"shell_path"`
	IdleFor   string    `json:"idle_for"`
	Clock     time.Time `json:"clock"`
}

func (mi *managed) info() Info {
	hosts := make(map[string]string, len(mi.inst.sites))
	for name := range mi.inst.sites {
		hosts[name] = name + "." + mi.token + ".localhost"
	}
	return Info{ID: mi.id, Snapshot: mi.snapshot, Token: mi.token, SiteHosts: hosts, MCPPath: "/i/" + mi.token + "/mcp",
		ShellPath: "/i/" + mi.token + "/shell", Clock: mi.inst.Clock().Now(),
		IdleFor: time.Since(time.Unix(0, mi.lastUsed.Load())).Round(time.Second).String()}
}

// newToken returns 128 random bits in lowercase hex (a valid DNS label).
func newToken() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Create starts an instance of snapshot. It refuses with
// ErrTooManyInstances when MaxInstances are live, and with ErrNotWorld for
// a snapshot that is not a world's.
func (m *Manager) Create(ctx context.Context, snapshot world.ID) (Info, error) {
	m.mu.Lock()
	if n := len(m.insts) + m.starting; n >= m.opts.MaxInstances {
		m.mu.Unlock()
		return Info{}, fmt.Errorf("create instance: %w: %d of at most %d are live or starting: destroy one (DELETE /instances/ID), or raise the limit (ManagerOptions.MaxInstances, wildawm serve --max-instances)", ErrTooManyInstances, n, m.opts.MaxInstances)
	}
	m.starting++
	m.next++
	id := fmt.Sprintf("i%d", m.next)
	m.mu.Unlock()
	registered := false // then the slot is the instance's, no longer a start's
	defer func() {
		if !registered {
			m.mu.Lock()
			m.starting--
			m.mu.Unlock()
		}
	}()
	uid, err := m.opts.UIDs.Next()
	if err != nil {
		return Info{}, fmt.Errorf("create instance: %w", err)
	}
	dir := filepath.Join(m.opts.WorkDir, id)
	if err := reset.Remove(dir); err != nil {
		return Info{}, err
	}
	if err := os.MkdirAll(m.opts.WorkDir, 0o755); err != nil {
		return Info{}, err
	}
	inst, err := Start(ctx, Options{Materializer: m.opts.Materializer, Snapshot: snapshot, CatalogDir: m.opts.CatalogDir, Dir: dir,
		Self: m.opts.Self, ShellTimeout: m.opts.ShellTimeout, SessionTimeout: m.opts.SessionTimeout, NoListen: true, Logger: m.log, Services: m.opts.Services,
		SandboxUID: uid, SandboxGID: uid, UnsafeShell: m.opts.UnsafeShell, SandboxHost: m.opts.SandboxHost, ShellNice: m.opts.ShellNice, ShellSetups: m.shellSetups})
	if err != nil {
		return Info{}, err
	}
	token, err := newToken()
	if err != nil {
		inst.Close(ctx)
		return Info{}, err
	}
	mi := &managed{id: id, token: token, snapshot: snapshot, inst: inst}
	mi.lastUsed.Store(time.Now().UnixNano())
	m.mu.Lock()
	m.insts[id] = mi
	m.byToken[token] = mi
	m.starting--
	registered = true
	m.mu.Unlock()
	return mi.info(), nil
}

func (m *Manager) get(id string) (*managed, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mi, ok := m.insts[id]
	if !ok {
		return nil, fmt.Errorf("%w: %q", ErrNoInstance, id)
	}
	return mi, nil
}

// Instance returns the live instance id (for in-process orchestration).
func (m *Manager) Instance(id string) (*Instance, error) {
	mi, err := m.get(id)
	if err != nil {
		return nil, err
	}
	return mi.inst, nil
}

// List describes every instance, by id.
func (m *Manager) List() []Info {
	m.mu.Lock()
	out := make([]Info, 0, len(m.insts))
	for _, mi := range m.insts {
		out = append(out, mi.info())
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b Info) int { return strings.Compare(a.ID, b.ID) })
	return out
}

// Reset returns instance id to its snapshot.
func (m *Manager) Reset(ctx context.Context, id string) error {
	mi, err := m.get(id)
	if err != nil {
		return err
	}
	mi.ops.Lock()
	defer mi.ops.Unlock()
	mi.lastUsed.Store(time.Now().UnixNano())
	return mi.inst.Reset(ctx)
}

// StepClock moves instance id's clock forward to t.
func (m *Manager) StepClock(id string, t time.Time) error {
	mi, err := m.get(id)
	if err != nil {
		return err
	}
	mi.ops.Lock()
	defer mi.ops.Unlock()
	return mi.inst.StepClock(t)
}

// Snapshot stores instance id's current state as a child of its snapshot.
func (m *Manager) Snapshot(ctx context.Context, id string) (world.ID, error) {
	mi, err := m.get(id)
	if err != nil {
		return world.ID{}, err
	}
	mi.ops.Lock()
	defer mi.ops.Unlock()
	// No shell command or tool call writes while the files are read and
	// copied, so the record's world hash is the stored tree's.
	quiet, err := mi.inst.quiesce(ctx)
	if err != nil {
		return world.ID{}, err
	}
	defer quiet()
	release := mi.inst.holdServices()
	defer release()
	sum, err := state.Summarize(ctx, mi.inst.Dir())
	if err != nil {
		return world.ID{}, err
	}
	man, err := world.ReadManifest(mi.inst.Dir())
	if err != nil {
		return world.ID{}, err
	}
	return m.opts.Store.Snapshot(ctx, mi.inst.Dir(), store.Meta{Kind: store.KindWorld, Parent: mi.snapshot, WorldHash: sum.Hash, Persona: man.Persona, Day: man.Day, Catalog: man.Catalog})
}

// Diff compares instance id's current state with its snapshot.
func (m *Manager) Diff(ctx context.Context, id string) (*state.Diff, error) {
	mi, err := m.get(id)
	if err != nil {
		return nil, err
	}
	lower, err := m.opts.Materializer.Lower(ctx, mi.snapshot)
	if err != nil {
		return nil, err
	}
	mi.ops.Lock()
	defer mi.ops.Unlock()
	quiet, err := mi.inst.quiesce(ctx)
	if err != nil {
		return nil, err
	}
	defer quiet()
	release := mi.inst.holdServices()
	defer release()
	return state.Compare(ctx, lower, mi.inst.Dir())
}

// Destroy closes and removes instance id.
func (m *Manager) Destroy(ctx context.Context, id string) error {
	m.mu.Lock()
	mi, ok := m.insts[id]
	delete(m.insts, id)
	if ok {
		delete(m.byToken, mi.token)
	}
	m.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %q", ErrNoInstance, id)
	}
	mi.ops.Lock()
	defer mi.ops.Unlock()
	mi.closed.Store(true)
	return mi.inst.Close(ctx)
}

// Close tears down every instance and stops the reaper.
func (m *Manager) Close(ctx context.Context) error {
	close(m.stop)
	m.wg.Wait()
	var errs []error
	for _, info := range m.List() {
		if err := m.Destroy(ctx, info.ID); err != nil && !errors.Is(err, ErrNoInstance) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (m *Manager) reaper() {
	defer m.wg.Done()
	tick := time.NewTicker(min(m.opts.IdleTimeout/4, time.Minute))
	defer tick.Stop()
	for {
		select {
		case <-m.stop:
			return
		case <-tick.C:
			m.ReclaimIdle(time.Now())
		}
	}
}

// ReclaimIdle destroys the instances idle since before now - IdleTimeout
// and returns how many; the manager calls it periodically.
func (m *Manager) ReclaimIdle(now time.Time) int {
	n := 0
	for _, info := range m.List() {
		mi, err := m.get(info.ID)
		if err != nil || mi.active.Load() > 0 || now.Sub(time.Unix(0, mi.lastUsed.Load())) < m.opts.IdleTimeout {
			continue
		}
		if err := m.Destroy(context.Background(), info.ID); err == nil {
			m.log.Info("reclaimed idle instance", "instance", info.ID)
			n++
		}
	}
	return n
}

// AgentHandler is the agent-facing listener: site NAME of the instance
// whose token is TOKEN on Host NAME.TOKEN.localhost (each site at the root
// of an origin of its own, as its pages link by absolute paths), its MCP
// service NAME at /i/TOKEN/mcp/NAME and its shell at /i/TOKEN/shell (POST
// {"command": "..."}).
// Tokens are 128 random bits handed out by the control API only, so an
// agent can address its own instance and no other. Nothing else is served:
// no control, no store, no verifier.
func (m *Manager) AgentHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := r.Host
		if i := strings.LastIndexByte(host, ':'); i >= 0 && !strings.HasSuffix(host, "]") {
			host = host[:i]
		}
		host = strings.ToLower(strings.TrimSuffix(host, "."))
		if rest, ok := strings.CutSuffix(host, ".localhost"); ok {
			if name, id, ok := strings.Cut(rest, "."); ok && validToken(id) {
				m.serve(w, r, id, func(mi *managed) http.Handler { return mi.inst.SiteHandler(name) })
				return
			}
		}
		rest, ok := strings.CutPrefix(r.URL.Path, "/i/")
		id, sub, _ := strings.Cut(rest, "/")
		if !ok || !validToken(id) {
			http.NotFound(w, r)
			return
		}
		switch {
		case strings.HasPrefix(sub, "mcp/"):
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/" + sub
			m.serve(w, r2, id, func(mi *managed) http.Handler { return mi.inst.MCPHandler() })
		case sub == "shell":
			m.serve(w, r, id, func(mi *managed) http.Handler { return shellHandler(mi.inst) })
		default:
			http.NotFound(w, r)
		}
	})
}

func validToken(t string) bool {
	if len(t) != 32 {
		return false
	}
	for _, c := range t {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}

// byAgentToken finds the instance whose token equals t, comparing in
// constant time.
func (m *Manager) byAgentToken(t string) *managed {
	m.mu.Lock()
	mi := m.byToken[t]
	m.mu.Unlock()
	if mi == nil || subtle.ConstantTimeCompare([]byte(mi.token), []byte(t)) != 1 {
		return nil
	}
	return mi
}

// serve runs h for the instance addressed by token, isolating a panic to
// that request.
func (m *Manager) serve(w http.ResponseWriter, r *http.Request, token string, h func(*managed) http.Handler) {
	mi := m.byAgentToken(token)
	if mi == nil || mi.closed.Load() {
		http.NotFound(w, r)
		return
	}
	id := mi.id
	mi.active.Add(1)
	defer func() {
		mi.active.Add(-1)
		mi.lastUsed.Store(time.Now().UnixNano())
	}()
	mi.lastUsed.Store(time.Now().UnixNano())
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			mi.crashes.Add(1)
			m.log.Error("instance handler panicked", "instance", id, "panic", fmt.Sprint(v))
			http.Error(w, "internal error in this instance", http.StatusInternalServerError)
		}
	}()
	h(mi).ServeHTTP(w, r)
}

// MaxShellBody bounds a shell request.
const MaxShellBody = 64 << 10

func shellHandler(in *Instance) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", "POST")
			http.Error(w, "POST a JSON object {\"command\": \"...\"}", http.StatusMethodNotAllowed)
			return
		}
		var req struct {
			Command string `json:"command"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, MaxShellBody))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil || req.Command == "" {
			http.Error(w, `want a JSON object {"command": "..."} of at most 64 KiB`, http.StatusBadRequest)
			return
		}
		res, err := in.Shell(r.Context(), req.Command)
		if errors.Is(err, ErrNoSandbox) {
			http.Error(w, "the shell is not available on this server (no sandbox)", http.StatusServiceUnavailable)
			return
		}
		if err != nil {
			// The cause names host paths: log it, tell the agent less.
			in.opts.Logger.Error("shell failed", "error", err)
			http.Error(w, "the shell could not run this command; try again", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"stdout": string(res.Stdout), "stderr": string(res.Stderr),
			"exit_code": res.ExitCode, "timed_out": res.TimedOut, "truncated": res.Truncated})
	})
}
