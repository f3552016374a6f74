package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"go/parser"
	"go/token"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// requireSandbox skips when this machine cannot run sandboxes; CI installs
// bubblewrap so these tests run there.
func requireSandbox(t testing.TB) {
	t.Helper()
	if err := Available(); err != nil {
		SkipOutsideCI(t, "bubblewrap sandbox unavailable (CI installs it: apt-get install -y bubblewrap util-linux): "+err.Error())
	}
}

// newHome makes a home directory the sandbox uid can reach and write.
func newHome(t testing.TB, uid, gid int) string {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{dir, filepath.Dir(dir)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrepareHome(dir, uid, gid); err != nil {
		t.Fatal(err)
	}
	return dir
}

func run(t testing.TB, opts Options, command string) *Result {
	t.Helper()
	res, err := Run(context.Background(), opts, command)
	if err != nil {
		t.Fatalf("Run(%q): %v", command, err)
	}
	return res
}

// mustSucceed runs command and fails the test unless it exits 0.
func mustSucceed(t testing.TB, opts Options, command string) string {
	t.Helper()
	res := run(t, opts, command)
	if res.ExitCode != 0 {
		t.Fatalf("%q exited %d; stdout %q; stderr %q", command, res.ExitCode, res.Stdout, res.Stderr)
	}
	return string(res.Stdout)
}

// sandboxIDs is the uid/gid the sandbox really runs as for opts.
func sandboxIDs(t testing.TB, opts Options) (int, int) {
	t.Helper()
	o, err := opts.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	uid, gid, _ := o.ids()
	return uid, gid
}

func TestEchoAndExitCodes(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	opts := Options{Home: newHome(t, 0, 0)}
	for _, tc := range []struct {
		cmd            string
		stdout, stderr string
		code           int
	}{
		{"echo hello", "hello\n", "", 0},
		{"exit 7", "", "", 7},
		{"echo oops >&2; false", "", "oops\n", 1},
		{"printf 'a\\nb'", "a\nb", "", 0},
		{"kill -KILL $$", "", "", 128 + 9},
		{"no-such-command-xyz 2>/dev/null", "", "", 127},
	} {
		res := run(t, opts, tc.cmd)
		if string(res.Stdout) != tc.stdout || string(res.Stderr) != tc.stderr || res.ExitCode != tc.code {
			t.Errorf("%q: got stdout %q stderr %q exit %d; want %q %q %d",
				tc.cmd, res.Stdout, res.Stderr, res.ExitCode, tc.stdout, tc.stderr, tc.code)
		}
		if res.TimedOut || res.Truncated || res.Duration <= 0 {
			t.Errorf("%q: TimedOut %v Truncated %v Duration %v", tc.cmd, res.TimedOut, res.Truncated, res.Duration)
		}
	}
}

func TestEnvironment(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	opts := Options{Home: newHome(t, 0, 0), Env: map[string]string{"WORLD": "w1", "LANG": "C"}}
	out := mustSucceed(t, opts, `pwd; env -0 | sort -z | tr '\0' '\n'`)
	want := "/home/user\nHOME=/home/user\nLANG=C\nPATH=/usr/local/bin:/usr/bin:/bin\nPWD=/home/user\nSHLVL=1\nTZ=UTC\nWORLD=w1\n_=/usr/bin/env\n"
	if out != want {
		t.Errorf("environment:\n%s\nwant:\n%s", out, want)
	}
	if got := mustSucceed(t, Options{Home: opts.Home}, "echo $LANG; hostname; date +%Z"); got != "C.UTF-8\nsandbox\nUTC\n" {
		t.Errorf("LANG, hostname, zone = %q", got)
	}
}

func TestHomeWritesPersist(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home := newHome(t, 0, 0)
	opts := Options{Home: home}
	mustSucceed(t, opts, "mkdir -p notes && echo draft > notes/a.txt && echo top > b.txt")
	if got := mustSucceed(t, opts, "cat notes/a.txt b.txt"); got != "draft\ntop\n" {
		t.Errorf("second run read %q", got)
	}
	uid, gid := sandboxIDs(t, opts)
	for _, name := range []string{"notes", "notes/a.txt", "b.txt"} {
		fi, err := os.Lstat(filepath.Join(home, name))
		if err != nil {
			t.Fatal(err)
		}
		st := fi.Sys().(*syscall.Stat_t)
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s owned by %d:%d, want the sandbox's %d:%d", name, st.Uid, st.Gid, uid, gid)
		}
		if uid == 0 {
			t.Errorf("%s is owned by root", name)
		}
	}
}

