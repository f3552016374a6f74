package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
)

// TestModelTimeoutFlag: --model-timeout takes one duration for every
// stage or STAGE=DURATION per stage; a bad value is refused naming the
// flag and the fix.
func TestModelTimeoutFlag(t *testing.T) {
	for _, c := range []struct {
		v     string
		stage string
		want  time.Duration
	}{
		{"", "judge", model.DefaultTimeout},
		{"300s", "judge", 300 * time.Second},
		{"300s", "ensemble", 300 * time.Second},
		{"judge=60s,ensemble=10m", "judge", time.Minute},
		{"judge=60s,ensemble=10m", "ensemble", 10 * time.Minute},
		{"judge=60s", "author", model.DefaultTimeout},
	} {
		m := modelFlags{timeout: c.v, backoff: time.Second}
		got, err := m.timeoutOf(c.stage)
		if err != nil || got != c.want {
			t.Errorf("--model-timeout %q, stage %s: %s, %v; want %s", c.v, c.stage, got, err, c.want)
		}
	}
	for _, c := range []struct{ v, want string }{
		{"300", "300 has no unit (300s?)"},
		{"soon", `"soon" is not a duration`},
		{"-1s", "-1s is not positive"},
		{"juge=60s", `"juge=60s" is not STAGE=DURATION with a known stage`},
		{"judge=", `"" is not a duration`},
	} {
		m := modelFlags{timeout: c.v, backoff: time.Second}
		if err := m.check(); err == nil || !strings.Contains(err.Error(), "--model-timeout") || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--model-timeout %q: %v; want an error naming the flag and %q", c.v, err, c.want)
		}
	}
	if err := (&modelFlags{retries: -1, backoff: time.Second}).check(); err == nil || !strings.Contains(err.Error(), "--model-retries -1") {
		t.Errorf("--model-retries -1: %v", err)
	}
	if err := (&modelFlags{backoff: 0}).check(); err == nil || !strings.Contains(err.Error(), "--model-backoff") {
		t.Errorf("--model-backoff 0: %v", err)
	}
}

// TestModelTimeoutReachesTheServer: through the command line, a server
// slower than --model-timeout fails the stage with an error that names
// the flag to raise (it once said "raise Options.Timeout"). A time-out is
// not retried (model.Client): the next attempt would wait as long again.
func TestModelTimeoutReachesTheServer(t *testing.T) {
	slow := fake.Turn{Delay: 5 * time.Second, Content: "late"}
	srv := fake.New(t, slow, slow, slow)
	_, stderr, err := run(t, t.TempDir(), "syn", "worlds", "--dir", t.TempDir(), "--personas", "1", "--days", "1", "--no-health",
		"--backend", "llm", "--model", srv.URL()+"#"+fake.DefaultModel, "--model-timeout", "model=200ms", "--model-retries", "1", "--model-backoff", "1ms")
	if err == nil {
		t.Fatalf("syn worlds against a server slower than --model-timeout succeeded:\n%s", stderr)
	}
	if !strings.Contains(err.Error(), "timed out after 200ms (--model-timeout)") || !strings.Contains(err.Error(), "raise --model-timeout") {
		t.Errorf("error %v; want the time-out and the flag to raise", err)
	}
	if n := len(srv.Chats()); n != 1 {
		t.Errorf("%d requests; want 1", n)
	}
}
