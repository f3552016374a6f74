package attack

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/sandbox"
)

func TestProbeBomb(t *testing.T) {
	if os.Getenv("PROBE2") == "" {
		t.Skip()
	}
	mk := func() string {
		home := t.TempDir()
		os.Chmod(filepath.Dir(home), 0o755)
		sandbox.PrepareHome(home, 0, 0)
		return home
	}
	a, b := mk(), mk()
	done := make(chan *sandbox.Result)
	go func() {
		res, _ := sandbox.Run(context.Background(), sandbox.Options{Home: a, Timeout: 6 * time.Second}, "bomb() { bomb | bomb & }; bomb; sleep 100")
		done <- res
	}()
	time.Sleep(2 * time.Second)
	res, err := sandbox.Run(context.Background(), sandbox.Options{Home: b, Timeout: 3 * time.Second}, "echo ok")
	t.Logf("victim during bomb: err=%v res=%+v", err, res)
	r := <-done
	t.Logf("bomb: exit %d timedout %v", r.ExitCode, r.TimedOut)
	res, err = sandbox.Run(context.Background(), sandbox.Options{Home: b}, "echo ok")
	t.Logf("victim after: err=%v out=%q", err, res.Stdout)
}
