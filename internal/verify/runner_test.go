package verify

import (
	"bytes"
	"context"
	"errors"

	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// realPython finds the python3 interpreter behind any shim (pyenv), so a
// runner with a scratch HOME still finds it.
var realPython = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(string(out)), nil
})

func needPython(t *testing.T) string {
	t.Helper()
	p, err := realPython()
	if err != nil {
		t.Skipf("python3 is not installed: %v", err)
	}
	return p
}

// execRunner runs commands with os/exec and no isolation: each mount is
// simulated by rewriting its sandbox path to the host path in the command
// and the environment. It cannot make mounts read-only; bwrapRunner can.
type execRunner struct{ python string }

func (r execRunner) Run(ctx context.Context, home string, mounts []Mount, env map[string]string, command string, timeout time.Duration) (RunResult, error) {
	sub := func(s string) string {
		for _, m := range mounts {
			s = strings.ReplaceAll(s, m.Path, m.Host)
		}
		return s
	}
	vars := []string{"PATH=" + filepath.Dir(r.python) + ":/usr/bin:/bin", "HOME=" + home}
	for k, v := range env {
		vars = append(vars, k+"="+sub(v))
	}
	return runCmd(ctx, timeout, home, vars, "sh", "-c", "exec "+sub(command))
}

// bwrapRunner is a minimal bubblewrap sandbox: system directories and the
// Python installation read-only, mounts read-only at their paths, the scratch
// home read-write, no network.
type bwrapRunner struct{ python string }

func (r bwrapRunner) Run(ctx context.Context, home string, mounts []Mount, env map[string]string, command string, timeout time.Duration) (RunResult, error) {
	prefix := filepath.Dir(filepath.Dir(r.python))
	args := []string{"--die-with-parent", "--new-session", "--unshare-all", "--clearenv",
		"--ro-bind", "/usr", "/usr", "--ro-bind-try", "/bin", "/bin", "--ro-bind-try", "/lib", "/lib",
		"--ro-bind-try", "/lib64", "/lib64", "--ro-bind", "/etc", "/etc", "--ro-bind", prefix, prefix,
		"--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", home, "/home/verifier", "--chdir", "/home/verifier",
		"--setenv", "HOME", "/home/verifier", "--setenv", "PATH", filepath.Dir(r.python) + ":/usr/bin:/bin"}
	for _, m := range mounts {
		args = append(args, "--ro-bind", m.Host, m.Path)
	}
	for k, v := range env {
		args = append(args, "--setenv", k, v)
	}
	args = append(args, "sh", "-c", "exec "+command)
	return runCmd(ctx, timeout, "", nil, "bwrap", args...)
}

func runCmd(ctx context.Context, timeout time.Duration, dir string, env []string, name string, args ...string) (RunResult, error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(tctx, name, args...)
	cmd.Dir = dir
	if env != nil {
		cmd.Env = env
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	err := cmd.Run()
	res := RunResult{Stdout: stdout.Bytes(), Stderr: stderr.Bytes()}
	if ctx.Err() != nil {
		return res, ctx.Err()
	}
	if tctx.Err() != nil {
		res.TimedOut, res.ExitCode = true, -1
		return res, nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		res.ExitCode = exit.ExitCode()
		return res, nil
	}
	return res, err
}

func needBwrap(t *testing.T) bwrapRunner {
	t.Helper()
	py := needPython(t)
	if _, err := exec.LookPath("bwrap"); err != nil {
		t.Skip("bubblewrap (bwrap) is not installed; CI installs it")
	}
	r := bwrapRunner{python: py}
	res, err := r.Run(context.Background(), t.TempDir(), nil, nil, "python3 -c 'print(1)'", 20*time.Second)
	if err != nil || res.ExitCode != 0 {
		t.Skipf("bubblewrap cannot create a sandbox here: %v %s", err, res.Stderr)
	}
	return r
}
