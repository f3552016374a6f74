package gate

import (
	"strings"
	"testing"
)

// TestBeyondThePaper: the oracle, answer-only, interfaces, false-check
// and mutation decisions
// pass and reject on the evidence alone, and an infrastructure failure
// is never a pass.
func TestBeyondThePaper(t *testing.T) {
	check := func(name string, g GateResult, passed bool, verdict, says string) {
		t.Helper()
		if g.Passed != passed || g.Verdict != verdict || !strings.Contains(strings.Join(g.Evidence, "\n"), says) {
			t.Errorf("%s: got %+v, want passed %t, %s, evidence naming %q", name, g, passed, verdict, says)
		}
	}
	check("oracle passes", OracleGate("ab12", Verified{V: 1, Passed: 3, Total: 3}), true, "passes", "ab12 passes V (3/3)")
	check("oracle fails", OracleGate("ab12", Verified{V: 0, Summary: "2/3 criteria passed; saved failed"}), false, "fails", "saved failed")
	check("oracle infra", OracleGate("ab12", Verified{Err: "store gone"}), false, Infrastructure, "store gone")
	check("answer alone fails", AnswerOnlyGate("Bean There", true, Verified{V: 0, Passed: 1, Total: 3}), true, "fails", "(1/3)")
	check("answer alone passes", AnswerOnlyGate("Bean There", true, Verified{V: 1}), false, "passes", "checks the answer")
	check("nothing to change", AnswerOnlyGate("42", false, Verified{V: 1}), true, "not_applicable", "does not change the world")
	fails := InterfaceReplay{Interface: "gui", V: 0, Passed: 1, Total: 3}
	check("indispensable", InterfacesGate([]InterfaceReplay{fails, {Interface: "mcp", V: 0}}), true, "indispensable", "without its gui steps fails V")
	check("read only, not needed", InterfacesGate([]InterfaceReplay{fails, {Interface: "mcp", V: 1, SameWorld: true}}), false, "not_indispensable", "no fact declares")
	check("changes otherwise", InterfacesGate([]InterfaceReplay{fails, {Interface: "cli", V: 1}}), false, "not_indispensable", "V does not check what the task does through cli")
	check("infra", InterfacesGate([]InterfaceReplay{fails, {Interface: "cli", Err: "sandbox died"}}), false, Infrastructure, "sandbox died")
	check("not run", InterfacesGate(nil), false, "not_run", "not run")
	check("no judge model", FalseCheckGate(false, []FalseCall{{Rollout: "r1"}}), true, OutcomeNotApplicable, "--judge-model")
	check("no false call", FalseCheckGate(true, nil), true, "none", "called no verifier result wrong")
	check("false call", FalseCheckGate(true, []FalseCall{{Rollout: "r2", V: 1, Criteria: []string{"c1", "c3"}}}), false, "false_check", "rollout r2 (V=1)")
	check("false call names its criteria", FalseCheckGate(true, []FalseCall{{Rollout: "r2", Criteria: []string{"c1", "c3"}}}), false, "false_check", "criteria c1, c3")
	check("mutation isolated", MutationGate(&MutationResult{Passed: true, Evidence: []string{"c1 flipped alone"}}), true, "isolated", "c1 flipped alone")
	check("mutation untargeted", MutationGate(&MutationResult{Untargeted: []string{"c2"}, Evidence: []string{"c2: no mutation flips it"}}), false, "untargeted", "c2: no mutation")
	check("mutation entangled", MutationGate(&MutationResult{Evidence: []string{"c1 flips with c2"}}), false, "entangled", "c1 flips with c2")
	check("mutation not run", MutationGate(nil), false, "not_run", "not run")
}
