// Package pooltest builds a small task pool on live worlds for the tests of
// the packages that consume one (the trainer's rollout service, evaluation,
// SFT export, the OpenEnv server): a synthesized world run of one persona,
// self-checked tasks of a few families on its last day, and a pool.json over
// them with the splits a test asks for. Tasks are self-checked, not gated:
// the consumers read a pool, not how it was accepted.
package pooltest

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// DefaultFamilies sketch reliably on the fixture's last day.
var DefaultFamilies = []string{"wishlist-balance", "cafe-near-venue", "model-pick"}

// Fixture is a world run with self-checked tasks.
type Fixture struct {
	// Dir is the world-synthesis run (what --dir names); its tasks are in
	// Dir/tasks and its pool index, once written, in Dir/pool/pool.json.
	Dir string
	Src *taskgen.Source
	// Env runs rollouts on the run's worlds with the HTTP browser.
	Env *rollout.Env
	// Tasks are the tasks by family, and their directories.
	Tasks    map[string]*task.Task
	TaskDirs map[string]string
	// root is the temporary directory to remove.
	root string
}

// New builds the fixture (about a minute): catalog, one persona's worlds,
// and a self-checked task of each family (nil: DefaultFamilies) on the last
// day. It skips when instances cannot run here. Call Close when done (in
// TestMain, when a package shares one fixture).
func New(t testing.TB, families []string) *Fixture {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	if families == nil {
		families = DefaultFamilies
	}
	ctx := context.Background()
	root, err := os.MkdirTemp("", "wildawm-pooltest-") // the sandbox uid reads worlds here
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o755)
	run := filepath.Join(root, "run")
	if _, err := catalog.Build(ctx, filepath.Join(run, "catalog"), generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		t.Fatal(err)
	}
	r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: run, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 4 }, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Worlds(ctx, ps, 2); err != nil {
		t.Fatal(err)
	}
	closeRun()
	cache := filepath.Join(root, "cache")
	os.Mkdir(cache, 0o755)
	src, _, err := taskgen.OpenSource(ctx, run, cache)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(root, "work")
	os.Mkdir(work, 0o755)
	last := src.States[len(src.States)-1]
	env := &rollout.Env{Store: src.Run.Store, Materializer: src.Materializer, CatalogDir: src.CatalogDir, WorkDir: work, Self: last.Persona.Name,
		Services: src.Run.Defs.Library, UIDs: sandbox.NewUIDs(240000, 10000),
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}}
	s := &taskgen.Synth{Source: src, Out: filepath.Join(run, "tasks"), Diversity: &taskgen.Diversity{},
		Check: func(*persona.Persona) *rollout.Env { return env }}
	var fams []taskgen.Family
	for _, name := range families {
		f, err := taskgen.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		fams = append(fams, f)
	}
	rs, err := s.Run(ctx, s.Jobs(fams, func(st taskgen.State) bool { return st.Day == last.Day }, 1), 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{Dir: run, Src: src, Env: env, Tasks: map[string]*task.Task{}, TaskDirs: map[string]string{}, root: root}
	for _, r := range rs {
		for _, p := range r.Tasks {
			if _, ok := f.TaskDirs[r.Job.Family]; ok {
				continue
			}
			tk, err := task.Load(p.Dir)
			if err != nil {
				t.Fatal(err)
			}
			f.Tasks[r.Job.Family], f.TaskDirs[r.Job.Family] = tk, p.Dir
		}
	}
	for _, name := range families {
		if f.TaskDirs[name] == "" {
			var why []string
			for _, r := range rs {
				if r.Job.Family != name {
					continue
				}
				for _, p := range append(r.Rejected, r.Dropped...) {
					w := p.ID + ": " + p.Problem
					if p.Check != nil && p.Check.Problem != "" {
						w += " (self-check: " + p.Check.Problem + ")"
					}
					why = append(why, w)
				}
			}
			t.Fatalf("pooltest: family %s wrote no checked task on the fixture's last day: %v", name, why)
		}
	}
	return f
}

// Close removes the fixture's files.
func (f *Fixture) Close() { os.RemoveAll(f.root) }

// WritePool writes Dir/pool/pool.json with the fixture's tasks, each in the
// split splitOf gives its family (nil: all in rl), and returns it.
func (f *Fixture) WritePool(t testing.TB, splitOf func(family string) string) *pool.Pool {
	t.Helper()
	if splitOf == nil {
		splitOf = func(string) string { return pool.SplitRL }
	}
	p := &pool.Pool{Version: pool.Version, TasksDir: filepath.Join(f.Dir, "tasks"), Proportions: pool.DefaultProportions(), Counts: map[string]int{}}
	for _, fam := range slices.Sorted(maps.Keys(f.Tasks)) {
		tk := f.Tasks[fam]
		split := splitOf(fam)
		p.Tasks = append(p.Tasks, pool.Entry{ID: tk.ID, Dir: filepath.Base(f.TaskDirs[fam]), Split: split, Family: fam,
			Persona: tk.Provenance.Persona, Day: tk.Provenance.Day, Snapshot: tk.Provenance.Snapshot, Difficulty: "hard", Direct: true})
		p.Counts[split]++
	}
	p.Gated = len(p.Tasks)
	if err := os.MkdirAll(filepath.Join(f.Dir, "pool"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := p.Save(filepath.Join(f.Dir, pool.File)); err != nil {
		t.Fatal(err)
	}
	return p
}

// Shared is one fixture for a package's tests, built on first use:
//
//	var shared pooltest.Shared
//
//	func TestMain(m *testing.M) {
//		code := m.Run()
//		shared.Close()
//		os.Exit(code)
//	}
type Shared struct {
	// Families are the fixture's families (nil: DefaultFamilies).
	Families []string
	once     sync.Once
	f        *Fixture
}

// Get builds the fixture on the first call and returns it; it skips when
// instances cannot run here, and fails if an earlier test's build failed.
func (s *Shared) Get(t testing.TB) *Fixture {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	s.once.Do(func() { s.f = New(t, s.Families) })
	if s.f == nil {
		t.Fatal("the pool fixture failed in an earlier test")
	}
	return s.f
}

// Close removes the fixture, if one was built.
func (s *Shared) Close() {
	if s.f != nil {
		s.f.Close()
	}
}
