package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sync/semaphore"

	"github.com/wildawm/wildawm/internal/browser"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/vision"
)

// rolloutEnvs are the rollout environments of a command over a world run:
// one rollout.Factory (one browser, one set of shells, the process's uid
// allocator) and one Env per persona of the run, every one made up front.
// Every command that runs rollouts on a run's worlds (the self-check, the
// gates, eval, sft export, rl serve, openenv serve) makes its Envs here.
type rolloutEnvs struct {
	factory *rollout.Factory
	envs    map[string]*rollout.Env // by persona ID
	dir     string                  // the run, for errors
}

// rolloutEnvs makes the rollout environments over src (the run at dir):
// their instances below a scratch root of this process's own under work,
// and the websites driven by a shared Chromium (a tab per session) or,
// with fake, the HTTP browser. close releases the browser, the shells and
// the scratch root.
func (e *env) rolloutEnvs(ctx context.Context, src *taskgen.Source, dir, work string, fake bool) (*rolloutEnvs, func(), error) {
	if err := os.MkdirAll(work, 0o755); err != nil {
		return nil, nil, err
	}
	if err := os.Chmod(work, 0o755); err != nil {
		return nil, nil, err
	}
	if err := searchable(work); err != nil {
		return nil, nil, err
	}
	root, release, err := e.ownScratch(work)
	if err != nil {
		return nil, nil, err
	}
	var closers []func()
	done := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	closers = append(closers, release)
	f := &rollout.Factory{Store: src.Run.Store, Materializer: src.Materializer, CatalogDir: src.CatalogDir, Services: src.Run.Defs.Library,
		WorkDir: root, UIDs: e.uids}
	if fake {
		f.NewBrowser = func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}
	} else {
		if err := e.ensureDeps(ctx, true); err != nil {
			done()
			return nil, nil, err
		}
		b, err := browser.New(context.WithoutCancel(ctx), browser.Options{})
		if err != nil {
			done()
			return nil, nil, fmt.Errorf("start Chromium: %w (or --fake-browser)", err)
		}
		f.NewBrowser = func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return b.Tab(ctx, browser.AllowOrigins(origins...))
		}
		closers = append(closers, func() { b.Close(context.Background()) })
	}
	shells, err := newRolloutShells(ctx)
	if err != nil {
		done()
		return nil, nil, err
	}
	closers = append(closers, shells.close)
	f.SandboxHost, f.ShellSetups, f.ShellNice = shells.host, shells.setups, runtime.DefaultShellNice
	r := &rolloutEnvs{factory: f, envs: map[string]*rollout.Env{}, dir: dir}
	for _, st := range src.States {
		p := st.Persona
		if r.envs[p.ID] != nil {
			continue
		}
		env, err := f.Env(p.ID, p.Name)
		if err != nil {
			done()
			return nil, nil, err
		}
		r.envs[p.ID] = env
	}
	return r, done, nil
}

// persona is the environment of a persona of the run.
func (r *rolloutEnvs) persona(p *persona.Persona) *rollout.Env { return r.envs[p.ID] }

// task is the environment of a task's persona; a task of another run is an
// error that says what to do (the command's verb: "gate", "evaluate").
func (r *rolloutEnvs) task(t *task.Task, verb string) (*rollout.Env, error) {
	env := r.envs[t.Provenance.Persona]
	if env == nil {
		return nil, fmt.Errorf("task %s: persona %q is not in %s: %s tasks with the world run they were synthesized from (--dir)", t.ID, t.Provenance.Persona, r.dir, verb)
	}
	return env, nil
}

// setVision gives every environment's sessions the vision tool v.
func (r *rolloutEnvs) setVision(v func(ctx context.Context, img []byte) (*vision.Description, error)) {
	for _, env := range r.envs {
		env.Vision = v
	}
}

// forTask is task as a function of the task, for the gater and the
// rater, which take the narrow interface they use (pool.Worlds).
func (r *rolloutEnvs) forTask(verb string) func(t *task.Task) (pool.Worlds, error) {
	return func(t *task.Task) (pool.Worlds, error) { return r.task(t, verb) }
}

// searchable fails unless every directory above dir has the search bit
// for others: the instances' shells run as unprivileged uids, which must
// reach their homes below dir. It says so now, not in every rollout's
// failure.
func searchable(dir string) error {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	for d := filepath.Dir(abs); ; d = filepath.Dir(d) {
		if fi, err := os.Stat(d); err == nil && fi.Mode().Perm()&0o001 == 0 {
			return fmt.Errorf("directory %s (mode %#o) lacks the search bit the sandbox's unprivileged uids need to reach the instances under %s: chmod o+x it, or give a work directory elsewhere", d, fi.Mode().Perm(), dir)
		}
		if d == filepath.Dir(d) {
			return nil
		}
	}
}

// rolloutShells is what every command that runs rollouts gives its
// rollout environments' shells and verifier scripts: as root, a sandbox
// host made before any instance (sandbox.NewHost: a command's cost then
// does not grow with the instances running); one cap on the sandboxes set
// up at once; the runtime's default priority. A runtime.Manager has the
// same by default.
type rolloutShells struct {
	host   *sandbox.Host
	setups *semaphore.Weighted
}

func newRolloutShells(ctx context.Context) (*rolloutShells, error) {
	s := &rolloutShells{setups: semaphore.NewWeighted(int64(runtime.DefaultShellSetups()))}
	if os.Geteuid() == 0 && sandbox.Available() == nil {
		h, err := sandbox.NewHost(ctx, "")
		if err != nil {
			return nil, err
		}
		s.host = h
	}
	return s, nil
}

func (s *rolloutShells) close() {
	if s.host != nil {
		s.host.Close()
	}
}
