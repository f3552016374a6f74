package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/semaphore"

	"github.com/wildawm/wildawm/internal/world"
)

// Paths and defaults inside the sandbox.
const (
	HomePath = "/home/user"
	PATH     = "/usr/local/bin:/usr/bin:/bin"

	DefaultUID       = 65534 // nobody
	DefaultGID       = 65534 // nogroup
	DefaultTimeout   = 30 * time.Second
	DefaultMaxOutput = 1 << 20 // per stream
	DefaultMaxProcs  = 256     // RLIMIT_NPROC of the sandbox uid
	// DefaultMaxMemory is RLIMIT_AS of every sandboxed process (1 GiB).
	DefaultMaxMemory = 1 << 30
	// devShmSize bounds /dev/shm (bwrap's /dev tmpfs is otherwise half of
	// RAM and writable by the sandbox user).
	devShmSize = 64 << 20
	tmpSize    = 256 << 20
)

// Options says what a command runs over and within which limits. The zero
// value of every field means its default; Home is required.
type Options struct {
	Home      string            // host directory mounted read-write at /home/user (required)
	ReadOnly  []Mount           // extra read-only binds, e.g. {Host: "/x/verifier", Path: "/verifier"}
	UID, GID  int               // default 65534 (nobody/nogroup); 0 means default, never root
	Timeout   time.Duration     // default 30s; wall-time limit, then the whole process tree is killed
	MaxOutput int               // default 1 MiB per stream; excess dropped, Result.Truncated set
	MaxProcs  int               // default 256 (as root); RLIMIT_NPROC of the sandbox uid (host-wide, see doc)
	MaxMemory int64             // default 1 GiB; RLIMIT_AS of each sandboxed process (no cgroup: tmpfs pages are bounded by the tmpfs sizes)
	Env       map[string]string // extra environment; may override the defaults
	Clock     world.Clock       // optional frozen time, via libfaketime (see doc)
	// Nice, 0..19, lowers the command's CPU priority (every process of it
	// inherits it): a runtime gives its own work (resets, MCP calls, the
	// websites) the CPU first. 0 leaves it at the caller's, and so does a
	// caller already nicer. As root it holds from the command's first
	// instruction; otherwise it is best effort (see Run).
	Nice int
	// Host, when set, is the small mount namespace the sandbox is cloned
	// from (NewHost), so that its cost does not grow with the caller's
	// mounts; nil clones it from the caller's namespace.
	Host *Host
	// Setups, when set, caps the sandboxes being set up at once among
	// the runs that share it: a run holds one unit from before its
	// mounts until bwrap's setup is done (the command has started) or the
	// run ends. The setup (a chain of programs in new namespaces, bwrap's
	// ~35 mounts) is the CPU- and mount-heavy part of a short command;
	// capping it leaves the caller's own work (resets, MCP calls) the
	// CPU, and never caps a command that runs long. Waiting for a unit
	// counts against ctx, not Timeout.
	Setups *semaphore.Weighted

	// noSeccomp runs without the seccomp filter: for the benchmark that
	// measures what the filter costs, never for an agent's command.
	noSeccomp bool
}

// Mount is an extra read-only bind: host path Host appears at Path.
type Mount struct{ Host, Path string }

// Result is what a command did. ExitCode is -1 when it was killed (TimedOut).
type Result struct {
	Stdout, Stderr []byte
	ExitCode       int
	TimedOut       bool
	Truncated      bool // Stdout or Stderr exceeded MaxOutput
	Duration       time.Duration
	// Cgroup is set when the run was limited by cgroups of its own (memory
	// including its tmpfs pages, processes), not only by rlimits.
	Cgroup bool
	// OOMKilled is set when the memory limit killed a process of the run.
	OOMKilled bool
}

// ErrNoFaketime is returned by Run when Options.Clock is set but libfaketime
// is not installed.
var ErrNoFaketime = errors.New("sandbox: Options.Clock needs libfaketime: apt-get install -y libfaketime")

var errTimeout = errors.New("sandbox: timeout")