func TestWritesOutsideHomeFail(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	opts := Options{Home: newHome(t, 0, 0)}
	for _, cmd := range []string{
		"touch /x", "mkdir /newdir", "touch /usr/x", "touch /usr/local/bin/x", "touch /etc/x",
		"echo x >> /etc/passwd", "touch /bin/x", "touch /home/x", "rm -f /usr/bin/env",
		"touch /proc/x", "echo 1 > /proc/sys/kernel/hostname", "touch /sys/x",
	} {
		if res := run(t, opts, cmd+" 2>/dev/null"); res.ExitCode == 0 {
			t.Errorf("%q succeeded; only /home/user and /tmp should be writable", cmd)
		}
	}

	// /tmp is a private tmpfs: writable, gone on the next run, never on the host.
	name := fmt.Sprintf("sandbox-tmp-%d", time.Now().UnixNano())
	mustSucceed(t, opts, "echo hi > /tmp/"+name+" && cat /tmp/"+name+" && echo hi > /dev/shm/"+name)
	if res := run(t, opts, "test -e /tmp/"+name+" || test -e /dev/shm/"+name); res.ExitCode == 0 {
		t.Errorf("/tmp/%s survived into the next sandbox", name)
	}
	for _, p := range []string{"/tmp/" + name, "/dev/shm/" + name} {
		if _, err := os.Lstat(p); err == nil {
			t.Errorf("%s appeared on the host", p)
		}
	}
}

func TestUnprivilegedNoCapabilities(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	opts := Options{Home: newHome(t, 0, 0)}
	uid, gid := sandboxIDs(t, opts)
	if uid == 0 {
		t.Fatal("sandbox uid is 0")
	}
	if os.Geteuid() == 0 && (uid != DefaultUID || gid != DefaultGID) {
		t.Errorf("default ids %d:%d, want %d:%d", uid, gid, DefaultUID, DefaultGID)
	}
	if got := mustSucceed(t, opts, "id -u; id -g; id -G"); got != fmt.Sprintf("%d\n%d\n%d\n", uid, gid, gid) {
		t.Errorf("id -u/-g/-G = %q, want %d, %d and no other groups", got, uid, gid)
	}
	status := mustSucceed(t, opts, "cat /proc/self/status")
	for _, field := range []string{"CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"} {
		re := regexp.MustCompile(`(?m)^` + field + `:\s*([0-9a-f]+)$`)
		m := re.FindStringSubmatch(status)
		if m == nil || strings.Trim(m[1], "0") != "" {
			t.Errorf("%s = %v, want all zero", field, m)
		}
	}
	if !regexp.MustCompile(`(?m)^NoNewPrivs:\s*1$`).MatchString(status) {
		t.Error("NoNewPrivs is not set")
	}
	if got := mustSucceed(t, opts, "ulimit -u"); os.Geteuid() == 0 && got != strconv.Itoa(DefaultMaxProcs)+"\n" {
		t.Errorf("ulimit -u = %q, want %d", got, DefaultMaxProcs)
	}
	// As non-root, the caller's own tasks count against MaxProcs too.
	if got := mustSucceed(t, Options{Home: opts.Home, MaxProcs: 40}, "ulimit -u"); os.Geteuid() == 0 && got != "40\n" {
		t.Errorf("MaxProcs 40: ulimit -u = %q", got)
	}
	// No nested user namespaces (the way back to capabilities).
	if res := run(t, opts, "unshare --user --map-root-user id -u 2>&1"); res.ExitCode == 0 {
		t.Errorf("nested user namespace allowed: %s", res.Stdout)
	}
}

