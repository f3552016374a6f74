package runtime

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"golang.org/x/sync/semaphore"
	"syscall"
	"time"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/world"
)

// Options configure Start.
type Options struct {
	Materializer *reset.Materializer
	Snapshot     world.ID
	CatalogDir   string
	// Dir is the instance's world directory; it must not exist.
	Dir string
	// Self is the persona's name as a message sender.
	Self string
	// SandboxUID and SandboxGID run the shell; 0 means 65534 (nobody).
	SandboxUID, SandboxGID int
	// SandboxHost, when set, is the mount namespace the shell's sandboxes
	// are cloned from (sandbox.NewHost): their cost then does not grow with
	// the number of instances. Its owner closes it.
	SandboxHost *sandbox.Host
	// ShellNice lowers the shell commands' CPU priority (sandbox.Options.Nice).
	ShellNice int
	// ShellSetups, when set, is shared by instances whose sandboxes may not
	// all be set up at once (sandbox.Options.Setups,
	// ManagerOptions.MaxShellSetups).
	ShellSetups *semaphore.Weighted
	// ShellTimeout bounds one shell command; 0 means 60 s.
	ShellTimeout time.Duration
	// SessionTimeout closes idle MCP sessions; 0 keeps them.
	SessionTimeout time.Duration
	// Services is the library of service definitions the world's manifest
	// may name (world.Manifest.Services); nil serves only the built-in
	// services, and a world that names a definition fails to start.
	Services *service.Library
	// NoListen serves the instance only through SiteHandler and MCPHandler
	// (a Manager mounts hundreds in one listener); by default Start opens a
	// loopback port for each site and one for the MCP services.
	NoListen bool
	// UnsafeShell runs shell commands without the sandbox when bubblewrap
	// cannot run here. Without it such commands are refused: an agent's
	// commands are untrusted.
	UnsafeShell bool
	Logger      *slog.Logger
}

// Instance is one live world.
type Instance struct {
	opts  Options
	inst  reset.Instance
	clock *Clock
	// sandboxAvailable replaces sandbox.Available in tests.
	sandboxAvailable func() error
	// sandboxOK is set once the sandbox has been found to run here.
	sandboxOK atomic.Bool
	// shells admits shell commands (one unit each) and lets a snapshot or
	// diff take every unit: it waits for the commands in flight and holds
	// new ones until it has read the world (FIFO, so they cannot starve it).
	shells     *semaphore.Weighted
	shellsOnce sync.Once
	// episode is cancelled (with ErrShellReset) when Reset ends the
	// episode: the shell commands still running in it are killed.
	epMu     sync.Mutex
	episode  context.Context
	endEpoch context.CancelCauseFunc

	// sites and svcs are opened by the first prepare and never change.
	sites   map[string]site.Site       // every site of the registry
	svcs    map[string]service.Service // every MCP service the world has a database for
	mu      sync.Mutex
	mcpH    map[string]http.Handler // rebuilt on every reset: MCP sessions never survive one
	servers []*http.Server

	// SiteURLs maps each site of the registry (site.All) to its base URL,
	// for the browser: every site has a loopback port of its own, as its
	// pages link by absolute paths. Empty with NoListen.
	SiteURLs map[string]string
	// siteURLs is SiteURLs for the sites' links, set once all are served.
	siteURLs atomic.Pointer[map[string]string]
	// MCPURL is where the MCP services are (streamable HTTP): service NAME
	// at MCPURL/NAME. Empty with NoListen.
	MCPURL string
}