// Run runs /bin/bash -c command (/bin/sh where bash is absent) in a sandbox
// over opts.Home. A command that exits non-zero or times out is a Result; an
// error means the sandbox could not run (bad options, bwrap missing or
// failing to set up, ctx cancelled; with a partial Result in the last case).
func Run(ctx context.Context, opts Options, command string) (*Result, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	releaseSetup := func() {}
	if o.Setups != nil {
		if err := o.Setups.Acquire(ctx, 1); err != nil {
			return nil, fmt.Errorf("sandbox: wait for a setup slot: %w", err)
		}
		releaseSetup = sync.OnceFunc(func() { o.Setups.Release(1) })
		defer releaseSetup()
	}
	if o.Host != nil {
		if _, _, switchUser := o.ids(); !switchUser {
			return nil, errors.New("sandbox: Options.Host needs root")
		}
		// The uid must reach the real paths, as without a Host.
		uid, gid, _ := o.ids()
		for _, p := range append([]string{o.Home}, hostPaths(o.ReadOnly)...) {
			if err := searchable(p, uid, gid); err != nil {
				return nil, err
			}
		}
		b, err := o.Host.bind(o)
		if err != nil {
			return nil, err
		}
		defer b.release()
		o.Home, o.ReadOnly = b.home, b.ro
	}
	// bwrap's inputs (the seccomp filter, the clock's files) follow the
	// ready pipe (fd 3) and, as root, the gate (fd 4).
	_, _, switchUser := o.ids()
	inputs := &inputs{first: 4}
	if switchUser {
		inputs.first = 5
	}
	defer inputs.close()
	argv, err := o.argv(command, inputs)
	if err != nil {
		return nil, err
	}

	tctx, cancel := context.WithTimeoutCause(ctx, o.Timeout, errTimeout)
	defer cancel()

	ready, readyW, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("sandbox: ready pipe: %w", err)
	}
	defer ready.Close()

	// As root the run gets cgroups of its own (memory, processes) where the
	// machine has them: the chain waits at a gate (fd 4) until it has been
	// moved in, so nothing it starts escapes.
	var gate, gateW *os.File
	if switchUser {
		if gate, gateW, err = os.Pipe(); err != nil {
			readyW.Close()
			return nil, fmt.Errorf("sandbox: gate pipe: %w", err)
		}
		defer gate.Close()
		defer gateW.Close()
		argv = append([]string{"/bin/sh", "-c", gateScript, "gate"}, argv...)
		if o.Host != nil {
			t, _ := lookTools()
			argv = append([]string{argv[0], argv[1], argv[2], argv[3], t.nsenter, "--mount=" + o.Host.ns, "--"}, argv[4:]...)
		}
	}

	stdout := &capWriter{max: o.MaxOutput}
	stderr := &capWriter{max: o.MaxOutput}
	cmd := exec.CommandContext(tctx, argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + PATH, "LANG=C.UTF-8"}
	cmd.Dir = "/"
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{readyW} // fd 3: see readyScript
	if gate != nil {
		cmd.ExtraFiles = append(cmd.ExtraFiles, gate) // fd 4: see gateScript
	}
	cmd.ExtraFiles = append(cmd.ExtraFiles, inputs.files...) // bwrap reads and closes them
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		// unshare, its child and bwrap's monitor share this process
		// group (bwrap's sandbox calls setsid); killing them makes the
		// sandbox's pid 1 die (--die-with-parent) and with it every
		// process in the sandbox's pid namespace.
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	cmd.WaitDelay = 2 * time.Second

	// Wall-clock time is fine here: this package is not part of the
	// deterministic core, and Duration is a measurement, not world state.
	start := time.Now()
	if err := cmd.Start(); err != nil {
		readyW.Close()
		return nil, fmt.Errorf("sandbox: start %s: %w", argv[0], err)
	}
	readyW.Close()
	if o.Nice > 0 {
		// Before the gate opens (as root) nothing of the chain has run yet;
		// everything it starts inherits the priority. Without root there
		// is no gate, and what the chain started before this call keeps
		// the caller's. A caller already nicer than o.Nice keeps its own:
		// the niceness is absolute, and the command must not outrank it.
		// (getpriority(2) returns 20 - nice.)
		if p, err := syscall.Getpriority(syscall.PRIO_PROCESS, 0); err != nil || 20-p < o.Nice {
			syscall.Setpriority(syscall.PRIO_PROCESS, cmd.Process.Pid, o.Nice)
		}
	}
	var cg *runCgroup
	if gate != nil {
		gate.Close()
		mem := o.MaxMemory
		if mem == 0 {
			mem = DefaultMaxMemory
		}
		procs := o.MaxProcs
		if procs == 0 {
			procs = DefaultMaxProcs
		}
		cg, err = newRunCgroup("run-"+strconv.Itoa(cmd.Process.Pid), mem, procs)
		if err == nil && cg != nil {
			err = cg.add(cmd.Process.Pid)
		}
		if err != nil {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
			cg.remove()
			return nil, err
		}
		// Removing a cgroup waits until its last process is reaped: do it
		// in the background rather than on the command's latency.
		defer func() { go cg.remove() }()
		gateW.Write([]byte("go\n"))
		gateW.Close()
	}
	readyc := make(chan bool, 1)
	go func() {
		var b [1]byte
		n, _ := io.ReadFull(ready, b[:])
		releaseSetup() // the command runs now, or the chain has ended
		readyc <- n == 1 && b[0] == '.'
	}()

	waitErr := cmd.Wait()
	res := &Result{
		Stdout:    stdout.buf.Bytes(),
		Stderr:    stderr.buf.Bytes(),
		ExitCode:  cmd.ProcessState.ExitCode(),
		Truncated: stdout.truncated || stderr.truncated,
		Duration:  time.Since(start),
		Cgroup:    cg != nil,
		OOMKilled: cg.oomKilled(),
	}
	var started bool
	select {
	case started = <-readyc:
	case <-time.After(cmd.WaitDelay):
		ready.Close()
		started = <-readyc
	}

	if res.ExitCode == -1 { // killed: by Cancel, or from outside
		// Return once every process of the run is gone, not only the
		// chain: a caller that kills a command to change its world (a
		// reset) must not have it run on there.
		cg.waitEmpty(cmd.WaitDelay)
		switch {
		case ctx.Err() != nil:
			return res, fmt.Errorf("sandbox: run: %w", ctx.Err())
		case context.Cause(tctx) == errTimeout:
			res.TimedOut = true
			return res, nil
		default:
			return res, fmt.Errorf("sandbox: bwrap killed: %w", waitErr)
		}
	}
	var exitErr *exec.ExitError
	if waitErr != nil && !errors.As(waitErr, &exitErr) {
		return res, fmt.Errorf("sandbox: wait: %w", waitErr)
	}
	if !started {
		return res, &SetupError{Msg: strings.TrimSpace(string(res.Stderr)), ExitCode: res.ExitCode}
	}
	return res, nil
}

