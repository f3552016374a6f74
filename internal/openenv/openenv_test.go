package openenv_test

import (
	"context"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/google/jsonschema-go/jsonschema"

	"github.com/wildawm/wildawm/internal/openenv"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/task"
)

// The package's tests share one pool fixture (built on first use).
var shared pooltest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

func fixture(t *testing.T) *pooltest.Fixture {
	t.Helper()
	return shared.Get(t)
}

// serve starts a server over the fixture's tasks (or, with f nil, over a
// task no instance is ever started for) behind an httptest server.
func serve(t *testing.T, f *pooltest.Fixture, opts openenv.Options) (*openenv.Server, string) {
	t.Helper()
	if f != nil {
		for _, fam := range slices.Sorted(maps.Keys(f.Tasks)) {
			opts.Tasks = append(opts.Tasks, openenv.Task{Task: f.Tasks[fam], Dir: f.TaskDirs[fam]})
		}
		opts.Env = func(*task.Task) (openenv.Episodes, error) { return f.Env, nil }
	} else {
		opts.Tasks = []openenv.Task{{Task: &task.Task{ID: "no-instances"}, Dir: t.TempDir()}}
		opts.Env = func(*task.Task) (openenv.Episodes, error) { t.Error("an instance was asked for"); return nil, io.EOF }
	}
	srv, err := openenv.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Error(err)
		}
		hs.Close()
	})
	return srv, hs.URL
}

type client struct {
	t *testing.T
	c *websocket.Conn
}

func dial(t *testing.T, url string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.SetReadLimit(64 << 20)
	t.Cleanup(func() { c.CloseNow() })
	return &client{t: t, c: c}
}

type msg struct {
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
}

func (c *client) sendRaw(b string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.c.Write(ctx, websocket.MessageText, []byte(b)); err != nil {
		c.t.Fatal(err)
	}
}

func (c *client) recv() msg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	_, b, err := c.c.Read(ctx)
	if err != nil {
		c.t.Fatalf("read: %v", err)
	}
	var m msg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("reply %s: %v", b, err)
	}
	return m
}

// call sends v and returns the reply.
func (c *client) call(v any) msg {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	c.sendRaw(string(b))
	return c.recv()
}

func (c *client) result(v any) (openenv.Result, json.RawMessage) {
	c.t.Helper()
	m := c.call(v)
	if m.Type != openenv.TypeObservation {
		c.t.Fatalf("%v: got %s %s, want an observation", v, m.Type, m.Data)
	}
	var r openenv.Result
	if err := json.Unmarshal(m.Data, &r); err != nil {
		c.t.Fatal(err)
	}
	return r, m.Data
}

func (c *client) error(v any, code, field string) openenv.ErrorData {
	c.t.Helper()
	var m msg
	if s, ok := v.(string); ok {
		c.sendRaw(s)
		m = c.recv()
	} else {
		m = c.call(v)
	}
	var e openenv.ErrorData
	if m.Type != openenv.TypeError || json.Unmarshal(m.Data, &e) != nil {
		c.t.Fatalf("%v: got %s %s, want an error", v, m.Type, m.Data)
	}
	if e.Code != code || e.Field != field || e.Message == "" {
		c.t.Errorf("%v: error %+v, want code %s field %q", v, e, code, field)
	}
	return e
}

func (c *client) state() openenv.State {
	c.t.Helper()
	m := c.call(map[string]any{"type": "state"})
	var s openenv.State
	if m.Type != openenv.TypeState || json.Unmarshal(m.Data, &s) != nil {
		c.t.Fatalf("state: got %s %s", m.Type, m.Data)
	}
	return s
}

func reset(data map[string]any) map[string]any { return map[string]any{"type": "reset", "data": data} }

