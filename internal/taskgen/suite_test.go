package taskgen

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/task"
)

// runDir is a world-synthesis run the suite draws states from; caseDir
// is a run with the case study's persona (synth.Run.CaseStudy) alone.
var runDir, caseDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wildawm-taskgen-")
	if err != nil {
		panic(err)
	}
	runDir = dir
	code := func() int {
		ctx := context.Background()
		if _, err := catalog.Build(ctx, filepath.Join(dir, "catalog"), generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
			panic(err)
		}
		r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: dir, Seed: 3})
		if err != nil {
			panic(err)
		}
		// Four personas: a persona's sites are its occupation's and two
		// or three drawn at random, and the first three occupations
		// (an AV technician, a chemistry teacher, a data analyst) have no
		// news or recipes account with this seed; the fourth, a nurse,
		// has both. The first three are the same whatever the count.
		ps, _, err := r.Personas(ctx, 4, func(int) int { return 10 }, "")
		if err != nil {
			panic(err)
		}
		if err := r.Worlds(ctx, ps, 2); err != nil {
			panic(err)
		}
		closeRun()
		caseDir = filepath.Join(dir, "case-study")
		cr, closeCase, err := synth.Open(ctx, synth.OpenOptions{Dir: caseDir})
		if err != nil {
			panic(err)
		}
		if _, err := cr.CaseStudy(ctx, nil); err != nil {
			panic(err)
		}
		closeCase()
		return m.Run()
	}()
	os.RemoveAll(dir)
	os.Exit(code)
}

func openSource(t *testing.T) *Source { return openRun(t, runDir) }

// openRun opens the world run at dir as a Source.
func openRun(t *testing.T, dir string) *Source {
	t.Helper()
	cache, err := os.MkdirTemp("", "wildawm-taskgen-cache-") // the sandbox reads W0 here
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(cache, 0o755)
	t.Cleanup(func() { os.RemoveAll(cache) })
	s, closeSrc, err := OpenSource(context.Background(), dir, cache)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeSrc)
	return s
}

// drafted is a family's draft on a state of a source.
type drafted struct {
	src   *Source
	state State
	w     *World
	draft *Draft
}

// draftAll authors every sketch of fam on every state's last days.
func draftAll(t *testing.T, s *Source, fam Family) []drafted {
	t.Helper()
	var out []drafted
	for _, st := range s.States {
		if st.Day < st.Persona.Days-3 {
			continue
		}
		w, err := s.World(context.Background(), st)
		if err != nil {
			t.Fatal(err)
		}
		seed := uint64(st.Day)
		sk, err := fam.Sketch(w, rand.New(rand.NewPCG(seed, 1)))
		if err != nil {
			t.Fatalf("%s day %d: sketch: %v", st.Persona.ID, st.Day, err)
		}
		again, _ := fam.Sketch(w, rand.New(rand.NewPCG(seed, 1)))
		if !reflect.DeepEqual(sk, again) {
			t.Fatalf("%s day %d: two sketches with one seed differ", st.Persona.ID, st.Day)
		}
		for _, k := range sk {
			if k.Family != fam.Name() || len(k.Core) == 0 || k.Title == "" {
				t.Fatalf("sketch %+v: want its family, a title and its core actions", k)
			}
			d, err := fam.Author(w, k)
			if err != nil {
				t.Fatalf("%s day %d: author %q: %v", st.Persona.ID, st.Day, k.Title, err)
			}
			if d2, _ := fam.Author(w, k); d2 == nil || !reflect.DeepEqual(d, d2) {
				t.Fatalf("%s day %d: two authorings of %q differ", st.Persona.ID, st.Day, k.Title)
			}
			out = append(out, drafted{s, st, w, d})
		}
	}
	return out
}

