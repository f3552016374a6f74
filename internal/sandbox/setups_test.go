package sandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sync/semaphore"
)

// TestSetupsCapsSetupNotRun: a run holds its unit of Options.Setups only
// while its sandbox is set up. With one unit, a command that runs long does
// not hold back the next one; a unit taken elsewhere does, and the waiting
// run fails with its context without starting anything.
func TestSetupsCapsSetupNotRun(t *testing.T) {
	requireSandbox(t)
	home := newHome(t, 0, 0)
	setups := semaphore.NewWeighted(1)
	opts := Options{Home: home, Setups: setups}

	long := make(chan error, 1)
	go func() {
		res, err := Run(context.Background(), opts, "touch started; sleep 3")
		if err == nil && res.ExitCode != 0 {
			err = errors.New("the long command failed: " + string(res.Stderr))
		}
		long <- err
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(filepath.Join(home, "started")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the long command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
	t0 := time.Now()
	if out := mustSucceed(t, opts, "echo next"); out != "next\n" {
		t.Fatalf("stdout %q", out)
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("the next command waited %v for the long one: the unit is held past the setup", d)
	}
	if err := <-long; err != nil {
		t.Fatal(err)
	}

	// Every unit taken: the run waits, and gives up with its context.
	if !setups.TryAcquire(1) {
		t.Fatal("the runs left their unit taken")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := Run(ctx, opts, "touch ran")
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "setup slot") {
		t.Fatalf("with no unit free: %v", err)
	}
	if _, err := os.Stat(filepath.Join(home, "ran")); !os.IsNotExist(err) {
		t.Fatalf("the waiting run started its command: %v", err)
	}
	setups.Release(1)
	mustSucceed(t, opts, "true")
}
