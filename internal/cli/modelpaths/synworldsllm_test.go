package modelpaths

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
)

// worldOracle is a model for `syn worlds --backend llm` that writes the
// world the procedural backend wrote in ref: its persona's bible, each
// day's plan event by event, the plan's own delta, and a reviewer's
// approval. It answers from the request alone.
func worldOracle(t *testing.T, ref string) func(fake.Request) fake.Turn {
	t.Helper()
	bibles, _ := filepath.Glob(filepath.Join(ref, "personas", "*", "bible.json"))
	if len(bibles) != 1 {
		t.Fatalf("the reference run has %d personas, want 1", len(bibles))
	}
	bible, err := os.ReadFile(bibles[0])
	if err != nil {
		t.Fatal(err)
	}
	plans := map[int][]json.RawMessage{}
	days, _ := filepath.Glob(filepath.Join(filepath.Dir(bibles[0]), "day-*", "plan.json"))
	for _, p := range days {
		var d struct {
			Day    int               `json:"day"`
			Events []json.RawMessage `json:"events"`
		}
		b, err := os.ReadFile(p)
		if err != nil || json.Unmarshal(b, &d) != nil {
			t.Fatalf("%s: %v", p, err)
		}
		plans[d.Day] = d.Events
	}
	planDay := regexp.MustCompile(`Plan day (\d+) `)
	call := func(name, args string) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: name, Arguments: args}}}
	}
	return func(r fake.Request) fake.Turn {
		made := 0 // calls the conversation holds
		for _, m := range r.Messages {
			made += len(m.ToolCalls)
		}
		switch {
		case hasTool(r, "submit_persona"):
			if made == 0 {
				return call("submit_persona", string(bible))
			}
		case hasTool(r, "propose_event"):
			m := planDay.FindStringSubmatch(r.Messages[1].Content)
			if m == nil {
				return fake.Turn{Content: "which day?"}
			}
			day, _ := strconv.Atoi(m[1])
			events := plans[day]
			if made < len(events) {
				return call("propose_event", string(events[made]))
			}
			if made == len(events) {
				return call("finish_day", `{}`)
			}
		case hasTool(r, "emit_plan"):
			switch made {
			case 0:
				return call("emit_plan", `{}`)
			case 1:
				return call("submit", `{}`)
			}
		case hasTool(r, "verdict"):
			if made == 0 {
				return call("verdict", `{"ok": true, "problems": []}`)
			}
		}
		return fake.Turn{Content: fmt.Sprintf("done (%d calls)", made)}
	}
}

// TestModelPathSynWorldsLLM: `syn worlds --backend llm --model` against
// a model that writes what the procedural backend wrote grows the same
// validated days; against a server of which one chat in four fails, with
// retries, the same days again; without retries the run fails on the
// model, keeps the days it finished, and the same command against a
// healthy server grows the rest, the same days.
func TestModelPathSynWorldsLLM(t *testing.T) {
	t.Parallel()
	st := t.TempDir()
	ref := filepath.Join(t.TempDir(), "ref")
	mustRun(t, st, "syn", "worlds", "--dir", ref, "--personas", "1", "--days", "2", "--no-health")
	oracle := worldOracle(t, ref)
	days := func(dir string) map[string]string {
		out := map[string]string{}
		files, _ := filepath.Glob(filepath.Join(dir, "personas", "*", "day-*", "state.json"))
		for _, f := range files {
			b, _ := os.ReadFile(f)
			out[filepath.Base(filepath.Dir(f))] = string(b)
		}
		return out
	}
	want := days(ref)
	if len(want) != 2 {
		t.Fatalf("the reference run grew %d days", len(want))
	}
	grow := func(name string, fl *flaky, retries string) (string, error) {
		_, spec := fl.server(t)
		dir := filepath.Join(t.TempDir(), name)
		_, stderr, err := run(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "2", "--no-health",
			"--backend", "llm", "--model", spec, "--model-retries", retries, "--model-backoff", "1ms")
		if err != nil {
			t.Logf("%s: %v\n%s", name, err, stderr)
		}
		return dir, err
	}
	healthy := newFlaky(0, oracle)
	dir, err := grow("healthy", healthy, "0")
	if err != nil {
		t.Fatal("the oracle model's run failed")
	}
	t.Logf("the oracle's run: %d chats", healthy.calls.Load())
	if healthy.calls.Load() < 3 {
		t.Fatalf("the llm backend made %d chats", healthy.calls.Load())
	}
	if got := days(dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("the llm backend grew other days than the procedural one:\n%v\nwant\n%v", got, want)
	}
	fl := newFlaky(flakyEvery, oracle)
	dir, err = grow("retried", fl, "2")
	if err != nil || fmt.Sprint(days(dir)) != fmt.Sprint(want) || fl.fails.Load() == 0 {
		t.Fatalf("with %d failed chats, retried: %v, days %v", fl.fails.Load(), err, days(dir))
	}
	t.Logf("retried: %d failed chats of %d", fl.fails.Load(), fl.calls.Load())
	// Without retries: the run fails on the model, naming it; the days it
	// finished stay, and the same command with the server healthy grows
	// the rest.
	fl = newFlaky(flakyEvery, oracle)
	dir, err = grow("unretried", fl, "0")
	if err == nil || !regexp.MustCompile(`for --model\): HTTP 503|for --model\): .*cut off`).MatchString(err.Error()) {
		t.Fatalf("with %d failed chats and no retries: %v; want the model's failure, naming --model", fl.fails.Load(), err)
	}
	if b, _ := filepath.Glob(filepath.Join(dir, "personas", "*", "bible.json")); len(b) != 1 {
		t.Errorf("the persona accepted before the failure was not kept: %v", b)
	}
	kept := days(dir)
	for d, s := range kept {
		if want[d] != s {
			t.Errorf("the failed run kept %s other than the reference's", d)
		}
	}
	fl.healthy.Store(true)
	_, spec := fl.server(t)
	if _, stderr, err := run(t, st, "syn", "worlds", "--dir", dir, "--personas", "1", "--days", "2", "--no-health",
		"--backend", "llm", "--model", spec, "--model-retries", "0"); err != nil {
		t.Fatalf("the rerun with the server healthy: %v\n%s", err, stderr)
	}
	if got := days(dir); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("after the rerun (%d days kept before it): %v\nwant %v", len(kept), got, want)
	}
}
