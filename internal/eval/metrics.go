package eval

import (
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
)

// DefaultBudgets are the paper's step budgets for the solve rate by budget.
var DefaultBudgets = []int{40, 120}

// LongTurnTokens is the completion size from which a model turn is long
// (the paper's ">= 8K output tokens").
const LongTurnTokens = 8192

// PassAtK is the unbiased estimate of pass@k for a task with n rollouts of
// which c passed: the chance that at least one of k rollouts drawn without
// replacement passes, 1 - C(n-c,k)/C(n,k). It is computed as the product
// 1 - prod_{i=n-c+1..n} (1 - k/i), which never forms a binomial
// coefficient. ok is false unless 0 <= c <= n and 1 <= k <= n.
func PassAtK(n, c, k int) (p float64, ok bool) {
	if c < 0 || c > n || k < 1 || k > n {
		return 0, false
	}
	if n-c < k {
		return 1, true // every k-subset holds a success
	}
	q := 1.0
	for i := n - c + 1; i <= n; i++ {
		q *= 1 - float64(k)/float64(i)
	}
	return 1 - q, true
}

// PassHatK is the unbiased estimate of pass^k for a task with n rollouts of
// which c passed: the chance that k rollouts drawn without replacement all
// pass, C(c,k)/C(n,k), computed as prod_{i=0..k-1} (c-i)/(n-i). ok is
// false unless 0 <= c <= n and 1 <= k <= n.
func PassHatK(n, c, k int) (p float64, ok bool) {
	if c < 0 || c > n || k < 1 || k > n {
		return 0, false
	}
	if c < k {
		return 0, true
	}
	p = 1.0
	for i := 0; i < k; i++ {
		p *= float64(c-i) / float64(n-i)
	}
	return p, true
}

// Observation is what a trajectory says about the agent's behaviour: the
// figures a Record keeps so that a resumed evaluation needs no trajectory.
type Observation struct {
	// Steps is the number of tool calls.
	Steps int `json:"steps"`
	// Interfaces are the distinct interfaces of the steps without an
	// error, sorted.
	Interfaces []string `json:"interfaces"`
	// Switches counts consecutive steps on different interfaces, of
	// Steps-1 transitions.
	Switches int `json:"switches"`
	// GUISteps counts the steps on the GUI interface (browser and vision).
	GUISteps int `json:"gui_steps"`
	// ActTurns and LongTurns count the model's act turns and those whose
	// completion had at least LongTurnTokens tokens; both 0 when no model
	// acted (a scripted policy has no turns).
	ActTurns  int `json:"act_turns,omitempty"`
	LongTurns int `json:"long_turns,omitempty"`
}

// Observe reads the behaviour figures off a trajectory.
func Observe(t *agent.Trajectory) Observation {
	o := Observation{Steps: len(t.Steps), Interfaces: t.InterfacesUsed(), Switches: t.Switches()}
	if o.Interfaces == nil {
		o.Interfaces = []string{}
	}
	for _, s := range t.Steps {
		if s.Interface == agent.GUI {
			o.GUISteps++
		}
	}
	for _, tu := range t.Turns {
		if tu.Kind != "act" {
			continue
		}
		o.ActTurns++
		if tu.CompletionTokens >= LongTurnTokens {
			o.LongTurns++
		}
	}
	return o
}

// BudgetRate is the solve rate within a step budget: the counted rollouts V
// passed in at most Budget steps, of all counted rollouts.
type BudgetRate struct {
	Budget int     `json:"budget"`
	Solved int     `json:"solved"`
	Rate   float64 `json:"rate"`
}

// Behaviour is the paper's behaviour measures over counted rollouts. Each
// rate is pooled: a sum over the rollouts divided by a sum over them.
type Behaviour struct {
	// Episodes is the number of counted rollouts measured.
	Episodes int `json:"episodes"`
	// InterfacesPerEpisode is the mean number of distinct interfaces used
	// (steps without an error).
	InterfacesPerEpisode float64 `json:"interfaces_per_episode"`
	// SwitchRate is the interface switches over the transitions between
	// consecutive steps (Steps-1 per rollout with a step).
	Switches    int     `json:"switches"`
	Transitions int     `json:"transitions"`
	SwitchRate  float64 `json:"switch_rate"`
	// GUIShare is the GUI steps over all steps (tool calls).
	GUISteps int     `json:"gui_steps"`
	Steps    int     `json:"steps"`
	GUIShare float64 `json:"gui_share"`
	// ModelEpisodes counts the rollouts with model turns; LongTurnShare is
	// LongTurns over ActTurns among them (0 when no model acted).
	ModelEpisodes int     `json:"model_episodes"`
	ActTurns      int     `json:"act_turns"`
	LongTurns     int     `json:"long_turns"`
	LongTurnShare float64 `json:"long_turn_share"`
	// Solved is the solve rate within each step budget.
	Solved []BudgetRate `json:"solved_within"`
}

