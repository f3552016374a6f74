package trainer

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/task"
)

// TestRequestBounds: every number of a request is held to its documented
// bound (docs/segment.md), and the error names the field.
func TestRequestBounds(t *testing.T) {
	ok := Request{Step: 1, Tasks: 1, Policy: PolicyReplayEnsemble}
	if err := ok.Validate(); err != nil {
		t.Fatalf("a good request: %v", err)
	}
	eng := Request{Step: 1, Tasks: 1, Engine: "http://127.0.0.1:1/v1#m"}
	for _, c := range []struct {
		req  Request
		want string
	}{
		{Request{Step: math.MaxInt64, Tasks: 1, Policy: PolicyReplayEnsemble}, "step: 9223372036854775807"},
		{Request{Step: MaxStep + 1, Tasks: 1, Policy: PolicyReplayEnsemble}, "step:"},
		{Request{Step: -1, Tasks: 1, Policy: PolicyReplayEnsemble}, "step:"},
		{with(eng, func(r *Request) { r.Sampling.Temperature = ptr(math.Inf(1)) }), "sampling.temperature"},
		{with(eng, func(r *Request) { r.Sampling.Temperature = ptr(math.NaN()) }), "sampling.temperature"},
		{with(eng, func(r *Request) { r.Sampling.MaxTokens = math.MaxInt64 }), "sampling.max_tokens"},
		{with(eng, func(r *Request) { r.Sampling.ContextTokens = MaxSamplingTokens + 1 }), "sampling.context_tokens"},
		{with(eng, func(r *Request) { r.Sampling.MaxTurns = math.MaxInt64 }), "sampling.max_turns"},
		{with(eng, func(r *Request) { r.Sampling.MaxTurns = -1 }), "sampling.max_turns"},
		{with(eng, func(r *Request) { r.PolicyVersion = strings.Repeat("v", MaxPolicyVersion+1) }), "policy_version"},
	} {
		err := c.req.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error naming %q", c.req, err, c.want)
		}
	}
	top := with(ok, func(r *Request) { r.Step = MaxStep })
	if err := top.Validate(); err != nil {
		t.Errorf("step %d, the bound: %v", MaxStep, err)
	}
}

func with(r Request, f func(*Request)) Request {
	f(&r)
	return r
}

// TestDecodeRequestStrict: a body that names a key twice is refused naming
// the key (encoding/json would keep the last: the step asked for would not
// be the step the trainer's log shows), at any depth.
func TestDecodeRequestStrict(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{`{"step": 1, "step": 2, "tasks": 1, "policy": "scripted:replay-ensemble"}`, `step: key "step" appears twice`},
		{`{"step": 1, "tasks": 1, "engine": "http://127.0.0.1:1/v1#m", "sampling": {"temperature": 1, "temperature": 0}}`, "sampling.temperature"},
		{`{"step": 1, "tasks": 1, "policy": "learned:softmax", "policy_params": {"lr": 1, "lr": 2}}`, "policy_params.lr"},
		{`{"step": 1, "tasks": 1, "bogus": 1}`, "bogus"},
		{`{"step": 1} {}`, "more than one"},
		{`{"step": 9223372036854775808}`, "step"},
	} {
		_, err := DecodeRequest([]byte(c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.body, err, c.want)
		}
	}
	req, err := DecodeRequest([]byte(`{"step": 3, "tasks": 2, "policy": "scripted:replay-ensemble"}`))
	if err != nil || req.Step != 3 || req.Tasks != 2 {
		t.Fatalf("a good body: %+v %v", req, err)
	}
}

// TestOpenRefusesDuplicatedPoolTask: rl serve refuses a pool that lists a
// task twice, naming it, as openenv serve does (both through
// pool.LoadPool); it used to serve the task twice as often.
func TestOpenRefusesDuplicatedPoolTask(t *testing.T) {
	dir := t.TempDir()
	tk := task.TestTask(t)
	if err := tk.Save(filepath.Join(dir, "tasks", tk.ID)); err != nil {
		t.Fatal(err)
	}
	p := pool.Pool{Version: pool.Version, TasksDir: "../tasks", Tasks: []pool.Entry{
		{ID: tk.ID, Dir: tk.ID, Split: pool.SplitRL}, {ID: tk.ID, Dir: tk.ID, Split: pool.SplitRL}}}
	b, _ := json.Marshal(p)
	os.MkdirAll(filepath.Join(dir, "pool"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, pool.File), b, 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), Options{Dir: dir, StateDir: t.TempDir(), Rollout: func(context.Context, RolloutJob) (*RolloutResult, error) {
		return nil, errors.New("not run")
	}})
	if err == nil {
		s.Close(context.Background())
		t.Fatalf("a pool listing %s twice was served", tk.ID)
	}
	if !strings.Contains(err.Error(), "task "+tk.ID+" is listed twice") {
		t.Fatalf("%v: want the duplicated task named", err)
	}
}
