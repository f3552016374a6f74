package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/runtime"
)

// TestRelativePaths: the documented pipeline runs from a working
// directory with relative --dir and --store (a relative path once made a
// file URI whose authority was the directory: "invalid uri authority"),
// and the run's store is found with --dir alone.
func TestRelativePaths(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	// Below the system temporary directory, searchable: the sandbox uids
	// reach the instances under it.
	root, err := os.MkdirTemp("", "wildawm-relative-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o755)
	t.Chdir(root)
	const st = "unused-store" // relative too; the run's own store is w/store
	_, stderr, err := run(t, st, "syn", "worlds", "--dir", "w", "--personas", "1", "--days", "3")
	if err != nil {
		t.Fatalf("syn worlds: %v\n%s", err, stderr)
	}
	// A long command ends naming its output and the next command; its
	// progress has the time left.
	if !strings.Contains(stderr, "output: w (") || !strings.Contains(stderr, "next: wildawm pool run --dir w") || !strings.Contains(stderr, "states/s, ETA ") {
		t.Errorf("syn worlds ends without its output, the next command or an ETA:\n%s", stderr)
	}
	out := mustRun(t, st, "syn", "tasks", "--dir", "w", "--days", "2", "--families", "wishlist-balance,cafe-near-venue")
	if !strings.Contains(out, filepath.Join("w", "tasks")+string(filepath.Separator)) {
		t.Fatalf("syn tasks wrote no task under w/tasks:\n%s", out)
	}
	// A copy of the run, gated with a model judge that reads V's verdict
	// blind and takes the framing under pressure (a judge built to cave):
	// the full probe runs and rejects every task it judged.
	if err := os.CopyFS("w2", os.DirFS("w")); err != nil {
		t.Fatal(err)
	}
	_, stderr, err = run(t, st, "pool", "run", "--dir", "w", "--days", "2", "--families", "wishlist-balance,cafe-near-venue", "--fake-browser")
	if err != nil {
		t.Fatalf("pool run: %v\n%s", err, stderr)
	}
	caving := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		verdict := func(v string) fake.Turn {
			return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "v", Name: "verdict", Arguments: `{"verdict":"` + v + `","reason":"as I was told"}`}}}
		}
		all := ""
		for _, m := range r.Messages {
			all += m.Content
		}
		switch {
		case strings.Contains(all, gate.PressureCompleted):
			return verdict("completed")
		case strings.Contains(all, gate.PressureFailed):
			return verdict("failed")
		case strings.Contains(all, "Programmatic verifier: V=1"):
			return verdict("completed")
		}
		return verdict("failed")
	})
	_, cavedErr, err := run(t, st, "pool", "run", "--dir", "w2", "--days", "2", "--families", "wishlist-balance,cafe-near-venue", "--fake-browser", "--judge-model", caving.URL()+"#"+fake.DefaultModel)
	if err != nil {
		t.Fatalf("pool run --judge-model: %v\n%s", err, cavedErr)
	}
	caved, _, err := pool.Outcomes(filepath.Join("w2", "tasks"))
	if err != nil || len(caved) == 0 {
		t.Fatalf("pool run --judge-model gated nothing: %v\n%s", err, cavedErr)
	}
	for _, o := range caved {
		g, ok := o.Report.Gate(gate.GateCounterfactualProbe)
		if !ok || g.Passed || g.Verdict != gate.OutcomeCaved || o.Accepted {
			t.Errorf("task %s with a caving model judge: accepted %t, probe %+v; want rejected, caved", o.TaskID, o.Accepted, g)
		}
	}
	if !strings.Contains(stderr, "output: "+filepath.Join("w", pool.File)) || !strings.Contains(stderr, "next: wildawm eval --dir w") || !strings.Contains(stderr, "cache: "+filepath.Join("w", "cache")+" holds") {
		t.Errorf("pool run ends without its output, the next command or the cache it keeps:\n%s", stderr)
	}
	outs, _, err := pool.Outcomes(filepath.Join("w", "tasks"))
	if err != nil || len(outs) == 0 {
		t.Fatalf("pool run gated nothing under w/tasks: %v\n%s", err, stderr)
	}
	if _, err := os.Stat(filepath.Join("w", pool.File)); err != nil {
		t.Errorf("pool run wrote no pool index: %v", err)
	}
	// The run's store through --dir (no --store: the default store is
	// elsewhere), and through a relative --store.
	t.Setenv("WILDAWM_STORE", "default-store")
	noStore := func(args ...string) string {
		t.Helper()
		var out, errb bytes.Buffer
		if err := Run(context.Background(), args, &out, &errb); err != nil {
			t.Fatalf("wildawm %s: %v\n%s", strings.Join(args, " "), err, errb.String())
		}
		return out.String()
	}
	log := noStore("world", "log", "--dir", "w")
	if n := len(strings.Split(strings.TrimSpace(log), "\n")); n < 3 {
		t.Fatalf("world log --dir w lists %d snapshots, want the 3 days and more:\n%s", n, log)
	}
	id := strings.Fields(log)[0]
	noStore("world", "checkout", "--dir", "w", id, "co")
	if _, err := os.Stat(filepath.Join("co", "manifest.json")); err != nil {
		t.Errorf("world checkout --dir w: %v", err)
	}
	if out := mustRun(t, filepath.Join("w", "store"), "store", "check", "--no-restore"); !strings.Contains(out, "no errors") {
		t.Errorf("store check of a relative --store:\n%s", out)
	}
	task := filepath.Join("w", "tasks", outs[0].TaskID)
	if out := noStore("verify", "--dir", "w", "--task", task, "--regrade"); !strings.Contains(out, "stored rollouts change verdict") {
		t.Errorf("verify --regrade --dir w:\n%s", out)
	}
}
