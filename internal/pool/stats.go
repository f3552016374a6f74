package pool

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/gate"
)

// Stats are a pool run's figures, shaped like the paper's Table 4.
type Stats struct {
	Gated, Accepted, PaperAccepted int
	// BeyondOnly counts tasks whose first evaluation failed only gates
	// beyond the paper's: what the paper's gates would have let through.
	BeyondOnly               int
	Hard, Medium             int
	Direct, AfterFeedback    int
	Personas, States         int
	Subtasks, Switches       float64 // means over accepted tasks
	Revisit                  float64 // share of accepted tasks revisiting an interface
	RefSwitches, RefRevisit  float64 // the same along the reference completions' steps
	HintFree, WithHint       float64 // success rates of the accepted tasks' rollouts
	SolvedByOne, SolvedByAll int     // accepted tasks solved by >= 1 rollout; by every one
	// Revisions is the mean number of revisions in which each gate had
	// failed, over gated tasks.
	Revisions map[string]float64
	// Rejections counts the rejected tasks by failed gate (a task may fail
	// several).
	Rejections map[string]int
	Families   int // task types
	Domains    int // distinct sites and services the accepted tasks use
	// Agreement of V with each offline judge and with both (the judges'
	// majority: a verdict both give), over judged rollouts of gated tasks.
	Agreement map[string]Agreement
	// Per family: gated and accepted.
	ByFamily map[string][2]int
	// RatedBy names what produced the rollouts of the accepted tasks (the
	// difficulty, the success rates), HintedBy those of the hinted ones,
	// JudgedBy the judges the agreement is with: "shortcut agents" (the
	// deterministic offline ensemble, which acts on the hint), "scripted
	// agents" (the replays and scripted policies, which never read a
	// hint), "model NAME", "reference-based offline judges", "model judges". Every
	// figure the table prints names its source from them.
	RatedBy, HintedBy, JudgedBy []string
	// Rerated are the figures of the agents that re-rated the pool's
	// tasks (pool rate; AddRatings), each named.
	Rerated []AgentFigures
	// Defeated counts, per hint-free agent (its policy name), the accepted
	// tasks on which it failed V: for the shortcut ensemble, how many
	// tasks each shortcut defeats.
	Defeated map[string]int
}

// Source of a rollout's policy name, for the labels: a scripted agent
// or a model by name.
func rolloutSource(policy string) string {
	switch {
	case strings.HasPrefix(policy, "scripted:shortcut-"):
		return "shortcut agents"
	case strings.HasPrefix(policy, "scripted:"):
		return "scripted agents"
	case strings.HasPrefix(policy, "model:"):
		return "model " + strings.TrimPrefix(policy, "model:")
	}
	return policy
}

// defeated says, per agent, how many tasks it failed.
func defeated(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, fmt.Sprintf("%s %d", strings.TrimPrefix(p, "scripted:"), m[p]))
	}
	return strings.Join(parts, "; ")
}

// addSource adds src to the sorted set ss.
func addSource(ss []string, src string) []string {
	if i, found := slices.BinarySearch(ss, src); !found {
		ss = slices.Insert(ss, i, src)
	}
	return ss
}

// Agreement is a binary agreement with Cohen's kappa.
type Agreement struct {
	N        int     `json:"n"`
	Agree    float64 `json:"agree"`
	Kappa    float64 `json:"kappa"`
	Positive int     `json:"v_positive"`
}

