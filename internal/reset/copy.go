package reset

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"sync"
)

// Copy is the "copy" strategy: a Go copy of the tree (modes and symlinks
// preserved; owners and times are not). Reset removes the instance and copies
// again. It works anywhere, unprivileged and across file systems.
type Copy struct {
	// Workers copying files in parallel; 0 means GOMAXPROCS.
	Workers int
}

// Name implements Strategy: "copy", or "copy-wN" with Workers set.
func (s *Copy) Name() string {
	if s.Workers > 0 {
		return fmt.Sprintf("copy-w%d", s.Workers)
	}
	return "copy"
}

// New implements Strategy.
func (s *Copy) New(ctx context.Context, lower, dir string) (Instance, error) {
	if err := checkNew(ctx, lower, dir); err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	t, err := scanTree(ctx, lower)
	if err != nil {
		return nil, fmt.Errorf("copy: %w", err)
	}
	in := &treeInstance{name: "copy", dir: dir, fill: func(ctx context.Context) error {
		return t.materialise(ctx, dir, s.Workers, func(src, dst string, n node) error {
			return copyFile(src, dst, n.mode, n.size)
		})
	}}
	if err := in.fill(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("copy: new %s: %w", dir, err)
	}
	return in, nil
}

// treeInstance is an instance that is reset by removing dir and filling it
// again (copy, cp, hardlink).
type treeInstance struct {
	name string
	dir  string
	fill func(ctx context.Context) error
	// remove deletes dir; nil means os.RemoveAll.
	remove func(ctx context.Context) error

	mu     sync.Mutex
	closed bool
}

func (in *treeInstance) Dir() string { return in.dir }

func (in *treeInstance) Reset(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return fmt.Errorf("%s: reset: %w", in.name, ErrClosed)
	}
	if err := in.removeDir(ctx); err != nil {
		return fmt.Errorf("%s: reset %s: %w", in.name, in.dir, err)
	}
	if err := in.fill(ctx); err != nil {
		return fmt.Errorf("%s: reset %s: %w", in.name, in.dir, err)
	}
	return nil
}

func (in *treeInstance) Close(ctx context.Context) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return nil
	}
	in.closed = true
	if err := in.removeDir(ctx); err != nil {
		return fmt.Errorf("%s: close %s: %w", in.name, in.dir, err)
	}
	return nil
}

func (in *treeInstance) removeDir(ctx context.Context) error {
	if in.remove != nil {
		return in.remove(ctx)
	}
	return os.RemoveAll(in.dir)
}

// CP is the "cp" baseline: New runs `cp -a lower dir`; Reset runs
// `rm -rf dir` then `cp -a lower dir` again. It is what a shell script would
// do, and the figure every other strategy is compared with.
type CP struct{}

// Name implements Strategy.
func (CP) Name() string { return "cp" }

// New implements Strategy.
func (CP) New(ctx context.Context, lower, dir string) (Instance, error) {
	if err := checkNew(ctx, lower, dir); err != nil {
		return nil, fmt.Errorf("cp: %w", err)
	}
	in := &treeInstance{
		name: "cp",
		dir:  dir,
		fill: func(ctx context.Context) error {
			return run(ctx, "cp", "-a", "--", lower, dir)
		},
		remove: func(ctx context.Context) error {
			return run(ctx, "rm", "-rf", "--", dir)
		},
	}
	if err := in.fill(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("cp: new %s: %w", dir, err)
	}
	return in, nil
}

func run(ctx context.Context, name string, args ...string) error {
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, out)
	}
	return nil
}
