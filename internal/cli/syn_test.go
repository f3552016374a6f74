package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/taskgen"
)

// TestSynStages runs the stages one at a time from the command line: a
// persona, its day 0's plan and delta, its world to day 1, the check again
// on day 1, prebake with the rebuild, and the statistics; and refuses bad
// flags naming them.
func TestSynStages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	st := filepath.Join(t.TempDir(), "unused-store")
	out := mustRun(t, st, "syn", "persona", "--dir", dir, "--name", "Robin Vale", "--days", "3")
	var p struct {
		ID   string `json:"id"`
		Days int    `json:"days"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || p.ID != "robin-vale" || p.Days != 3 {
		t.Fatalf("syn persona printed %.300s (%v)", out, err)
	}
	plan := mustRun(t, st, "syn", "dayplan", "--dir", dir, "--persona", p.ID, "--day", "0")
	if !strings.Contains(plan, `"provision_service"`) || !strings.Contains(plan, `"create_web_account"`) {
		t.Errorf("day 0's plan sets nothing up: %.500s", plan)
	}
	d := mustRun(t, st, "syn", "dayimpl", "--dir", dir, "--persona", p.ID, "--day", "0")
	if !strings.Contains(d, `"db.create"`) {
		t.Errorf("day 0's delta creates no database: %.300s", d)
	}
	if _, _, err := run(t, st, "syn", "dayplan", "--dir", dir, "--persona", p.ID, "--day", "2"); err == nil || !strings.Contains(err.Error(), "syn world --persona robin-vale --to-day 1") {
		t.Errorf("planning day 2 before day 1: %v", err)
	}
	mustRun(t, st, "syn", "world", "--dir", dir, "--persona", p.ID, "--to-day", "1", "--no-health")
	for _, f := range []string{"plan.json", "delta.json", "report.json", "state.json", "done.json"} {
		if _, err := os.Stat(filepath.Join(dir, "personas", p.ID, "day-01", f)); err != nil {
			t.Errorf("day 1: %v", err)
		}
	}
	// Without live health the check is not complete, and says so.
	out, _, err := run(t, st, "world", "validate", "--dir", dir, "--persona", p.ID, "--day", "1", "--no-health")
	if err == nil || !strings.Contains(err.Error(), "not every layer ran") || !strings.Contains(out, "health   skipped") {
		t.Errorf("validate without health: %v\n%s", err, out)
	}
	out = mustRun(t, st, "syn", "prebake", "--dir", dir, "--persona", p.ID, "--to-day", "2", "--verify-rebake", "--no-health")
	if strings.Count(out, ": equal") != 3 {
		t.Errorf("prebake:\n%s", out)
	}
	// Task synthesis over the run: it runs (whether or not a family finds
	// a task in three days of one persona), and bad flags are clear.
	_, stderr, err := run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2")
	if err != nil || !strings.Contains(stderr, "tasks written") {
		t.Errorf("syn tasks: %v\n%s", err, stderr)
	}
	if _, _, err := run(t, st, "syn", "task", "--dir", dir, "--persona", p.ID, "--day", "9"); err == nil || !strings.Contains(err.Error(), "no state robin-vale day 9") {
		t.Errorf("syn task on a day that never grew: %v", err)
	}
	if _, _, err := run(t, st, "syn", "tasks", "--dir", dir, "--families", "nosuch"); err == nil || !strings.Contains(err.Error(), "wishlist-balance") {
		t.Errorf("an unknown family: %v", err)
	}
	// The gate commands over the run: clear errors before any work.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"gate", "--dir", dir}, "--task is required"},
		{[]string{"gate", "--dir", dir, "--task", filepath.Join(dir, "tasks", "nosuch")}, "nosuch"},
		{[]string{"pool", "run", "--dir", dir, "--levels", "hard=0..9"}, "levels"},
		{[]string{"pool", "run", "--dir", dir, "--levels", "hard"}, "NAME=MIN..MAX"},
		{[]string{"pool", "split", "--dir", dir, "--proportions", "sft=1,test=2"}, "sft, rl and val"},
		{[]string{"pool", "list", "--dir", dir}, "pool split"},
		{[]string{"stats", "tasks", "--dir", dir}, "no gated tasks"},
		{[]string{"syn", "task", "--dir", dir, "--persona", p.ID, "--day", "2", "--difficulty", "impossible"}, "the levels are hard, medium"},
		{[]string{"verify", "--regrade"}, "--regrade needs --task"},
	} {
		if _, _, err := run(t, st, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	out = mustRun(t, st, "stats", "worlds", "--dir", dir)
	if !strings.Contains(out, "| world states | 3 | 640 |") {
		t.Errorf("stats:\n%s", out)
	}
	for _, bad := range [][]string{
		{"syn", "worlds", "--dir", dir, "--days", "30..8"},
		{"syn", "worlds", "--dir", dir, "--backend", "llm"},
		{"syn", "worlds", "--dir", dir, "--backend", "gpt"},
		{"syn", "worlds", "--dir", dir, "--model", "http://x/v1#m"},
		{"syn", "world", "--dir", dir, "--persona", "nobody", "--to-day", "1"},
		{"syn", "world", "--dir", dir, "--persona", p.ID, "--to-day", "9"},
	} {
		if _, _, err := run(t, st, bad...); err == nil {
			t.Errorf("wildawm %s: no error", strings.Join(bad, " "))
		} else if !strings.Contains(err.Error(), "--") && !strings.Contains(err.Error(), "persona") {
			t.Errorf("wildawm %s: %v names neither the flag nor the persona", strings.Join(bad, " "), err)
		}
	}
}

// TestSynTasksCountsAuthorRejections: an author whose server is down
// leaves its sketches unwritten without ending the run, which then fails
// saying so; sketches the author model writes no valid task for are
// counted as the author's, not the self-check's (which never ran on them).
func TestSynTasksCountsAuthorRejections(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	st := filepath.Join(t.TempDir(), "unused-store")
	mustRun(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "3", "--no-health")
	// The author's server is down: every sketch is left unwritten, the
	// run goes to its end and fails saying a rerun writes them.
	down := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Status: 503, Error: "no healthy upstream"} })
	_, stderr, err := run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2", "--author-model", down.URL()+"#"+fake.DefaultModel, "--model-retries", "0")
	if err == nil || !strings.Contains(err.Error(), "because the author model failed") || !strings.Contains(err.Error(), "run the same command again") || !strings.Contains(stderr, "HTTP 503") {
		t.Fatalf("syn tasks with the author's server down: %v\n%s", err, stderr)
	}
	// A server not started to call tools is no outage: the run stops at
	// its first refusal, naming the flag to start it with.
	noTools := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "x"} })
	noTools.SetEngine(model.EngineVLLM)
	noTools.SetToolCalling(false)
	_, stderr, err = run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2", "--author-model", noTools.Spec().String())
	if err == nil || !strings.Contains(err.Error(), "for --author-model") || !strings.Contains(err.Error(), "--enable-auto-tool-choice") || len(noTools.Chats()) > 4 {
		t.Fatalf("syn tasks with an author server without tool calling (%d requests): %v\n%s", len(noTools.Chats()), err, stderr)
	}
	author := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: taskgen.SubmitTaskTool, Arguments: `{"instruction": ""}`}}}
	})
	_, stderr, err = run(t, st, "syn", "tasks", "--dir", dir, "--days", "0..2", "--author-model", author.URL()+"#"+fake.DefaultModel)
	if err != nil {
		t.Fatalf("syn tasks: %v\n%s", err, stderr)
	}
	m := regexp.MustCompile(`(\d+) sketches, 0 tasks written, \d+ dropped by the diversity gate, (\d+) without a valid task from the author, 0 rejected by the self-check`).FindStringSubmatch(stderr)
	if m == nil || m[2] == "0" {
		t.Fatalf("the summary does not count the author's rejections apart:\n%s", stderr)
	}
	if !strings.Contains(stderr, "rejected before the self-check: ") {
		t.Errorf("no rejection says why:\n%s", stderr)
	}
}