// Compute derives the statistics from outcomes; covers maps a family to
// the sites and services it uses (for domains).
func Compute(outs []*Outcome, covers func(family string) []string) *Stats {
	s := &Stats{Revisions: map[string]float64{}, Rejections: map[string]int{}, Agreement: map[string]Agreement{}, ByFamily: map[string][2]int{}}
	personas, states, fams, domains := map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
	var hf, hfOK, wh, whOK int
	type pair struct{ v, j bool }
	pairs := map[string][]pair{}
	for _, o := range outs {
		s.Gated++
		bf := s.ByFamily[o.Family]
		bf[0]++
		for _, rv := range o.Revisions {
			for _, name := range rv.FailedGates {
				s.Revisions[name]++
			}
		}
		if len(o.Revisions) > 0 && !slices.ContainsFunc(o.Revisions[0].FailedGates, func(g string) bool { return slices.Contains(PaperGates(), g) }) {
			s.BeyondOnly++
		}
		for _, r := range o.Rollouts {
			if !r.countable() || !r.Ensemble() {
				continue
			}
			v := r.V == 1
			l := r.VLLM == gate.Completed
			a := r.VAgent == gate.Completed
			judges := "reference-based offline judges"
			if r.JudgeEvidence["llm"] != nil {
				judges = "model judges"
			}
			s.JudgedBy = addSource(s.JudgedBy, judges)
			pairs["replay judge"] = append(pairs["replay judge"], pair{v, l})
			if r.VAgent != "" {
				pairs["observer"] = append(pairs["observer"], pair{v, a})
				if l == a {
					pairs["both judges"] = append(pairs["both judges"], pair{v, l})
				}
			}
		}
		if o.PaperAccepted {
			s.PaperAccepted++
		}
		if !o.Accepted {
			for _, name := range o.Report.FailedGates() {
				s.Rejections[name]++
			}
			s.ByFamily[o.Family] = bf
			continue
		}
		bf[1]++
		s.ByFamily[o.Family] = bf
		s.Accepted++
		switch o.Difficulty {
		case "hard":
			s.Hard++
		case "medium":
			s.Medium++
		}
		if o.Direct {
			s.Direct++
		} else {
			s.AfterFeedback++
		}
		personas[o.Persona] = true
		states[fmt.Sprintf("%s/%d", o.Persona, o.Day)] = true
		fams[o.Family] = true
		if covers != nil {
			for _, d := range covers(o.Family) {
				domains[d] = true
			}
		}
		s.Subtasks += float64(o.Subtasks)
		s.Switches += float64(o.Switches)
		if o.Revisits {
			s.Revisit++
		}
		s.RefSwitches += float64(o.RefSwitches)
		if o.RefRevisits {
			s.RefRevisit++
		}
		ok, all := 0, 0
		for _, r := range o.Rollouts {
			if !r.Ensemble() {
				continue
			}
			all++
			if r.countable() && r.V == 1 {
				ok++
			}
			s.RatedBy = addSource(s.RatedBy, rolloutSource(r.Policy))
			if r.Hint {
				s.HintedBy = addSource(s.HintedBy, rolloutSource(r.Policy))
				wh++
				if r.countable() && r.V == 1 {
					whOK++
				}
			} else {
				hf++
				if r.countable() && r.V == 1 {
					hfOK++
				} else if r.countable() {
					if s.Defeated == nil {
						s.Defeated = map[string]int{}
					}
					s.Defeated[r.Policy]++
				}
			}
		}
		if ok > 0 {
			s.SolvedByOne++
		}
		if ok == all {
			s.SolvedByAll++
		}
	}
	if s.Accepted > 0 {
		n := float64(s.Accepted)
		s.Subtasks /= n
		s.Switches /= n
		s.Revisit /= n
		s.RefSwitches /= n
		s.RefRevisit /= n
	}
	if hf > 0 {
		s.HintFree = float64(hfOK) / float64(hf)
	}
	if wh > 0 {
		s.WithHint = float64(whOK) / float64(wh)
	}
	if s.Gated > 0 {
		for k := range s.Revisions {
			s.Revisions[k] /= float64(s.Gated)
		}
	}
	s.Personas, s.States, s.Families, s.Domains = len(personas), len(states), len(fams), len(domains)
	for name, ps := range pairs {
		var a Agreement
		var tp, tn, vp, jp int
		for _, p := range ps {
			a.N++
			if p.v == p.j {
				if p.v {
					tp++
				} else {
					tn++
				}
			}
			if p.v {
				vp++
			}
			if p.j {
				jp++
			}
		}
		a.Positive = vp
		if a.N > 0 {
			n := float64(a.N)
			po := float64(tp+tn) / n
			pe := (float64(vp)/n)*(float64(jp)/n) + (1-float64(vp)/n)*(1-float64(jp)/n)
			a.Agree = po
			if pe < 1 {
				a.Kappa = (po - pe) / (1 - pe)
			} else {
				a.Kappa = 1
			}
		}
		s.Agreement[name] = a
	}
	return s
}

