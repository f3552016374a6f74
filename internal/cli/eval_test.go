package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestEvalCommand: `wildawm eval` on a run's val split prints the per-task
// table, pass@k and pass^k and the behaviour measures, says a scripted agent
// is scripted, writes eval.json and resumes from it; bad flags are clear
// errors naming the flag, and an empty split says how to build one.
func TestEvalCommand(t *testing.T) {
	st := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"eval", "-k", "0"}, "-k 0"},
		{[]string{"eval", "--budgets", "40,lots"}, "--budgets"},
		{[]string{"eval", "--split", "test"}, "--split"},
		{[]string{"eval", "--parallel", "0"}, "--parallel"},
		{[]string{"eval", "--agent", "scripted:nosuch"}, "scripted:replay-careful"},
		{[]string{"eval", "--agent", "replay-careful"}, "URL#MODEL"},
		{[]string{"eval", "--agent", "http://127.0.0.1:1/v1#m", "--harness", "claude"}, "--harness"},
		{[]string{"eval", "--dir", filepath.Join(t.TempDir(), "nosuch"), "--fake-browser"}, "--dir"},
	} {
		if _, _, err := run(t, st, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	f := pooltest.New(t, nil)
	defer f.Close()
	f.WritePool(t, nil) // no val split
	if _, _, err := run(t, st, "eval", "--dir", f.Dir, "--fake-browser"); err == nil || !strings.Contains(err.Error(), "val split") || !strings.Contains(err.Error(), "wildawm pool run") {
		t.Fatalf("an empty val split: %v", err)
	}
	f.WritePool(t, func(fam string) string {
		if fam == "model-pick" {
			return pool.SplitRL
		}
		return pool.SplitVal
	})
	// The sandbox's uids must reach the instances under --out.
	if _, _, err := run(t, st, "eval", "--dir", f.Dir, "--fake-browser", "--out", filepath.Join(t.TempDir(), "eval")); err == nil || !strings.Contains(err.Error(), "--out") {
		t.Fatalf("an --out the sandbox cannot reach: %v", err)
	}
	root, err := os.MkdirTemp("", "wildawm-evaltest-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o755)
	out := filepath.Join(root, "eval")
	args := []string{"eval", "--dir", f.Dir, "--split", "val", "--agent", "scripted:replay-oracle", "-k", "3", "--parallel", "2", "--fake-browser", "--out", out}
	stdout := mustRun(t, st, args...)
	for _, want := range []string{
		"agent scripted:replay-oracle (a scripted policy, not a model)", "2 tasks x 3 rollouts",
		"pass@k   k=1 1.000  k=2 1.000  k=3 1.000", "pass^k   k=1 1.000  k=2 1.000  k=3 1.000",
		"all rollouts passed (observed pass^3): 1.000 (2 tasks)", "interfaces per episode", "interface-switch rate", "GUI share",
		"solved within 40 steps", "solved within 120 steps", "no model turns", f.Tasks["wishlist-balance"].ID, f.Tasks["cafe-near-venue"].ID,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, stdout)
		}
	}
	if strings.Contains(stdout, f.Tasks["model-pick"].ID) {
		t.Errorf("a task of the rl split was evaluated:\n%s", stdout)
	}
	var b []byte
	var rep struct {
		Agent    string `json:"agent"`
		Scripted bool   `json:"scripted"`
		Rollouts []struct {
			Task string `json:"task"`
		} `json:"rollouts"`
	}
	b, err = os.ReadFile(filepath.Join(out, "eval.json"))
	if err != nil || json.Unmarshal(b, &rep) != nil || len(rep.Rollouts) != 6 || !rep.Scripted {
		t.Fatalf("eval.json: %v %+v", err, rep)
	}
	// A rerun resumes: nothing left to run, the same figures.
	_, stderr, err := run(t, st, args...)
	if err != nil || !strings.Contains(stderr, "0 to run, 6 kept") {
		t.Fatalf("rerun: %v\n%s", err, stderr)
	}
	// A model server that is down: the rollouts fail on the
	// infrastructure, are left out of the rates, and the command says so
	// and fails (it once exited 0); back up, the same command runs them.
	var down atomic.Bool
	down.Store(true)
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		if down.Load() {
			return fake.Turn{Status: 502, Error: "upstream connect error"}
		}
		return fake.Turn{Content: "I could not finish this task."}
	})
	modelArgs := []string{"eval", "--dir", f.Dir, "--split", "val", "--agent", srv.URL() + "#" + fake.DefaultModel, "-k", "1", "--fake-browser",
		"--out", filepath.Join(root, "model"), "--model-retries", "0", "--model-backoff", "1ms"}
	stdout, stderr, err = run(t, st, modelArgs...)
	if err == nil || !strings.Contains(err.Error(), "2 of 2 rollouts failed on the infrastructure") || !strings.Contains(err.Error(), "HTTP 502") || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("eval with the model server down: %v\n%s", err, stderr)
	}
	down.Store(false)
	if _, stderr, err = run(t, st, modelArgs...); err != nil || !strings.Contains(stderr, "2 to run, 0 kept") {
		t.Fatalf("eval with the server back: %v\n%s", err, stderr)
	}
	// The default agent is scripted too, and says so.
	stdout = mustRun(t, st, "eval", "--dir", f.Dir, "-k", "2", "--fake-browser", "--out", filepath.Join(root, "careful"))
	t.Log(stdout)
	if !strings.Contains(stdout, "agent scripted:replay-careful (a scripted policy, not a model)") || !strings.Contains(stdout, "pass^k") {
		t.Errorf("default agent:\n%s", stdout)
	}
}
