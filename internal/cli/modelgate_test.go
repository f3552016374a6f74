package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestGateWithModelFileTools: a model ensemble that reads the home
// through the harness's file tools (read_file, as real models do all the
// time) is gated: the rollouts record the file interface, and the gate
// decides (here: the model solves nothing) instead of refusing the
// candidate ("used interface file is not one of gui, mcp, cli").
func TestGateWithModelFileTools(t *testing.T) {
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fake.Turn{Content: "I read my notes and stopped there."}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_file", Arguments: `{"path":"notes/logins.md"}`}}}
	})
	dir := f.TaskDirs["model-pick"]
	_, stderr, err := run(t, t.TempDir(), "gate", "--dir", f.Dir, "--task", dir, "--fake-browser", "--max-revisions", "0",
		"--ensemble-model", srv.URL()+"#"+fake.DefaultModel)
	if err != nil && !strings.Contains(err.Error(), "rejected") {
		t.Fatalf("gate with a model ensemble that uses read_file: %v\n%s", err, stderr)
	}
	o, err := pool.LoadOutcome(dir)
	if err != nil {
		t.Fatalf("no outcome: %v\n%s", err, stderr)
	}
	n := 0
	for _, r := range o.Rollouts {
		if r.Ensemble() && slices.Contains(r.Interfaces, "file") {
			n++
		}
	}
	if n != 6 {
		t.Errorf("%d ensemble rollouts record the file interface, want 6: %+v", n, o.Rollouts)
	}
	if g, ok := o.Report.Gate("solvability"); !ok || g.Passed {
		t.Errorf("solvability %+v: the model solved nothing", g)
	}
}