func TestNoNetwork(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			accepted <- struct{}{}
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	opts := Options{Home: newHome(t, 0, 0)}

	py := fmt.Sprintf(`python3 -c '
import socket
s = socket.create_connection(("127.0.0.1", %d), timeout=3)
print("connected")'`, port)
	if res := run(t, opts, py); res.ExitCode == 0 || bytes.Contains(res.Stdout, []byte("connected")) {
		t.Errorf("python reached the host listener: %s %s", res.Stdout, res.Stderr)
	}
	if _, err := exec.LookPath("curl"); err == nil {
		if res := run(t, opts, fmt.Sprintf("curl -sS -m 3 http://127.0.0.1:%d/", port)); res.ExitCode == 0 {
			t.Errorf("curl reached the host listener")
		}
	}
	if res := run(t, opts, "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), timeout=3)'"); res.ExitCode == 0 {
		t.Error("reached 1.1.1.1:53")
	}
	select {
	case <-accepted:
		t.Error("the host listener accepted a connection from the sandbox")
	default:
	}

	ifaces := mustSucceed(t, opts, `tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`)
	if ifaces != "lo\n" {
		t.Errorf("interfaces in /proc/net/dev: %q, want only lo", ifaces)
	}
	if _, err := os.Stat("/usr/sbin/ip"); err == nil {
		links := mustSucceed(t, opts, `/usr/sbin/ip -o link | cut -d: -f2 | tr -d ' '`)
		if links != "lo\n" {
			t.Errorf("ip link: %q, want only lo", links)
		}
	}
}