func step(tool string, args map[string]any) map[string]any {
	return map[string]any{"type": "step", "data": map[string]any{"tool": tool, "args": args}}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

// observationSchema is /schema's observation schema, resolved.
func observationSchema(t *testing.T, url string) *jsonschema.Resolved {
	t.Helper()
	var sc struct{ Observation *jsonschema.Schema }
	getJSON(t, url+"/schema", &sc)
	rs, err := sc.Observation.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

func validate(t *testing.T, rs *jsonschema.Resolved, raw json.RawMessage) {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("the observation does not match /schema: %v\n%s", err, raw)
	}
}

// TestSessionReference plays every task's reference completion over a real
// WebSocket: reset, each reference step, the answer; V passes and the
// reward is 1. A step after done is refused and the state stays.
func TestSessionReference(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	rs := observationSchema(t, url)
	c := dial(t, url)
	for _, fam := range slices.Sorted(maps.Keys(f.Tasks)) {
		tk := f.Tasks[fam]
		start := time.Now()
		r, raw := c.result(reset(map[string]any{"task_id": tk.ID, "hint": true}))
		validate(t, rs, raw)
		o := r.Observation
		if r.Done || r.Reward != nil || o.Step != 0 || o.Task == nil || o.Task.ID != tk.ID || o.Task.Instruction != tk.Instruction || o.Task.Hint != tk.Hint {
			t.Fatalf("%s: reset observation %s", fam, raw)
		}
		if len(o.Checklist) != len(tk.Verifier.Criteria) || o.Checklist[0].ID != tk.Verifier.Criteria[0].ID {
			t.Errorf("%s: checklist %+v", fam, o.Checklist)
		}
		names := map[string]bool{}
		for _, tl := range o.Tools {
			names[tl.Name] = true
		}
		if !names["shell"] || !names["browser_navigate"] || !names[openenv.AnswerTool] || !slices.ContainsFunc(o.Tools, func(tl openenv.Tool) bool { return tl.Interface == "mcp" }) {
			t.Errorf("%s: tools %v", fam, slices.Sorted(maps.Keys(names)))
		}
		private := []string{tk.Rationale}
		for _, cr := range tk.Verifier.Criteria {
			private = append(private, cr.Query, cr.Regex)
		}
		for _, p := range private {
			if p != "" && strings.Contains(string(raw), p) {
				t.Errorf("%s: the reset observation leaks the task's private part %q", fam, p)
			}
		}
		for i, s := range tk.Reference {
			r, raw := c.result(step(s.Tool, s.Args))
			if r.Done || r.Observation.Step != i+1 || r.Reward == nil || *r.Reward != 0 {
				t.Fatalf("%s: step %d (%s): %s", fam, i, s.Tool, raw)
			}
			if r.Observation.Error != "" {
				t.Errorf("%s: reference step %d (%s %v): %s", fam, i, s.Tool, s.Args, r.Observation.Error)
			}
		}
		r, raw = c.result(step(openenv.AnswerTool, map[string]any{"text": tk.Answer}))
		validate(t, rs, raw)
		v := r.Observation.Verification
		if !r.Done || r.Reward == nil || *r.Reward != 1 || v == nil || v.V != 1 || v.Passed != v.Total || v.Total != len(tk.Verifier.Criteria) || r.Observation.EndReason != openenv.EndAnswer {
			t.Fatalf("%s: final observation %s", fam, raw)
		}
		if strings.Contains(string(raw), "evidence") {
			t.Errorf("%s: the verification carries evidence: %s", fam, raw)
		}
		st := c.state()
		if !st.Done || st.StepCount != len(tk.Reference)+1 || st.TaskID != tk.ID || st.EpisodeID == nil || st.Reward == nil || *st.Reward != 1 {
			t.Errorf("%s: state %+v", fam, st)
		}
		c.error(step("shell.run", map[string]any{"command": "true"}), openenv.CodeSession, "")
		if st2 := c.state(); st2.StepCount != st.StepCount || !st2.Done {
			t.Errorf("%s: a step after done changed the state: %+v", fam, st2)
		}
		t.Logf("%s: %d reference steps, V=1, reward 1, in %v", fam, len(tk.Reference), time.Since(start).Round(time.Millisecond))
	}
}

// worldTask returns a task with a criterion on the world, not the answer.
func worldTask(t *testing.T, f *pooltest.Fixture) *task.Task {
	for _, fam := range slices.Sorted(maps.Keys(f.Tasks)) {
		tk := f.Tasks[fam]
		if slices.ContainsFunc(tk.Verifier.Criteria, func(c task.Criterion) bool { return c.Kind != task.KindAnswer }) {
			return tk
		}
	}
	t.Fatal("no fixture task checks the world")
	return nil
}

// TestSessionSkipsTheWork answers right away with the right answer: the
// world criteria fail, V is 0 and the reward below 1.
func TestSessionSkipsTheWork(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	c := dial(t, url)
	tk := worldTask(t, f)
	c.result(reset(map[string]any{"task_id": tk.ID, "episode_id": "skip-1"}))
	r, raw := c.result(step(openenv.AnswerTool, map[string]any{"text": tk.Answer}))
	v := r.Observation.Verification
	if !r.Done || v == nil || v.V != 0 || v.Passed >= v.Total || r.Reward == nil || *r.Reward >= 1 || *r.Reward < 0 {
		t.Fatalf("skipping the work: %s", raw)
	}
	if st := c.state(); st.EpisodeID == nil || *st.EpisodeID != "skip-1" || st.StepCount != 1 {
		t.Errorf("state %+v", st)
	}
}

// TestStepBudget ends an episode on its step budget: verified, done, and
// V fails because nothing was done.
func TestStepBudget(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{MaxSteps: 2})
	c := dial(t, url)
	tk := worldTask(t, f)
	c.result(reset(map[string]any{"task_id": tk.ID}))
	r, raw := c.result(step("shell.run", map[string]any{"command": "echo one"}))
	if r.Done || !strings.Contains(r.Observation.Output, "one") || r.Observation.Interface != "cli" {
		t.Fatalf("first step: %s", raw)
	}
	r, raw = c.result(step("shell", map[string]any{"command": "echo two"}))
	if !r.Done || r.Observation.EndReason != openenv.EndBudget || r.Observation.Verification == nil || r.Observation.Verification.V != 0 || !strings.Contains(r.Observation.Output, "two") {
		t.Fatalf("the budget's last step: %s", raw)
	}
}

