package attack

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/world"
)

// syscallProbe is a python3 ctypes call of syscall nr with null arguments,
// printing errno's name.
func syscallProbe(nr int) string {
	return fmt.Sprintf(`python3 -c 'import ctypes, errno; libc = ctypes.CDLL(None, use_errno=True); r = libc.syscall(%d, 0, 0, 0, 0, 0); print("ret", r, errno.errorcode.get(ctypes.get_errno(), ctypes.get_errno()) if r < 0 else "ok")'`, nr)
}

// deniedWithEPERM requires the probe of nr to fail with EPERM: the seccomp
// filter's answer (the kernel itself says EFAULT or EINVAL to null
// arguments).
func deniedWithEPERM(nr int) func(context.Context, *fixture) (string, error) {
	return func(ctx context.Context, f *fixture) (string, error) {
		res, err := run(ctx, f.a, syscallProbe(nr))
		if err != nil {
			return "", err
		}
		obs := strings.TrimSpace(string(res.Stdout))
		if obs != "ret -1 EPERM" {
			return obs, fmt.Errorf("syscall %d: %q (stderr %q), want ret -1 EPERM from the seccomp filter", nr, obs, res.Stderr)
		}
		return obs, nil
	}
}

func sandboxAttacks(f *fixture) []attack {
	_ = f
	return []attack{
		{
			name: "io_uring_setup (python ctypes)", category: "sandbox",
			action:  "python3 ctypes syscall(425 io_uring_setup, 0, NULL)",
			contain: "EPERM from the sandbox's seccomp filter: io_uring is out of reach",
			try:     deniedWithEPERM(425),
		},
		{
			name: "keyctl (python ctypes)", category: "sandbox",
			action:  "python3 ctypes syscall(250 keyctl, ...)",
			contain: "EPERM from the seccomp filter: no kernel keyrings",
			try:     deniedWithEPERM(250),
		},
		{
			name: "unshare -U", category: "sandbox",
			action:  "unshare -U true (a user namespace of its own)",
			contain: "fails: the seccomp filter denies unshare (and clone with namespace flags)",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, "unshare -U true; echo exit=$?")
				if err != nil {
					return "", err
				}
				obs := strings.TrimSpace(string(res.Stdout)) + ": " + lastLine(res.Stderr)
				if !strings.Contains(string(res.Stdout), "exit=1") || !strings.Contains(string(res.Stderr), "Operation not permitted") {
					return obs, fmt.Errorf("unshare -U: %q %q", res.Stdout, res.Stderr)
				}
				return obs, nil
			},
		},
		{
			name: "host paths in mountinfo", category: "sandbox",
			action:  "cat /proc/self/mountinfo /proc/mounts and look for the run directory, instance paths and the snapshot id",
			contain: "none appears: the overlay's layers are named by descriptor, the home is a bind within the overlay, a Host's /etc a tmpfs",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, "cat /proc/self/mountinfo /proc/mounts")
				if err != nil {
					return "", err
				}
				out := string(res.Stdout)
				if !strings.Contains(out, " /home/user ") {
					return "", fmt.Errorf("no /home/user in the mount table: %q", out)
				}
				id := f.p.W0().String()
				for _, p := range append(hostPaths(f)[:10], f.a.Dir(), filepath.Dir(f.a.Dir()), id, id[:12]) {
					if p != "" && strings.Contains(out, p) {
						return "", fmt.Errorf("the mount table shows %s:\n%s", p, out)
					}
				}
				return fmt.Sprintf("%d mount lines, none naming a host path or the snapshot", strings.Count(out, "\n")), nil
			},
		},
		{
			name: "LD_PRELOAD= date (the real clock)", category: "sandbox",
			action:  "LD_PRELOAD= date; env -i /bin/date; unset FAKETIME; date",
			contain: "each shows the world's frozen day: libfaketime comes from /etc/ld.so.preload, its setting from /etc/faketimerc",
			try: func(ctx context.Context, f *fixture) (string, error) {
				res, err := run(ctx, f.a, "LD_PRELOAD= date -u +%F; env -i /bin/date -u +%F; (unset FAKETIME FAKETIME_DONT_RESET; date -u +%F)")
				if err != nil {
					return "", err
				}
				day := f.a.Clock().Now().UTC().Format("2006-01-02")
				if got, want := string(res.Stdout), strings.Repeat(day+"\n", 3); got != want {
					return got, fmt.Errorf("dates %q, want the world's day %s three times (stderr %q)", got, day, res.Stderr)
				}
				return "the world's day " + day + " three times", nil
			},
		},
		{
			name: "a command in flight across a reset", category: "sandbox",
			action:  "start `touch started; (while :; do echo x >> loop; sleep 0.05; done) & sleep 30; touch late` in A's shell, reset A while it runs",
			contain: "the reset kills it and waits for it: it has ended (ErrShellReset) when Reset returns; no started, loop or late in the new world",
			try: func(ctx context.Context, f *fixture) (string, error) {
				defer f.a.Reset(context.WithoutCancel(ctx)) // A clean again, whatever happened
				home := filepath.Join(f.a.Dir(), world.HomeDir)
				done := make(chan error, 1)
				go func() {
					_, err := f.a.Shell(ctx, "touch ~/started; (while :; do echo x >> ~/loop; sleep 0.05; done) & sleep 30; touch ~/late")
					done <- err
				}()
				deadline := time.Now().Add(30 * time.Second)
				for {
					if b, _ := os.ReadFile(filepath.Join(home, "loop")); len(b) > 0 {
						break
					}
					if time.Now().After(deadline) {
						return "", errors.New("the command never started writing")
					}
					time.Sleep(5 * time.Millisecond)
				}
				if err := f.a.Reset(ctx); err != nil {
					return "", fmt.Errorf("reset: %v", err)
				}
				var err error
				select {
				case err = <-done:
				case <-time.After(time.Second):
					<-done
					return "", errors.New("Reset returned while the command of the old episode still ran")
				}
				if !errors.Is(err, runtime.ErrShellReset) {
					return "", fmt.Errorf("the command in flight ended with %v, want ErrShellReset", err)
				}
				time.Sleep(300 * time.Millisecond)
				for _, name := range []string{"started", "loop", "late"} {
					if _, err := os.Lstat(filepath.Join(home, name)); !errors.Is(err, os.ErrNotExist) {
						return "", fmt.Errorf("~/%s in the new world: %v", name, err)
					}
				}
				return "killed by the reset (" + err.Error() + "); the new world has none of its files", nil
			},
		},
	}
}
