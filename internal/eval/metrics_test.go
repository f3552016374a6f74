package eval

import (
	"math"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
)

// subsets calls f with every k-subset of {0..n-1}, as a bit mask.
func subsets(n, k int, f func(mask int)) {
	for m := 0; m < 1<<n; m++ {
		bits := 0
		for i := 0; i < n; i++ {
			bits += m >> i & 1
		}
		if bits == k {
			f(m)
		}
	}
}

// TestEstimatorsAgainstEnumeration: pass@k and pass^k are the shares of
// the k-subsets of n rollouts (c of them successes) with at least one
// success and with only successes, for every n up to 10.
func TestEstimatorsAgainstEnumeration(t *testing.T) {
	for n := 1; n <= 10; n++ {
		for c := 0; c <= n; c++ {
			success := 1<<c - 1 // rollouts 0..c-1 passed
			for k := 1; k <= n; k++ {
				total, some, all := 0, 0, 0
				subsets(n, k, func(m int) {
					total++
					if m&success != 0 {
						some++
					}
					if m&success == m {
						all++
					}
				})
				at, ok1 := PassAtK(n, c, k)
				hat, ok2 := PassHatK(n, c, k)
				if !ok1 || !ok2 {
					t.Fatalf("n=%d c=%d k=%d: not defined", n, c, k)
				}
				if want := float64(some) / float64(total); math.Abs(at-want) > 1e-12 {
					t.Errorf("pass@%d n=%d c=%d: %v, enumeration %v", k, n, c, at, want)
				}
				if want := float64(all) / float64(total); math.Abs(hat-want) > 1e-12 {
					t.Errorf("pass^%d n=%d c=%d: %v, enumeration %v", k, n, c, hat, want)
				}
			}
		}
	}
}

// TestEstimatorsStableAndBounded: large n stays finite and exact where the
// binomials would overflow; out-of-range arguments are undefined.
func TestEstimatorsStableAndBounded(t *testing.T) {
	// C(1000, 500) overflows float64; the product does not.
	p, ok := PassAtK(1000, 1, 500)
	if !ok || math.Abs(p-0.5) > 1e-12 {
		t.Errorf("pass@500 with n=1000 c=1: %v %v, want 0.5", p, ok)
	}
	h, ok := PassHatK(1000, 999, 500)
	if !ok || math.Abs(h-0.5) > 1e-12 {
		t.Errorf("pass^500 with n=1000 c=999: %v %v, want 0.5", h, ok)
	}
	if p, _ := PassAtK(8, 2, 1); p != 0.25 {
		t.Errorf("pass@1 is c/n: %v", p)
	}
	for _, a := range [][3]int{{3, 4, 1}, {3, -1, 1}, {3, 1, 0}, {3, 1, 4}, {0, 0, 1}} {
		if _, ok := PassAtK(a[0], a[1], a[2]); ok {
			t.Errorf("pass@k%v defined", a)
		}
		if _, ok := PassHatK(a[0], a[1], a[2]); ok {
			t.Errorf("pass^k%v defined", a)
		}
	}
}

func TestObserve(t *testing.T) {
	tr := &agent.Trajectory{Steps: []agent.Step{
		{Interface: agent.CLI}, {Interface: agent.GUI}, {Interface: agent.GUI, Error: "no such element"},
		{Interface: agent.MCP}, {Interface: agent.MCP}, {Interface: agent.GUI},
	}, Turns: []agent.Turn{
		{Kind: "act", CompletionTokens: 100}, {Kind: "act", CompletionTokens: LongTurnTokens},
		{Kind: "compaction", CompletionTokens: 9000}, {Kind: "act", CompletionTokens: LongTurnTokens - 1},
	}}
	o := Observe(tr)
	if o.Steps != 6 || o.Switches != 3 || o.GUISteps != 3 || len(o.Interfaces) != 3 || o.ActTurns != 3 || o.LongTurns != 1 {
		t.Fatalf("%+v", o)
	}
	// Interfaces of failed steps only do not count.
	o = Observe(&agent.Trajectory{Steps: []agent.Step{{Interface: agent.GUI, Error: "refused"}, {Interface: agent.CLI}}})
	if len(o.Interfaces) != 1 || o.Interfaces[0] != agent.CLI || o.ActTurns != 0 {
		t.Fatalf("%+v", o)
	}
}

// rec is a record of task with the given verdict, steps and failure.
func rec(task string, i int, v, steps int, failure string) Record {
	r := Record{Task: task, Index: i, V: v, Passed: v, Total: 1, Failure: failure,
		Observation: Observation{Steps: steps, Interfaces: []string{agent.GUI}, GUISteps: steps}}
	if v == 0 && failure == "" {
		r.Failure = agent.FailAgent
	}
	return r
}