// TestBadInput sends malformed and out-of-order messages: each gets an
// error naming the field, and the session and its episode go on.
func TestBadInput(t *testing.T) {
	f := fixture(t)
	_, url := serve(t, f, openenv.Options{})
	c := dial(t, url)
	c.error(step("shell.run", map[string]any{"command": "true"}), openenv.CodeSession, "")
	c.error(`{"type": "reset", "data": {`, openenv.CodeInvalidJSON, "")
	c.error(`[1, 2]`, openenv.CodeValidation, "message")
	c.error(map[string]any{"type": "jump"}, openenv.CodeUnknownType, "type")
	c.error(map[string]any{"data": map[string]any{}}, openenv.CodeValidation, "type")
	c.error(map[string]any{"type": "reset", "extra": 1}, openenv.CodeValidation, "extra")
	c.error(reset(map[string]any{"task_id": "no-such-task"}), openenv.CodeValidation, "data.task_id")
	c.error(reset(map[string]any{"hint": "yes"}), openenv.CodeValidation, "data.hint")
	if st := c.state(); st.EpisodeID != nil || st.StepCount != 0 {
		t.Fatalf("state before reset: %+v", st)
	}
	tk := worldTask(t, f)
	c.result(reset(map[string]any{"task_id": tk.ID}))
	c.error(step("teleport", nil), openenv.CodeValidation, "data.tool")
	c.error(step("mcp.nosuch__tool", nil), openenv.CodeValidation, "data.tool")
	c.error(step("shell.run", nil), openenv.CodeValidation, "data.args.command")
	c.error(step("shell.run", map[string]any{"command": 3}), openenv.CodeValidation, "data.args.command")
	c.error(step("file.write", map[string]any{"path": "x.txt", "content": "a", "mode": "0644"}), openenv.CodeValidation, "data.args.mode")
	c.error(step("browser.click", map[string]any{}), openenv.CodeValidation, "data.args")
	c.error(step(openenv.AnswerTool, map[string]any{"text": 4}), openenv.CodeValidation, "data.args.text")
	c.error(map[string]any{"type": "step"}, openenv.CodeValidation, "data")
	c.error(map[string]any{"type": "step", "data": map[string]any{"tool": "shell.run", "arguments": map[string]any{}}}, openenv.CodeValidation, "data.arguments")
	c.error(map[string]any{"type": "state", "data": map[string]any{"x": 1}}, openenv.CodeValidation, "data")
	// A key given twice is refused, not the last one kept: the write of
	// "b" the model did not see itself ask for never happens.
	c.error(`{"type": "step", "data": {"tool": "file.write", "args": {"path": "x.txt", "content": "a", "content": "b"}}}`, openenv.CodeValidation, "data.args.content")
	c.error(`{"type": "state", "type": "close"}`, openenv.CodeValidation, "type")
	if st := c.state(); st.StepCount != 0 || st.Done || st.TaskID != tk.ID {
		t.Fatalf("bad steps changed the state: %+v", st)
	}
	// Nothing reached the world: the file write was refused.
	r, raw := c.result(step("file.read", map[string]any{"path": "x.txt"}))
	if r.Observation.Error == "" || r.Observation.Step != 1 {
		t.Errorf("x.txt exists after a refused write: %s", raw)
	}
	// A tool that fails is an observation, not an error; the model-facing
	// names work as well.
	r, raw = c.result(step("shell", map[string]any{"command": "echo $((6*7))"}))
	if !strings.Contains(r.Observation.Output, "42") || r.Observation.Step != 2 || r.Done {
		t.Errorf("the session did not go on: %s", raw)
	}
}

