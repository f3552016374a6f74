package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// cgroupRoots are the cgroup v1 hierarchies a run is limited in, with the
// file that sets each limit. (cgroup v2 with the memory and pids
// controllers enabled works the same way through cgroupV2.)
var cgroupV1 = []struct{ root, file string }{
	{"/sys/fs/cgroup/memory", "memory.limit_in_bytes"},
	{"/sys/fs/cgroup/pids", "pids.max"},
}

const cgroupV2Root = "/sys/fs/cgroup"

// runCgroup is the per-run cgroup (one directory per hierarchy).
type runCgroup struct{ dirs []string }

// newRunCgroup makes cgroups named name limiting memory (bytes, counting
// tmpfs pages the run writes) and processes. It returns nil, nil when the
// machine has no usable cgroup hierarchy (the rlimits still apply).
func newRunCgroup(name string, memory int64, procs int) (*runCgroup, error) {
	if _, err := os.Stat(filepath.Join(cgroupV2Root, "cgroup.controllers")); err == nil {
		return newV2(name, memory, procs)
	}
	c := &runCgroup{}
	for _, h := range cgroupV1 {
		if _, err := os.Stat(filepath.Join(h.root, h.file)); err != nil {
			continue // this controller is not mounted
		}
		dir := filepath.Join(h.root, "wildawm", name)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			c.remove()
			return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
		}
		c.dirs = append(c.dirs, dir)
		v := strconv.FormatInt(memory, 10)
		if h.file == "pids.max" {
			v = strconv.Itoa(procs)
		}
		if err := os.WriteFile(filepath.Join(dir, h.file), []byte(v), 0o644); err != nil {
			c.remove()
			return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
		}
	}
	if len(c.dirs) == 0 {
		return nil, nil
	}
	return c, nil
}

func newV2(name string, memory int64, procs int) (*runCgroup, error) {
	parent := filepath.Join(cgroupV2Root, "wildawm")
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, nil // not ours to manage (e.g. a read-only hierarchy)
	}
	if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte("+memory +pids"), 0o644); err != nil {
		return nil, nil // controllers not delegated here: rlimits only
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
	}
	c := &runCgroup{dirs: []string{dir}}
	for f, v := range map[string]string{"memory.max": strconv.FormatInt(memory, 10), "memory.swap.max": "0", "pids.max": strconv.Itoa(procs)} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(v), 0o644); err != nil && f != "memory.swap.max" {
			c.remove()
			return nil, fmt.Errorf("sandbox: cgroup %s: %w", dir, err)
		}
	}
	return c, nil
}

// add moves pid (and so everything it will start) into the run's cgroups.
func (c *runCgroup) add(pid int) error {
	for _, d := range c.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0o644); err != nil {
			return fmt.Errorf("sandbox: join cgroup %s: %w", d, err)
		}
	}
	return nil
}

// remove deletes the run's cgroups once their processes are gone.
func (c *runCgroup) remove() {
	if c == nil {
		return
	}
	for _, d := range c.dirs {
		for i := 0; i < 50; i++ {
			err := os.Remove(d)
			if err == nil || errors.Is(err, os.ErrNotExist) {
				break
			}
			time.Sleep(10 * time.Millisecond) // the last processes are still being reaped
		}
	}
}

// waitEmpty waits, up to d, until the run's cgroups hold no process: after
// a kill, the sandbox's processes (in a session and pid namespace of their
// own) die as the namespace's init does, a moment after the chain Run waits
// for.
func (c *runCgroup) waitEmpty(d time.Duration) {
	if c == nil {
		return
	}
	deadline := time.Now().Add(d)
	for _, dir := range c.dirs {
		for {
			b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
			if err != nil || len(bytes.TrimSpace(b)) == 0 || time.Now().After(deadline) {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
}

// oomKilled reports whether the memory limit killed something in the run.
func (c *runCgroup) oomKilled() bool {
	if c == nil {
		return false
	}
	for _, d := range c.dirs {
		for _, f := range []string{"memory.oom_control", "memory.events"} {
			b, err := os.ReadFile(filepath.Join(d, f))
			if err != nil {
				continue
			}
			for _, key := range []string{"oom_kill ", "oom_kill\t"} {
				if i := indexAfter(string(b), key); i >= 0 && i < len(b) && b[i] != '0' {
					return true
				}
			}
		}
	}
	return false
}

func indexAfter(s, key string) int {
	for i := 0; i+len(key) <= len(s); i++ {
		if s[i:i+len(key)] == key && (i == 0 || s[i-1] == '\n') {
			return i + len(key)
		}
	}
	return -1
}
