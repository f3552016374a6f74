package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/world"
)

// requireRoot skips unless the tests run as root, as the README's test
// command does (a Host mounts).
func requireRoot(t testing.TB) {
	t.Helper()
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("a sandbox Host needs root (it mounts): run the tests as root")
	}
}

func newHost(t testing.TB) *Host {
	t.Helper()
	requireRoot(t)
	h, err := NewHost(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := h.Close(); err != nil {
			t.Error(err)
		}
	})
	return h
}

// mountMany mounts n tmpfs below a fresh directory, as n instances would,
// unmounts them at the end of the test, and returns the directory.
func mountMany(t testing.TB, n int) string {
	t.Helper()
	base := t.TempDir()
	for i := range n {
		p := filepath.Join(base, strconv.Itoa(i))
		if err := os.Mkdir(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount("tmpfs", p, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { unix.Unmount(p, unix.MNT_DETACH) })
	}
	return base
}

// TestHost: a command through a Host runs over the same home, with the
// same read-only mounts, as without one, and its sandbox does not see the
// mounts made in the caller's namespace after the Host: the table it
// copies stays small whatever the number of instances. Nothing is left
// mounted after a command.
func TestHost(t *testing.T) {
	h := newHost(t)
	base := mountMany(t, 40)
	home := newHome(t, 0, 0)
	ro := t.TempDir()
	os.Chmod(ro, 0o755)
	os.WriteFile(filepath.Join(ro, "v.txt"), []byte("verifier\n"), 0o644)
	count := func(o Options) int {
		out := mustSucceed(t, o, "cat /v/v.txt >> out.txt; wc -l < /proc/self/mountinfo")
		n, err := strconv.Atoi(strings.TrimSpace(out))
		if err != nil {
			t.Fatalf("%q: %v", out, err)
		}
		return n
	}
	plain := Options{Home: home, ReadOnly: []Mount{{Host: ro, Path: "/v"}}}
	with := plain
	with.Host = h
	nPlain, nHost := count(plain), count(with)
	if b, _ := os.ReadFile(filepath.Join(home, "out.txt")); string(b) != "verifier\nverifier\n" {
		t.Errorf("home after both: %q", b)
	}
	// bwrap's own mounts are the same in both; without the Host the 40
	// tmpfs are copied (and detached, but still counted while setting up).
	t.Logf("mounts seen in the sandbox: %d without the host, %d with it", nPlain, nHost)
	if nHost > nPlain {
		t.Errorf("the host's sandbox sees more mounts (%d) than the plain one (%d)", nHost, nPlain)
	}
	entries, err := os.ReadDir(h.Dir())
	if err != nil || len(entries) != 1 || entries[0].Name() != ".etc" {
		t.Errorf("the host's directory after the commands (want only its /etc): %v %v", entries, err)
	}
	// The sandbox's /etc and what programs read there are the same (but
	// for the Host's empty ld.so.preload and faketimerc, which
	// Options.Clock's are bound over).
	const probe = "ls -lR /etc 2>&1 | grep -v -e '^total' -e ' ld.so.preload$' -e ' faketimerc$' | tr -s ' ' | sed 's/ [0-9]* [A-Z][a-z][a-z] .* / /' | md5sum; cat /etc/ssl/private/* 2>&1 | head -c 100; python3 -c 'import json, sqlite3, csv, ssl; print(ssl.get_default_verify_paths().cafile)'; getent passwd root | cut -d: -f1; date -u +%Z"
	if a, b := mustSucceed(t, plain, probe), mustSucceed(t, with, probe); a != b {
		t.Errorf("the sandbox differs through the host:\nplain: %s\nhost:  %s", a, b)
	}
	// The holder's namespace does not have the mounts made after it (other
	// tests' mounts made before it may be there).
	data, err := os.ReadFile(h.ns[:len(h.ns)-len("ns/mnt")] + "mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), base) {
		t.Errorf("the host's namespace holds the mounts made after it:\n%s", data)
	}
	mine, _ := os.ReadFile("/proc/self/mountinfo")
	if !strings.Contains(string(mine), base) {
		t.Fatal("the test's own mounts are not in its namespace: the check above proves nothing")
	}
	// Errors: a closed host, a timeout and exit codes as without one.
	res := run(t, with, "exit 3")
	if res.ExitCode != 3 {
		t.Errorf("exit code %d", res.ExitCode)
	}
	with.Timeout = 300e6
	if res := run(t, with, "sleep 5"); !res.TimedOut {
		t.Errorf("not timed out: %+v", res)
	}
}

// TestNice: a command's priority is lowered as asked, for everything it
// starts; a priority above the caller's is refused.
func TestNice(t *testing.T) {
	requireSandbox(t)
	home := newHome(t, 0, 0)
	if out := mustSucceed(t, Options{Home: home, Nice: 10}, "nice; sh -c nice"); out != "10\n10\n" {
		t.Errorf("niceness inside: %q", out)
	}
	if out := mustSucceed(t, Options{Home: home}, "nice"); out != "0\n" {
		t.Errorf("niceness by default: %q", out)
	}
	if _, err := Run(context.Background(), Options{Home: home, Nice: -5}, "true"); err == nil {
		t.Error("a negative Nice was accepted")
	}
}

// TestHostSweepsStale: a Host directory left mounted by a process that
// died is unmounted and removed by the next NewHost, and a home that was
// bound in it is left whole.
func TestHostSweepsStale(t *testing.T) {
	requireRoot(t)
	stale := filepath.Join(os.TempDir(), tempPrefix+"999999999-test")
	os.RemoveAll(stale)
	home := t.TempDir()
	os.WriteFile(filepath.Join(home, "keep.txt"), []byte("keep"), 0o644)
	if err := os.MkdirAll(filepath.Join(stale, "1", "home"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(stale, stale, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount(home, filepath.Join(stale, "1", "home"), "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { unix.Unmount(stale, unix.MNT_DETACH); os.RemoveAll(stale) })
	newHost(t)
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale host directory is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(home, "keep.txt")); err != nil || string(b) != "keep" {
		t.Errorf("the home bound in it: %q %v", b, err)
	}
}

// TestMountinfoHidesHostDir: a sandbox through a Host does not read the
// Host's directory in its mountinfo (its /etc is a tmpfs of its own, its
// clock files bwrap's), with and without a clock. A bind's root is its
// path within its file system: a home on the host's root file system shows
// that path, which is why instances' homes are overlays (reset.Overlay).
func TestMountinfoHidesHostDir(t *testing.T) {
	h := newHost(t)
	home := newHome(t, 0, 0)
	for _, clock := range []world.Clock{nil, world.FixedClock(time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))} {
		if clock != nil && ClockAvailable() != nil {
			continue
		}
		out := mustSucceed(t, Options{Home: home, Host: h, Clock: clock}, "cat /proc/self/mountinfo")
		if strings.Contains(out, h.Dir()) || strings.Contains(out, tempPrefix) {
			t.Errorf("clock %v: the sandbox's mountinfo shows the Host's directory %s:\n%s", clock != nil, h.Dir(), out)
		}
		if !strings.Contains(out, " / /etc ") {
			t.Errorf("clock %v: /etc is not a bind of a file system's root:\n%s", clock != nil, out)
		}
	}
}
