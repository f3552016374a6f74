package modelpaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestModelPathPoolRun: `pool run --ensemble-model --judge-model` through
// to the pool and its Table 4 (stats tasks) against one flaky server: with
// --model-retries 2 the gated outcomes and the table are the healthy
// server's, and no task is rejected for infrastructure.
func TestModelPathPoolRun(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	st := t.TempDir()
	runPool := func(name string, fl *flaky) (table string, outcomes string) {
		dir := filepath.Join(filepath.Dir(f.Dir), name)
		if err := os.CopyFS(dir, os.DirFS(f.Dir)); err != nil {
			t.Fatal(err)
		}
		_, spec := fl.server(t)
		_, stderr, err := run(t, st, "pool", "run", "--dir", dir, "--families", "model-pick", "--last", "1", "--fake-browser", "--max-revisions", "0",
			"--ensemble-model", spec, "--judge-model", spec, "--model-retries", "2", "--model-backoff", "1ms")
		if err != nil {
			t.Fatalf("%s: pool run: %v\n%s", name, err, stderr)
		}
		if _, err := os.Stat(filepath.Join(dir, pool.File)); err != nil {
			t.Fatalf("%s: no pool: %v", name, err)
		}
		table = mustRun(t, st, "stats", "tasks", "--dir", dir)
		paths, _ := filepath.Glob(filepath.Join(dir, "tasks", "*", pool.OutcomeFile))
		if len(paths) == 0 {
			t.Fatalf("%s: no outcome", name)
		}
		var b strings.Builder
		for _, p := range paths {
			o, prod := gateProduct(t, filepath.Dir(filepath.Dir(p)))
			if len(o.InfraRejected()) > 0 {
				t.Errorf("%s: task %s rejected for infrastructure: %v", name, o.TaskID, o.InfraRejected())
			}
			b.WriteString(prod)
		}
		return table, b.String()
	}
	healthy := newFlaky(0, giveUp)
	wantTable, want := runPool("healthy", healthy)
	if !strings.Contains(wantTable, "|") {
		t.Fatalf("stats tasks printed no table:\n%s", wantTable)
	}
	fl := newFlaky(flakyEvery, giveUp)
	table, got := runPool("retried", fl)
	if fl.fails.Load() == 0 {
		t.Fatal("the flaky server failed no chat")
	}
	if got != want {
		t.Errorf("gated with %d of %d chats failed and retried:\n%s\nwith a healthy server:\n%s", fl.fails.Load(), fl.calls.Load(), got, want)
	}
	if table != wantTable {
		t.Errorf("Table 4 with a flaky server:\n%s\nwith a healthy one:\n%s", table, wantTable)
	}
}
