package mutate_test

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/mutate"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// synthFamilies are the families whose first draft TestSynthesizedTask
// checks (those that sketch on the small run's last day);
// WILDAWM_MUTATE_FAMILIES=all tries every family.
var synthFamilies = []string{"wishlist-balance", "cafe-near-venue", "model-pick"}

// TestSynthesizedTask synthesizes a small world run, authors a task of a
// real family on its last day, runs the reference through the self-check
// and holds the reference's final world to the mutation check.
func TestSynthesizedTask(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wildawm-mutate-synth-") // the sandbox uid reads the worlds here
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	start := time.Now()
	run := filepath.Join(dir, "run")
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
	cache := filepath.Join(dir, "cache")
	os.Mkdir(cache, 0o755)
	s, closeSrc, err := taskgen.OpenSource(ctx, run, cache)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSrc()
	t.Logf("world run: %v", time.Since(start))
	st := s.States[len(s.States)-1]
	w, err := s.World(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o755)
	env := &rollout.Env{Store: s.Run.Store, Materializer: s.Materializer, CatalogDir: s.CatalogDir, WorkDir: work, Self: st.Persona.Name,
		Services: s.Run.Defs.Library,
		NewBrowser: func(ctx context.Context, origins []string) (rollout.Browser, error) {
			return fakebrowser.New(fakebrowser.Options{AllowOrigins: origins})
		}}
	names := synthFamilies
	if os.Getenv("WILDAWM_MUTATE_FAMILIES") == "all" {
		names = nil
		for _, f := range taskgen.All() {
			names = append(names, f.Name())
		}
	}
	for _, name := range names {
		fam, err := taskgen.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		sk, err := fam.Sketch(w, rand.New(rand.NewPCG(uint64(st.Day), 1)))
		if err != nil || len(sk) == 0 {
			if os.Getenv("WILDAWM_MUTATE_FAMILIES") == "all" {
				t.Logf("%s: no sketch on %s day %d: %v", name, st.Persona.ID, st.Day, err)
			} else {
				t.Errorf("%s: no sketch on %s day %d: %v", name, st.Persona.ID, st.Day, err)
			}
			continue
		}
		d, err := fam.Author(w, sk[0])
		if err != nil {
			t.Fatal(err)
		}
		tdir := filepath.Join(work, "task-"+d.Task.ID)
		if err := d.Save(tdir); err != nil {
			t.Fatal(err)
		}
		c, err := taskgen.CheckTask(ctx, env, d, tdir)
		if err != nil {
			t.Fatal(err)
		}
		if !c.OK {
			t.Errorf("%s: self-check: %s", name, c.Problem)
			continue
		}
		w0, err := s.Materializer.Lower(ctx, d.Task.Provenance.Snapshot)
		if err != nil {
			t.Fatal(err)
		}
		wref, err := s.Materializer.Lower(ctx, c.Final)
		if err != nil {
			t.Fatal(err)
		}
		began := time.Now()
		res, err := mutate.Check(ctx, mutate.Input{Task: d.Task, VerifierDir: filepath.Join(tdir, "verifier"), Initial: w0, Solved: wref,
			Runner: rollout.SandboxRunner{}, Scratch: filepath.Join(work, "mutate")})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s (%s): passed %v, %d candidates, %d evaluations, %d inapplicable, %v\n%s", name, d.Task.ID, res.Passed, res.Candidates, res.Evaluations, res.Inapplicable,
			time.Since(began).Round(time.Millisecond), strings.Join(res.Evidence, "\n"))
		if !res.Passed {
			t.Errorf("%s: the mutation check failed", name)
		}
	}
}