// SetupError reports that bwrap (or prlimit/setpriv before it) failed before
// the command started; Msg is their stderr.
type SetupError struct {
	Msg      string
	ExitCode int
}

func (e *SetupError) Error() string {
	msg := e.Msg
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("sandbox: setup failed (exit %d): %s%s", e.ExitCode, msg, userNSHint(msg))
}

// readyScript runs first in the sandbox (under /bin/sh, then exec'ing the
// shell, so the command runs exactly as `$shell -c command`): it tells Run
// that bwrap's setup succeeded (a "." on fd 3) and closes fd 3 so that the
// command never holds it. Without the ".", a failure is bwrap's (or
// prlimit's or setpriv's), not the command's: bwrap exits 1 on setup
// errors, which cannot otherwise be told apart from a command's own exit 1.
const readyScript = `printf . >&3; exec 3>&-; exec "$0" -c "$1"`

// gateScript holds the whole chain until Run has put it into its cgroups.
const gateScript = `read -r _ <&4; exec 4<&-; exec "$@"`

func hostPaths(ms []Mount) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Host)
	}
	return out
}

// withDefaults validates opts and fills in defaults.
func (o Options) withDefaults() (Options, error) {
	if o.Home == "" {
		return o, errors.New("sandbox: Options.Home is required")
	}
	home, err := filepath.Abs(o.Home)
	if err != nil {
		return o, fmt.Errorf("sandbox: home: %w", err)
	}
	o.Home = home
	if err := checkDir(o.Home); err != nil {
		return o, err
	}
	if o.UID < 0 || o.GID < 0 || o.Timeout < 0 || o.MaxOutput < 0 || o.MaxProcs < 0 || o.MaxMemory < 0 {
		return o, errors.New("sandbox: negative UID, GID, Timeout, MaxOutput, MaxProcs or MaxMemory")
	}
	if o.Nice < 0 || o.Nice > 19 {
		return o, fmt.Errorf("sandbox: Nice %d: give 0..19 (a command cannot be given more priority than its caller)", o.Nice)
	}
	o = o.withIDDefaults()
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeout
	}
	if o.MaxOutput == 0 {
		o.MaxOutput = DefaultMaxOutput
	}
	o.ReadOnly = slices.Clone(o.ReadOnly)
	for i, m := range o.ReadOnly {
		if !filepath.IsAbs(m.Host) {
			return o, fmt.Errorf("sandbox: read-only mount %q: host path must be absolute", m.Host)
		}
		if _, err := os.Stat(m.Host); err != nil {
			return o, fmt.Errorf("sandbox: read-only mount: %w", err)
		}
		p := filepath.Clean(m.Path)
		if !filepath.IsAbs(m.Path) || p == "/" || within(p, HomePath) || within(HomePath, p) {
			return o, fmt.Errorf("sandbox: read-only mount %q: path must be absolute, not / and not overlap %s", m.Path, HomePath)
		}
		o.ReadOnly[i].Path = p
	}
	for k := range o.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return o, fmt.Errorf("sandbox: bad environment variable name %q", k)
		}
	}
	return o, nil
}