func TestMeasure(t *testing.T) {
	rs := []Record{
		{V: 1, Observation: Observation{Steps: 10, Interfaces: []string{agent.GUI, agent.MCP}, Switches: 3, GUISteps: 4}},
		{V: 1, Observation: Observation{Steps: 50, Interfaces: []string{agent.CLI}, Switches: 0, GUISteps: 0, ActTurns: 4, LongTurns: 1}},
		{V: 0, Failure: agent.FailAgent, Observation: Observation{Steps: 1, Interfaces: []string{agent.GUI, agent.CLI, agent.MCP}, GUISteps: 1}},
		// Not counted: left out of every measure.
		{V: 0, Failure: agent.FailInfra, Observation: Observation{Steps: 99, Interfaces: []string{agent.GUI}, GUISteps: 99}},
	}
	b := Measure(rs, []int{40, 120})
	if b.Episodes != 3 || b.InterfacesPerEpisode != 2 || b.Switches != 3 || b.Transitions != 58 || b.Steps != 61 || b.GUISteps != 5 {
		t.Fatalf("%+v", b)
	}
	if math.Abs(b.SwitchRate-3.0/58) > 1e-12 || math.Abs(b.GUIShare-5.0/61) > 1e-12 || b.ModelEpisodes != 1 || b.LongTurnShare != 0.25 {
		t.Fatalf("%+v", b)
	}
	if b.Solved[0] != (BudgetRate{40, 1, 1.0 / 3}) || b.Solved[1] != (BudgetRate{120, 2, 2.0 / 3}) {
		t.Fatalf("by budget: %+v", b.Solved)
	}
}

// TestSummarize: infrastructure and set-up failures leave the rates and are
// counted apart, a format failure counts as failed, a task with fewer
// counted rollouts than k defines pass@k no further, and the figures come
// by difficulty, hardest first.
func TestSummarize(t *testing.T) {
	cases := []Case{{ID: "a", Difficulty: "medium"}, {ID: "b", Difficulty: "hard"}, {ID: "c", Difficulty: "hard"}}
	rs := []Record{
		rec("a", 1, 1, 5, ""), rec("a", 2, 1, 5, ""), rec("a", 3, 1, 5, ""),
		rec("b", 1, 1, 5, ""), rec("b", 2, 0, 5, ""), rec("b", 3, 0, 2, agent.FailFormat),
		rec("c", 1, 0, 5, agent.FailInfra), rec("c", 2, 1, 5, ""), rec("c", 3, 0, 0, agent.FailSetup),
	}
	rows, o := Summarize(cases, rs, 3, DefaultBudgets)
	a, b, c := rows[0], rows[1], rows[2]
	if a.N != 3 || a.C != 3 || !a.AllPassed || len(a.PassAt) != 3 || a.PassHat[2] != 1 {
		t.Errorf("a: %+v", a)
	}
	if b.N != 3 || b.C != 1 || b.Format != 1 || b.AllPassed || math.Abs(b.PassAt[0]-1.0/3) > 1e-12 || b.PassAt[2] != 1 || b.PassHat[1] != 0 {
		t.Errorf("b: %+v", b)
	}
	if c.Rollouts != 3 || c.N != 1 || c.C != 1 || c.Infra != 1 || c.Setup != 1 || len(c.PassAt) != 1 || !c.AllPassed {
		t.Errorf("c: %+v", c)
	}
	if o.Rollouts != 9 || o.Counted != 7 || o.Infra != 1 || o.Setup != 1 || o.Format != 1 {
		t.Errorf("overall counts: %+v", o)
	}
	// pass@1 over three tasks; pass@3 over the two with three counted.
	if want := (1 + 1.0/3 + 1) / 3; math.Abs(o.PassAt[0].Value-want) > 1e-12 || o.PassAt[0].Tasks != 3 {
		t.Errorf("pass@1: %+v, want %v", o.PassAt[0], want)
	}
	if o.PassAt[2].Tasks != 2 || o.PassAt[2].Value != 1 || o.PassHat[2].Value != 0.5 {
		t.Errorf("k=3: %+v %+v", o.PassAt[2], o.PassHat[2])
	}
	if math.Abs(o.AllPassed-2.0/3) > 1e-12 || o.AllTasks != 3 {
		t.Errorf("all passed: %v of %d", o.AllPassed, o.AllTasks)
	}
	if len(o.ByDifficulty) != 2 || o.ByDifficulty[0].Name != "hard" || o.ByDifficulty[0].Tasks != 2 || o.ByDifficulty[1].PassAt[0].Value != 1 {
		t.Errorf("by difficulty: %+v", o.ByDifficulty)
	}
	if o.Behaviour.Episodes != 7 {
		t.Errorf("behaviour over %d episodes, want the 7 counted", o.Behaviour.Episodes)
	}
}