// Table writes the statistics beside the paper's Table 4, as Markdown.
func (s *Stats) Table(w io.Writer) {
	pct := func(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }
	rate := 0.0
	if s.Gated > 0 {
		rate = float64(s.Accepted) / float64(s.Gated)
	}
	perPersona, perState := 0.0, 0.0
	if s.Personas > 0 {
		perPersona = float64(s.Accepted) / float64(s.Personas)
	}
	if s.States > 0 {
		perState = float64(s.Accepted) / float64(s.States)
	}
	by := func(ss []string) string {
		if len(ss) == 0 {
			return "no rollouts"
		}
		return strings.Join(ss, ", ")
	}
	// A hint only scripted agents were given is a figure of nothing: they
	// never read it.
	withHint := [3]string{"success with hint (" + by(s.HintedBy) + ")", pct(s.WithHint), "45.6% (models)"}
	if len(s.HintedBy) == 0 || slices.Equal(s.HintedBy, []string{"scripted agents"}) {
		withHint = [3]string{"success with hint", "not measured: scripted agents do not read the hint (rate with a model)", "45.6% (models)"}
	}
	rows := [][3]string{
		{"tasks accepted", fmt.Sprint(s.Accepted), "341"},
		{"hard / medium (rated by " + by(s.RatedBy) + ")", fmt.Sprintf("%d / %d", s.Hard, s.Medium), "273 / 68 (models)"},
		{"personas; tasks per persona", fmt.Sprintf("%d; %.1f", s.Personas, perPersona), "-"},
		{"world states; tasks per state", fmt.Sprintf("%d; %.2f", s.States, perState), "-"},
		{"sub-tasks per task", fmt.Sprintf("%.1f", s.Subtasks), "4.2"},
		{"interface switches per task (essential sub-tasks)", fmt.Sprintf("%.1f", s.Switches), "3.1"},
		{"tasks revisiting an interface (essential sub-tasks)", pct(s.Revisit), "74.5%"},
		{"along the reference's steps: switches; revisiting", fmt.Sprintf("%.1f; %s", s.RefSwitches, pct(s.RefRevisit)), "-"},
		{"success without hint (" + by(s.RatedBy) + ")", pct(s.HintFree), "21.3% (models)"},
		{"accepted tasks each hint-free agent fails (" + by(s.RatedBy) + ")", defeated(s.Defeated), "-"},
		withHint,
		{"solved by >= 1 rollout; by all", fmt.Sprintf("%d; %d", s.SolvedByOne, s.SolvedByAll), "all; none"},
	}
	for _, a := range s.Rerated {
		rows = append(rows, a.rows()...)
	}
	for _, name := range []string{gate.GateInitialUnsatisfaction, gate.GateJudgeConsistency, gate.GateSolvability, gate.GateDifficulty, gate.GateCounterfactualProbe, GateInterfaces, GateCoverage, GateMutation, GateFalseCheck} {
		paper := map[string]string{gate.GateInitialUnsatisfaction: "0.05", gate.GateJudgeConsistency: "1.09", gate.GateSolvability: "1.16", gate.GateDifficulty: "0.39", gate.GateCounterfactualProbe: "0.18"}[name]
		if paper == "" {
			paper = "- (beyond the paper)"
		}
		rows = append(rows, [3]string{"mean revisions: " + name, fmt.Sprintf("%.2f", s.Revisions[name]), paper})
	}
	rows = append(rows,
		[3]string{"acceptance rate (all gates)", fmt.Sprintf("%s (%d of %d)", pct(rate), s.Accepted, s.Gated), "53%"},
		[3]string{"accepted by the paper's gates alone", fmt.Sprint(s.PaperAccepted), "-"},
		[3]string{"sent back only by the checks beyond the paper (first evaluation)", fmt.Sprint(s.BeyondOnly), "-"},
		[3]string{"direct / after feedback", fmt.Sprintf("%d / %d", s.Direct, s.AfterFeedback), "reported"},
		[3]string{"domains (sites and services used)", fmt.Sprint(s.Domains), "134"},
		[3]string{"task types (families)", fmt.Sprint(s.Families), "91"},
	)
	for _, name := range []string{"both judges", "replay judge", "observer"} {
		a, ok := s.Agreement[name]
		if !ok {
			continue
		}
		paper := "-"
		if name == "both judges" {
			paper = "95%, kappa 0.90 (model judges)"
		}
		rows = append(rows, [3]string{"V vs " + name + " (" + by(s.JudgedBy) + ")", fmt.Sprintf("%s, kappa %.2f (n = %d)", pct(a.Agree), a.Kappa, a.N), paper})
	}
	fmt.Fprintln(w, "| | wildawm | paper (Table 4) |")
	fmt.Fprintln(w, "|---|---|---|")
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s |\n", r[0], r[1], r[2])
	}
	if len(s.Rejections) > 0 {
		var parts []string
		for _, k := range sortedKeys(s.Rejections) {
			parts = append(parts, fmt.Sprintf("%s %d", k, s.Rejections[k]))
		}
		fmt.Fprintf(w, "\nRejected tasks by failed gate: %s.\n", strings.Join(parts, ", "))
	}
	if len(s.ByFamily) > 0 {
		fmt.Fprintln(w, "\n| family | gated | accepted |")
		fmt.Fprintln(w, "|---|---|---|")
		fs := sortedKeys(s.ByFamily)
		slices.Sort(fs)
		for _, f := range fs {
			fmt.Fprintf(w, "| %s | %d | %d |\n", f, s.ByFamily[f][0], s.ByFamily[f][1])
		}
	}
}
