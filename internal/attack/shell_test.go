package attack

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
)

// run runs command in in's shell; a sandbox that cannot run is an error.
func run(ctx context.Context, in *runtime.Instance, command string) (*sandbox.Result, error) {
	res, err := in.Shell(ctx, command)
	if err != nil {
		return res, fmt.Errorf("shell %q: %w", command, err)
	}
	return res, nil
}

// lastLine is the last non-empty line of b.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// mustFail runs command in A and requires a non-zero exit and no marker
// in its output; it observes the last line of stderr.
func mustFail(in func(*fixture) *runtime.Instance, command func(*fixture) string, marker string) func(context.Context, *fixture) (string, error) {
	return func(ctx context.Context, f *fixture) (string, error) {
		res, err := run(ctx, in(f), command(f))
		if err != nil {
			return "", err
		}
		obs := fmt.Sprintf("exit %d: %s", res.ExitCode, lastLine(res.Stderr))
		if res.ExitCode == 0 || (marker != "" && bytes.Contains(res.Stdout, []byte(marker))) {
			return obs, fmt.Errorf("succeeded: %q", res.Stdout)
		}
		return obs, nil
	}
}

func attacker(f *fixture) *runtime.Instance { return f.a }

// hostPort is the host:port of a URL.
func hostPort(u string) (string, string) {
	p, _ := url.Parse(u)
	return p.Hostname(), p.Port()
}

func pyConnect(u string) string {
	h, p := hostPort(u)
	return fmt.Sprintf(`python3 -c 'import socket; socket.create_connection(("%s", %s), timeout=3); print("connected")'`, h, p)
}

// notThere runs `test -e` on every path in A and requires none to exist.
func notThere(paths func(*fixture) []string) func(context.Context, *fixture) (string, error) {
	return func(ctx context.Context, f *fixture) (string, error) {
		ps := paths(f)
		var cmd strings.Builder
		for _, p := range ps {
			fmt.Fprintf(&cmd, "if test -e %q || test -L %q; then echo \"VISIBLE %s\"; ls -la %q; fi; cat %q/* 2>/dev/null | head -c 100; ", p, p, p, p, p)
		}
		res, err := run(ctx, f.a, cmd.String())
		if err != nil {
			return "", err
		}
		if bytes.Contains(res.Stdout, []byte("VISIBLE")) || len(res.Stdout) > 0 {
			return "", fmt.Errorf("visible in the sandbox: %s", res.Stdout)
		}
		return fmt.Sprintf("none of %d host paths exists in the sandbox", len(ps)), nil
	}
}

func hostPaths(f *fixture) []string {
	return []string{f.b.Dir(), f.c.Dir(), f.b.Dir() + ".rw", f.p.Store.Dir(), f.p.VerifierDir, f.p.TaskDir,
		f.lower, f.p.Env.Materializer.CacheDir, f.runDir, f.p.Dir, "/root", "/work", "/var", "/run", "/sys"}
}

