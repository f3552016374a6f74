package attack

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/sandbox"
)

func TestProbe(t *testing.T) {
	cmd := os.Getenv("PROBE")
	if cmd == "" {
		t.Skip()
	}
	home := t.TempDir()
	os.Chmod(filepath.Dir(home), 0o755)
	os.Chmod(home, 0o755)
	sandbox.PrepareHome(home, 0, 0)
	res, err := sandbox.Run(context.Background(), sandbox.Options{Home: home}, cmd)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("exit %d timedout %v\nstdout:\n%s\nstderr:\n%s", res.ExitCode, res.TimedOut, res.Stdout, res.Stderr)
}
