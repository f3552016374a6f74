package loadtest_test

import (
	"context"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/loadtest"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/taskgen/casestudytest"
)

// TestNoLostStates drives a few instances with concurrent resets, MCP calls
// and shell commands, then checks every final state against a replay.
func TestNoLostStates(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	ctx := context.Background()
	p := casestudytest.New(t, "")
	defer p.Close()
	for _, c := range []struct {
		name     string
		profile  string
		host     bool
		chromium bool
	}{{"mix", "", false, false}, {"rl-profile-sandbox-host", "rl", true, false}, {"rl-profile-chromium", "rl", true, true}} {
		t.Run(c.name, func(t *testing.T) {
			var chromium *browser.Browser
			if c.chromium {
				if err := browser.Available(); err != nil {
					runtime.SkipOutsideCI(t, "the rl profile's shared browser: apt-get install -y chromium: "+err.Error())
				}
				b, err := browser.New(ctx, browser.Options{})
				if err != nil {
					t.Fatal(err)
				}
				defer b.Close(ctx)
				chromium = b
			}
			rep, err := loadtest.Run(ctx, loadtest.Options{Store: p.Store, Snapshot: p.W0(), CatalogDir: p.Env.CatalogDir,
				RunDir: p.Env.WorkDir, Self: p.Env.Self, Instances: 8, Workers: 4, Duration: 4 * time.Second, Seed: 1,
				Profile: c.profile, RolloutSteps: 10, SandboxHost: c.host, Chromium: chromium, Progress: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%+v", rep)
			if rep.Lost != 0 || len(rep.Failures) != 0 {
				t.Fatalf("lost or corrupted states: %d; failures: %v", rep.Lost, rep.Failures)
			}
			if rep.Checked != 8 || rep.Resets == 0 || rep.ToolCalls == 0 || rep.ShellCalls == 0 {
				t.Fatalf("the load did not exercise everything: %+v", rep)
			}
			if c.profile == "rl" && (rep.Rollouts == 0 || rep.InterfaceN["gui"] == 0 || rep.InterfaceN["file"] == 0 || rep.StepsPerSec <= 0) {
				t.Fatalf("the rl profile did not run rollouts of every interface: %+v", rep)
			}
			if want := map[bool]string{false: "http", true: "chromium"}[c.chromium]; c.profile == "rl" && rep.GUIBrowser != want {
				t.Fatalf("GUI steps through %q, want %q", rep.GUIBrowser, want)
			}
		})
	}
}