// Measure computes the behaviour measures over the counted records.
func Measure(rs []Record, budgets []int) Behaviour {
	b := Behaviour{Solved: []BudgetRate{}}
	interfaces := 0
	solved := make([]int, len(budgets))
	for _, r := range rs {
		if !r.Counted() {
			continue
		}
		b.Episodes++
		interfaces += len(r.Interfaces)
		b.Switches += r.Switches
		if r.Steps > 0 {
			b.Transitions += r.Steps - 1
		}
		b.GUISteps += r.GUISteps
		b.Steps += r.Steps
		if r.ActTurns > 0 {
			b.ModelEpisodes++
			b.ActTurns += r.ActTurns
			b.LongTurns += r.LongTurns
		}
		for i, budget := range budgets {
			if r.Solved() && r.Steps <= budget {
				solved[i]++
			}
		}
	}
	b.InterfacesPerEpisode = ratio(interfaces, b.Episodes)
	b.SwitchRate = ratio(b.Switches, b.Transitions)
	b.GUIShare = ratio(b.GUISteps, b.Steps)
	b.LongTurnShare = ratio(b.LongTurns, b.ActTurns)
	for i, budget := range budgets {
		b.Solved = append(b.Solved, BudgetRate{Budget: budget, Solved: solved[i], Rate: ratio(solved[i], b.Episodes)})
	}
	return b
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// Mean is a figure averaged over the tasks that define it.
type Mean struct {
	K     int     `json:"k"`
	Value float64 `json:"value"`
	// Tasks is how many tasks defined it (n >= k).
	Tasks int `json:"tasks"`
}

// TaskResult is one row of the per-task table.
type TaskResult struct {
	ID         string `json:"id"`
	Difficulty string `json:"difficulty,omitempty"`
	Family     string `json:"family,omitempty"`
	// Rollouts is how many rollouts ran; N of them counted, C passed V.
	Rollouts int `json:"rollouts"`
	N        int `json:"n"`
	C        int `json:"c"`
	// Infra and Setup are the rollouts left out of the rates; Format the
	// counted ones that failed on a tool call that could not be parsed.
	Infra  int `json:"infra"`
	Setup  int `json:"setup"`
	Format int `json:"format"`
	// PassAt[k-1] and PassHat[k-1] are the unbiased pass@k and pass^k for
	// k = 1..min(N, K).
	PassAt  []float64 `json:"pass_at"`
	PassHat []float64 `json:"pass_hat"`
	// AllPassed is the observed pass^k: N > 0 and every counted rollout
	// passed.
	AllPassed bool `json:"all_passed"`
	// MeanSteps and MeanCriteria are over the counted rollouts (MeanCriteria
	// is the mean share of criteria passed).
	MeanSteps    float64 `json:"mean_steps"`
	MeanCriteria float64 `json:"mean_criteria"`
}

// Group is the headline figures of a set of tasks.
type Group struct {
	Name  string `json:"name,omitempty"`
	Tasks int    `json:"tasks"`
	// PassAt and PassHat are the per-task estimates averaged, for k = 1..K.
	PassAt  []Mean `json:"pass_at"`
	PassHat []Mean `json:"pass_hat"`
	// AllPassed is the share of tasks with a counted rollout whose every
	// counted rollout passed (the observed pass^k), of AllTasks such tasks.
	AllPassed float64 `json:"all_passed"`
	AllTasks  int     `json:"all_tasks"`
}

// Overall is the evaluation's figures over every task.
type Overall struct {
	Group
	// Rollouts ran; Counted entered the rates; Infra, Setup were left out;
	// Format counted as failed.
	Rollouts int `json:"rollouts"`
	Counted  int `json:"counted"`
	Infra    int `json:"infra"`
	Setup    int `json:"setup"`
	Format   int `json:"format"`
	// ByDifficulty is the same figures per difficulty level of the tasks
	// (those with one), hardest first as the pool names them.
	ByDifficulty []Group   `json:"by_difficulty"`
	Behaviour    Behaviour `json:"behaviour"`
}

// Summarize builds the per-task table and the overall figures from the
// records of the cases' rollouts, for k = 1..K.
func Summarize(cases []Case, rs []Record, k int, budgets []int) ([]TaskResult, Overall) {
	byTask := map[string][]Record{}
	for _, r := range rs {
		byTask[r.Task] = append(byTask[r.Task], r)
	}
	var rows []TaskResult
	var all []Record
	for _, c := range cases {
		row := TaskResult{ID: c.ID, Difficulty: c.Difficulty, Family: c.Family, PassAt: []float64{}, PassHat: []float64{}}
		steps, crit := 0, 0.0
		for _, r := range byTask[c.ID] {
			all = append(all, r)
			row.Rollouts++
			switch r.Failure {
			case agent.FailInfra:
				row.Infra++
				continue
			case agent.FailSetup:
				row.Setup++
				continue
			case agent.FailFormat:
				row.Format++
			}
			row.N++
			steps += r.Steps
			if r.Total > 0 {
				crit += float64(r.Passed) / float64(r.Total)
			}
			if r.Solved() {
				row.C++
			}
		}
		for j := 1; j <= min(row.N, k); j++ {
			a, _ := PassAtK(row.N, row.C, j)
			h, _ := PassHatK(row.N, row.C, j)
			row.PassAt, row.PassHat = append(row.PassAt, a), append(row.PassHat, h)
		}
		row.AllPassed = row.N > 0 && row.C == row.N
		row.MeanSteps = ratioF(float64(steps), row.N)
		row.MeanCriteria = ratioF(crit, row.N)
		rows = append(rows, row)
	}
	o := Overall{Group: group("", rows, k)}
	for _, row := range rows {
		o.Rollouts += row.Rollouts
		o.Counted += row.N
		o.Infra += row.Infra
		o.Setup += row.Setup
		o.Format += row.Format
	}
	var levels []string
	for _, row := range rows {
		if row.Difficulty != "" && !slices.Contains(levels, row.Difficulty) {
			levels = append(levels, row.Difficulty)
		}
	}
	slices.SortFunc(levels, func(a, b string) int {
		if d := levelRank(a) - levelRank(b); d != 0 {
			return d
		}
		return strings.Compare(a, b)
	})
	o.ByDifficulty = []Group{}
	for _, lv := range levels {
		var sub []TaskResult
		for _, row := range rows {
			if row.Difficulty == lv {
				sub = append(sub, row)
			}
		}
		o.ByDifficulty = append(o.ByDifficulty, group(lv, sub, k))
	}
	o.Behaviour = Measure(all, budgets)
	return rows, o
}

// levelRank orders the gates' difficulty levels hardest first; other
// names come after, alphabetically.
func levelRank(s string) int {
	switch s {
	case "hard":
		return 0
	case "medium":
		return 1
	case "easy":
		return 2
	}
	return 3
}

// group averages the rows' estimates.
func group(name string, rows []TaskResult, k int) Group {
	g := Group{Name: name, Tasks: len(rows), PassAt: []Mean{}, PassHat: []Mean{}}
	for j := 1; j <= k; j++ {
		a, h := Mean{K: j}, Mean{K: j}
		for _, row := range rows {
			if len(row.PassAt) >= j {
				a.Value += row.PassAt[j-1]
				h.Value += row.PassHat[j-1]
				a.Tasks++
				h.Tasks++
			}
		}
		a.Value, h.Value = ratioF(a.Value, a.Tasks), ratioF(h.Value, h.Tasks)
		g.PassAt, g.PassHat = append(g.PassAt, a), append(g.PassHat, h)
	}
	passed := 0
	for _, row := range rows {
		if row.N > 0 {
			g.AllTasks++
			if row.AllPassed {
				passed++
			}
		}
	}
	g.AllPassed = ratio(passed, g.AllTasks)
	return g
}

func ratioF(a float64, b int) float64 {
	if b == 0 {
		return 0
	}
	return a / float64(b)
}
