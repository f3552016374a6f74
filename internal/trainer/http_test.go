package trainer

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/runtime"
)

func call(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	var v map[string]any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s %s: %d, not JSON: %s", method, url, resp.StatusCode, data)
	}
	return resp.StatusCode, v
}

// TestHTTPAPI: bad requests are refused naming the field and change
// nothing; a batch is long-polled while it runs and returned when done; a
// repeated request gets it at once, a changed one a conflict.
func TestHTTPAPI(t *testing.T) {
	f := fixture(t)
	gate := make(chan struct{})
	inner := scripted(func(_ string, slot int) float64 { return float64(slot % 2) }, nil)
	s := open(t, f, Options{Rollout: func(ctx context.Context, j RolloutJob) (*RolloutResult, error) {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return inner(ctx, j)
	}})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	for _, c := range []struct {
		body, want string
	}{
		{`{"step": 1,`, "request body"},
		{`{"step": 1, "tasks": 1, "policy": "scripted:replay-ensemble", "bogus": 1}`, "bogus"},
		{`{"step": 1, "tasks": 0, "policy": "scripted:replay-ensemble"}`, "tasks"},
		{`{"step": 1, "tasks": 1}`, "engine"},
		{`{"step": 1, "tasks": 1, "policy": "scripted:replay-ensemble"} {}`, "more than one"},
		{`{"step": 1, "tasks": 1, "tasks": 3, "policy": "scripted:replay-ensemble"}`, `tasks: key "tasks" appears twice`},
		{`{"step": 9223372036854775807, "tasks": 1, "policy": "scripted:replay-ensemble"}`, "step: 9223372036854775807"},
	} {
		code, v := call(t, "POST", srv.URL+"/v1/batches", c.body)
		if code != http.StatusBadRequest || !strings.Contains(v["error"].(string), c.want) {
			t.Errorf("POST %s: %d %v, want 400 naming %q", c.body, code, v, c.want)
		}
	}
	big := `{"step": 1, "tasks": 1, "policy": "scripted:replay-ensemble", "policy_version": "` + strings.Repeat("v", MaxRequestBytes) + `"}`
	if code, v := call(t, "POST", srv.URL+"/v1/batches", big); code != http.StatusRequestEntityTooLarge || !strings.Contains(v["error"].(string), "over") {
		t.Errorf("a body over MaxRequestBytes: %d %v, want 413 saying so", code, v)
	}
	if code, _ := call(t, "GET", srv.URL+"/v1/batches/step-000001?wait=0", ""); code != http.StatusNotFound {
		t.Errorf("an unrequested batch: %d", code)
	}
	if code, _ := call(t, "GET", srv.URL+"/v1/batches/nope", ""); code != http.StatusNotFound {
		t.Errorf("a bad id: %d", code)
	}
	body := `{"step": 1, "tasks": 2, "g": 2, "policy": "scripted:replay-ensemble"}`
	code, v := call(t, "POST", srv.URL+"/v1/batches", body)
	if code != http.StatusAccepted || v["id"] != "step-000001" || v["status"] != StatusRunning {
		t.Fatalf("POST: %d %v", code, v)
	}
	code, v = call(t, "GET", srv.URL+"/v1/batches/step-000001?wait=0.05", "")
	if code != http.StatusAccepted || v["progress"] == nil {
		t.Fatalf("long poll while running: %d %v", code, v)
	}
	if code, v := call(t, "POST", srv.URL+"/v1/batches", `{"step": 1, "tasks": 1, "g": 2, "policy": "scripted:replay-ensemble"}`); code != http.StatusConflict {
		t.Errorf("a changed request for a running step: %d %v", code, v)
	}
	close(gate)
	code, v = call(t, "GET", srv.URL+"/v1/batches/step-000001?wait=60", "")
	if code != http.StatusOK || v["status"] != StatusDone || len(v["samples"].([]any)) != 4 {
		t.Fatalf("long poll to the end: %d %v", code, v)
	}
	code, v = call(t, "POST", srv.URL+"/v1/batches", body)
	if code != http.StatusOK || v["status"] != StatusDone {
		t.Errorf("a repeated request: %d %v", code, v)
	}
	if code, v := call(t, "GET", srv.URL+"/health", ""); code != http.StatusOK || v["tasks"] != 3.0 || v["last_step"] != 1.0 {
		t.Errorf("health: %d %v", code, v)
	}
	if code, v := call(t, "GET", srv.URL+"/v1/state?step=1", ""); code != http.StatusOK || len(v["kappa"].(map[string]any)) != 2 {
		t.Errorf("state: %d %v", code, v)
	}
}

// TestPythonClient: the stdlib Python client in integrations/ consumes
// the service's batches and validates them, scripted (no tokens) and from
// the learnable policy (token ids, masks, logprobs, advantages, weights),
// on live instances.
func TestPythonClient(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		runtime.SkipOutsideCI(t, "python3 not found: install it (apt-get install python3)")
	}
	f := fixture(t)
	s := open(t, f, Options{})
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	client, _ := filepath.Abs("../../integrations/python/wildawm_rl.py")
	for _, c := range []struct {
		args   []string
		tokens bool
	}{
		{[]string{"--step", "1", "--tasks", "3", "--g", "2", "--policy", PolicyReplayEnsemble}, false},
		{[]string{"--step", "2", "--tasks", "3", "--g", "3", "--policy", PolicySoftmax, "--seed", "4"}, true},
	} {
		var stdout, stderr bytes.Buffer
		cmd := exec.Command(python, append([]string{client, "--url", srv.URL}, c.args...)...)
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("python client %v: %v\n%s%s", c.args, err, stdout.String(), stderr.String())
		}
		var sum struct {
			Ready, Samples, Trajectories int
			Tokens                       bool
		}
		if err := json.Unmarshal(stdout.Bytes(), &sum); err != nil {
			t.Fatalf("summary %q: %v", stdout.String(), err)
		}
		b, _, _, _ := s.Lookup(map[bool]int{false: 1, true: 2}[c.tokens])
		if sum.Ready != b.Stats.Ready || sum.Samples != len(b.Samples) || sum.Tokens != c.tokens || sum.Trajectories != b.Stats.Ready*b.Request.G {
			t.Errorf("client summary %+v; batch %+v with %d samples", sum, b.Stats, len(b.Samples))
		}
		t.Logf("python client %v: %s", c.args, strings.TrimSpace(stdout.String()))
	}
	// The client refuses a batch the service refuses, with its message.
	cmd := exec.Command(python, client, "--url", srv.URL, "--step", "3", "--tasks", "0", "--policy", PolicyReplayEnsemble)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 2 || !strings.Contains(string(out), "tasks") {
		t.Errorf("a refused request: %v %s", err, out)
	}
}