// hostProcs lists host processes whose command line contains s.
func hostProcs(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, "cmdline"))
		if err == nil && bytes.Contains(b, []byte(s)) {
			out = append(out, filepath.Base(d)+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}

func freeBytes(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(st.Bavail) * st.Bsize, nil
}

func shellAttacks(f *fixture) []attack {
	_ = f
	return []attack{
		{
			name: "connect to B's shop (python socket)", category: "network",
			action:  "python3 socket.create_connection to B's shop (SiteURL) host:port",
			contain: "fails: the sandbox has its own network namespace with only lo",
			try:     mustFail(attacker, func(f *fixture) string { return pyConnect(f.b.SiteURL("shop")) }, "connected"),
		},
		{
			name: "connect to B's MCP (bash /dev/tcp)", category: "network",
			action:  "exec 3<>/dev/tcp/HOST/PORT of B's MCPURL, then send an HTTP request",
			contain: "fails: no route to the host's loopback",
			try: mustFail(attacker, func(f *fixture) string {
				h, p := hostPort(f.b.MCPURL)
				return fmt.Sprintf(`exec 3<>/dev/tcp/%s/%s && printf 'GET /mcp/messages HTTP/1.0\r\n\r\n' >&3 && echo connected && cat <&3`, h, p)
			}, "connected"),
		},
		{
			name: "reach the control plane", category: "network",
			action:  "connect to A's own site and MCP ports; list sockets in /proc/net/{tcp,tcp6,unix}",
			contain: "no host listener is reachable and none is listed (the control API listens on a unix socket outside the sandbox)",
			try: func(ctx context.Context, f *fixture) (string, error) {
				for _, u := range append(slices.Sorted(maps.Values(f.a.SiteURLs)), f.a.MCPURL) {
					if obs, err := mustFail(attacker, func(*fixture) string { return pyConnect(u) }, "connected")(ctx, f); err != nil {
						return obs, err
					}
				}
				res, err := run(ctx, f.a, `tail -n +2 /proc/net/tcp /proc/net/tcp6 /proc/net/unix 2>/dev/null | grep -v '^==>' | grep -c .`)
				if err != nil {
					return "", err
				}
				if n := strings.TrimSpace(string(res.Stdout)); n != "0" {
					return "", fmt.Errorf("%s sockets listed in the sandbox", n)
				}
				return "connection refused on A's own ports; no sockets listed", nil
			},
		},
		{
			name: "reach an external address", category: "network",
			action:  "connect to 1.1.1.1:53 and 8.8.8.8:443; resolve example.com",
			contain: "fails: no interface but lo, no DNS",
			try: mustFail(attacker, func(*fixture) string {
				return `python3 -c '
import socket
for a in [("1.1.1.1", 53), ("8.8.8.8", 443)]:
    try:
        socket.create_connection(a, timeout=3); print("connected", a)
    except OSError as e:
        print("refused", a, e)
socket.getaddrinfo("example.com", 443)
print("resolved")'`
			}, "connected"),
		},
		{
			name: "read other instances, the store, the verifier, the cache by host path", category: "filesystem",
			action:  "test -e / ls / cat the absolute host paths of B, C (and B's tmpfs upper), the store, the task and verifier directories, W0's lower, the snapshot cache, the run directory, /root, /work",
			contain: "none exists inside the sandbox (only /usr, /bin, /lib*, an /etc subset, /proc, /dev, /tmp and the home are mounted)",
			try:     notThere(hostPaths),
		},
		{
			name: "the same paths through /proc/1/root and /proc/self/root", category: "proc",
			action:  "test -e /proc/1/root/PATH and /proc/self/root/PATH for every host path above",
			contain: "none exists: pid 1 is the sandbox's own bwrap, its root is the sandbox root",
			try: notThere(func(f *fixture) []string {
				var ps []string
				for _, p := range hostPaths(f) {
					ps = append(ps, "/proc/1/root"+p, "/proc/self/root"+p)
				}
				return ps
			}),
		},
		{
			name: "symlink escapes", category: "filesystem",
			action:  "in the home: ln -s to B's dir, to /, to /etc/shadow, to ../../../.. and to ../db/shop.sqlite (A's own database on the host), then read through them",
			contain: "links resolve inside the sandbox: B's dir and the database do not exist there, / is the sandbox root, /etc/shadow is not mounted",
			try: func(ctx context.Context, f *fixture) (string, error) {
				cmd := fmt.Sprintf(`mkdir -p esc && cd esc && ln -s %q b && ln -s / root && ln -s /etc/shadow shadow && ln -s ../../../.. up && ln -s ../db/shop.sqlite db
cat b/manifest.json 2>/dev/null && echo LEAK-B
ls root/ | tr '\n' ' '; echo
ls up/ | tr '\n' ' '; echo
cat shadow 2>/dev/null && echo LEAK-SHADOW
head -c 16 db 2>/dev/null | grep -q SQLite && echo LEAK-DB
cd .. && rm -rf esc`, f.b.Dir())
				res, err := run(ctx, f.a, cmd)
				if err != nil {
					return "", err
				}
				out := string(res.Stdout)
				if strings.Contains(out, "LEAK") {
					return "", fmt.Errorf("read through a symlink: %s", out)
				}
				lines := strings.Split(out, "\n")
				for _, l := range lines[:2] {
					for _, bad := range []string{"root", "work", "var", "run", "sys", "srv", "opt"} {
						if slices.Contains(strings.Fields(l), bad) {
							return "", fmt.Errorf("/ through a symlink lists host entry %q: %s", bad, l)
						}
					}
				}
				return "/ via link = " + strings.TrimSpace(lines[0]) + "; B, shadow, db unreadable", nil
			},
		},
		{
			name: "read /etc/shadow", category: "filesystem",
			action:  "cat /etc/shadow /etc/gshadow /etc/sudoers as the sandbox uid",
			contain: "fails: only an /etc subset is bound and it holds no secrets",
			try:     mustFail(attacker, func(*fixture) string { return "cat /etc/shadow /etc/gshadow /etc/sudoers" }, ":"),
		},
		{
			name: "write outside the home", category: "filesystem",
			action:  "touch /x /usr/x /etc/x /proc/x; rm -rf /usr/bin/python3; echo > /etc/passwd",
			contain: "every write fails: / is read-only, system binds are read-only",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `n=0; for c in "touch /x" "touch /usr/x" "touch /etc/x" "touch /proc/x" "rm -f /usr/bin/python3" "sh -c 'echo > /etc/passwd'"; do if eval "$c" 2>/dev/null; then echo "WROTE: $c"; fi; done; test -x /usr/bin/python3 || echo GONE`)
				if err != nil {
					return "", err
				}
				if len(res.Stdout) > 0 {
					return "", fmt.Errorf("%s", res.Stdout)
				}
				return "6 writes refused", nil
			},
		},
		{
			name: "other processes' environment", category: "proc",
			action:  "list /proc/[0-9]*/comm and read every /proc/*/environ",
			contain: "only the sandbox's own processes are visible, and their environment is exactly the sandbox's (no host variable)",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `for p in /proc/[0-9]*; do echo "P $(cat $p/comm 2>/dev/null)"; tr '\0' '\n' < $p/environ 2>/dev/null | cut -d= -f1 | sed 's/^/E /'; done`)
				if err != nil {
					return "", err
				}
				allowed := []string{"HOME", "PATH", "TZ", "LANG", "LD_PRELOAD", "FAKETIME", "FAKETIME_DONT_RESET", "FAKETIME_SHARED", "PWD", "SHLVL", "_", "OLDPWD"}
				var procs []string
				for _, l := range strings.Split(strings.TrimSpace(string(res.Stdout)), "\n") {
					kind, v, _ := strings.Cut(l, " ")
					switch {
					case kind == "P":
						procs = append(procs, v)
						if !slices.Contains([]string{"bwrap", "bash", "sh", "cat", "tr", "cut", "sed"}, v) {
							return "", fmt.Errorf("sees process %q", v)
						}
					case !slices.Contains(allowed, v):
						return "", fmt.Errorf("environment variable %q visible", v)
					}
				}
				if len(procs) > 6 {
					return "", fmt.Errorf("sees %d processes: %v", len(procs), procs)
				}
				if os.Getpid() > 10 {
					if r, _ := run(ctx, f.a, fmt.Sprintf("test -e /proc/%d", os.Getpid())); r != nil && r.ExitCode == 0 {
						return "", fmt.Errorf("the test process (pid %d) is visible", os.Getpid())
					}
				}
				return fmt.Sprintf("%d own processes, sandbox environment only", len(procs)), nil
			},
		},
		{
			name: "kernel knobs through /proc", category: "proc",
			action:  "write /proc/sys/vm/drop_caches and /proc/sys/kernel/hostname; read /proc/kcore",
			contain: "refused: no capabilities, /proc/sys read-only for the sandbox user",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `(echo 3 > /proc/sys/vm/drop_caches) 2>/dev/null && echo WROTE-drop; (echo pwned > /proc/sys/kernel/hostname) 2>/dev/null && echo WROTE-host; head -c 1 /proc/kcore >/dev/null 2>&1 && echo READ-kcore; true`)
				if err != nil {
					return "", err
				}
				if len(res.Stdout) > 0 {
					return "", fmt.Errorf("%s", res.Stdout)
				}
				return "3 refused", nil
			},
		},
		{
			name: "device files", category: "device",
			action:  "open /dev/sda, /dev/vda, /dev/mem, /dev/kmsg, /dev/port; mknod a block and a char device in home and /tmp",
			contain: "no disk or memory device exists in the sandbox's /dev, mknod is refused (no CAP_MKNOD)",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `for d in /dev/sda /dev/vda /dev/mem /dev/kmem /dev/kmsg /dev/port /dev/nvme0n1; do test -e $d && echo "EXISTS $d"; done
mknod vda b 253 0 2>/dev/null && echo MKNOD-b; mknod /tmp/mem c 1 1 2>/dev/null && echo MKNOD-c; ls /dev | tr '\n' ' ' >&2; true`)
				if err != nil {
					return "", err
				}
				if len(res.Stdout) > 0 {
					return "", fmt.Errorf("%s", res.Stdout)
				}
				return "/dev holds only: " + strings.TrimSpace(string(res.Stderr)), nil
			},
		},
		{
			name: "fill memory through the /dev tmpfs", category: "resources",
			action:  "dd 300 MiB into /dev/shm (the /dev tmpfs bwrap mounts, writable by the sandbox user)",
			contain: "ENOSPC before 256 MiB: every writable file system of the sandbox is size-limited",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `dd if=/dev/zero of=/dev/shm/fill bs=1M count=300 2>&1 | tail -1; df -k /dev/shm | tail -1 | awk '{print $2}'; rm -f /dev/shm/fill`)
				if err != nil {
					return "", err
				}
				lines := strings.Split(strings.TrimSpace(string(res.Stdout)), "\n")
				if strings.Contains(lines[0], "314572800 bytes") {
					return lines[0], fmt.Errorf("wrote 300 MiB into /dev/shm (size %s KiB)", lines[len(lines)-1])
				}
				return lines[0], nil
			},
		},
		{
			name: "memory bomb", category: "resources",
			action:  "python3 allocates and touches 1.5 GiB",
			contain: "refused (MemoryError) by the per-process address-space limit (1 GiB); the run's own memory cgroup (1 GiB, counting its tmpfs pages) bounds the sum of its processes",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `python3 -c 'b = b"x" * (1536 << 20); print("allocated", len(b))'`)
				if err != nil {
					return "", err
				}
				if bytes.Contains(res.Stdout, []byte("allocated")) {
					return "", errors.New("allocated 1.5 GiB")
				}
				return fmt.Sprintf("exit %d: %s", res.ExitCode, lastLine(res.Stderr)), nil
			},
		},
		{
			name: "fill the disk", category: "resources",
			action:  "dd /dev/zero into the home and into /tmp until ENOSPC (400 MiB asked each)",
			contain: "ENOSPC at the 256 MiB tmpfs of A's overlay upper and of the sandbox /tmp; the host disk's free space is unchanged",
			try: func(ctx context.Context, f *fixture) (string, error) {
				free0, err := freeBytes(os.TempDir())
				if err != nil {
					return "", err
				}
				res, err := run(ctx, f.a, `dd if=/dev/zero of=fill bs=1M count=400 2>&1 | grep -E 'No space|copied' | tr '\n' ' '; echo; stat -c %s fill; dd if=/dev/zero of=/tmp/fill bs=1M count=400 2>&1 | grep -E 'No space|copied' | tr '\n' ' '; echo; stat -c %s /tmp/fill`)
				if err != nil {
					return "", err
				}
				free1, err := freeBytes(os.TempDir())
				if err != nil {
					return "", err
				}
				out := string(res.Stdout)
				if _, err := run(ctx, f.a, "rm -f fill"); err != nil {
					return "", err
				}
				if strings.Count(out, "No space left on device") != 2 {
					return "", fmt.Errorf("no ENOSPC: %s", out)
				}
				lines := strings.Split(strings.TrimSpace(out), "\n")
				for _, l := range []string{lines[1], lines[3]} {
					var n int64
					fmt.Sscan(l, &n)
					if n > 256<<20 {
						return "", fmt.Errorf("wrote %d bytes", n)
					}
				}
				// Other jobs share the disk: allow them 200 MiB of drift.
				if d := free0 - free1; d > 200<<20 {
					return "", fmt.Errorf("the host disk lost %d MiB", d>>20)
				}
				return "ENOSPC in home and /tmp at <= 256 MiB; host disk unchanged", nil
			},
		},
		{
			name: "fill the inodes", category: "resources",
			action:  "create empty files in the home until refused (300,000 asked; a probe of the case study made 499K in one 40 s command), then delete them",
			contain: "ENOSPC (No space left on device) before 100,000, the inode cap of A's overlay tmpfs (empty files take no bytes, so the size cap alone let them through); A's shell works after",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `python3 - <<'EOF'
import errno, os
os.mkdir('flood')
n = 0
try:
    while n < 300000:
        open('flood/%d' % n, 'w').close()
        n += 1
    print('created', n)
except OSError as e:
    print('stopped', n, errno.errorcode.get(e.errno))
EOF
rm -rf flood`)
				if err != nil {
					return "", err
				}
				out := strings.TrimSpace(string(res.Stdout))
				var n int
				if _, err := fmt.Sscanf(out, "stopped %d ENOSPC", &n); err != nil || n >= 100000 {
					return out, fmt.Errorf("not refused before 100,000 files: %q %s (timed out: %v)", out, lastLine(res.Stderr), res.TimedOut)
				}
				if r, err := run(ctx, f.a, "touch after && rm after && echo ok"); err != nil || string(r.Stdout) != "ok\n" {
					return "", fmt.Errorf("A's home after the flood: %v %+v", err, r)
				}
				return fmt.Sprintf("ENOSPC after %d files; A's home usable again once they are deleted", n), nil
			},
		},
		{
			name: "print gigabytes", category: "resources",
			action:  "write 2 GB to stdout and 1 GB to stderr",
			contain: "output truncated at the 1 MiB per-stream cap, Truncated set, the harness's memory untouched",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `head -c 2000000000 /dev/zero; head -c 1000000000 /dev/zero >&2`)
				if err != nil {
					return "", err
				}
				if !res.Truncated || len(res.Stdout) > sandbox.DefaultMaxOutput || len(res.Stderr) > sandbox.DefaultMaxOutput {
					return "", fmt.Errorf("kept %d+%d bytes, truncated %v", len(res.Stdout), len(res.Stderr), res.Truncated)
				}
				return fmt.Sprintf("kept %d+%d bytes, Truncated", len(res.Stdout), len(res.Stderr)), nil
			},
		},
		{
			name: "run past the time limit", category: "resources",
			action:  "in S (shell timeout 4 s): sleep 600; then setsid nohup sleep in the background and exit 0",
			contain: "the command is killed at the timeout (TimedOut); no process outlives the command",
			try: func(ctx context.Context, f *fixture) (string, error) {
				start := time.Now()
				res, err := run(ctx, f.s, "sleep 600")
				if err != nil {
					return "", err
				}
				if el := time.Since(start); !res.TimedOut || el > shortTimeout+3*time.Second {
					return "", fmt.Errorf("TimedOut %v after %v", res.TimedOut, el)
				}
				const marker = "7321.5"
				if _, err := run(ctx, f.s, "setsid nohup sleep "+marker+" >/dev/null 2>&1 & disown; (sleep "+marker+" &) ; exit 0"); err != nil {
					return "", err
				}
				var left []string
				for range 40 {
					if left = hostProcs("sleep\x00" + marker); len(left) == 0 {
						break
					}
					time.Sleep(50 * time.Millisecond)
				}
				if len(left) > 0 {
					return "", fmt.Errorf("background processes survived: %v", left)
				}
				return "killed at the timeout; no background process survived", nil
			},
		},
		{
			name: "fork bomb", category: "resources",
			action:  "in S: bomb() { bomb | bomb & }; bomb; then echo ok in S",
			contain: "RLIMIT_NPROC caps it, the timeout kills it, S works again right after",
			try: func(ctx context.Context, f *fixture) (string, error) {
				// The cap is read from inside the sandbox, not inferred from
				// the bomb reaching it: on a loaded host the bomb may not fork
				// 256 times before the timeout, and that is no escape.
				lim, err := run(ctx, f.s, "ulimit -Hu; ulimit -Su")
				if err != nil {
					return "", err
				}
				want := fmt.Sprintf("%d\n%d\n", sandbox.DefaultMaxProcs, sandbox.DefaultMaxProcs)
				if string(lim.Stdout) != want {
					return "", fmt.Errorf("process limit inside S: got %q, want %q", lim.Stdout, want)
				}
				res, err := run(ctx, f.s, "bomb() { bomb | bomb & }; bomb; sleep 100")
				if err != nil {
					return "", err
				}
				if !res.TimedOut && res.ExitCode == 0 {
					return "", fmt.Errorf("bomb ended normally: %+v", res)
				}
				hit := "hit RLIMIT_NPROC"
				if !bytes.Contains(res.Stderr, []byte("Resource temporarily unavailable")) {
					hit = "did not reach the cap before the timeout (a loaded host)"
				}
				if r, err := run(ctx, f.s, "echo ok"); err != nil || string(r.Stdout) != "ok\n" {
					return "", fmt.Errorf("S after the bomb: %v", err)
				}
				return fmt.Sprintf("capped at %d processes, %s, killed at the timeout, S recovered", sandbox.DefaultMaxProcs, hit), nil
			},
		},
		{
			name: "fork bomb starves B's shell", category: "resources",
			action:  "while S's fork bomb runs, B runs echo ok",
			contain: "B's shell works during the bomb: every instance's shell has its own uid, so RLIMIT_NPROC never crosses instances",
			try: func(ctx context.Context, f *fixture) (string, error) {
				done := make(chan error, 1)
				go func() {
					_, err := run(ctx, f.s, "bomb() { bomb | bomb & }; bomb; sleep 100")
					done <- err
				}()
				time.Sleep(shortTimeout / 2)
				res, err := f.b.Shell(ctx, "echo ok")
				if berr := <-done; berr != nil {
					return "", berr
				}
				if err != nil {
					return "", fmt.Errorf("B's shell during the bomb: %w", err)
				}
				if string(res.Stdout) != "ok\n" {
					return "", fmt.Errorf("B's shell during the bomb: exit %d %s", res.ExitCode, lastLine(res.Stderr))
				}
				return "B's shell answered during the bomb", nil
			},
		},
		{
			name: "kill every process", category: "privilege",
			action:  "kill -9 -1; kill -9 1; kill -9 of the host test process's pid",
			contain: "only the sandbox's own processes die: the harness, B and C keep working",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, fmt.Sprintf("kill -9 %d 2>/dev/null && echo KILLED-HOST; kill -9 1; kill -9 -1; echo unreachable", os.Getpid()))
				if err != nil {
					return "", err
				}
				if bytes.Contains(res.Stdout, []byte("KILLED-HOST")) {
					return "", errors.New("signalled the host test process")
				}
				if r, err := run(ctx, f.a, "echo ok"); err != nil || string(r.Stdout) != "ok\n" {
					return "", fmt.Errorf("A after kill -1: %v", err)
				}
				return fmt.Sprintf("exit %d; the sandbox died alone", res.ExitCode), nil
			},
		},
		{
			name: "setuid and privilege tricks", category: "privilege",
			action:  "copy id into the home and chmod u+s; run setuid su; python os.setuid(0); unshare -U -r; read NoNewPrivs",
			contain: "the uid stays the instance's sandbox uid: no_new_privs, nosuid mounts, no capabilities, no nested user namespace",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, `echo "uid $(id -u)"; cp /usr/bin/id ./sid && chmod 4755 ./sid; echo "suid-copy $(./sid -u)"; rm -f sid
echo "su $(su -c 'id -u' root </dev/null 2>/dev/null || echo refused)"
echo "setuid $(python3 -c 'import os; os.setuid(0); print(os.getuid())' 2>/dev/null || echo refused)"
echo "userns $(unshare -U -r id -u 2>/dev/null || echo refused)"
grep NoNewPrivs /proc/self/status`)
				if err != nil {
					return "", err
				}
				out := string(res.Stdout)
				uid, _, _ := strings.Cut(strings.TrimPrefix(out, "uid "), "\n")
				if uid == "0" || uid == "" {
					return "", fmt.Errorf("runs as uid %q", uid)
				}
				want := "uid " + uid + "\nsuid-copy " + uid + "\nsu refused\nsetuid refused\nuserns refused\nNoNewPrivs:\t1\n"
				if out != want {
					return "", fmt.Errorf("got %q, want %q", out, want)
				}
				return "the sandbox uid throughout; NoNewPrivs 1", nil
			},
		},
	}
}