func (o Options) withIDDefaults() Options {
	if o.UID == 0 {
		o.UID = DefaultUID
	}
	if o.GID == 0 {
		o.GID = DefaultGID
	}
	return o
}

// within reports whether path p is dir or below it.
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, dir+"/")
}

func checkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("sandbox: home: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("sandbox: home %s is not a directory (symlinks are not followed)", dir)
	}
	return nil
}

// ids returns the uid and gid the sandbox runs as: the requested ones when
// the caller is root, else the caller's own (which cannot be changed).
func (o Options) ids() (uid, gid int, switchUser bool) {
	if os.Geteuid() == 0 {
		return o.UID, o.GID, true
	}
	return os.Getuid(), os.Getgid(), false
}

// argv builds prlimit [setpriv] bwrap ... -- /bin/bash -c command; the
// files bwrap reads (the seccomp filter, the clock's) are added to in.
func (o Options) argv(command string, in *inputs) ([]string, error) {
	tools, err := lookTools()
	if err != nil {
		return nil, err
	}
	uid, gid, switchUser := o.ids()
	if switchUser {
		paths := []string{o.Home}
		for _, m := range o.ReadOnly {
			paths = append(paths, m.Host)
		}
		for _, p := range paths {
			if err := searchable(p, uid, gid); err != nil {
				return nil, err
			}
		}
	}

	var a []string
	if switchUser {
		// bwrap's monitor exits as soon as the command's exit code is
		// known, orphaning the sandbox's pid 1, which the host's init
		// then reaps, maybe lazily, while it counts against MaxProcs.
		// In a pid namespace of its own, bwrap's monitor is init: as it
		// exits, the kernel kills and reaps everything below it.
		a = append(a, tools.unshare, "--pid", "--fork", "--kill-child", "--")
	}
	a = append(a, tools.prlimit, "--core=0:0")
	procs := o.MaxProcs
	if procs == 0 && switchUser {
		procs = DefaultMaxProcs
	}
	if procs > 0 {
		n := strconv.Itoa(procs)
		a = append(a, "--nproc="+n+":"+n)
	}
	mem := o.MaxMemory
	if mem == 0 {
		mem = DefaultMaxMemory
	}
	if mem > 0 {
		n := strconv.FormatInt(mem, 10)
		a = append(a, "--as="+n+":"+n)
	}
	a = append(a, "--")
	if switchUser {
		a = append(a, tools.setpriv,
			"--reuid="+strconv.Itoa(uid), "--regid="+strconv.Itoa(gid),
			"--clear-groups", "--inh-caps=-all", "--bounding-set=-all", "--")
	}
	a = append(a, tools.bwrap,
		"--unshare-all", "--unshare-user", "--disable-userns",
		"--die-with-parent", "--new-session", "--cap-drop", "ALL",
		"--hostname", "sandbox",
	)
	if !o.noSeccomp {
		filter, err := seccompFilter()
		if err != nil {
			return nil, err
		}
		fd, err := in.add(filter)
		if err != nil {
			return nil, err
		}
		a = append(a, "--seccomp", strconv.Itoa(fd))
	}
	etc := ""
	if o.Host != nil {
		etc = o.Host.etc
	}
	a = append(a, systemBinds(etc)...)
	a = append(a,
		"--proc", "/proc",
		"--dev", "/dev",
		"--size", strconv.Itoa(devShmSize), "--tmpfs", "/dev/shm",
		"--remount-ro", "/dev",
		"--size", strconv.Itoa(tmpSize), "--tmpfs", "/tmp",
		"--bind", o.Home, HomePath,
	)
	for _, m := range o.ReadOnly {
		a = append(a, "--ro-bind", m.Host, m.Path)
	}
	env, err := o.env()
	if err != nil {
		return nil, err
	}
	if o.Clock != nil {
		// The clock does not hang on the environment, which the command
		// controls (LD_PRELOAD= date, env -i date): the loader preloads
		// libfaketime for every program from /etc/ld.so.preload, and
		// libfaketime falls back on /etc/faketimerc without FAKETIME.
		for _, name := range clockFiles {
			content := faketimeLib()
			if name == "faketimerc" {
				content = env["FAKETIME"]
			}
			fd, err := in.add([]byte(content + "\n"))
			if err != nil {
				return nil, err
			}
			a = append(a, "--ro-bind-data", strconv.Itoa(fd), "/etc/"+name)
		}
	}
	a = append(a, "--remount-ro", "/", "--chdir", HomePath, "--clearenv")
	for _, k := range slices.Sorted(maps.Keys(env)) {
		a = append(a, "--setenv", k, env[k])
	}
	return append(a, "--", "/bin/sh", "-c", readyScript, tools.shell, command), nil
}

