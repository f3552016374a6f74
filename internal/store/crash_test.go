package store

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// Environment of the crash helper process.
const (
	envCrashStore = "WILDAWM_STORE_CRASH_STORE"
	envCrashSrc   = "WILDAWM_STORE_CRASH_SRC"
	envCrashAt    = "WILDAWM_STORE_CRASH_AT" // event name, or "" to run to the end
	envCrashN     = "WILDAWM_STORE_CRASH_N"  // crash at the N-th such event
)

// TestHelperProcess is not a test: run by TestCrashDuringSnapshot in a child
// process, it snapshots a tree and SIGKILLs itself at the named point.
func TestHelperProcess(t *testing.T) {
	dir := os.Getenv(envCrashStore)
	if dir == "" {
		t.Skip("helper process for TestCrashDuringSnapshot")
	}
	s, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	s.packSize = 512 << 10
	at := os.Getenv(envCrashAt)
	n, _ := strconv.Atoi(os.Getenv(envCrashN))
	seen := 0
	hook := func(event string) {
		if event == at {
			if seen++; seen == n {
				syscall.Kill(os.Getpid(), syscall.SIGKILL)
				select {} // never reached
			}
		}
	}
	s.hook = hook
	s.be.hook = hook
	if _, err := s.Snapshot(t.Context(), os.Getenv(envCrashSrc), worldMeta("ada", 1, world.ID{})); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	os.Exit(0)
}

func TestCrashDuringSnapshot(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary; skipped in -short")
	}
	t.Parallel()
	prev := makeWorld(t, filepath.Join(t.TempDir(), "prev"), 51, 1<<20)
	next := makeWorld(t, filepath.Join(t.TempDir(), "next"), 52, 6<<20)
	cases := []struct {
		at    string
		n     int
		sleep time.Duration // for a plain kill from outside
	}{
		{at: "blob", n: 1},
		{at: "blob", n: 200},
		{at: "tmp:packs", n: 1},
		{at: "pack", n: 1},
		{at: "tmp:packs", n: 5},
		{at: "pack", n: 8},
		{at: "tmp:index", n: 1},
		{at: "index", n: 1},
		{at: "index", n: 6},
		{at: "tmp:snapshots", n: 1},
		{at: "snapshot", n: 1},
		{sleep: 5 * time.Millisecond},
		{sleep: 40 * time.Millisecond},
		{sleep: 150 * time.Millisecond},
	}
	for _, tc := range cases {
		name := fmt.Sprintf("%s#%d", tc.at, tc.n)
		if tc.sleep > 0 {
			name = "kill-after-" + tc.sleep.String()
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s := newStore(t)
			prevID := mustSnapshot(t, s, prev, worldMeta("ada", 0, world.ID{}))

			cmd := exec.Command(os.Args[0], "-test.run=^TestHelperProcess$", "-test.count=1")
			cmd.Env = append(os.Environ(),
				envCrashStore+"="+s.Dir(), envCrashSrc+"="+next,
				envCrashAt+"="+tc.at, envCrashN+"="+strconv.Itoa(tc.n))
			out := &lockedBuffer{}
			cmd.Stdout, cmd.Stderr = out, out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if tc.sleep > 0 {
				time.Sleep(tc.sleep)
				cmd.Process.Kill() // SIGKILL
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			switch {
			case errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL:
				// killed, as intended
			case err == nil && tc.sleep > 0:
				t.Logf("child finished before the kill")
			default:
				t.Fatalf("child: %v, want SIGKILL; output:\n%s", err, out)
			}

			s2, err := Open(s.Dir())
			if err != nil {
				t.Fatalf("Open after crash: %v", err)
			}
			mustCheckOK(t, s2)
			dst := filepath.Join(t.TempDir(), "prev")
			mustCheckout(t, s2, prevID, dst)
			assertTreesEqual(t, prev, dst)

			if _, err := s2.GC(t.Context()); err != nil {
				t.Fatalf("GC after crash: %v", err)
			}
			if r := mustCheckOK(t, s2); len(r.Garbage) != 0 && tc.at != "snapshot" {
				// After "snapshot" the new record exists: nothing is garbage.
				t.Errorf("garbage after GC:\n%s", r)
			}
			if ents, _ := os.ReadDir(filepath.Join(s.Dir(), "tmp")); len(ents) != 0 {
				t.Errorf("tmp/ not empty after GC: %v", ents)
			}
			id := mustSnapshot(t, s2, next, worldMeta("ada", 1, world.ID{}))
			dst = filepath.Join(t.TempDir(), "next")
			mustCheckout(t, s2, id, dst)
			assertTreesEqual(t, next, dst)
			mustCheckout(t, s2, prevID, filepath.Join(t.TempDir(), "prev2"))
			mustCheckOK(t, s2)
		})
	}
}