// Start materialises the snapshot and serves the instance.
func Start(ctx context.Context, opts Options) (*Instance, error) {
	// Instances start from many goroutines: register every service's SQL
	// functions before any of them opens a database.
	service.CompileAll()
	if opts.SandboxUID == 0 {
		opts.SandboxUID = 65534
	}
	if opts.SandboxGID == 0 {
		opts.SandboxGID = 65534
	}
	if opts.ShellTimeout == 0 {
		opts.ShellTimeout = 60 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.ShellNice < 0 || opts.ShellNice > 19 {
		return nil, fmt.Errorf("start instance: Options.ShellNice %d: give 0..19 (0: the process's own priority; a Manager's ShellNice takes -1 for that and 0 for its default, %d)", opts.ShellNice, DefaultShellNice)
	}
	if err := checkKind(opts.Materializer.Store, opts.Snapshot); err != nil {
		return nil, fmt.Errorf("start instance: %w", err)
	}
	inst, err := opts.Materializer.New(ctx, opts.Snapshot, opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("start instance: %w", err)
	}
	in := &Instance{opts: opts, inst: inst}
	if err := in.prepare(); err != nil {
		inst.Close(context.WithoutCancel(ctx))
		return nil, err
	}
	if opts.NoListen {
		return in, nil
	}
	if err := in.listen(); err != nil {
		in.Close(ctx)
		return nil, err
	}
	return in, nil
}

// listen opens a loopback port for each site and one for the MCP services
// and serves them; on an error the caller closes the instance, which closes
// the servers started so far.
func (in *Instance) listen() error {
	serve := func(h http.Handler) (url string, err error) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return "", fmt.Errorf("start instance: listen: %w", err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		in.servers = append(in.servers, srv)
		go srv.Serve(ln)
		return "http://" + ln.Addr().String(), nil
	}
	in.SiteURLs = make(map[string]string, len(in.sites))
	for _, name := range slices.Sorted(maps.Keys(in.sites)) {
		u, err := serve(in.sites[name])
		if err != nil {
			return err
		}
		in.SiteURLs[name] = u
	}
	urls := maps.Clone(in.SiteURLs)
	in.siteURLs.Store(&urls)
	mux := http.NewServeMux()
	mux.Handle("/mcp/", http.HandlerFunc(in.serveMCP))
	u, err := serve(mux)
	if err != nil {
		return err
	}
	in.MCPURL = u + "/mcp"
	return nil
}

// ErrNotWorld is wrapped by Start's error for a snapshot that is not a
// world's (a catalog's).
var ErrNotWorld = errors.New("not a world snapshot")

// checkKind refuses a snapshot whose record says it is not a world, when
// the materializer's store can tell (a *store.Store can).
func checkKind(st reset.Checkouter, id world.ID) error {
	l, ok := st.(interface {
		Load(world.ID) (*store.Snapshot, error)
	})
	if !ok {
		return nil
	}
	sn, err := l.Load(id)
	if err != nil {
		return err
	}
	if sn.Kind != store.KindWorld {
		return fmt.Errorf("snapshot %s: %w: its kind is %q, and only %q snapshots can be started: give a world snapshot (wildawm world log lists each snapshot's kind)", id.Short(), ErrNotWorld, sn.Kind, store.KindWorld)
	}
	return nil
}

// prepare reads the clock, lets the sandbox uid write home and opens the
// sites and services on the first call; later calls (resets) only drop every
// web and MCP session, so a reset costs no template parsing or catalog
// opening.
func (in *Instance) prepare() error {
	m, err := world.ReadManifest(in.inst.Dir())
	if err != nil {
		return err
	}
	t, err := m.Time()
	if err != nil {
		return err
	}
	if err := checkClock(t); err != nil {
		return fmt.Errorf("manifest: field clock: %w", err)
	}
	if in.clock == nil {
		in.clock = &Clock{}
	}
	in.clock.set(t) // a reset returns the clock to the world's day
	if err := sandbox.PrepareHome(filepath.Join(in.inst.Dir(), world.HomeDir), in.opts.SandboxUID, in.opts.SandboxGID); err != nil {
		return fmt.Errorf("prepare home: %w", err)
	}
	if in.sites == nil {
		if err := in.open(); err != nil {
			return err
		}
	} else {
		for _, s := range in.sites {
			s.ClearSessions()
		}
	}
	in.mu.Lock()
	mcpH := make(map[string]http.Handler, len(in.svcs))
	for name, svc := range in.svcs {
		mcpH[name] = svc.HTTPHandler()
	}
	in.mcpH = mcpH
	in.mu.Unlock()
	return nil
}

// open opens every site of the registry and every service the world has a
// database for; on an error it closes what it opened.
func (in *Instance) open() (err error) {
	sites := map[string]site.Site{}
	defer func() {
		if err != nil {
			for _, s := range sites {
				s.Close()
			}
		}
	}()
	for _, spec := range site.All() {
		s, err := spec.Open(site.Options{WorldDir: in.inst.Dir(), CatalogDir: in.opts.CatalogDir, Clock: in.clock, Logger: in.opts.Logger,
			SiteURL: func(name string) string {
				if m := in.siteURLs.Load(); m != nil {
					return (*m)[name]
				}
				return ""
			}})
		if err != nil {
			return fmt.Errorf("site %s: %w", spec.Name, err)
		}
		sites[spec.Name] = s
	}
	m, err := world.ReadManifest(in.inst.Dir())
	if err != nil {
		return err
	}
	specs, err := service.ForWorld(m, in.opts.Services)
	if err != nil {
		return err
	}
	svcs := map[string]service.Service{}
	for _, spec := range specs {
		if _, err := os.Stat(world.DBPath(in.inst.Dir(), spec.Name)); err != nil {
			continue // the persona does not use this service
		}
		svc, err := spec.Open(service.Options{WorldDir: in.inst.Dir(), Clock: in.clock, Self: in.opts.Self, Logger: in.opts.Logger, SessionTimeout: in.opts.SessionTimeout,
			// An instance is a copy of its snapshot: a reset, not the journal, recovers it.
			Ephemeral: true})
		if err != nil {
			return fmt.Errorf("service %s: %w", spec.Name, err)
		}
		svcs[spec.Name] = svc
	}
	in.sites, in.svcs = sites, svcs
	return nil
}

// serveMCP serves /mcp/NAME: every service of the world.
func (in *Instance) serveMCP(w http.ResponseWriter, r *http.Request) {
	name, ok := strings.CutPrefix(r.URL.Path, "/mcp/")
	if !ok || name == "" {
		http.Error(w, "MCP services are at /mcp/NAME, one per service of the world", http.StatusNotFound)
		return
	}
	in.mu.Lock()
	h, ok := in.mcpH[name]
	in.mu.Unlock()
	if !ok {
		http.Error(w, fmt.Sprintf("no MCP service %q in this world", name), http.StatusNotFound)
		return
	}
	h.ServeHTTP(w, r)
}

// SiteURL is the base URL of the site named name ("shop"), or "" when the
// instance has no such site or serves through a Manager (NoListen).
func (in *Instance) SiteURL(name string) string { return in.SiteURLs[name] }

// SiteHandler serves the site named name at the root of its own origin,
// or answers 404 when the registry has no such site.
func (in *Instance) SiteHandler(name string) http.Handler {
	if s, ok := in.sites[name]; ok {
		return s
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, fmt.Sprintf("no site %q in this instance", name), http.StatusNotFound)
	})
}

