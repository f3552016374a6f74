package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSnapshotWaitsForShellCommands: a snapshot taken while a command is
// still writing waits for it, so the stored world is the one the command
// left, whole, and new commands wait for the snapshot.
func TestSnapshotWaitsForShellCommands(t *testing.T) {
	ctx := context.Background()
	p, m, info, inst := caseStudyInstance(t, runtime.ManagerOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := inst.Shell(ctx, "for i in $(seq 1 20); do echo line $i >> counting.txt; sleep 0.05; done")
		done <- err
	}()
	// Wait until the command has started writing.
	deadline := time.Now().Add(20 * time.Second)
	for {
		if b, _ := os.ReadFile(filepath.Join(inst.Dir(), world.HomeDir, "counting.txt")); len(b) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started writing")
		}
		time.Sleep(5 * time.Millisecond)
	}
	id, err := m.Snapshot(ctx, info.ID)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "out")
	if err := p.Store.Checkout(ctx, id, out); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(out, world.HomeDir, "counting.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n != 20 {
		t.Fatalf("the snapshot caught the file after %d of 20 lines: it did not wait for the command", n)
	}
	sum, err := state.Summarize(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	if snap, err := p.Store.Load(id); err != nil || snap.WorldHash != sum.Hash {
		t.Fatalf("the record's world hash is not the stored tree's: %v", err)
	}
}