// TestFamiliesSuite is the suite every task family passes: it sketches and
// authors on the synthesized worlds and the case study's, deterministically; its drafts are valid tasks
// that need the GUI, MCP and CLI, each in the reference completion and in
// a sub-task; they save and load; the initial world does not satisfy V,
// nor does the right answer alone; and the reference completion, run
// through the harness on a live instance, does.
func TestFamiliesSuite(t *testing.T) {
	srcs := []*Source{openSource(t), openRun(t, caseDir)}
	for _, fam := range All() {
		t.Run(fam.Name(), func(t *testing.T) {
			var ds []drafted
			states := 0
			for _, s := range srcs {
				ds = append(ds, draftAll(t, s, fam)...)
				states += len(s.States)
			}
			if len(ds) == 0 {
				t.Fatalf("no sketch on any of the %d test states: the family cannot be tested here", states)
			}
			ids := map[string]bool{}
			for _, d := range ds {
				tk := d.draft.Task
				key := d.state.Persona.ID + "/" + tk.ID
				if ids[key] {
					t.Fatalf("two drafts on %s share the task ID %s: a family's IDs must tell its sketches apart", d.state.Persona.ID, tk.ID)
				}
				ids[key] = true
				if err := tk.Validate(); err != nil {
					t.Fatal(err)
				}
				if err := LintNaturalKeys(tk); err != nil {
					t.Fatalf("%s: %v", tk.ID, err)
				}
				if !slices.Equal(tk.Interfaces, []string{task.GUI, task.MCP, task.CLI}) {
					t.Fatalf("%s: interfaces %v, want all three", tk.ID, tk.Interfaces)
				}
				if tk.Provenance.Snapshot != d.state.Snapshot {
					t.Fatalf("%s: provenance %v", tk.ID, tk.Provenance)
				}
				dir := filepath.Join(t.TempDir(), tk.ID)
				if err := d.draft.Save(dir); err != nil {
					t.Fatal(err)
				}
				if back, err := task.Load(dir); err != nil || back.ID != tk.ID {
					t.Fatalf("load %s: %v", dir, err)
				}
			}
			runtime.SkipUnlessInstancesRun(t)
			envs := map[*Source]*rollout.Env{}
			for i, d := range ds {
				if i >= 3 {
					break // three live checks a family are enough
				}
				if envs[d.src] == nil {
					envs[d.src] = liveEnv(t, d.src, d.state)
				}
				checkLive(t, envs[d.src], d)
			}
		})
	}
}

func liveEnv(t *testing.T, s *Source, st State) *rollout.Env {
	// The sandbox's uid must reach the work directory: not under
	// t.TempDir's 0700 parent.
	dir, err := os.MkdirTemp("", "wildawm-taskgen-live-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	return &rollout.Env{Store: s.Run.Store, Materializer: s.Materializer, CatalogDir: s.CatalogDir, WorkDir: dir, Self: st.Persona.Name,
		Services: s.Run.Defs.Library,
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}}
}

// checkLive runs the self-check (CheckTask) and holds it to passing.
func checkLive(t *testing.T, env *rollout.Env, d drafted) {
	t.Helper()
	tk := d.draft.Task
	dir := filepath.Join(env.WorkDir, "task-"+tk.ID)
	if err := d.draft.Save(dir); err != nil {
		t.Fatal(err)
	}
	c, err := CheckTask(context.Background(), env, d.draft, dir)
	if err != nil {
		t.Fatal(err)
	}
	if !c.OK {
		t.Fatalf("%s: %s", tk.ID, c.Problem)
	}
}

// TestCheckRejects: the self-check fails a task whose reference lacks its
// decisive step, and one whose verifier the initial world satisfies.
func TestCheckRejects(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	fam, _ := Lookup("wishlist-balance")
	ds := draftAll(t, s, fam)
	if len(ds) == 0 {
		t.Fatal("no wishlist-balance draft")
	}
	env := liveEnv(t, s, ds[0].state)
	ctx := context.Background()
	d := ds[0].draft
	cut := *d.Task
	cut.Reference = cut.Reference[:len(cut.Reference)-1] // the order's click
	dcut := &Draft{Task: &cut, Scripts: d.Scripts}
	dir := filepath.Join(env.WorkDir, "cut")
	if err := dcut.Save(dir); err != nil {
		t.Fatal(err)
	}
	c, err := CheckTask(ctx, env, dcut, dir)
	if err != nil || c.OK || !strings.Contains(c.Problem, "does not pass V") {
		t.Fatalf("without the order: %+v, %v", c, err)
	}
	vacuous := *d.Task
	vacuous.Verifier.Criteria = slices.Clone(vacuous.Verifier.Criteria[:1])
	vacuous.Verifier.Criteria[0].Query = "SELECT 1"
	vacuous.Verifier.Criteria[0].Expect = []byte("1")
	dv := &Draft{Task: &vacuous, Scripts: d.Scripts}
	dir = filepath.Join(env.WorkDir, "vacuous")
	if err := dv.Save(dir); err != nil {
		t.Fatal(err)
	}
	if c, err := CheckTask(ctx, env, dv, dir); err != nil || c.OK || !strings.Contains(c.Problem, "initial world already satisfies") {
		t.Fatalf("a vacuous verifier: %+v, %v", c, err)
	}
}
