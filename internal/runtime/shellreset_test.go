package runtime_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/world"
)

// TestResetKillsShellInFlight: a reset kills the shell command in flight
// and waits for it before the world is swapped: the command has ended
// (ErrShellReset) by the time Reset returns, and neither what it wrote
// before nor what it would write later appears in the new world. A new
// command then runs in the new world.
func TestResetKillsShellInFlight(t *testing.T) {
	ctx := context.Background()
	_, m, info, inst := caseStudyInstance(t, runtime.ManagerOptions{})
	home := filepath.Join(inst.Dir(), world.HomeDir)
	done := make(chan error, 1)
	go func() {
		_, err := inst.Shell(ctx, "touch ~/started; (while :; do echo x >> ~/loop; sleep 0.05; done) & sleep 30; touch ~/late")
		done <- err
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(home, "loop")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started writing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	start := time.Now()
	if err := m.Reset(ctx, info.ID); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	select {
	case err := <-done:
		if !errors.Is(err, runtime.ErrShellReset) {
			t.Errorf("the command in flight: %v, want ErrShellReset", err)
		}
	case <-time.After(time.Second):
		t.Fatalf("Reset returned after %v while the command of the old episode still runs", took)
	}
	time.Sleep(300 * time.Millisecond) // a writer left alive would have written by now
	for _, name := range []string{"started", "loop", "late"} {
		if _, err := os.Lstat(filepath.Join(home, name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("~/%s in the new world: %v", name, err)
		}
	}
	res, err := inst.Shell(ctx, "ls ~/loop 2>&1; echo next")
	if err != nil || !strings.HasSuffix(string(res.Stdout), "next\n") || strings.Contains(string(res.Stdout), "loop\n") {
		t.Fatalf("a command after the reset: %v %q", err, res.Stdout)
	}
}
