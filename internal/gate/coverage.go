package gate

import (
	"fmt"
	"strings"
)

// GateCoverage is the instruction-coverage check: every effect the
// reference completion has on the world (a clause of the instruction it
// carries out: a row written, a file saved, a message sent) is one V
// notices when it is missing.
const GateCoverage = "coverage"

// EffectReplay is the reference completion replayed without one of its
// steps (policy.ReplayWithoutStep), as the coverage check reads it.
type EffectReplay struct {
	Step int    `json:"step"` // 0-based index into the reference
	Tool string `json:"tool"`
	Note string `json:"note,omitempty"`
	// V is the verifier's verdict on the replay's final world; Passed and
	// Total its criteria.
	V, Passed, Total int
	// SameWorld: the replay ends in the reference's own final world (the
	// step changed nothing V could look at).
	SameWorld bool   `json:"same_world"`
	Err       string `json:"error,omitempty"` // infrastructure, in every attempt
}

// CoverageGate decides the coverage check: it fails when the reference
// without one of its effects ends in another world and V still passes:
// the clause of the instruction that step carries out is not checked.
func CoverageGate(rs []EffectReplay) GateResult {
	g := GateResult{Name: GateCoverage}
	if len(rs) == 0 {
		g.Verdict, g.Evidence = "not_run", []string{"the reference completion was not replayed without each of its effects"}
		return g
	}
	var unchecked, infra []string
	for _, r := range rs {
		what := fmt.Sprintf("step %d (%s", r.Step+1, r.Tool)
		if r.Note != "" {
			what += ": " + r.Note
		}
		what += ")"
		switch {
		case r.Err != "":
			infra = append(infra, fmt.Sprintf("the reference without %s: infrastructure error in every attempt: %s", what, r.Err))
		case r.SameWorld:
			g.Evidence = append(g.Evidence, fmt.Sprintf("without %s the world ends as the reference leaves it: not an effect", what))
		case r.V == 1:
			unchecked = append(unchecked, fmt.Sprint(r.Step+1))
			g.Evidence = append(g.Evidence, fmt.Sprintf("without %s the world ends otherwise and V still passes (%d/%d): the clause of the instruction it carries out is not checked; add a criterion for it", what, r.Passed, r.Total))
		default:
			g.Evidence = append(g.Evidence, fmt.Sprintf("without %s V fails (%d/%d)", what, r.Passed, r.Total))
		}
	}
	switch {
	case len(unchecked) > 0:
		g.Verdict = "effect_unchecked"
		g.Evidence = append([]string{fmt.Sprintf("%d of %d effects are not checked by V: reference steps %s", len(unchecked), len(rs), strings.Join(unchecked, ", "))}, g.Evidence...)
	case len(infra) > 0:
		g.Verdict = Infrastructure
		g.Evidence = append(infra, g.Evidence...)
	default:
		g.Passed, g.Verdict = true, "covered"
		g.Evidence = append([]string{fmt.Sprintf("each of the reference's %d effects, left out, fails V or changes nothing", len(rs))}, g.Evidence...)
	}
	return g
}
