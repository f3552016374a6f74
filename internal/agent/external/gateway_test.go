package external

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/sandbox"
)

// TestOpencodeThroughGateway runs opencode against the real gateway
// (agent.NewGateway): the adapter's steps must match the ones the gateway
// recorded itself, interface for interface, tool for tool.
func TestOpencodeThroughGateway(t *testing.T) {
	bin := opencodeBin(t)
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, "todo.md"), []byte("buy a surge protector\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := &agent.Env{
		Shell: func(ctx context.Context, command string) (*sandbox.Result, error) {
			return &sandbox.Result{Stdout: []byte("ran: " + command + "\n")}, nil
		},
		Files: agent.HomeFiles{Dir: home, UID: os.Getuid(), GID: os.Getgid()},
		Traj:  &agent.Trajectory{},
	}
	gw, err := agent.NewGateway(context.Background(), env, false)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(gw.Handler())
	t.Cleanup(ts.Close)

	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{{Name: "wildawm_shell", Arguments: `{"command":"ls"}`}}},
		fake.Turn{ToolCalls: []fake.ToolCall{{Name: "wildawm_read_file", Arguments: `{"path":"todo.md"}`}}},
		fake.Turn{ToolCalls: []fake.ToolCall{{Name: "wildawm_write_file", Arguments: `{"path":"done.md","content":"ordered"}`}}},
		fake.Turn{Content: "Done."},
	)
	res, err := (&Opencode{Bin: bin}).Run(context.Background(), Run{
		Prompt: "Do the todo.", ModelBaseURL: srv.URL(), Model: fake.DefaultModel,
		MCP: map[string]string{Gateway: ts.URL}, WorkDir: t.TempDir(), Timeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatalf("%v; log: %s", err, tail(res))
	}
	tr := res.Trajectory
	if tr.Outcome != agent.OutcomeDone || tr.Answer != "Done." {
		t.Fatalf("outcome %q (%s), answer %q", tr.Outcome, tr.Error, tr.Answer)
	}
	var names []string
	for _, tool := range srv.Chats()[0].Tools {
		names = append(names, tool.Name)
	}
	for _, d := range agent.Builtins() {
		found := false
		for _, n := range names {
			found = found || n == Gateway+"_"+d.Name
		}
		if !found {
			t.Errorf("the gateway's %s is not offered: %v", d.Name, names)
		}
	}
	if len(names) != len(agent.Builtins()) {
		t.Errorf("tools offered %v: only the gateway's should be", names)
	}
	want := gw.Steps()
	if len(tr.Steps) != len(want) || len(want) != 3 {
		t.Fatalf("adapter steps %+v\ngateway steps %+v", tr.Steps, want)
	}
	for i, w := range want {
		g := tr.Steps[i]
		if g.Interface != w.Interface || g.Tool != w.Tool || g.Error != w.Error {
			t.Errorf("step %d: adapter %s %s %q, gateway %s %s %q", i, g.Interface, g.Tool, g.Error, w.Interface, w.Tool, w.Error)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "done.md")); err != nil || string(b) != "ordered" {
		t.Errorf("write_file through opencode: %q, %v", b, err)
	}
}