// TestDisconnectTearsDown drops a connection mid-episode and closes the
// server mid-episode: each instance's directory goes.
func TestDisconnectTearsDown(t *testing.T) {
	f := fixture(t)
	srv, url := serve(t, f, openenv.Options{})
	instances := filepath.Join(f.Env.WorkDir, "instances")
	// An instance is a directory and, with the overlay strategy, its
	// upper layer beside it (NAME.rw): both must go.
	all := func() []string {
		es, _ := os.ReadDir(instances)
		var out []string
		for _, e := range es {
			if strings.HasPrefix(e.Name(), "openenv-") {
				out = append(out, e.Name())
			}
		}
		return out
	}
	live := func() []string {
		return slices.DeleteFunc(all(), func(n string) bool { return strings.HasSuffix(n, ".rw") })
	}
	gone := func(what string) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for len(all()) > 0 {
			if time.Now().After(deadline) {
				t.Fatalf("%s: instances still there: %v", what, all())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	gone("before")
	c := dial(t, url)
	c.result(reset(map[string]any{}))
	if n := live(); len(n) != 1 {
		t.Fatalf("instances after reset: %v", n)
	}
	c.c.CloseNow()
	gone("after a disconnect")

	// A second reset replaces the first episode's instance.
	c = dial(t, url)
	c.result(reset(map[string]any{"seed": 1}))
	first := live()
	c.result(reset(map[string]any{"seed": 2}))
	if now := live(); len(now) != 1 || now[0] == first[0] {
		t.Errorf("instances after a second reset: %v, before %v", now, first)
	}
	// The client reads on, as OpenEnv's does, and sees the server go.
	read := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		_, _, err := c.c.Read(ctx)
		read <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := srv.Close(ctx); err != nil {
		t.Fatal(err)
	}
	gone("after the server's Close")
	if err := <-read; websocket.CloseStatus(err) != websocket.StatusGoingAway {
		t.Errorf("after Close the client read %v, want going away", err)
	}
}

// TestHTTPEndpoints checks /health, /metadata and /schema.
func TestHTTPEndpoints(t *testing.T) {
	_, url := serve(t, nil, openenv.Options{Split: "val", MaxSteps: 7})
	var h map[string]string
	getJSON(t, url+"/health", &h)
	if h["status"] != "healthy" {
		t.Errorf("/health: %v", h)
	}
	var m openenv.Metadata
	getJSON(t, url+"/metadata", &m)
	if m.Name != "wildawm" || m.Description == "" || m.Version != openenv.ProtocolVersion || m.Split != "val" || m.Tasks != 1 || m.MaxSteps != 7 || m.MaxSessions != openenv.DefaultMaxSessions {
		t.Errorf("/metadata: %+v", m)
	}
	var sc map[string]*jsonschema.Schema
	getJSON(t, url+"/schema", &sc)
	for k, want := range map[string][]string{"action": {"tool", "args"}, "observation": {"observation", "reward", "done"}, "state": {"episode_id", "step_count", "done"}} {
		s := sc[k]
		if s == nil {
			t.Errorf("/schema: no %s", k)
			continue
		}
		for _, p := range want {
			if s.Properties[p] == nil {
				t.Errorf("/schema: %s has no property %s", k, p)
			}
		}
	}
	if o := sc["observation"].Properties["observation"]; o == nil || o.Properties["checklist"] == nil || o.Properties["verification"] == nil {
		t.Errorf("/schema: the observation lacks the checklist or the verification")
	}
	resp, err := http.Post(url+"/health", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /health: %s", resp.Status)
	}
}

// TestSessionLimit refuses a connection over MaxSessions with
// CAPACITY_REACHED and takes one again once a session ends.
func TestSessionLimit(t *testing.T) {
	srv, url := serve(t, nil, openenv.Options{MaxSessions: 1})
	a := dial(t, url)
	if st := a.state(); st.EpisodeID != nil {
		t.Fatalf("state %+v", st)
	}
	b := dial(t, url)
	m := b.recv()
	var e openenv.ErrorData
	if m.Type != openenv.TypeError || json.Unmarshal(m.Data, &e) != nil || e.Code != openenv.CodeCapacityReached || e.MaxSessions != 1 || !strings.Contains(e.Message, "max-sessions") {
		t.Fatalf("over the limit: %s %s", m.Type, m.Data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := b.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusTryAgainLater {
		t.Errorf("over the limit: closed with %v", err)
	}
	a.sendRaw(`{"type": "close"}`)
	if _, _, err := a.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusNormalClosure {
		t.Errorf("close: closed with %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for srv.Metadata().ActiveSessions != 0 {
		if time.Now().After(deadline) {
			t.Fatal("the closed session still counts")
		}
		time.Sleep(10 * time.Millisecond)
	}
	c := dial(t, url)
	if st := c.state(); st.Split != "rl" {
		t.Errorf("state %+v", st)
	}
}

// TestIdleTimeout closes a silent session with a SESSION_ERROR.
func TestIdleTimeout(t *testing.T) {
	_, url := serve(t, nil, openenv.Options{IdleTimeout: 200 * time.Millisecond})
	c := dial(t, url)
	c.state() // activity resets the clock
	m := c.recv()
	if m.Type != openenv.TypeError || !strings.Contains(string(m.Data), openenv.CodeSession) {
		t.Fatalf("idle: %s %s", m.Type, m.Data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.c.Read(ctx); websocket.CloseStatus(err) != websocket.StatusPolicyViolation {
		t.Errorf("idle: closed with %v", err)
	}
}
