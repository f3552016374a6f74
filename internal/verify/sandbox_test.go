//go:build !nosandbox

// This file uses the real internal/sandbox. Build with -tags nosandbox to
// leave it out while internal/sandbox does not compile.

package verify

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/sandbox"
)

// sandboxRunner adapts internal/sandbox to Runner: the scratch home is handed
// to the sandbox uid first.
type sandboxRunner struct{}

func (sandboxRunner) Run(ctx context.Context, home string, mounts []Mount, env map[string]string, command string, timeout time.Duration) (RunResult, error) {
	if err := sandbox.PrepareHome(home, 0, 0); err != nil {
		return RunResult{}, err
	}
	ro := make([]sandbox.Mount, len(mounts))
	for i, m := range mounts {
		ro[i] = sandbox.Mount{Host: m.Host, Path: m.Path}
	}
	res, err := sandbox.Run(ctx, sandbox.Options{Home: home, ReadOnly: ro, Env: env, Timeout: timeout}, command)
	if err != nil {
		return RunResult{}, err
	}
	return RunResult{Stdout: res.Stdout, Stderr: res.Stderr, ExitCode: res.ExitCode, TimedOut: res.TimedOut}, nil
}

// openDirs makes dir and its ancestors searchable and its content readable
// by the sandbox uid (t.TempDir directories are 0700).
func openDirs(t *testing.T, dirs ...string) {
	t.Helper()
	for _, dir := range dirs {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if err == nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		for p := filepath.Dir(dir); p != "/" && p != "."; p = filepath.Dir(p) {
			if fi, err := os.Stat(p); err == nil && fi.Mode().Perm()&0o001 == 0 {
				os.Chmod(p, fi.Mode().Perm()|0o011)
			}
		}
	}
}

func TestWithInternalSandbox(t *testing.T) {
	if err := sandbox.Available(); err != nil {
		t.Skipf("internal/sandbox cannot run here: %v", err)
	}
	initial, final := testWorlds(t)
	vdir := verifierDir(t, map[string]string{"attack.py": attackScript})
	for name, src := range protocolScripts {
		os.WriteFile(filepath.Join(vdir, "scripts", name), []byte(src), 0o644)
	}
	scratch := t.TempDir()
	openDirs(t, initial, final, vdir, scratch)
	checkReadOnly(t, sandboxRunner{}, initial, final, vdir)

	in := Input{Initial: initial, Final: final, Answer: "total 5", VerifierDir: vdir, Runner: sandboxRunner{}, Scratch: scratch}
	for script, want := range map[string]struct{ pass, scriptErr bool }{
		"pass.py": {true, false}, "fail.py": {false, false}, "crash.py": {false, true}, "loop.py": {false, true}, "silent.py": {false, true},
	} {
		c := taskCriterion("scripts/"+script, 2)
		r, err := Verify(context.Background(), testTask(t, c), in)
		if err != nil {
			t.Fatalf("%s: %v", script, err)
		}
		got := r.Criteria[0]
		if got.Pass != want.pass || (got.Error != "") != want.scriptErr {
			t.Errorf("%s: %+v, want pass %v, script error %v", script, got, want.pass, want.scriptErr)
		}
	}
}
