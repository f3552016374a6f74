package synth

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/validate"
)

// OpenOptions configure Open.
type OpenOptions struct {
	// Dir holds the run's artifacts, store, library and catalog.
	Dir  string
	Seed uint64
	// RunDir holds the instances live health boots; "" skips live health
	// (layer 4 is then recorded as skipped).
	RunDir string
	// Backend, when nil, is the procedural backend.
	Backend func(pl *Planner) Backend
	Log     *slog.Logger
	// Progress is told about long set-up steps (the catalog).
	Progress func(format string, args ...any)
	// UIDs is the process's sandbox uid allocator, which live health's
	// instances draw from; nil is one of the run's own.
	UIDs *sandbox.UIDs
}

// Open prepares a run in o.Dir: the catalog (built once), the snapshot
// store, the shared definitions library, the skill library, the grounding
// and the five-layer checker. close releases them.
func Open(ctx context.Context, o OpenOptions) (r *Run, close func(), err error) {
	progress := o.Progress
	if progress == nil {
		progress = func(string, ...any) {}
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, nil, err
	}
	// Days are checked from several goroutines: every service's SQL
	// functions must be registered before the first of them opens a
	// database.
	service.CompileAll()
	gens := generator.Default()
	catDir := filepath.Join(o.Dir, "catalog")
	if _, err := os.Stat(filepath.Join(catDir, "manifest.json")); err != nil {
		// Built aside and renamed, so an interrupted build leaves no
		// catalog that a later run would take for a whole one.
		progress("building the catalog in %s", catDir)
		tmp := catDir + ".new"
		if err := os.RemoveAll(tmp); err != nil {
			return nil, nil, err
		}
		if _, err := catalog.Build(ctx, tmp, gens, catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
			os.RemoveAll(tmp)
			return nil, nil, fmt.Errorf("synth: catalog: %w", err)
		}
		if err := os.Rename(tmp, catDir); err != nil {
			return nil, nil, fmt.Errorf("synth: catalog: %w (remove %s and run again)", err, catDir)
		}
	}
	sum, err := state.Summarize(ctx, catDir)
	if err != nil {
		return nil, nil, err
	}
	cat, err := skill.OpenCatalog(catDir)
	if err != nil {
		return nil, nil, err
	}
	storeDir := filepath.Join(o.Dir, "store")
	var st *store.Store
	if _, err = os.Stat(filepath.Join(storeDir, "config.json")); err == nil {
		st, err = store.Open(storeDir)
	} else {
		st, err = store.Init(storeDir)
	}
	if err != nil {
		cat.Close()
		return nil, nil, err
	}
	closeAll := func() { st.Close(); cat.Close() }
	defs, err := OpenLibrary(filepath.Join(o.Dir, "library"))
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	g, err := grounding(cat, defs)
	if err != nil {
		closeAll()
		return nil, nil, err
	}
	lib := skill.All()
	pl := &Planner{Skills: lib, Catalog: cat, Definitions: defs}
	var backend Backend = &Procedural{Planner: pl}
	if o.Backend != nil {
		backend = o.Backend(pl)
	}
	chk := &validate.Checker{Generators: gens, Store: st, Skills: lib, Catalog: cat}
	if l, ok := backend.(*LLM); ok {
		chk.Reviewer = l.Reviewer()
	}
	if o.RunDir != "" {
		if err := os.MkdirAll(o.RunDir, 0o755); err != nil {
			closeAll()
			return nil, nil, err
		}
		if err := os.Chmod(o.RunDir, 0o755); err != nil {
			closeAll()
			return nil, nil, err
		}
		uids := o.UIDs
		if uids == nil {
			uids = &sandbox.UIDs{}
		}
		var n atomic.Int64
		chk.Env = func(p *persona.Persona) (*rollout.Env, func()) {
			k := n.Add(1)
			dir := filepath.Join(o.RunDir, fmt.Sprintf("h%d", k))
			env := &rollout.Env{Store: st, Materializer: &reset.Materializer{Store: st, CacheDir: filepath.Join(dir, "cache")},
				CatalogDir: catDir, WorkDir: dir, Self: p.Name, Services: defs.Library, UIDs: uids}
			return env, func() { os.RemoveAll(dir) }
		}
	}
	r = &Run{Dir: o.Dir, planner: pl, Store: st, Backend: backend, Checker: chk, Grounding: g, Defs: defs, CatalogID: sum.Hash, Seed: o.Seed, Log: o.Log}
	return r, closeAll, nil
}

// grounding reads the catalog's entities and the registries' names.
func grounding(cat *skill.Catalog, defs Definitions) (*persona.Grounding, error) {
	list := func(q string) ([]string, error) {
		rows, err := cat.Rows(q)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, r := range rows {
			out = append(out, skill.Str(r[0]))
		}
		return out, nil
	}
	g := &persona.Grounding{}
	var err error
	for _, f := range []struct {
		dst *[]string
		q   string
	}{
		{&g.Cities, `SELECT name FROM cities ORDER BY name`},
		{&g.Cuisines, `SELECT DISTINCT cuisine FROM recipes ORDER BY 1`},
		{&g.Teams, `SELECT name FROM teams ORDER BY name`},
		{&g.Subjects, `SELECT DISTINCT subject FROM courses ORDER BY 1`},
		{&g.Languages, `SELECT DISTINCT language FROM repositories ORDER BY 1`},
		{&g.Categories, `SELECT DISTINCT category FROM products WHERE site = 'shop' ORDER BY 1`},
	} {
		if *f.dst, err = list(f.q); err != nil {
			return nil, err
		}
	}
	for _, s := range site.All() {
		g.Sites = append(g.Sites, s.Name)
	}
	for _, s := range service.All() {
		g.Services = append(g.Services, s.Name)
	}
	g.Definitions = defs.Names()
	return g, nil
}
