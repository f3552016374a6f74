package skill_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
)

var (
	catOnce sync.Once
	catDir  string
	catErr  error
)

// testCatalog builds the full catalog once for the package's tests.
func testCatalog(t *testing.T) (string, *skill.Catalog) {
	t.Helper()
	catOnce.Do(func() {
		dir, err := os.MkdirTemp("", "wildawm-skill-catalog-")
		if err != nil {
			catErr = err
			return
		}
		catDir = filepath.Join(dir, "catalog")
		_, catErr = catalog.Build(context.Background(), catDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed})
	})
	if catErr != nil {
		t.Fatal(catErr)
	}
	c, err := skill.OpenCatalog(catDir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return catDir, c
}

type suiteWorld struct {
	lib  *skill.Library
	cat  *skill.Catalog
	opts *delta.Options
	b    *skill.Builder
	defs map[string]skill.Definition
	dir  string // the world after the last applied day
	day  int
}

// apply lints, applies and produces-checks the builder's day over w.dir.
func (w *suiteWorld) apply(t *testing.T, d *delta.Delta, dst string) {
	t.Helper()
	ctx := context.Background()
	if err := delta.Lint(ctx, w.dir, d, w.opts); err != nil {
		t.Fatalf("day %d: lint: %v", d.Day, err)
	}
	if err := delta.ApplyCopy(ctx, w.dir, dst, d, w.opts); err != nil {
		t.Fatalf("day %d: apply: %v", d.Day, err)
	}
	issues, err := delta.CheckProduces(ctx, w.dir, dst, &d.Produces)
	if err != nil || len(issues) > 0 {
		t.Fatalf("day %d: produces: %v %v", d.Day, err, issues)
	}
}

func draw(w *suiteWorld, day int, seed uint64, st *skill.State) *skill.Draw {
	return &skill.Draw{Persona: w.b.Persona, Day: day, Rand: rand.New(rand.NewPCG(seed, uint64(day))), Catalog: w.cat, State: st, Definitions: w.defs}
}

// testDefinitions are the service definitions of internal/service/testdata.
func testDefinitions(t *testing.T) (*service.Library, map[string]skill.Definition) {
	dir, err := filepath.Abs("../service/testdata/defs")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.yaml"))
	defs := map[string]skill.Definition{}
	for _, f := range files {
		ref, err := service.Ref(f)
		if err != nil {
			t.Fatal(err)
		}
		defs[ref.Name] = skill.Definition{Ref: ref, Path: f}
	}
	if len(defs) < 3 {
		t.Fatalf("%s holds %d definitions, want the three shipped ones", dir, len(defs))
	}
	return &service.Library{Dir: dir}, defs
}

