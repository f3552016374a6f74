package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
)

// TestPoolRate: `wildawm pool rate` against the fake model server. Bad
// flags are refused naming the flag, before anything changes; a server
// that is down is retried, recorded as infrastructure (never as the
// task's difficulty) and ends with an error naming the rollout, the
// server and the fix; once it is back the rating completes, pool.json
// records the agent's rating beside the gate's difficulty, and a rerun
// runs nothing.
func TestPoolRate(t *testing.T) {
	st := t.TempDir()
	f := pooltest.New(t, []string{"model-pick"})
	defer f.Close()
	f.WritePool(t, nil)
	index := filepath.Join(f.Dir, pool.File)
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	var down atomic.Bool
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		if down.Load() {
			return fake.Turn{Status: 502, Error: "upstream connect error"}
		}
		return fake.Turn{Content: "I could not finish this task."}
	})
	agentFlag := srv.URL() + "#" + fake.DefaultModel
	base := []string{"pool", "rate", "--dir", f.Dir, "--fake-browser", "--model-backoff", "1ms"}
	rateDir := filepath.Join(f.TaskDirs["model-pick"], pool.RateDir)
	unchanged := func(when string) {
		t.Helper()
		if b, _ := os.ReadFile(index); !bytes.Equal(b, before) {
			t.Errorf("%s: pool.json changed:\n%s", when, b)
		}
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "--agent is required"},
		{[]string{"--agent", "qwen3-8b"}, "--agent \"qwen3-8b\": give a model as URL#MODEL"},
		{[]string{"--agent", agentFlag + ",claude"}, "harness \"claude\""},
		{[]string{"--agent", "http://127.0.0.1:1/v1#"}, "has no model name"},
		{[]string{"--agent", agentFlag, "-k", "0"}, "-k 0"},
		{[]string{"--agent", agentFlag, "--parallel", "0"}, "--parallel 0"},
		{[]string{"--agent", agentFlag, "--split", "test"}, "--split \"test\""},
		{[]string{"--agent", agentFlag, "-k", "2", "--levels", "hard=0..1,medium=2..3"}, "-k 2 hint-free"},
		{[]string{"--agent", agentFlag, "--agent", agentFlag + ",wildawm"}, "are one agent"},
		{[]string{"--agent", agentFlag, "--dir", filepath.Join(t.TempDir(), "nosuch")}, "--dir"},
	} {
		_, _, err := run(t, st, append(base, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error naming %q", c.args, err, c.want)
		}
		unchanged(strings.Join(c.args, " "))
	}
	if _, err := os.Stat(rateDir); !os.IsNotExist(err) {
		t.Fatalf("a refused command wrote %s: %v", rateDir, err)
	}
	if n := len(srv.Chats()); n != 0 {
		t.Fatalf("a refused command sent %d chats", n)
	}

	// The server is down: every attempt fails after its retries.
	down.Store(true)
	args := append(base, "--agent", agentFlag, "-k", "2", "--model-retries", "1")
	_, stderr, err := run(t, st, args...)
	if err == nil {
		t.Fatalf("pool rate with the server down succeeded:\n%s", stderr)
	}
	for _, w := range []string{"rollout r1 of task " + f.Tasks["model-pick"].ID, srv.URL(), "HTTP 502", "all 3 attempts", "infra.json", "run the same command again"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the outage's error lacks %q: %v", w, err)
		}
	}
	if n := len(srv.Chats()); n != 3*2 {
		t.Errorf("the server got %d chats, want 3 attempts x 2 requests (one retry each)", n)
	}
	slug := fake.DefaultModel + ".wildawm"
	if b, err := os.ReadFile(filepath.Join(rateDir, slug, pool.RateInfraFile)); err != nil || !strings.Contains(string(b), "502") {
		t.Errorf("the outage is not recorded in infra.json: %v\n%s", err, b)
	}
	if ms, _ := filepath.Glob(filepath.Join(rateDir, slug, "[rh][0-9].json")); len(ms) != 0 {
		t.Errorf("the outage was stored as rollouts: %v", ms)
	}
	unchanged("the outage")

	// Back up: the rating completes.
	down.Store(false)
	chats := len(srv.Chats())
	stdout, stderr, err := run(t, st, args...)
	if err != nil {
		t.Fatalf("pool rate: %v\n%s", err, stderr)
	}
	if n := len(srv.Chats()) - chats; n != 4 {
		t.Errorf("the rating sent %d chats, want 4 (2 hint-free and 2 hinted rollouts, one turn each)", n)
	}
	name := "model " + fake.DefaultModel + " (wildawm harness)"
	for _, w := range []string{f.Tasks["model-pick"].ID + "\thard\thard, 0/2, 0/2", name + ": 1 tasks rated: hard 1; success without hint 0.0%, with hint 0.0%"} {
		if !strings.Contains(stdout, w) {
			t.Errorf("stdout lacks %q:\n%s", w, stdout)
		}
	}
	for _, w := range []string{"4 to run, 0 kept", "4/4 rollouts", "ETA", "rated " + f.Tasks["model-pick"].ID + ": hard (hint-free 0/2, with hint 0/2)", "output: " + index, "next: wildawm stats tasks"} {
		if !strings.Contains(stderr, w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr)
		}
	}
	p, err := pool.LoadPool(index)
	if err != nil {
		t.Fatal(err)
	}
	e := p.Tasks[0]
	if e.Difficulty != "hard" || len(e.Ratings) != 1 {
		t.Fatalf("the index's entry %+v: want the gate's difficulty and one rating", e)
	}
	rt := e.Ratings[0]
	if rt.Agent != name || rt.Slug != slug || rt.K != 2 || rt.Level != "hard" || rt.Endpoint != srv.URL() || rt.RatedAt.IsZero() || !strings.Contains(rt.Config, "harness=wildawm") {
		t.Errorf("rating %+v", rt)
	}
	// A rerun runs nothing.
	chats = len(srv.Chats())
	_, stderr, err = run(t, st, args...)
	if err != nil || !strings.Contains(stderr, "0 to run, 4 kept") || len(srv.Chats()) != chats {
		t.Errorf("rerun: %v, %d chats\n%s", err, len(srv.Chats())-chats, stderr)
	}
}