// clockFiles are the /etc files of Options.Clock: ld.so.preload naming
// libfaketime, faketimerc holding its FAKETIME.
var clockFiles = []string{"ld.so.preload", "faketimerc"}

// inputs are the files Run hands bwrap beyond the ready pipe and the gate,
// each a pipe holding its whole content, on fds first, first+1, ...
type inputs struct {
	first int
	files []*os.File
}

// add makes a pipe holding b and returns the fd bwrap reads it on. A pipe
// holds 64 KiB before a writer blocks; nothing added is near that.
func (in *inputs) add(b []byte) (int, error) {
	if len(b) > 64<<10 {
		return 0, fmt.Errorf("sandbox: an input of %d bytes is over a pipe's 64 KiB", len(b))
	}
	r, w, err := os.Pipe()
	if err != nil {
		return 0, fmt.Errorf("sandbox: input pipe: %w", err)
	}
	_, err = w.Write(b)
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		r.Close()
		return 0, fmt.Errorf("sandbox: input pipe: %w", err)
	}
	in.files = append(in.files, r)
	return in.first + len(in.files) - 1, nil
}

func (in *inputs) close() {
	for _, f := range in.files {
		f.Close()
	}
}

// env is the sandbox's whole environment.
func (o Options) env() (map[string]string, error) {
	env := map[string]string{
		"HOME": HomePath,
		"PATH": PATH,
		"TZ":   "UTC",
		"LANG": "C.UTF-8",
	}
	if o.Clock != nil {
		if faketimeLib() == "" {
			return nil, ErrNoFaketime
		}
		env["FAKETIME"] = "@" + o.Clock.Now().UTC().Format("2006-01-02 15:04:05")
		env["FAKETIME_DONT_RESET"] = "1"
	}
	maps.Copy(env, o.Env)
	return env, nil
}

// systemBinds binds /usr and the merged-usr links (or directories) and the
// /etc entries programs need, all read-only: each entry, or with etc set,
// that directory (a Host's copy of them) at /etc in one bind.
func systemBinds(etc string) []string {
	a := []string{"--ro-bind", "/usr", "/usr"}
	for _, name := range []string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"} {
		fi, err := os.Lstat(name)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if target, err := os.Readlink(name); err == nil {
				a = append(a, "--symlink", target, name)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", name, name)
		}
	}
	if etc != "" {
		return append(a, "--ro-bind", etc, "/etc")
	}
	for _, name := range etcEntries() {
		p := "/etc/" + name
		a = append(a, "--ro-bind-try", p, p)
	}
	return a
}

// etcEntries are the /etc entries a sandbox sees.
func etcEntries() []string {
	etc := []string{
		"passwd", "group", "nsswitch.conf", "hosts", "host.conf",
		"ld.so.cache", "ld.so.conf", "ld.so.conf.d",
		"ssl", "ca-certificates", "alternatives", "localtime",
		"fonts", "mime.types", "magic",
	}
	if py, _ := filepath.Glob("/etc/python3*"); len(py) > 0 {
		for _, p := range py {
			etc = append(etc, filepath.Base(p))
		}
	}
	return etc
}

// faketimeLib returns the path of libfaketime.so.1, or "" if absent.
func faketimeLib() string {
	cands, _ := filepath.Glob("/usr/lib/*/faketime/libfaketime.so.1")
	cands = append(cands, "/usr/lib/faketime/libfaketime.so.1")
	for _, c := range cands {
		if fi, err := os.Stat(c); err == nil && fi.Mode().IsRegular() {
			return c
		}
	}
	return ""
}

// capWriter keeps the first max bytes written and drops the rest.
type capWriter struct {
	max       int
	buf       bytes.Buffer
	truncated bool
}

func (w *capWriter) Write(p []byte) (int, error) {
	if room := w.max - w.buf.Len(); room < len(p) {
		w.truncated = true
		w.buf.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return w.buf.Write(p)
}

// ClockAvailable reports whether Options.Clock can be honoured here: it
// needs libfaketime (ErrNoFaketime otherwise). Live instances always run
// their shells on the world's clock, so whatever starts one needs it.
func ClockAvailable() error {
	if faketimeLib() == "" {
		return ErrNoFaketime
	}
	return nil
}