// MCPHandler serves the instance's MCP services (streamable HTTP), service
// NAME at /mcp/NAME.
func (in *Instance) MCPHandler() http.Handler { return http.HandlerFunc(in.serveMCP) }

// Dir is the instance's world directory (orchestrator only).
func (in *Instance) Dir() string { return in.inst.Dir() }

// SandboxIDs are the uid and gid the instance's shell runs as: files the
// agent writes by other means belong to them too.
func (in *Instance) SandboxIDs() (uid, gid int) { return in.opts.SandboxUID, in.opts.SandboxGID }

// Clock is the instance's clock: frozen at the world's day until the
// runtime steps it.
func (in *Instance) Clock() world.Clock { return in.clock }

// StepClock moves the instance's clock to t, which must not be before its
// current time nor outside the clock's range (ErrClockRange: 1970 to before
// 2262). The sites, services and shell read the new time from then on; a
// reset returns it to the world's day. Steps are part of what an
// orchestrator replays: the same actions and steps give the same hash.
func (in *Instance) StepClock(t time.Time) error {
	if err := checkClock(t); err != nil {
		return fmt.Errorf("step clock: %w", err)
	}
	if now := in.clock.Now(); t.Before(now) {
		return fmt.Errorf("step clock: %s is before the instance's time %s: the clock only moves forward", t.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
	}
	in.clock.set(t)
	return nil
}

// ErrNoSandbox is returned by Shell when the sandbox cannot run here and
// the instance was not started with UnsafeShell.
var ErrNoSandbox = errors.New("the sandboxed shell cannot run here (bubblewrap missing or user namespaces blocked); untrusted commands are refused: install bubblewrap, or start with --unsafe-shell to run them unsandboxed at your own risk")

// Shell runs command in the sandboxed shell over the instance's home.
func (in *Instance) Shell(ctx context.Context, command string) (*sandbox.Result, error) {
	if err := in.shellGate().Acquire(ctx, 1); err != nil {
		return nil, err
	}
	defer in.shellGate().Release(1)
	// A reset kills the command: it must not run on into the new world.
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stop := context.AfterFunc(in.currentEpisode(), func() { cancel(ErrShellReset) })
	defer stop()
	home := filepath.Join(in.inst.Dir(), world.HomeDir)
	// Whether the sandbox runs here is checked (with a trial sandbox, as
	// long as a command) until it first does, not before every command.
	if !in.sandboxOK.Load() {
		available := sandbox.Available
		if in.sandboxAvailable != nil {
			available = in.sandboxAvailable
		}
		if err := available(); err != nil {
			if !in.opts.UnsafeShell {
				return nil, fmt.Errorf("%w: %v", ErrNoSandbox, err)
			}
			res, err := unsafeShell(ctx, home, command, in.opts.ShellTimeout, in.opts.SandboxUID)
			if err != nil && context.Cause(ctx) == ErrShellReset {
				return res, fmt.Errorf("shell: %w", ErrShellReset)
			}
			return res, err
		}
		in.sandboxOK.Store(true)
	}
	res, err := sandbox.Run(ctx, sandbox.Options{
		Home:    home,
		UID:     in.opts.SandboxUID,
		GID:     in.opts.SandboxGID,
		Timeout: in.opts.ShellTimeout,
		Clock:   in.clock,
		Host:    in.opts.SandboxHost,
		Nice:    in.opts.ShellNice,
		Setups:  in.opts.ShellSetups,
	}, command)
	if err != nil && context.Cause(ctx) == ErrShellReset {
		return res, fmt.Errorf("shell: %w", ErrShellReset)
	}
	return res, err
}

// ErrShellReset is Shell's error for a command killed because the instance
// was reset while it ran.
var ErrShellReset = errors.New("the instance was reset while the command ran: it was killed, and its writes went with the old world")

// currentEpisode returns the context Reset cancels.
func (in *Instance) currentEpisode() context.Context {
	in.epMu.Lock()
	defer in.epMu.Unlock()
	if in.episode == nil {
		in.episode, in.endEpoch = context.WithCancelCause(context.Background())
	}
	return in.episode
}

// endEpisode kills the episode's shell commands (and those admitted until
// newEpisode); newEpisode starts the next.
func (in *Instance) endEpisode() {
	in.currentEpisode()
	in.epMu.Lock()
	defer in.epMu.Unlock()
	in.endEpoch(ErrShellReset)
}

func (in *Instance) newEpisode() {
	in.epMu.Lock()
	defer in.epMu.Unlock()
	in.episode, in.endEpoch = context.WithCancelCause(context.Background())
}

// maxShells is the weight of Instance.shells: more commands than can ever
// run at once on one instance.
const maxShells = 1 << 20

// quiesce waits for the shell commands in flight (each bounded by the shell
// timeout once it runs; one still waiting for a unit of ShellSetups waits
// for other commands' setups, which are short, within its own context) and
// holds new ones until release: a snapshot or diff then reads a world no
// command is writing.
func (in *Instance) quiesce(ctx context.Context) (release func(), err error) {
	if err := in.shellGate().Acquire(ctx, maxShells); err != nil {
		return nil, fmt.Errorf("wait for the instance's shell commands: %w", err)
	}
	return func() { in.shellGate().Release(maxShells) }, nil
}

func (in *Instance) shellGate() *semaphore.Weighted {
	in.shellsOnce.Do(func() { in.shells = semaphore.NewWeighted(maxShells) })
	return in.shells
}

// unsafeShell runs command with bash in home, with a timeout and nothing
// else: only for trusted commands on machines without bubblewrap.
func unsafeShell(ctx context.Context, home, command string, timeout time.Duration, uid int) (*sandbox.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/bash", "-c", command)
	cmd.Dir = home
	cmd.Env = []string{"HOME=" + home, "PATH=/usr/local/bin:/usr/bin:/bin", "TZ=UTC", "LANG=C.UTF-8"}
	// Its own process group, killed whole on timeout; never run as root.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if os.Geteuid() == 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}
	}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	start := time.Now()
	err := cmd.Run()
	res := &sandbox.Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Duration: time.Since(start)}
	var ee *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded || errors.Is(err, exec.ErrWaitDelay):
		res.TimedOut, res.ExitCode = true, -1
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

