package cli

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/runtime"
)

// TestDemoRerunsAfterAKill SIGKILLs `wildawm demo` in the middle of the
// gater's rollouts (leaving mounted instances behind) and checks that
// running it again gates the case study to the end: accepted, the report
// printed with the labels of what rated and judged it.
func TestDemoRerunsAfterAKill(t *testing.T) {
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, "chromium is not installed (wildawm setup installs it): "+err.Error())
	}
	runtime.SkipUnlessInstancesRun(t)
	if dir := os.Getenv("WILDAWM_DEMO_CHILD"); dir != "" {
		Run(context.Background(), []string{"demo", "--no-install", "--dir", dir}, io.Discard, io.Discard)
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestDemoRerunsAfterAKill$")
	cmd.Env = append(os.Environ(), "WILDAWM_DEMO_CHILD="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(3 * time.Minute)
wait:
	for {
		select {
		case err := <-exited:
			t.Fatalf("the child demo ended before its rollouts: %v", err)
		case <-deadline:
			cmd.Process.Kill()
			t.Fatal("the child demo never reached its rollouts")
		case <-time.After(20 * time.Millisecond):
			if m, _ := filepath.Glob(filepath.Join(dir, "tasks", "*", "gate", "rollouts", "r2.json")); len(m) > 0 {
				break wait
			}
		}
	}
	cmd.Process.Signal(syscall.SIGKILL)
	<-exited
	out, stderr, err := run(t, t.TempDir(), "demo", "--no-install", "--dir", dir)
	if err != nil {
		t.Fatalf("the demo after a kill: %v\n%s", err, stderr)
	}
	for _, want := range []string{"task ACCEPTED", "rated by shortcut agents; judged by the offline replay judge and observer", "gate image_ablation           PASS  image_needed"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo's report lacks %q:\n%s", want, out)
		}
	}
}