// TestSuite runs every skill of the library through the shared suite: its
// text form is complete, its example decodes, bad parameters are refused
// naming the field, and a proposable skill's event (drawn twice alike from
// one seed) lints, applies, passes the produces check and its review, and
// its review rejects the world from before the event.
func TestSuite(t *testing.T) {
	catDirPath, cat := testCatalog(t)
	lib := skill.All()
	if n := len(lib.Names()); n < 40 {
		t.Errorf("the library has %d skills; the issue asks for at least 40", n)
	}
	ctx := context.Background()
	sum, err := state.Summarize(ctx, catDirPath)
	if err != nil {
		t.Fatal(err)
	}
	p := skill.TestPersona()
	deflib, defs := testDefinitions(t)
	for _, name := range []string{"habits", "budget"} {
		if _, ok := defs[name]; ok {
			p.Services = append(p.Services, name)
		}
	}
	w := &suiteWorld{lib: lib, cat: cat, opts: &delta.Options{Generators: generator.Default()}, b: skill.NewBuilder(p), defs: defs}
	w.b.Definitions = deflib
	root := t.TempDir()

	// Day 0: every database and account.
	w.b.Begin(0, skill.Clock(0))
	w.b.SetCatalog(sum.Hash)
	for _, ev := range skill.Bootstrap(p) {
		sk, err := lib.Lookup(ev.Skill)
		if err != nil {
			t.Fatal(err)
		}
		if err := sk.Emit(w.b, ev.Params); err != nil {
			t.Fatalf("bootstrap %s: %v", ev.Skill, err)
		}
	}
	// Every shipped definition is served from day 0, so that the skills of
	// each (habit_check_in, budget_entry) have their service.
	for _, name := range []string{"habits", "budget"} {
		sk, _ := lib.Lookup("define_service")
		if err := sk.Emit(w.b, json.RawMessage(fmt.Sprintf(`{"name":%q,"sha256":%q}`, name, defs[name].Ref.SHA256))); err != nil {
			t.Fatalf("define %s: %v", name, err)
		}
	}
	day0 := filepath.Join(root, "day-00")
	w.apply(t, w.b.Delta(), day0)
	w.dir = day0

	// Day 1: every proposable skill once, so that day 2's continuations
	// find what they continue.
	w.b.Begin(1, skill.Clock(1))
	var day1 []skill.Event
	for i, name := range lib.Names() {
		sk, _ := lib.Lookup(name)
		if !sk.Proposable() {
			continue
		}
		params, err := sk.Propose(draw(w, 1, uint64(i), w.b.State))
		if errors.Is(err, skill.ErrSkip) {
			continue
		}
		if err != nil {
			t.Fatalf("day 1: %v", err)
		}
		if err := sk.Emit(w.b, params); err != nil {
			t.Fatalf("day 1: %s %s: %v", name, params, err)
		}
		day1 = append(day1, skill.Event{Skill: name, Params: params})
	}
	day1Dir := filepath.Join(root, "day-01")
	w.apply(t, w.b.Delta(), day1Dir)
	w.dir = day1Dir
	check := skill.NewCheck(day1Dir, p, cat)
	defer check.Close()
	for _, ev := range day1 {
		sk, _ := lib.Lookup(ev.Skill)
		if problems := sk.Review(check, ev.Params); len(problems) > 0 {
			t.Errorf("day 1: review of %s: %v", ev.Skill, problems)
		}
	}
	base := w.b.State.Clone()

	for i, name := range lib.Names() {
		sk, _ := lib.Lookup(name)
		t.Run(name, func(t *testing.T) {
			doc := sk.Doc
			if doc.Summary == "" || len(doc.Interfaces) == 0 || len(doc.Changes) == 0 || len(doc.Constraints) == 0 {
				t.Errorf("doc incomplete: summary, interfaces, changes and constraints are required: %+v", doc)
			}
			for _, in := range doc.Interfaces {
				if in != skill.GUI && in != skill.MCP && in != skill.CLI {
					t.Errorf("interface %q is not gui, mcp or cli", in)
				}
			}
			if len(doc.Example) > 0 {
				if _, err := sk.Decode(doc.Example); err != nil {
					t.Errorf("example %s: %v", doc.Example, err)
				}
			}
			if _, err := sk.Decode(json.RawMessage(`{"no_such_field": 1}`)); err == nil || !strings.Contains(err.Error(), "no_such_field") {
				t.Errorf("unknown field: got %v, want an error naming no_such_field", err)
			}
			if _, err := sk.Decode(json.RawMessage(`[1, 2]`)); err == nil {
				t.Errorf("an array for the parameters object was accepted")
			}
			if !sk.Proposable() || doc.Setup {
				return
			}
			// Day 2 alone with this skill, over day 1.
			b := skill.NewBuilder(p)
			b.Definitions = deflib
			b.State = base.Clone()
			b.Begin(2, skill.Clock(2))
			seed := uint64(1000 + i)
			params, err := sk.Propose(draw(w, 2, seed, b.State))
			if errors.Is(err, skill.ErrSkip) {
				t.Fatalf("proposes nothing on day 2 of the suite world (every site, service and account, and one event of every skill on day 1)")
			}
			if err != nil {
				t.Fatal(err)
			}
			again, err := sk.Propose(draw(w, 2, seed, base.Clone()))
			if err != nil || string(again) != string(params) {
				t.Errorf("not deterministic: %s then %s (%v)", params, again, err)
			}
			if err := sk.Emit(b, params); err != nil {
				t.Fatalf("emit %s: %v", params, err)
			}
			if len(b.Delta().Ops) == 0 {
				t.Fatalf("emit %s: no operations", params)
			}
			dst := filepath.Join(root, fmt.Sprintf("day-02-%s", name))
			w.apply(t, b.Delta(), dst)
			after := skill.NewCheck(dst, p, cat)
			defer after.Close()
			if problems := sk.Review(after, params); len(problems) > 0 {
				t.Errorf("review after the event: %v", problems)
			}
			if problems := sk.Review(check, params); len(problems) == 0 && hasReview(sk, after, params) {
				t.Errorf("review passes on the world from before the event %s: it cannot reject", params)
			}
		})
	}
}

// hasReview reports whether the skill reviews at all (its review of a
// world without its databases finds problems).
func hasReview(sk *skill.Skill, c *skill.Check, params json.RawMessage) bool {
	empty := skill.NewCheck(os.DevNull, c.Persona, c.Catalog)
	defer empty.Close()
	return len(sk.Review(empty, params)) > 0
}
