package modelpaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent/external"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestModelPathEvalOpencode: `eval --agent MODEL --harness opencode`
// against a server of which every second chat fails (a 503) finishes
// with every rollout counted: opencode's provider retries, and the
// rollouts are opencode's.
func TestModelPathEvalOpencode(t *testing.T) {
	if _, err := external.FindOpencode(); err != nil {
		if os.Getenv("WILDAWM_CI") != "" {
			t.Fatalf("WILDAWM_CI is set but %v", err)
		}
		t.Skip(err)
	}
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, func(string) string { return pool.SplitVal })
	root := sandboxDir(t)
	fl := newFlaky(2, func(r fake.Request) fake.Turn {
		if last := r.Messages[len(r.Messages)-1]; last.Role == "tool" {
			return fake.Turn{Content: "I read my notes and could not finish this task."}
		}
		return fake.Turn{ToolCalls: []fake.ToolCall{{ID: "c1", Name: "wildawm_read_file", Arguments: `{"path":"notes/logins.md"}`}}}
	})
	_, spec := fl.server(t)
	out := filepath.Join(root, "opencode")
	_, stderr, err := run(t, t.TempDir(), "eval", "--dir", f.Dir, "--split", "val", "--agent", spec, "--harness", "opencode",
		"-k", "2", "--parallel", "1", "--fake-browser", "--out", out, "--model-retries", "0")
	if err != nil {
		t.Fatalf("eval through opencode with a flaky server: %v\n%s", err, stderr)
	}
	rep, got, _ := evalProduct(t, out)
	if rep.Overall.Infra != 0 || rep.Overall.Counted != rep.Overall.Rollouts || rep.Overall.Rollouts == 0 || fl.fails.Load() == 0 {
		t.Fatalf("%d failed chats; %+v\n%s", fl.fails.Load(), rep.Overall, got)
	}
	if !strings.Contains(rep.Agent+rep.AgentConfig, "opencode") {
		t.Errorf("the report does not say the harness: agent %q config %q", rep.Agent, rep.AgentConfig)
	}
}
