package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/scratch"
)

// TestStartSweepsDeadPredecessors: under a run directory, a root of a dead
// process (PID beyond pid_max, no lock) holds an instance's tmpfs and a
// tmpfs below it, as a killed `syn worlds` leaves them; a root this live
// process holds has a mount too. `syn world` with live health starts,
// sweeps the dead root to zero mounts and removes it, leaves the live root
// and its mount alone, grows its day, and leaves no root of its own.
func TestStartSweepsDeadPredecessors(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	dir := filepath.Join(t.TempDir(), "run")
	base, err := os.MkdirTemp("", "wildawm-cli-sweep-") // the sandbox uid searches it
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(base, 0o755)
	t.Cleanup(func() { os.RemoveAll(base) })
	runDir := filepath.Join(base, "health")
	st := filepath.Join(t.TempDir(), "unused-store")
	// The live root first: a claim sweeps its parent.
	live, _, err := scratch.Claim(runDir, scratchPrefix)
	if err != nil {
		t.Fatal(err)
	}
	liveMount := filepath.Join(live.Dir(), "i1")
	os.Mkdir(liveMount, 0o755)
	if err := unix.Mount("tmpfs", liveMount, "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(liveMount, "mine"), []byte("live"), 0o644)
	t.Cleanup(func() { live.Release(); scratch.Sweep(runDir, scratchPrefix) })
	dead := filepath.Join(runDir, scratchPrefix+"999999999-killed")
	inst := filepath.Join(dead, "h1", "instances", "i1")
	for _, d := range []string{inst, inst + ".rw"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := unix.Mount("tmpfs", d, "tmpfs", 0, "size=1m"); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(inst, "below"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(inst, "below"), "tmpfs", 0, "size=1m"); err != nil {
		t.Fatal(err)
	}
	if m, _ := scratch.MountsUnder(dead); len(m) != 3 {
		t.Fatalf("%d mounts under the dead root, want 3", len(m))
	}

	out := mustRun(t, st, "syn", "persona", "--dir", dir, "--name", "Robin Vale", "--days", "1")
	if !strings.Contains(out, "robin-vale") {
		t.Fatalf("syn persona: %.200s", out)
	}
	_, stderr, err := run(t, st, "syn", "world", "--dir", dir, "--persona", "robin-vale", "--to-day", "0", "--run-dir", runDir)
	if err != nil {
		t.Fatalf("syn world: %v\n%s", err, stderr)
	}
	if !strings.Contains(stderr, "swept 1 work directories") || !strings.Contains(stderr, "(3 mounts)") {
		t.Errorf("syn world did not say what it swept:\n%s", stderr)
	}
	if m, _ := scratch.MountsUnder(dead); len(m) != 0 {
		t.Errorf("%d mounts left under the dead root: %v", len(m), m)
	}
	if _, err := os.Stat(dead); !os.IsNotExist(err) {
		t.Errorf("the dead root is still there: %v", err)
	}
	if b, err := os.ReadFile(filepath.Join(liveMount, "mine")); err != nil || string(b) != "live" {
		t.Errorf("the live root's mount: %q, %v", b, err)
	}
	ents, _ := os.ReadDir(runDir)
	if len(ents) != 1 || filepath.Join(runDir, ents[0].Name()) != live.Dir() {
		t.Errorf("the run directory holds %v, want only the live root", ents)
	}
	if m, _ := scratch.MountsUnder(runDir); len(m) != 1 {
		t.Errorf("%d mounts under the run directory after the run, want the live root's 1: %v", len(m), m)
	}
}
