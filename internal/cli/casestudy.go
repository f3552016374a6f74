package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// caseStudy is the paper's case study prepared in the world run at dir
// (the demo, rollout and bench commands): the case-study persona's world
// grown in the run, its task written by the case-study family and
// self-checked under DIR/tasks, and the run's rollout environments.
type caseStudy struct {
	src     *taskgen.Source
	envs    *rolloutEnvs
	env     *rollout.Env // the case-study persona's
	task    *task.Task
	taskDir string
	// worldHash is W0's content hash.
	worldHash world.ID
}

func (c *caseStudy) w0() world.ID        { return c.task.Provenance.Snapshot }
func (c *caseStudy) verifierDir() string { return filepath.Join(c.taskDir, "verifier") }

// caseStudyRunDir is where the case study's live instances and snapshot
// cache go: a directory under the system temporary directory named after
// dir. The sandboxed shell runs as an unprivileged uid, so every directory
// above it must be searchable by that uid (a home under /root is not).
func caseStudyRunDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	return filepath.Join(os.TempDir(), "wildawm-run-"+world.Hash([]byte(abs)).Short()), nil
}

// caseStudy prepares the case study in dir; with fake, the websites are
// driven by the HTTP browser instead of Chromium. close releases the
// environments and the run.
func (e *env) caseStudy(ctx context.Context, dir string, fake bool) (*caseStudy, func(), error) {
	runDir, err := caseStudyRunDir(dir)
	if err != nil {
		return nil, nil, err
	}
	if err := ownDir(runDir); err != nil {
		return nil, nil, err
	}
	cache := filepath.Join(runDir, "cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		return nil, nil, err
	}
	src, st, closeSrc, err := taskgen.CaseStudySource(ctx, dir, cache, e.progress)
	if err != nil {
		return nil, nil, err
	}
	envs, closeEnvs, err := e.rolloutEnvs(ctx, src, dir, runDir, fake)
	if err != nil {
		closeSrc()
		return nil, nil, err
	}
	done := func() { closeEnvs(); closeSrc() }
	env := envs.persona(st.Persona)
	taskDir, err := taskgen.AuthorCaseStudy(ctx, src, st, filepath.Join(dir, "tasks"), env)
	if err != nil {
		done()
		return nil, nil, err
	}
	t, err := task.Load(taskDir)
	if err != nil {
		done()
		return nil, nil, err
	}
	snap, err := src.Run.Store.Load(t.Provenance.Snapshot)
	if err != nil {
		done()
		return nil, nil, err
	}
	e.progress("task %s: %d sub-tasks over %v, %d verifier criteria, in %s", t.ID, len(t.Subtasks), t.Interfaces, len(t.Verifier.Criteria), taskDir)
	return &caseStudy{src: src, envs: envs, env: env, task: t, taskDir: taskDir, worldHash: snap.WorldHash}, done, nil
}

// ownDir creates dir (mode 0755) or checks that it is a real directory
// owned by this user: a directory under a shared /tmp that another user
// made first must not become root's work area.
func ownDir(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("run directory %s is not a directory owned by uid %d: remove it, or give the command another --dir", dir, os.Geteuid())
	}
	return os.Chmod(dir, 0o755)
}
