// Package casestudytest prepares the paper's case study for the tests of
// the packages that run live instances of it (the runtime, health, load,
// the attack suite, the rollouts, the gater): a world run with the
// case-study persona's world (synth.Run.CaseStudy), the case-study
// family's task written and self-checked on its last day, and a rollout
// environment whose websites a Chromium of its own drives, started on
// first use.
package casestudytest

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/taskgen"
	"github.com/wildawm/wildawm/internal/world"
)

// Fixture is the prepared case study.
type Fixture struct {
	// Dir is the world run (what --dir names): its store, catalog,
	// personas and tasks.
	Dir   string
	Src   *taskgen.Source
	Store *store.Store
	// Env runs rollouts on the case study's worlds; its instances go
	// under RunDir.
	Env    *rollout.Env
	RunDir string
	Task   *task.Task
	// TaskDir is the task's directory (task.json, verifier/, sketch.json,
	// check.json); VerifierDir its verifier.
	TaskDir, VerifierDir string
	// Reference is W_ref: W0 after the reference completion (the
	// self-check's final world).
	Reference world.ID

	browserMu sync.Mutex
	browser   *browser.Browser
	closeSrc  func()
	root      string
}

// W0 is the task's initial snapshot.
func (f *Fixture) W0() world.ID { return f.Task.Provenance.Snapshot }

// New prepares the case study (a few seconds); it skips when instances
// cannot run here. runDir holds the instances and the snapshot cache
// ("": a directory of the fixture's own); every directory above it must
// be searchable by the sandbox's unprivileged uids. Call Close when done
// (t.Cleanup, or TestMain when a package shares one).
func New(t testing.TB, runDir string) *Fixture {
	t.Helper()
	runtime.SkipUnlessInstancesRun(t)
	ctx := context.Background()
	root, err := os.MkdirTemp("", "wildawm-casestudy-") // the sandbox uid reads worlds here
	if err != nil {
		t.Fatal(err)
	}
	f := &Fixture{Dir: filepath.Join(root, "run"), root: root, RunDir: runDir}
	if f.RunDir == "" {
		f.RunDir = filepath.Join(root, "work")
	}
	for _, d := range []string{root, f.RunDir, filepath.Join(f.RunDir, "cache")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		os.Chmod(d, 0o755)
	}
	src, st, closeSrc, err := taskgen.CaseStudySource(ctx, f.Dir, filepath.Join(f.RunDir, "cache"), nil)
	if err != nil {
		os.RemoveAll(root)
		t.Fatal(err)
	}
	f.Src, f.Store, f.closeSrc = src, src.Run.Store, closeSrc
	f.Env = &rollout.Env{Store: src.Run.Store, Materializer: src.Materializer, CatalogDir: src.CatalogDir, WorkDir: f.RunDir,
		Self: st.Persona.Name, Services: src.Run.Defs.Library, NewBrowser: f.newTab}
	if f.TaskDir, err = taskgen.AuthorCaseStudy(ctx, src, st, filepath.Join(f.Dir, "tasks"), f.Env); err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.VerifierDir = filepath.Join(f.TaskDir, "verifier")
	if f.Task, err = task.Load(f.TaskDir); err != nil {
		f.Close()
		t.Fatal(err)
	}
	c, err := readCheck(f.TaskDir)
	if err != nil {
		f.Close()
		t.Fatal(err)
	}
	f.Reference = c.Final
	return f
}

func readCheck(dir string) (*taskgen.Check, error) {
	b, err := os.ReadFile(filepath.Join(dir, taskgen.CheckFile))
	if err != nil {
		return nil, err
	}
	var c taskgen.Check
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	if !c.OK || c.Final.IsZero() {
		return nil, errors.New("casestudytest: the case-study task failed its self-check: " + c.Problem)
	}
	return &c, nil
}

// newTab opens a fresh, isolated tab of the fixture's Chromium, starting
// it on first use (or again, if it died).
func (f *Fixture) newTab(ctx context.Context, origins []string) (rollout.Browser, error) {
	f.browserMu.Lock()
	defer f.browserMu.Unlock()
	if f.browser != nil {
		tab, err := f.browser.Tab(ctx, browser.AllowOrigins(origins...))
		if err == nil {
			return tab, nil
		}
		if ctx.Err() != nil || !errors.Is(err, browser.ErrGone) {
			return nil, err
		}
		// Chromium died: start another.
		f.browser.Close(context.WithoutCancel(ctx))
		f.browser = nil
	}
	b, err := browser.New(context.WithoutCancel(ctx), browser.Options{})
	if err != nil {
		return nil, err
	}
	f.browser = b
	return b.Tab(ctx, browser.AllowOrigins(origins...))
}

// Close stops the fixture's Chromium and removes its files.
func (f *Fixture) Close() {
	f.browserMu.Lock()
	if f.browser != nil {
		f.browser.Close(context.Background())
		f.browser = nil
	}
	f.browserMu.Unlock()
	if f.closeSrc != nil {
		f.closeSrc()
	}
	os.RemoveAll(f.root)
}
