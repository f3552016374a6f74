package scratch

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The child mode of the test binary: claim a root under
// SCRATCH_TEST_PARENT, mount there what an instance would (a tmpfs, and a
// tmpfs and an overlay below it), say "ready" and wait to be killed.
func TestMain(m *testing.M) {
	if parent := os.Getenv("SCRATCH_TEST_PARENT"); parent != "" {
		if err := child(parent); err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
			os.Exit(3)
		}
		os.Stdout.WriteString("ready\n")
		// Not select{}: with no other goroutine the runtime calls that a
		// deadlock and exits, and a dead "live" child is swept.
		for {
			time.Sleep(time.Hour)
		}
	}
	os.Exit(m.Run())
}

func child(parent string) error {
	r, _, err := Claim(parent, "run-")
	if err != nil {
		return err
	}
	return mountLikeAnInstance(r.Dir())
}

// mountLikeAnInstance mounts, below dir, what an overlay instance holds:
// i.rw (a tmpfs with upper and work), i (an overlay over lower), and a
// tmpfs nested inside the overlay.
func mountLikeAnInstance(dir string) error {
	lower, inst, rw := filepath.Join(dir, "lower"), filepath.Join(dir, "i"), filepath.Join(dir, "i.rw")
	for _, d := range []string{lower, inst, rw} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(lower, "f"), []byte("lower"), 0o644); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", rw, "tmpfs", 0, "size=1m"); err != nil {
		return err
	}
	for _, d := range []string{"upper", "work"} {
		if err := os.Mkdir(filepath.Join(rw, d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("overlay", inst, "overlay", 0, "lowerdir="+lower+",upperdir="+rw+"/upper,workdir="+rw+"/work"); err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(inst, "nested"), 0o755); err != nil {
		return err
	}
	return unix.Mount("tmpfs", filepath.Join(inst, "nested"), "tmpfs", 0, "size=1m")
}

func needRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		if os.Getenv("CI") != "" {
			t.Fatal("the sweep test mounts: run as root")
		}
		t.Skip("the sweep test mounts tmpfs and overlayfs: run as root")
	}
}

// startChild runs the test binary as a child that claims a root under
// parent and mounts below it; it returns once the mounts are made.
func startChild(t *testing.T, parent string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SCRATCH_TEST_PARENT="+parent)
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || line != "ready\n" {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child: %q, %v", line, err)
	}
	return cmd
}

// TestSweepTakesOnlyTheDead: three children mount like instances under one
// parent; two are killed with SIGKILL, leaving their mounts; this process
// holds a root with mounts too. Sweep unmounts and removes every dead
// root, to zero mounts, and leaves the live child's and this process's
// roots and mounts as they were.
func TestSweepTakesOnlyTheDead(t *testing.T) {
	needRoot(t)
	parent := t.TempDir()
	mine, _, err := Claim(parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	defer mine.Release()
	if err := mountLikeAnInstance(mine.Dir()); err != nil {
		t.Fatal(err)
	}
	live := startChild(t, parent)
	defer func() { live.Process.Kill(); live.Wait() }()
	// Both start before either dies: a child's own claim would sweep a
	// dead sibling.
	dead := []*exec.Cmd{startChild(t, parent), startChild(t, parent)}
	for _, c := range dead {
		c.Process.Signal(syscall.SIGKILL)
		c.Wait()
	}
	t.Cleanup(func() { // whatever failed, leave no mount behind
		live.Process.Kill()
		live.Wait()
		mine.Release()
		Sweep(parent, "run-")
	})
	all, _ := MountsUnder(parent)
	if len(all) != 4*3 {
		t.Fatalf("%d mounts under the parent before the sweep, want 12: %v", len(all), all)
	}
	ents, _ := os.ReadDir(parent)
	if len(ents) != 4 {
		t.Fatalf("%d roots, want 4", len(ents))
	}

	rep, err := Sweep(parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	if rep.Roots != 2 || rep.Mounts != 6 || rep.Live != 2 {
		t.Errorf("sweep: %+v, want 2 roots and 6 mounts removed, 2 live", rep)
	}
	left, _ := MountsUnder(parent)
	if len(left) != 6 {
		t.Errorf("%d mounts left, want the 6 of the live roots: %v", len(left), left)
	}
	if m, _ := MountsUnder(mine.Dir()); len(m) != 3 {
		t.Errorf("this process's root has %d mounts, want 3", len(m))
	}
	if b, err := os.ReadFile(filepath.Join(mine.Dir(), "i", "f")); err != nil || string(b) != "lower" {
		t.Errorf("this process's overlay: %q, %v", b, err)
	}
	ents, _ = os.ReadDir(parent)
	if len(ents) != 2 {
		t.Errorf("%d roots left, want the 2 live ones", len(ents))
	}

	// Once the live child dies too, the next claim sweeps it.
	live.Process.Signal(syscall.SIGKILL)
	live.Wait()
	next, rep, err := Claim(parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release()
	if rep.Roots != 1 || rep.Mounts != 3 {
		t.Errorf("claim's sweep: %+v, want 1 root, 3 mounts", rep)
	}
	if err := mine.Release(); err != nil {
		t.Fatal(err)
	}
	if left, _ := MountsUnder(parent); len(left) != 0 {
		t.Errorf("mounts left after every release: %v", left)
	}
}

// TestSweepKeepsAnUnlockedRootOfALivePID: a root named after a running
// process is kept even when nothing holds its lock (an older build's).
func TestSweepKeepsAnUnlockedRootOfALivePID(t *testing.T) {
	parent := t.TempDir()
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	dir := filepath.Join(parent, "run-"+itoa(cmd.Process.Pid)+"-x")
	os.Mkdir(dir, 0o755)
	dead := filepath.Join(parent, "run-999999999-x") // beyond pid_max
	os.Mkdir(dead, 0o755)
	other := filepath.Join(parent, "keep-1-x")
	os.Mkdir(other, 0o755)
	rep, err := Sweep(parent, "run-")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Errorf("the root of a live pid was removed")
	}
	if _, err := os.Stat(other); err != nil {
		t.Errorf("a directory of another prefix was removed")
	}
	if _, err := os.Stat(dead); err == nil || rep.Roots != 1 {
		t.Errorf("the dead root was kept (%+v)", rep)
	}
}

func TestUnescape(t *testing.T) {
	if got := unescape(`/a\040b\134c`); got != `/a b\c` {
		t.Errorf("unescape: %q", got)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
