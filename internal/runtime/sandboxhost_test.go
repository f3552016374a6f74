package runtime_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/world"
)

// TestShellThroughSandboxHost: instances whose shells are sandboxed from a
// sandbox.Host run commands over their own homes, a reset drops what a
// command wrote, and two instances never see each other's files.
func TestShellThroughSandboxHost(t *testing.T) {
	ctx := context.Background()
	runtime.SkipUnlessInstancesRun(t)
	host, err := sandbox.NewHost(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	defer host.Close()
	p, m := caseStudyManager(t, runtime.ManagerOptions{SandboxHost: host})
	defer m.Close(ctx)
	var insts []*runtime.Instance
	var ids []string
	for range 2 {
		info, err := m.Create(ctx, p.W0())
		if err != nil {
			t.Fatal(err)
		}
		inst, err := m.Instance(info.ID)
		if err != nil {
			t.Fatal(err)
		}
		insts, ids = append(insts, inst), append(ids, info.ID)
	}
	if _, err := insts[0].Shell(ctx, "echo mine > only-here.txt"); err != nil {
		t.Fatal(err)
	}
	res, err := insts[1].Shell(ctx, "ls only-here.txt 2>&1; echo; pwd; id -u")
	if err != nil {
		t.Fatal(err)
	}
	if out := string(res.Stdout); !strings.Contains(out, "No such file") || !strings.Contains(out, sandbox.HomePath) {
		t.Fatalf("the other instance: %q", out)
	}
	if b, err := os.ReadFile(filepath.Join(insts[0].Dir(), world.HomeDir, "only-here.txt")); err != nil || string(b) != "mine\n" {
		t.Fatalf("the write: %q %v", b, err)
	}
	if err := m.Reset(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	res, err = insts[0].Shell(ctx, "cat only-here.txt 2>&1 || echo gone")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(res.Stdout), "gone") {
		t.Fatalf("after the reset: %q", res.Stdout)
	}
	// A Manager's shells run at DefaultShellNice unless told otherwise.
	res, err = insts[0].Shell(ctx, "nice")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(res.Stdout)); got != strconv.Itoa(runtime.DefaultShellNice) {
		t.Fatalf("the shell's niceness: %q, want %d", got, runtime.DefaultShellNice)
	}
	if entries, _ := os.ReadDir(host.Dir()); len(entries) != 1 {
		t.Errorf("binds left in the host's directory (want only its /etc): %v", entries)
	}
}
