package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/taskgen/casestudytest"
)

// caseStudyManager prepares the case study and a Manager over its store,
// with opts' zero fields filled in (store, materializer, catalog, work
// directory "managed", the persona). The caller closes the Manager.
func caseStudyManager(t testing.TB, opts runtime.ManagerOptions) (*casestudytest.Fixture, *runtime.Manager) {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	p := casestudytest.New(t, "")
	t.Cleanup(p.Close)
	opts.Store = p.Store
	opts.Materializer = &reset.Materializer{Store: p.Store, CacheDir: filepath.Join(p.Env.WorkDir, "cache")}
	opts.CatalogDir, opts.Self = p.Env.CatalogDir, p.Env.Self
	if opts.WorkDir == "" {
		opts.WorkDir = filepath.Join(p.Env.WorkDir, "managed")
	}
	return p, runtime.NewManager(opts)
}

// caseStudyInstance is caseStudyManager with one instance of W0 created
// (its info and the instance); the manager closes when the test ends.
func caseStudyInstance(t testing.TB, opts runtime.ManagerOptions) (*casestudytest.Fixture, *runtime.Manager, runtime.Info, *runtime.Instance) {
	t.Helper()
	ctx := context.Background()
	p, m := caseStudyManager(t, opts)
	t.Cleanup(func() { m.Close(ctx) })
	info, err := m.Create(ctx, p.W0())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := m.Instance(info.ID)
	if err != nil {
		t.Fatal(err)
	}
	return p, m, info, inst
}
