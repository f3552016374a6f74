package runtime_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/pipeline"
	"github.com/wildawm/wildawm/internal/reset"
	"github.com/wildawm/wildawm/internal/runtime"
)

// caseStudyManager prepares the case study and a Manager over its store,
// with opts' zero fields filled in (store, materializer, catalog, work
// directory "managed", the persona). The caller closes the Manager.
func caseStudyManager(t testing.TB, opts runtime.ManagerOptions) (*pipeline.Prepared, *runtime.Manager) {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	p, err := pipeline.Prepare(context.Background(), pipeline.Options{Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	opts.Store = p.Store
	opts.Materializer = &reset.Materializer{Store: p.Store, CacheDir: filepath.Join(p.Env.WorkDir, "cache")}
	opts.CatalogDir, opts.Self = p.Env.CatalogDir, p.Env.Self
	if opts.WorkDir == "" {
		opts.WorkDir = filepath.Join(p.Env.WorkDir, "managed")
	}
	return p, runtime.NewManager(opts)
}
