package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/trainer"
)

// TestRLCommands: the learning check through the command line, the JSONL
// export of its batches, and the flags' errors.
func TestRLCommands(t *testing.T) {
	st := t.TempDir()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"rl", "learn", "--steps", "0"}, "--steps"},
		{[]string{"rl", "learn", "--parallel", "0"}, "--parallel"},
		{[]string{"rl", "learn", "--policy", "scripted:oracle"}, "--policy"},
		{[]string{"rl", "export"}, "--out"},
		{[]string{"rl", "export", "--out", filepath.Join(t.TempDir(), "x.jsonl"), "--state", t.TempDir()}, "no batches saved"},
		{[]string{"rl", "serve", "--dir", filepath.Join(t.TempDir(), "nosuch"), "--fake-browser"}, "nosuch"},
	} {
		if _, _, err := run(t, st, c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
	}
	f := pooltest.New(t, nil)
	defer f.Close()
	f.WritePool(t, nil)
	stdout := mustRun(t, st, "rl", "learn", "--dir", f.Dir, "--steps", "2", "--tasks", "2", "--g", "2", "--parallel", "2", "--fake-browser")
	if lines := strings.Split(strings.TrimSpace(stdout), "\n"); len(lines) != 3 || !strings.HasPrefix(lines[2], "2 ") {
		t.Fatalf("learning curve:\n%s", stdout)
	}
	var curve struct {
		Curve []trainer.LearnPoint `json:"curve"`
	}
	b, err := os.ReadFile(filepath.Join(f.Dir, "rl-learn", "learn.json"))
	if err != nil || json.Unmarshal(b, &curve) != nil || len(curve.Curve) != 2 {
		t.Fatalf("learn.json: %v %s", err, b)
	}
	out := filepath.Join(t.TempDir(), "samples.jsonl")
	mustRun(t, st, "rl", "export", "--dir", f.Dir, "--state", filepath.Join(f.Dir, "rl-learn"), "--out", out)
	file, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer file.Close()
	n := 0
	sc := bufio.NewScanner(file)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var s trainer.Sample
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil || s.Version != trainer.SchemaVersion || s.Policy != trainer.PolicySoftmax || len(s.ResponseTokenIDs) == 0 {
			t.Fatalf("line %d: %v %s", n+1, err, sc.Bytes())
		}
		n++
	}
	if n == 0 {
		t.Fatal("the export is empty")
	}
	if _, _, err := run(t, st, "rl", "export", "--dir", f.Dir, "--state", filepath.Join(f.Dir, "rl-learn"), "--out", out, "--from", "5"); err == nil {
		t.Error("an export of steps never run succeeded")
	}
}

// TestPaperBudgetDefaults: eval, rl serve (the harness a request's
// sampling leaves to its defaults) and rollout run at the paper's budgets,
// a 102,400-token context with compaction and 256 turns, smaller only by
// flag; rl serve takes its order and outage flags.
func TestPaperBudgetDefaults(t *testing.T) {
	if agent.DefaultContextTokens != 102400 || agent.DefaultMaxTurns != 256 {
		t.Fatalf("the harness's defaults are %d tokens and %d turns, the paper's 102,400 and 256", agent.DefaultContextTokens, agent.DefaultMaxTurns)
	}
	e := &env{}
	for name, c := range map[string]*cobra.Command{"eval": e.evalCmd(), "rollout": e.rolloutCmd(), "pool rate": e.poolRateCmd()} {
		for flag, want := range map[string]int{"context-tokens": 102400, "max-turns": 256} {
			if got := c.Flags().Lookup(flag).DefValue; got != fmt.Sprint(want) {
				t.Errorf("%s --%s defaults to %s, want %d", name, flag, got, want)
			}
		}
	}
	serve := e.rlServeCmd()
	for _, flag := range []string{"allow-gaps", "outage-backoff", "outage-limit"} {
		if serve.Flags().Lookup(flag) == nil {
			t.Errorf("rl serve has no --%s", flag)
		}
	}
}
