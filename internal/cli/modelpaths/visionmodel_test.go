package modelpaths

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// dotPNG is a 1x1 PNG, base64.
const dotPNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

// lookAtPicture is an agent that writes a picture into its home, asks
// describe_image what it shows, and answers with what it was told.
func lookAtPicture(r fake.Request) fake.Turn {
	var tools []string
	for _, m := range r.Messages {
		for _, c := range m.ToolCalls {
			tools = append(tools, c.Function.Name)
		}
	}
	switch len(tools) {
	case 0:
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "shell", Arguments: `{"command":"echo ` + dotPNG + ` | base64 -d > dot.png"}`}}}
	case 1:
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "describe_image", Arguments: `{"path":"dot.png"}`}}}
	}
	return fake.Turn{Content: "The picture: " + r.Messages[len(r.Messages)-1].Content}
}

// TestModelPathVisionModel: `eval --agent MODEL --vision-model VMODEL`
// sends the picture the agent asks about to the vision model, whose words
// come back as the tool's observation; a flaky vision server (one chat in
// flakyEvery fails) is retried, every rollout counted with the vision
// model's description; a vision server that is down leaves the rollouts
// failed on the infrastructure, never counted as the agent's, and the
// command fails saying so.
func TestModelPathVisionModel(t *testing.T) {
	t.Parallel()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, func(string) string { return pool.SplitVal })
	root := sandboxDir(t)
	st := t.TempDir()
	agentSrv := fake.NewResponder(t, lookAtPicture)
	vis := newFlaky(flakyEvery, func(r fake.Request) fake.Turn {
		if len(r.Messages) != 1 || !strings.Contains(string(r.Body), "data:image/png;base64,") {
			return fake.Turn{Status: 400, Error: "no image in the request"}
		}
		return fake.Turn{Content: "A single red dot on white."}
	})
	visSrv, visSpec := vis.server(t)
	args := func(out, retries string) []string {
		return []string{"eval", "--dir", f.Dir, "--split", "val", "--agent", agentSrv.URL() + "#" + fake.DefaultModel, "--vision-model", visSpec,
			"-k", "4", "--parallel", "2", "--fake-browser", "--out", filepath.Join(root, out), "--model-retries", retries, "--model-backoff", "1ms"}
	}
	mustRun(t, st, args("retried", "2")...)
	rep, _, _ := evalProduct(t, filepath.Join(root, "retried"))
	if rep.Overall.Infra != 0 || rep.Overall.Counted != rep.Overall.Rollouts || rep.Overall.Rollouts == 0 {
		t.Fatalf("with a flaky vision server, retried: %+v", rep.Overall)
	}
	if vis.fails.Load() == 0 {
		t.Fatal("the flaky vision server failed no chat")
	}
	trs, _ := filepath.Glob(filepath.Join(root, "retried", "*", "*.json"))
	trs2, _ := filepath.Glob(filepath.Join(root, "retried", "*", "*", "*.json"))
	described := 0
	for _, p := range append(trs, trs2...) {
		tr, err := agent.LoadTrajectory(p)
		if err != nil || tr.TaskID == "" {
			continue
		}
		for _, s := range tr.Steps {
			if s.Tool == "vision.describe" && strings.Contains(s.Observation, "A single red dot") {
				described++
			}
		}
	}
	if described != rep.Overall.Rollouts {
		t.Errorf("%d rollouts saw the vision model's description, want %d (%d vision chats)", described, rep.Overall.Rollouts, len(visSrv.Chats()))
	}

	// The vision server down: every rollout fails on the infrastructure.
	down := newOutage(1, 1<<30, vis.respond)
	_, downSpec := down.server(t)
	visSpec = downSpec
	_, stderr, err := run(t, st, args("down", "0")...)
	rep, _, _ = evalProduct(t, filepath.Join(root, "down"))
	if err == nil || !strings.Contains(err.Error(), "failed on the infrastructure") || rep.Overall.Counted != 0 || rep.Overall.Infra != rep.Overall.Rollouts {
		t.Fatalf("with the vision server down: %v %+v\n%s", err, rep.Overall, stderr)
	}
	os.RemoveAll(filepath.Join(root, "down"))
}
