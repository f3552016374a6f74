package mutate_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
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
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/verify"
)

// synthFamilies are the families whose first draft TestSynthesizedTask
// checks (those that sketch on the small run's last day);
// WILDAWM_MUTATE_FAMILIES=all tries every family.
var synthFamilies = []string{"wishlist-balance", "cafe-near-venue", "model-pick"}

// synthCase is one synthesized task with its worlds.
type synthCase struct {
	family  string
	in      mutate.Input
	scratch string
}

// synthesize synthesizes a small world run, authors a task of each of
// synthFamilies on its last day and runs the reference through the
// self-check.
func synthesize(tb testing.TB) []synthCase {
	runtime.SkipUnlessInstancesRun(tb)
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "wildawm-mutate-synth-") // the sandbox uid reads the worlds here
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	start := time.Now()
	run := filepath.Join(dir, "run")
	if _, err := catalog.Build(ctx, filepath.Join(run, "catalog"), generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		tb.Fatal(err)
	}
	r, closeRun, err := synth.Open(ctx, synth.OpenOptions{Dir: run, Seed: 3})
	if err != nil {
		tb.Fatal(err)
	}
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 4 }, "")
	if err != nil {
		tb.Fatal(err)
	}
	if err := r.Worlds(ctx, ps, 2); err != nil {
		tb.Fatal(err)
	}
	closeRun()
	cache := filepath.Join(dir, "cache")
	os.Mkdir(cache, 0o755)
	s, closeSrc, err := taskgen.OpenSource(ctx, run, cache)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(closeSrc)
	tb.Logf("world run: %v", time.Since(start))
	st := s.States[len(s.States)-1]
	w, err := s.World(ctx, st)
	if err != nil {
		tb.Fatal(err)
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
	var out []synthCase
	for _, name := range names {
		fam, err := taskgen.Lookup(name)
		if err != nil {
			tb.Fatal(err)
		}
		sk, err := fam.Sketch(w, rand.New(rand.NewPCG(uint64(st.Day), 1)))
		if err != nil || len(sk) == 0 {
			if os.Getenv("WILDAWM_MUTATE_FAMILIES") == "all" {
				tb.Logf("%s: no sketch on %s day %d: %v", name, st.Persona.ID, st.Day, err)
			} else {
				tb.Errorf("%s: no sketch on %s day %d: %v", name, st.Persona.ID, st.Day, err)
			}
			continue
		}
		d, err := fam.Author(w, sk[0])
		if err != nil {
			tb.Fatal(err)
		}
		tdir := filepath.Join(work, "task-"+d.Task.ID)
		if err := d.Save(tdir); err != nil {
			tb.Fatal(err)
		}
		c, err := taskgen.CheckTask(ctx, env, d, tdir)
		if err != nil {
			tb.Fatal(err)
		}
		if !c.OK {
			tb.Errorf("%s: self-check: %s", name, c.Problem)
			continue
		}
		w0, err := s.Materializer.Lower(ctx, d.Task.Provenance.Snapshot)
		if err != nil {
			tb.Fatal(err)
		}
		wref, err := s.Materializer.Lower(ctx, c.Final)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, synthCase{family: name, scratch: filepath.Join(work, "mutate-"+name), in: mutate.Input{Task: d.Task, VerifierDir: filepath.Join(tdir, "verifier"),
			Initial: w0, Solved: wref, Runner: rollout.SandboxRunner{}, Catalog: env.CatalogDB()}})
	}
	return out
}

// TestSynthesizedTask holds the reference's final world of each
// synthesized task to the mutation check, and the check to the result it
// had when every mutation got a fresh copy of W_ref and every criterion
// was computed.
func TestSynthesizedTask(t *testing.T) {
	ctx := context.Background()
	for _, c := range synthesize(t) {
		in := c.in
		in.Scratch = c.scratch
		began := time.Now()
		res, err := mutate.CheckUndone(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		took := time.Since(began)
		began = time.Now()
		old, err := mutate.CheckFresh(ctx, in)
		if err != nil {
			t.Fatal(err)
		}
		tookOld := time.Since(began)
		t.Logf("%s (%s): passed %v, %d candidates, %d evaluations, %d inapplicable, %v (fresh copies: %v)\n%s", c.family, in.Task.ID, res.Passed, res.Candidates, res.Evaluations, res.Inapplicable,
			took.Round(time.Millisecond), tookOld.Round(time.Millisecond), strings.Join(res.Evidence, "\n"))
		if !res.Passed {
			t.Errorf("%s: the mutation check failed", c.family)
		}
		if !reflect.DeepEqual(res, old) {
			a, _ := json.MarshalIndent(old, "", " ")
			b, _ := json.MarshalIndent(res, "", " ")
			t.Errorf("%s: results differ:\nfresh copies: %s\none copy: %s", c.family, a, b)
		}
	}
}

// BenchmarkMutate times the mutation check of each synthesized task, with
// every mutation on a fresh copy of W_ref and every criterion computed
// (fresh) and on one working copy with only the criteria that can read
// the mutated thing computed (one-copy), side by side; and, per task, the
// parts of an evaluation: copying W_ref, computing its declarative
// criteria, running its scripts in the sandbox.
//
//	go test -run XXX -bench Mutate -benchtime 3x ./internal/mutate/
func BenchmarkMutate(b *testing.B) {
	ctx := context.Background()
	for _, c := range synthesize(b) {
		for _, path := range []struct {
			name  string
			check func(context.Context, mutate.Input) (*mutate.Result, error)
		}{{"fresh", mutate.CheckFresh}, {"one-copy", mutate.Check}} {
			b.Run(c.family+"/"+path.name, func(b *testing.B) {
				evals := 0
				for b.Loop() {
					in := c.in
					in.Scratch = c.scratch
					res, err := path.check(ctx, in)
					if err != nil {
						b.Fatal(err)
					}
					evals += res.Evaluations
				}
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N), "ms/task")
				b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(evals), "ms/eval")
				b.ReportMetric(float64(evals)/float64(b.N), "evals")
			})
		}
		b.Run(c.family+"/part=copy", func(b *testing.B) {
			for b.Loop() {
				dst := filepath.Join(c.scratch, "bench-copy")
				if err := mutate.CloneWorld(ctx, c.in.Solved, dst); err != nil {
					b.Fatal(err)
				}
				os.RemoveAll(dst)
			}
		})
		for _, part := range []struct {
			name   string
			script bool
		}{{"declarative", false}, {"scripts", true}} {
			t := *c.in.Task
			t.Verifier.Criteria = nil
			for _, cr := range c.in.Task.Verifier.Criteria {
				if (cr.Kind == task.KindScript) == part.script {
					t.Verifier.Criteria = append(t.Verifier.Criteria, cr)
				}
			}
			if len(t.Verifier.Criteria) == 0 {
				continue
			}
			b.Run(fmt.Sprintf("%s/part=%s(%d)", c.family, part.name, len(t.Verifier.Criteria)), func(b *testing.B) {
				os.MkdirAll(c.scratch, 0o755)
				for b.Loop() {
					if _, err := verify.Verify(ctx, &t, verify.Input{Initial: c.in.Initial, Final: c.in.Solved, Answer: t.Answer, Catalog: c.in.Catalog,
						VerifierDir: c.in.VerifierDir, Runner: c.in.Runner, Scratch: c.scratch}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
