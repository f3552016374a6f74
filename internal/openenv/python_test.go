package openenv_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/openenv"
)

// python returns python3, skipping t when it (or a module the test needs)
// is missing.
func python(t *testing.T, modules ...string) string {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		// Under CI (WILDAWM_CI set, .ci/run installs python3) a missing
		// python3 fails, as runtime.SkipOutsideCI does.
		if os.Getenv("WILDAWM_CI") != "" {
			t.Fatal("WILDAWM_CI is set but python3 is not installed (apt-get install python3)")
		}
		t.Skip("python3 is not installed (apt-get install python3)")
	}
	for _, m := range modules {
		if err := exec.Command(py, "-c", "import "+m).Run(); err != nil {
			t.Skipf("python3 has no %s module", m)
		}
	}
	return py
}

// runPython runs script with stdin in and returns its stdout.
func runPython(t *testing.T, py string, env []string, in any, args ...string) []byte {
	t.Helper()
	b, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, py, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdin = bytes.NewReader(b)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("python3 %s: %v\n%s%s", strings.Join(args, " "), err, stdout.Bytes(), stderr.Bytes())
	}
	return stdout.Bytes()
}

// TestOpenEnvClientPython runs OpenEnv's own MCPToolClient (its
// mcp_client.py and env_client.py from the checkout OPENENV_SRC names,
// offline: testdata/openenv_client.py stands in for the websockets package
// and the server-side package imports) against the server: reset with a
// dataset's columns, list_tools, call_tool, an unknown tool raising, and
// the reference played through CallToolAction steps to reward 1.
func TestOpenEnvClientPython(t *testing.T) {
	src := os.Getenv("OPENENV_SRC")
	if src == "" {
		t.Skip("OPENENV_SRC is not set: give the src directory of an OpenEnv checkout (meta-pytorch/OpenEnv) to run its client")
	}
	if _, err := os.Stat(filepath.Join(src, "openenv", "core", "mcp_client.py")); err != nil {
		t.Fatalf("OPENENV_SRC=%s: %v", src, err)
	}
	py := python(t, "pydantic")
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	tk := f.Tasks["wishlist-balance"]
	out := runPython(t, py, []string{"OPENENV_SRC=" + src}, map[string]any{"url": url, "task_id": tk.ID, "answer": tk.Answer, "reference": tk.Reference}, "testdata/openenv_client.py")
	var rep struct {
		Tools     []string `json:"tools"`
		Shell     string   `json:"shell"`
		Unknown   string   `json:"unknown"`
		Done      bool     `json:"done"`
		Reward    *float64 `json:"reward"`
		StepCount int      `json:"step_count"`
	}
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("report %s: %v", out, err)
	}
	t.Logf("OpenEnv MCPToolClient: %s", out)
	if !slices.Contains(rep.Tools, "shell") || !strings.Contains(rep.Shell, "42") || !strings.Contains(rep.Unknown, openenv.ToolNotFound) {
		t.Errorf("client report %s", out)
	}
	if !rep.Done || rep.Reward == nil || *rep.Reward != 1 || rep.StepCount != len(tk.Reference)+1 {
		t.Errorf("the episode through OpenEnv's client: %s", out)
	}
}
