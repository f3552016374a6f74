package eval

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rollout"
)

type tick struct{ t time.Time }

func (c *tick) Now() time.Time { c.t = c.t.Add(10 * time.Second); return c.t }

// TestBrowserIsRecordedAndNeverMixed: eval.json records the browser, a
// rerun with another browser is refused before anything runs, the same
// browser resumes; the progress names the count done and the time left
// from the injected clock.
func TestBrowserIsRecordedAndNeverMixed(t *testing.T) {
	ctx := context.Background()
	b := &fake{ids: []string{"a", "b"}, judge: func(string, int) (int, string) { return 1, agent.OutcomeDone }}
	ag := Agent{Name: "scripted:x", Policy: func(Case, int) (rollout.Policy, error) { return named("scripted:x"), nil }}
	out := t.TempDir()
	var lines []string
	progress := func(format string, args ...any) {
		if len(args) == 1 {
			if s, ok := args[0].(string); ok {
				lines = append(lines, s)
			}
		}
	}
	rep, err := Run(ctx, Options{Adapter: b, Agent: ag, K: 2, Out: out, Browser: "http", Progress: progress, Clock: &tick{t: time.Unix(0, 0)}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Browser != "http" {
		t.Fatalf("browser %q, want http", rep.Browser)
	}
	if saved, err := Load(out + "/" + File); err != nil || saved.Browser != "http" {
		t.Fatalf("eval.json records browser %q (%v)", saved.Browser, err)
	}
	// Four rollouts, one at a time, a clock tick of 10 s per reading: the
	// second is done 20 s after the first reading, with two left.
	if len(lines) != 4 || !strings.Contains(lines[1], "[2/4, ETA 20s]") || !strings.Contains(lines[3], "[4/4, done]") {
		t.Errorf("progress:\n%s", strings.Join(lines, "\n"))
	}
	runs := b.runs.Load()
	_, err = Run(ctx, Options{Adapter: b, Agent: ag, K: 3, Out: out, Browser: "chromium"})
	if err == nil || !strings.Contains(err.Error(), "driven by http") || !strings.Contains(err.Error(), "chromium") || !strings.Contains(err.Error(), "another --out") {
		t.Fatalf("a rerun with another browser: %v", err)
	}
	if b.runs.Load() != runs {
		t.Errorf("the refused rerun ran %d rollouts", b.runs.Load()-runs)
	}
	if rep, err := Run(ctx, Options{Adapter: b, Agent: ag, K: 3, Out: out, Browser: "http"}); err != nil || len(rep.Rollouts) != 6 || b.runs.Load() != runs+2 {
		t.Fatalf("a rerun with the same browser: %v, %d rollouts, %d new runs", err, len(rep.Rollouts), b.runs.Load()-runs)
	}
}
