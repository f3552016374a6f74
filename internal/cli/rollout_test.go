package cli

import (
	"os"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/runtime"
)

// TestRolloutCommand: `rollout --model` runs a model through the harness on
// the case study and saves a trajectory that names the model, with the
// failure class of an agent that did not do the task; bad flags are clear
// errors before any work.
func TestRolloutCommand(t *testing.T) {
	if _, _, err := run(t, t.TempDir(), "rollout", "--policy", "nosuch"); err == nil || !strings.Contains(err.Error(), "replay-careful") {
		t.Fatalf("unknown policy: %v", err)
	}
	if _, _, err := run(t, t.TempDir(), "rollout", "--model", "http://127.0.0.1:1/v1#m", "--harness", "claude"); err == nil || !strings.Contains(err.Error(), "opencode") {
		t.Fatalf("unknown harness: %v", err)
	}
	if _, _, err := run(t, t.TempDir(), "rollout", "--model", "http://127.0.0.1:1/v1#m", "--harness", "opencode", "--token-ids"); err == nil || !strings.Contains(err.Error(), "--harness wildawm") {
		t.Errorf("--token-ids under opencode: %v", err)
	}
	if _, _, err := run(t, t.TempDir(), "rollout", "--model", "no-model-here"); err == nil || !strings.Contains(err.Error(), "--model") {
		t.Fatalf("a bad model spec: %v", err)
	}
	badDir := t.TempDir()
	if _, _, err := run(t, t.TempDir(), "rollout", "--dir", badDir, "--id", "../../escape"); err == nil || !strings.Contains(err.Error(), `--id: "../../escape" is not a valid name`) {
		t.Fatalf("an id that is a path: %v", err)
	}
	if entries, _ := os.ReadDir(badDir); len(entries) != 0 {
		t.Fatalf("the refused rollout wrote %d entries into --dir", len(entries))
	}
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, "chromium is not installed (wildawm setup installs it): "+err.Error())
	}
	runtime.SkipUnlessInstancesRun(t)
	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{{ID: "a", Name: "shell", Arguments: `{"command":"ls notes"}`}}},
		fake.Turn{Content: "I could not find what to order."})
	dir := t.TempDir()
	out := mustRun(t, t.TempDir(), "rollout", "--dir", dir, "--model", srv.URL()+"#"+fake.DefaultModel, "--id", "m1")
	if !strings.Contains(out, "outcome done") || !strings.Contains(out, "V FAILED") || !strings.Contains(out, "failure: agent") {
		t.Fatalf("output: %s", out)
	}
	tr, err := agent.LoadTrajectory(dir + "/rollouts/m1.json")
	if err != nil {
		t.Fatal(err)
	}
	if tr.Policy != "model:"+fake.DefaultModel || tr.Harness != agent.HarnessName || len(tr.Turns) != 2 || tr.Failure != agent.FailAgent || tr.Steps[0].Interface != agent.CLI {
		t.Fatalf("trajectory: policy %s harness %s turns %d failure %s", tr.Policy, tr.Harness, len(tr.Turns), tr.Failure)
	}
}

// TestVerifyCommand: verify runs a task's verifier on two stored states,
// prints every criterion and fails when V is 0; an unknown snapshot is an
// error naming the flag.
func TestVerifyCommand(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t) // the script criterion runs in the sandbox
	tmp := t.TempDir()
	st := tmp + "/store"
	day0 := strings.TrimSpace(mustRun(t, st, "delta", "apply", "empty", testdata+"day0.json"))
	out, _, err := run(t, st, "verify", "--task", "../task/testdata/example", "--w0", day0[:12], "--w", day0[:12], "--answer", "nothing")
	if err == nil || !strings.Contains(err.Error(), "V = 0") || !strings.Contains(out, `"id": "ledger-entry"`) || !strings.Contains(out, `"id": "totals-agree"`) {
		t.Fatalf("verify on day 0: err %v, out %s", err, out)
	}
	if _, _, err := run(t, st, "verify", "--task", "../task/testdata/example", "--w", "ffff"); err == nil || !strings.Contains(err.Error(), "--w") {
		t.Fatalf("an unknown snapshot: %v", err)
	}
	if _, _, err := run(t, st, "verify", "--task", "../task/testdata/example"); err == nil || !strings.Contains(err.Error(), "--w") {
		t.Fatalf("no --w: %v", err)
	}
}
