package sandbox

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestMemoryLimitPerSandbox: two processes of 400 MiB each stay under the
// per-process address-space limit but not under the run's cgroup limit of
// 512 MiB, which counts them together (and the run's tmpfs pages).
func TestMemoryLimitPerSandbox(t *testing.T) {
	requireSandbox(t)
	if os.Geteuid() != 0 {
		t.Skip("cgroups are made as root")
	}
	const uid = 64998
	opts := Options{Home: newHome(t, uid, uid), UID: uid, GID: uid, MaxMemory: 512 << 20, Timeout: 20 * time.Second}
	res, err := Run(context.Background(), opts, `
python3 -c 'import time; b = bytearray(400 << 20); time.sleep(3)' &
python3 -c 'import time; b = bytearray(400 << 20); time.sleep(3)' &
wait; echo done`)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Cgroup {
		t.Skip("this machine gave the run no cgroup (rlimits only); nothing more to check")
	}
	if !res.OOMKilled {
		t.Fatalf("800 MiB in one sandbox with a 512 MiB limit was not stopped: %+v\n%s", res, res.Stderr)
	}
	// The next run starts clean, and the cgroup is gone.
	res, err = Run(context.Background(), opts, "echo ok")
	if err != nil || string(res.Stdout) != "ok\n" || res.OOMKilled {
		t.Fatalf("after the OOM: %v %+v", err, res)
	}
}