func TestCannotSeeHostProcesses(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	opts := Options{Home: newHome(t, 0, 0)}
	out := mustSucceed(t, opts, `for p in /proc/[0-9]*; do echo "${p#/proc/} $(cat $p/comm)"; done`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	for _, l := range lines {
		pid, comm, _ := strings.Cut(l, " ")
		if !slices.Contains([]string{"bwrap", "bash", "cat"}, comm) {
			t.Errorf("sandbox sees process %s %q", pid, comm)
		}
	}
	if len(lines) > 4 || !strings.HasPrefix(out, "1 bwrap\n") {
		t.Errorf("sandbox /proc lists %d processes (want its own, pid 1 = bwrap):\n%s", len(lines), out)
	}
	if _, err := exec.LookPath("ps"); err == nil {
		ps := mustSucceed(t, opts, "ps -e -o pid=,comm=")
		if fields := strings.Fields(ps); !slices.Equal(fields, []string{"1", "bwrap", "2", "ps"}) {
			t.Errorf("ps -e shows %q, want only the sandbox's bwrap (pid 1) and ps", ps)
		}
	}
	if res := run(t, opts, fmt.Sprintf("test -e /proc/%d/cmdline", os.Getpid())); res.ExitCode == 0 && os.Getpid() > 4 {
		t.Errorf("test process pid %d visible in the sandbox", os.Getpid())
	}
}

func TestReadOnlyMounts(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	ver := t.TempDir()
	for _, d := range []string{ver, filepath.Dir(ver)} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(ver, "check.sh"), []byte("echo verified\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(ver, "check.sh"), 0o777); err != nil { // even world-writable on the host
		t.Fatal(err)
	}
	opts := Options{Home: newHome(t, 0, 0), ReadOnly: []Mount{
		{Host: ver, Path: "/verifier"},
		{Host: filepath.Join(ver, "check.sh"), Path: "/opt/one/check.sh"},
	}}
	if got := mustSucceed(t, opts, "bash /verifier/check.sh; cat /opt/one/check.sh"); got != "verified\necho verified\n" {
		t.Errorf("read-only mount read %q", got)
	}
	for _, cmd := range []string{"echo x >> /verifier/check.sh", "touch /verifier/new", "rm /verifier/check.sh", "echo x > /opt/one/check.sh"} {
		if res := run(t, opts, cmd+" 2>/dev/null"); res.ExitCode == 0 {
			t.Errorf("%q succeeded on a read-only mount", cmd)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(ver, "check.sh")); string(b) != "echo verified\n" {
		t.Errorf("host file changed: %q", b)
	}
}

// hostProcs lists host processes whose NUL-separated cmdline contains s.
func hostProcs(s string) []string {
	var found []string
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		b, err := os.ReadFile(d + "/cmdline")
		if err == nil && bytes.Contains(b, []byte(s)) {
			found = append(found, filepath.Base(d)+" "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return found
}

// waitNoHostProcs waits up to a second for processes matching s to be gone.
func waitNoHostProcs(t *testing.T, s string) {
	t.Helper()
	var left []string
	for range 20 {
		if left = hostProcs(s); len(left) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("processes survived the sandbox: %v", left)
}

// Not parallel: it measures wall time.
func TestTimeoutKillsProcessTree(t *testing.T) {
	requireSandbox(t)
	home := newHome(t, 0, 0)
	const timeout = 2 * time.Second
	for _, cmd := range []string{
		"while :; do :; done",
		"sleep 987.654 & sleep 987.655 & wait",
		"(trap '' TERM HUP; exec sleep 987.656) & disown; exec sleep 987.657",
	} {
		start := time.Now()
		res, err := Run(context.Background(), Options{Home: home, Timeout: timeout}, cmd)
		elapsed := time.Since(start)
		if err != nil {
			t.Fatalf("%q: %v", cmd, err)
		}
		if !res.TimedOut || res.ExitCode != -1 {
			t.Errorf("%q: TimedOut %v exit %d, want true -1", cmd, res.TimedOut, res.ExitCode)
		}
		if elapsed > timeout+time.Second {
			t.Errorf("%q: returned after %v, want within %v", cmd, elapsed, timeout+time.Second)
		}
		t.Logf("%q: killed after %v", cmd, elapsed.Round(time.Millisecond))
	}
	waitNoHostProcs(t, "sleep\x00987.65")
}

func TestCancelKillsProcessTree(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	res, err := Run(ctx, Options{Home: newHome(t, 0, 0)}, "sleep 987.658 & wait")
	if !errors.Is(err, context.DeadlineExceeded) || res == nil || res.TimedOut {
		t.Errorf("Run with a cancelled ctx: %+v, %v; want a Result and context.DeadlineExceeded, not TimedOut", res, err)
	}
	waitNoHostProcs(t, "sleep\x00987.658")
}

func TestMaxOutputTruncates(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home := newHome(t, 0, 0)
	res := run(t, Options{Home: home}, "yes | head -c 100M; echo done >&2")
	if len(res.Stdout) != DefaultMaxOutput || !res.Truncated || res.ExitCode != 0 || string(res.Stderr) != "done\n" {
		t.Errorf("stdout %d bytes, Truncated %v, exit %d, stderr %q; want %d bytes, true, 0, done",
			len(res.Stdout), res.Truncated, res.ExitCode, res.Stderr, DefaultMaxOutput)
	}
	if !bytes.HasPrefix(res.Stdout, []byte("y\ny\n")) {
		t.Errorf("stdout starts %q", res.Stdout[:min(8, len(res.Stdout))])
	}
	t.Logf("100 MiB drained in %v", res.Duration)
	res = run(t, Options{Home: home, MaxOutput: 10}, "echo 0123456789abc >&2; echo ok")
	if string(res.Stderr) != "0123456789" || string(res.Stdout) != "ok\n" || !res.Truncated {
		t.Errorf("MaxOutput 10: stderr %q stdout %q Truncated %v", res.Stderr, res.Stdout, res.Truncated)
	}
}

// Not parallel: it loads the machine and measures wall time.
func TestForkBombContained(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the bomb under its own uid (RLIMIT_NPROC counts per uid)")
	}
	// Its own uid, so the bomb cannot starve other sandboxes' process budget.
	const uid, procs = 64999, 64
	opts := Options{Home: newHome(t, uid, uid), UID: uid, GID: uid, MaxProcs: procs, Timeout: 3 * time.Second}
	start := time.Now()
	res, err := Run(context.Background(), opts, "bomb() { bomb | bomb & }; bomb; sleep 100")
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || elapsed > opts.Timeout+2*time.Second {
		t.Errorf("fork bomb: TimedOut %v after %v", res.TimedOut, elapsed)
	}
	if !bytes.Contains(res.Stderr, []byte("Resource temporarily unavailable")) {
		t.Errorf("the bomb never hit RLIMIT_NPROC; stderr %q", res.Stderr[:min(200, len(res.Stderr))])
	}
	t.Logf("fork bomb killed after %v", elapsed.Round(time.Millisecond))
	// Reaped within 5 s, even on a loaded machine (two cores under a load
	// of 15, a survivor was still being reaped after 2 s).
	var left int
	for range 100 {
		if left = countUIDProcs(uid); left == 0 {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if left != 0 {
		t.Errorf("%d processes of uid %d survived", left, uid)
	}
	opts.Timeout = 0
	if got := mustSucceed(t, opts, "echo alive"); got != "alive\n" {
		t.Errorf("after the bomb: %q", got)
	}
}

func TestNoProcessOutlivesRun(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("needs root to run under a uid of its own")
	}
	t.Parallel()
	const uid = 64998
	opts := Options{Home: newHome(t, uid, uid), UID: uid, GID: uid}
	for _, cmd := range []string{"true", "sleep 30 & disown; exit 3", "kill -KILL $$"} {
		run(t, opts, cmd)
		if n := countUIDProcs(uid); n != 0 {
			t.Errorf("after %q: %d processes (zombies included) of uid %d remain", cmd, n, uid)
		}
	}
}

// countUIDProcs counts host processes, zombies included, owned by uid.
func countUIDProcs(uid int) int {
	n := 0
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		var st syscall.Stat_t
		if syscall.Stat(d, &st) == nil && int(st.Uid) == uid {
			n++
		}
	}
	return n
}

func TestDebianPython(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	out := mustSucceed(t, Options{Home: newHome(t, 0, 0)}, `command -v python3; python3 -c '
import sqlite3, csv, json, sys
db = sqlite3.connect(":memory:")
print(sys.executable, "%d.%d" % sys.version_info[:2], db.execute("select 6*7").fetchone()[0])
print("/usr/lib/python3/dist-packages" in sys.path)'`)
	if want := "/usr/bin/python3\n/usr/bin/python3 3.11 42\nTrue\n"; out != want {
		t.Errorf("python3:\n%s\nwant (Debian's python 3.11):\n%s", out, want)
	}
}

// minimalPDF returns a one-page PDF showing text in Helvetica.
func minimalPDF(text string) []byte {
	content := fmt.Sprintf("BT /F1 18 Tf 20 40 Td (%s) Tj ET", text)
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 100] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>",
		fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", len(content), content),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

func TestPDFToText(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home := newHome(t, 0, 0)
	if err := os.WriteFile(filepath.Join(home, "memo.pdf"), minimalPDF("Hello sandbox"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustSucceed(t, Options{Home: home}, "pdftotext memo.pdf - && pdftotext memo.pdf && cat memo.txt")
	if strings.Count(out, "Hello sandbox") != 2 {
		t.Errorf("pdftotext printed %q", out)
	}
}

func TestSymlinkOutOfHome(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home := newHome(t, 0, 0)
	secret := filepath.Join(filepath.Dir(home), "secret.txt")
	if err := os.WriteFile(secret, []byte("host secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"shadow": "/etc/shadow", "secret": secret, "up": "../../../etc/shadow"} {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrepareHome(home, 0, 0); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"shadow", "secret", "up"} {
		res := run(t, Options{Home: home}, "cat "+name)
		if res.ExitCode == 0 || bytes.Contains(res.Stdout, []byte("root:")) || bytes.Contains(res.Stdout, []byte("secret")) {
			t.Errorf("cat %s: exit %d, read %q", name, res.ExitCode, res.Stdout)
		}
	}
	if res := run(t, Options{Home: home}, "cat /etc/shadow"); res.ExitCode == 0 {
		t.Errorf("/etc/shadow readable")
	}
}

func TestPrepareHomeDoesNotFollowSymlinks(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("chown to another uid needs root")
	}
	t.Parallel()
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	home := filepath.Join(base, "home")
	for _, d := range []string{outside, filepath.Join(home, "sub")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(outside, "f"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "sub", "g"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"dirlink": outside, "filelink": filepath.Join(outside, "f"), "sub/rel": "../../outside"} {
		if err := os.Symlink(target, filepath.Join(home, name)); err != nil {
			t.Fatal(err)
		}
	}
	if err := PrepareHome(home, 4242, 4343); err != nil {
		t.Fatal(err)
	}
	owner := func(p string) string {
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			t.Fatal(err)
		}
		return fmt.Sprintf("%d:%d", st.Uid, st.Gid)
	}
	for _, p := range []string{"", "sub", "sub/g", "dirlink", "filelink", "sub/rel"} {
		if got := owner(filepath.Join(home, p)); got != "4242:4343" {
			t.Errorf("home/%s owned by %s, want 4242:4343", p, got)
		}
	}
	for _, p := range []string{outside, filepath.Join(outside, "f")} {
		if got := owner(p); got != "0:0" {
			t.Errorf("%s owned by %s: PrepareHome followed a symlink", p, got)
		}
	}
	if err := PrepareHome(filepath.Join(home, "dirlink"), 1, 1); err == nil {
		t.Error("PrepareHome accepted a symlink as the home")
	}
}

func TestFrozenClock(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	clock := world.FixedClock(time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))
	res, err := Run(context.Background(), Options{Home: newHome(t, 0, 0), Clock: clock},
		`date -u +%F; date +%H; python3 -c 'import datetime; print(datetime.date.today())'`)
	if errors.Is(err, ErrNoFaketime) {
		SkipOutsideCI(t, "libfaketime absent (CI installs it: apt-get install -y libfaketime): "+err.Error())
	}
	if err != nil {
		t.Fatal(err)
	}
	if got := string(res.Stdout); got != "2026-03-04\n09\n2026-03-04\n" {
		t.Errorf("frozen clock: got %q (stderr %q), want 2026-03-04, 09, 2026-03-04", got, res.Stderr)
	}
}

// TestFrozenClockIgnoresEnvironment: the frozen clock does not hang on the
// command's environment: with LD_PRELOAD emptied, the environment cleared
// or FAKETIME unset, date still shows the world's day (libfaketime comes
// from /etc/ld.so.preload, its setting from /etc/faketimerc), with and
// without a Host. What still reads the real clock is documented (doc.go):
// a raw clock_gettime syscall, a static binary, libfaketime's own opt-outs.
func TestFrozenClockIgnoresEnvironment(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	if err := ClockAvailable(); err != nil {
		SkipOutsideCI(t, "libfaketime absent (CI installs it: apt-get install -y libfaketime): "+err.Error())
	}
	clock := world.FixedClock(time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))
	hosts := []*Host{nil}
	if os.Geteuid() == 0 {
		hosts = append(hosts, newHost(t))
	}
	for _, h := range hosts {
		got := mustSucceed(t, Options{Home: newHome(t, 0, 0), Clock: clock, Host: h},
			`date -u +%F; LD_PRELOAD= date -u +%F; env -i /bin/date -u +%F; (unset FAKETIME; date -u +%F)
env -u FAKETIME -u FAKETIME_DONT_RESET -u LD_PRELOAD python3 -c 'import datetime; print(datetime.date.today())'`)
		if want := strings.Repeat("2026-03-04\n", 5); got != want {
			t.Errorf("host %v: got %q, want the world's day five times", h != nil, got)
		}
	}
	// Without a clock, no libfaketime: the real day.
	got := mustSucceed(t, Options{Home: newHome(t, 0, 0)}, `date -u +%F; cat /etc/ld.so.preload 2>/dev/null; true`)
	if got == "2026-03-04\n" || strings.Contains(got, "faketime") {
		t.Errorf("without a clock: %q", got)
	}
}

func TestRunErrors(t *testing.T) {
	requireSandbox(t)
	t.Parallel()
	home := newHome(t, 0, 0)
	file := filepath.Join(home, "f")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []Options{
		{},
		{Home: filepath.Join(home, "missing")},
		{Home: file},
		{Home: home, ReadOnly: []Mount{{Host: "relative", Path: "/x"}}},
		{Home: home, ReadOnly: []Mount{{Host: home, Path: "/home/user/v"}}},
		{Home: home, ReadOnly: []Mount{{Host: home, Path: "/"}}},
		{Home: home, ReadOnly: []Mount{{Host: "/nonexistent-host-dir", Path: "/v"}}},
		{Home: home, UID: -1},
		{Home: home, Env: map[string]string{"A=B": "c"}},
	} {
		if res, err := Run(context.Background(), opts, "true"); err == nil {
			t.Errorf("Run(%+v) = %+v, want an error", opts, res)
		}
	}
	// bwrap cannot create a mount point in the read-only /usr: a setup
	// failure is an error carrying bwrap's message, not a Result.
	_, err := Run(context.Background(), Options{Home: home, ReadOnly: []Mount{{Host: home, Path: "/usr/new-mount-point"}}}, "true")
	var setup *SetupError
	if !errors.As(err, &setup) || !strings.Contains(setup.Msg, "bwrap") {
		t.Errorf("mount point in /usr: %v, want a *SetupError from bwrap", err)
	}
	if os.Geteuid() == 0 {
		private := filepath.Join(t.TempDir(), "private")
		if err := os.Mkdir(private, 0o700); err != nil { // owned by root
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(private, "home"), 0o755); err != nil {
			t.Fatal(err)
		}
		_, err := Run(context.Background(), Options{Home: filepath.Join(private, "home")}, "true")
		if err == nil || !strings.Contains(err.Error(), "search bit") {
			t.Errorf("home below a 0700 directory: %v, want an error naming the search bit", err)
		}
	}
}

func TestCapWriter(t *testing.T) {
	w := &capWriter{max: 5}
	for _, s := range []string{"ab", "cd", "efg", "h"} {
		if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", s, n, err)
		}
	}
	if w.buf.String() != "abcde" || !w.truncated {
		t.Errorf("got %q truncated %v", w.buf.String(), w.truncated)
	}
}

func TestImportsOnlyWorldAndScratch(t *testing.T) {
	files, _ := filepath.Glob("*.go")
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range af.Imports {
			path := strings.Trim(imp.Path.Value, `"`)
			if dep, ok := strings.CutPrefix(path, "github.com/wildawm/wildawm/"); ok && dep != "internal/world" && dep != "internal/scratch" {
				t.Errorf("%s imports %s; sandbox may import only internal/world and internal/scratch", f, path)
			}
		}
	}
}
