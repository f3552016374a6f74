package gate

import (
	"fmt"
	"strings"
)

// The checks beyond the paper that decide over a replay of the reference
// or V on a chosen world (the gater gathers the evidence; these decide).
const (
	GateOracle     = "oracle"
	GateAnswerOnly = "answer_only"
	GateInterfaces = "interfaces"
	GateMutation   = "mutation"
	// GateFalseCheck reads the agent judge's false checks: a rollout
	// whose verifier result the agent judge calls wrong, naming the
	// criteria, sends the task to revision with them.
	GateFalseCheck = "false_check"
)

// Verified is V on one world: the verdict, the criteria passed of the
// total, the verifier's summary; Err when it could not be computed.
type Verified struct {
	V, Passed, Total int
	Summary          string
	Err              string
}

// OracleGate: the reference completion's final world (named by world)
// passes V.
func OracleGate(world string, v Verified) GateResult {
	g := GateResult{Name: GateOracle}
	switch {
	case v.Err != "":
		g.Verdict, g.Evidence = Infrastructure, []string{"could not verify the reference's final world: " + v.Err}
	case v.V == 1:
		g.Passed, g.Verdict = true, "passes"
		g.Evidence = []string{fmt.Sprintf("the reference completion's final world %s passes V (%d/%d)", world, v.Passed, v.Total)}
	default:
		g.Verdict = "fails"
		g.Evidence = []string{"the reference completion's final world fails V: " + v.Summary}
	}
	return g
}

// AnswerOnlyGate: the expected answer on the untouched initial world fails
// V, where the reference changes the world (changes false: not
// applicable, passed).
func AnswerOnlyGate(answer string, changes bool, v Verified) GateResult {
	g := GateResult{Name: GateAnswerOnly}
	switch {
	case !changes:
		g.Passed, g.Verdict = true, "not_applicable"
		g.Evidence = []string{"the reference does not change the world: an answer-only solution is a solution"}
	case v.V == 0:
		g.Passed, g.Verdict = true, "fails"
		g.Evidence = []string{fmt.Sprintf("the expected answer %q on the untouched initial world fails V (%d/%d)", clipText(answer, 80), v.Passed, v.Total)}
	default:
		g.Verdict = "passes"
		g.Evidence = []string{fmt.Sprintf("the expected answer %q on the untouched initial world passes V: the verifier checks the answer, not the changes the task asks for", clipText(answer, 80))}
	}
	return g
}

// InterfaceReplay is the reference completion replayed without one
// declared interface's steps (and what they told), as the interfaces
// check reads it.
type InterfaceReplay struct {
	Interface        string
	V, Passed, Total int
	// SameWorld: it ends in the reference's own final world.
	SameWorld  bool
	Trajectory string
	Err        string // infrastructure, in every attempt
}

// InterfacesGate: every declared interface is indispensable: the
// reference without it fails V.
func InterfacesGate(rs []InterfaceReplay) GateResult {
	g := GateResult{Name: GateInterfaces}
	var bad, infra []string
	for _, r := range rs {
		switch {
		case r.Err != "":
			infra = append(infra, fmt.Sprintf("the replay without %s: infrastructure error in every attempt: %s", r.Interface, r.Err))
		case r.V == 1 && r.SameWorld:
			// The replay without them knows nothing it read there (each
			// fact declared at a left-out step takes its wrong value), yet
			// ends in the reference's world: nothing read there is needed,
			// or the reference inlines what it read without declaring it.
			bad = append(bad, r.Interface)
			g.Evidence = append(g.Evidence, fmt.Sprintf("the reference completion without its %s steps, and without what it read, computed or chose there, leaves the reference's own world and passes V (%d/%d; trajectory %s): nothing done or read through %s is needed, or a later step carries data read there that no fact declares (docs/task.md, facts)", r.Interface, r.Passed, r.Total, r.Trajectory, r.Interface))
		case r.V == 1:
			bad = append(bad, r.Interface)
			g.Evidence = append(g.Evidence, fmt.Sprintf("the reference completion without its %s steps changes the world otherwise and still passes V (%d/%d; trajectory %s): V does not check what the task does through %s", r.Interface, r.Passed, r.Total, r.Trajectory, r.Interface))
		default:
			g.Evidence = append(g.Evidence, fmt.Sprintf("the reference completion without its %s steps fails V (%d/%d)", r.Interface, r.Passed, r.Total))
		}
	}
	switch {
	case len(rs) == 0:
		g.Verdict, g.Evidence = "not_run", []string{"the replays without each interface were not run"}
	case len(bad) > 0:
		g.Verdict = "not_indispensable"
		g.Evidence = append([]string{fmt.Sprintf("declared but not needed: %s", strings.Join(bad, ", "))}, g.Evidence...)
	case len(infra) > 0:
		g.Verdict = Infrastructure
		g.Evidence = append(infra, g.Evidence...)
	default:
		g.Passed, g.Verdict = true, "indispensable"
	}
	return g
}

// FalseCall is the agent judge calling one ensemble rollout's verifier
// result wrong, naming the criteria (none: it named none).
type FalseCall struct {
	Rollout  string
	V        int
	Criteria []string
}

// FalseCheckGate: no ensemble rollout's verifier result is one the agent
// judge calls wrong. Failed, its evidence names the rollouts and the
// criteria, which the revision's feedback carries. judged false: no judge
// made such calls (the offline judges do not), and the gate is not
// applicable.
func FalseCheckGate(judged bool, calls []FalseCall) GateResult {
	g := GateResult{Name: GateFalseCheck}
	if !judged {
		g.Passed, g.Verdict = true, OutcomeNotApplicable
		g.Evidence = []string{"the offline judges make no false-check call: --judge-model runs the agent judge, whose false checks this gate reads"}
		return g
	}
	for _, c := range calls {
		named := "naming no criterion"
		if len(c.Criteria) > 0 {
			named = "criteria " + strings.Join(c.Criteria, ", ")
		}
		g.Evidence = append(g.Evidence, fmt.Sprintf("rollout %s (V=%d): the agent judge calls the verifier's result wrong (%s): check that each named criterion tests what the instruction asks", c.Rollout, c.V, named))
	}
	if len(calls) > 0 {
		g.Verdict = "false_check"
		return g
	}
	g.Passed, g.Verdict = true, "none"
	g.Evidence = []string{"the agent judge called no verifier result wrong"}
	return g
}

// MutationResult is the mutation check's finding as the gate reads it:
// whether every criterion was flipped by a mutation of the solved world
// that flipped it alone, the criteria no mutation flipped, and the
// checker's evidence.
type MutationResult struct {
	Passed     bool
	Untargeted []string
	Evidence   []string
}

// MutationGate: every criterion of V is flipped by some mutation of the
// solved world, and by one that flips it alone. m nil: the check was not
// run, which fails.
func MutationGate(m *MutationResult) GateResult {
	g := GateResult{Name: GateMutation}
	switch {
	case m == nil:
		g.Verdict, g.Evidence = "not_run", []string{"the mutation check was not run"}
	case m.Passed:
		g.Passed, g.Verdict, g.Evidence = true, "isolated", m.Evidence
	case len(m.Untargeted) > 0:
		g.Verdict, g.Evidence = "untargeted", m.Evidence
	default:
		g.Verdict, g.Evidence = "entangled", m.Evidence
	}
	return g
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