// Reset returns the instance to its snapshot and drops every session. It
// first kills the shell commands in flight and waits for them (a command of
// the old episode never runs on in the new world); commands that arrive
// meanwhile wait for the new world.
func (in *Instance) Reset(ctx context.Context) error {
	in.endEpisode()
	quiet, err := in.quiesce(ctx)
	if err != nil {
		in.newEpisode()
		return fmt.Errorf("reset instance: %w", err)
	}
	defer quiet()
	defer in.newEpisode() // before quiet: the commands it admits run in the new world
	resume := in.suspendServices()
	defer resume()
	if err := in.inst.Reset(ctx); err != nil {
		return fmt.Errorf("reset instance: %w", err)
	}
	return in.prepare()
}

// suspendServices closes every service's database connections (so none
// keeps a file of the old world, or its mount, alive) and holds their
// calls until resume; the calls that waited then fail, and later ones
// reopen the databases.
func (in *Instance) suspendServices() (resume func()) {
	return in.bracketServices(service.Service.Suspend)
}

// holdServices holds every service's calls until release, so the world's
// databases are whole and unwritten in between (a snapshot copies them).
func (in *Instance) holdServices() (release func()) {
	return in.bracketServices(service.Service.Hold)
}

// bracketServices calls begin on every service in name order (one lock
// order for every caller) and returns what undoes it, in reverse order.
func (in *Instance) bracketServices(begin func(service.Service) func()) (end func()) {
	names := slices.Sorted(maps.Keys(in.svcs))
	ends := make([]func(), 0, len(names))
	for _, name := range names {
		ends = append(ends, begin(in.svcs[name]))
	}
	return func() {
		for _, e := range slices.Backward(ends) {
			e()
		}
	}
}

// Close stops the servers, kills the shell commands in flight and removes
// the instance.
func (in *Instance) Close(ctx context.Context) error {
	in.endEpisode()
	var errs []error
	for _, s := range in.servers {
		errs = append(errs, s.Close())
	}
	for _, name := range slices.Sorted(maps.Keys(in.sites)) {
		errs = append(errs, in.sites[name].Close())
	}
	// Calls arriving after this find no database and fail cleanly.
	resume := in.suspendServices()
	defer resume()
	errs = append(errs, in.inst.Close(context.WithoutCancel(ctx)))
	return errors.Join(errs...)
}
