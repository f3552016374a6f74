package gate

import (
	"strings"
	"testing"
)

// TestCoverageGate: an effect V does not notice fails the gate naming the
// step; effects that fail V or change nothing pass it; an infrastructure
// failure is never a pass; nothing replayed is not run.
func TestCoverageGate(t *testing.T) {
	fails := EffectReplay{Step: 4, Tool: "shell.run", V: 0, Passed: 2, Total: 3}
	noop := EffectReplay{Step: 0, Tool: "shell.run", V: 1, SameWorld: true}
	unchecked := EffectReplay{Step: 7, Tool: "mcp.mail__send_message", Note: "the request", V: 1, Passed: 3, Total: 3}
	for _, c := range []struct {
		rs      []EffectReplay
		passed  bool
		verdict string
		says    string
	}{
		{[]EffectReplay{fails, noop}, true, "covered", "changes nothing"},
		{[]EffectReplay{fails, unchecked}, false, "effect_unchecked", "reference steps 8"},
		{[]EffectReplay{fails, {Step: 5, Tool: "browser.click", Err: "chromium died"}}, false, Infrastructure, "chromium died"},
		{nil, false, "not_run", "not replayed"},
	} {
		g := CoverageGate(c.rs)
		if g.Passed != c.passed || g.Verdict != c.verdict || !strings.Contains(strings.Join(g.Evidence, "\n"), c.says) {
			t.Errorf("%+v: got %+v", c.rs, g)
		}
	}
}
