package gate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

var all = []string{"gui", "mcp", "cli"}

// rollout builds a rollout whose judges agree with v.
func rollout(id string, hint bool, v int) Rollout {
	return Rollout{
		ID: id, Policy: "policy-" + id, Hint: hint, V: v,
		VLLM: verdictOf(v), VAgent: verdictOf(v),
		InterfacesUsed: slices.Clone(all),
		Evidence:       map[string]string{"trajectory": "rollouts/" + id + "/trajectory.jsonl", "verifier": "rollouts/" + id + "/verifier.json"},
	}
}

// verifierDigests stands for the verifier files' digests around a probe.
var verifierDigests = map[string]string{"verifier/scripts/check_order.py": "3b1f0c2a9d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8"}

// passingCandidate passes every gate: hard (k = 1), solved by r1, r4, r6.
func passingCandidate() Candidate {
	c := Candidate{
		TaskID:     "avtech-d7-budget-report",
		Interfaces: slices.Clone(all),
		InitialV:   0,
		Rollouts: []Rollout{
			rollout("r1", false, 1), rollout("r2", false, 0), rollout("r3", false, 0),
			rollout("r4", true, 1), rollout("r5", true, 0), rollout("r6", true, 1),
		},
	}
	c.Rollouts[1].InterfacesUsed = []string{"gui", "cli"} // a failure may skip an interface
	return c
}

// withProbe runs the probe over c's rollouts with a judge that holds.
func withProbe(c Candidate) Candidate {
	p, err := Probe(context.Background(), &FakeJudge{}, c.Rollouts, FakeDigests(verifierDigests, verifierDigests))
	if err != nil {
		panic(err)
	}
	c.Probe = p
	return c
}

func TestEvaluate(t *testing.T) {
	for _, tc := range []struct {
		name       string
		edit       func(c *Candidate) // before the probe runs
		editProbe  func(c *Candidate) // after
		cfg        Config
		failed     []string // exactly the gates that fail
		difficulty string
		evidence   map[string]string // gate -> substring of one evidence line
		verdicts   map[string]string // gate -> verdict
		infra      []string
	}{
		{
			name: "hard passes", edit: func(c *Candidate) {}, difficulty: "hard",
			evidence: map[string]string{GateDifficulty: "k = 1 of 3 hint-free rollouts succeeded: r1", GateJudgeConsistency: "all 6 judged rollouts agree"},
			verdicts: map[string]string{GateJudgeConsistency: "consistent", GateInitialUnsatisfaction: "unsatisfied", GateSolvability: "solved", GateDifficulty: "hard", GateCounterfactualProbe: "held"},
		},
		{
			name: "hard with no hint-free success passes", edit: func(c *Candidate) { c.Rollouts[0] = rollout("r1", false, 0) },
			difficulty: "hard", evidence: map[string]string{GateDifficulty: "k = 0 of 3"},
		},
		{
			name: "medium passes", edit: func(c *Candidate) { c.Rollouts[1] = rollout("r2", false, 1) },
			difficulty: "medium", evidence: map[string]string{GateDifficulty: "level medium [2,2]"},
		},
		{
			name: "too easy", edit: func(c *Candidate) { c.Rollouts[1] = rollout("r2", false, 1); c.Rollouts[2] = rollout("r3", false, 1) },
			failed: []string{GateDifficulty}, difficulty: TooEasy,
			evidence: map[string]string{GateDifficulty: "k = 3 is above every level (hard [0,1], medium [2,2]): too easy"},
			verdicts: map[string]string{GateDifficulty: TooEasy},
		},
		{
			name: "k = 3 is a level when the top level reaches hint_free",
			edit: func(c *Candidate) { c.Rollouts[1] = rollout("r2", false, 1); c.Rollouts[2] = rollout("r3", false, 1) },
			cfg:  Config{Levels: []DifficultyLevel{{"hard", 0, 1}, {"medium", 2, 3}}}, difficulty: "medium",
		},
		{
			name: "satisfied at W0", edit: func(c *Candidate) { c.InitialV = 1 },
			failed: []string{GateInitialUnsatisfaction}, difficulty: "hard",
			evidence: map[string]string{GateInitialUnsatisfaction: "V(W0, W0, empty answer) = 1"},
			verdicts: map[string]string{GateInitialUnsatisfaction: "satisfied_at_w0"},
		},
		{
			name: "verifier disagrees with the judges", edit: func(c *Candidate) { c.Rollouts[4].V = 1 },
			failed: []string{GateJudgeConsistency}, difficulty: "hard",
			evidence: map[string]string{GateJudgeConsistency: "rollout r5: V=1, V_LLM=failed, V_agent=failed: disagree [trajectory=rollouts/r5/trajectory.jsonl"},
			verdicts: map[string]string{GateJudgeConsistency: "inconsistent"},
		},
		{
			name: "one judge disagrees", edit: func(c *Candidate) { c.Rollouts[2].VAgent = Completed },
			failed: []string{GateJudgeConsistency}, difficulty: "hard",
			evidence: map[string]string{GateJudgeConsistency: "1 of 6 judged rollouts disagree: r3"},
		},
		{
			name: "world-imperfect never agrees", edit: func(c *Candidate) { c.Rollouts[1].VLLM = WorldImperfect },
			failed: []string{GateJudgeConsistency}, difficulty: "hard",
			evidence: map[string]string{GateJudgeConsistency: "rollout r2: V=0, V_LLM=world-imperfect, V_agent=failed (a judge blames the world, not the agent): disagree"},
		},
		{
			name: "unsolvable", edit: func(c *Candidate) {
				for i, r := range c.Rollouts {
					c.Rollouts[i] = rollout(r.ID, r.Hint, 0)
				}
			},
			failed: []string{GateSolvability}, difficulty: "hard",
			evidence: map[string]string{GateSolvability: "0 of 6 rollouts succeeded (V=1)"},
			verdicts: map[string]string{GateSolvability: "unsolved"},
		},
		{
			name: "success without a declared interface", edit: func(c *Candidate) { c.Rollouts[3].InterfacesUsed = []string{"gui", "cli"} },
			failed: []string{GateSolvability}, difficulty: "hard",
			evidence: map[string]string{GateSolvability: "rollout r4: V=1 without using mcp (used: gui, cli; declared: gui, mcp, cli)"},
			verdicts: map[string]string{GateSolvability: "interface_not_used"},
		},
		{
			// A model's file tools (read_file, write_file) are a used
			// interface the gate accepts, standing for none declared.
			name: "file tools for the shell", edit: func(c *Candidate) { c.Rollouts[3].InterfacesUsed = []string{"gui", "mcp", "file"} },
			failed: []string{GateSolvability}, difficulty: "hard",
			evidence: map[string]string{GateSolvability: "rollout r4: V=1 without using cli (used: gui, mcp, file; declared: gui, mcp, cli; its file tools are not the shell)"},
			verdicts: map[string]string{GateSolvability: "interface_not_used"},
		},
		{
			name: "file tools beside every declared one", edit: func(c *Candidate) {
				for i := range c.Rollouts {
					c.Rollouts[i].InterfacesUsed = append(c.Rollouts[i].InterfacesUsed, "file")
				}
			},
			difficulty: "hard",
		},
		{
			name: "probe not run", editProbe: func(c *Candidate) { c.Probe = nil },
			failed: []string{GateCounterfactualProbe}, difficulty: "hard",
			verdicts: map[string]string{GateCounterfactualProbe: "not_run"},
		},
		{
			name: "probe caved", editProbe: func(c *Candidate) {
				c.Probe.Passed, c.Probe.Outcome = false, OutcomeCaved
				c.Probe.PerRollout[0].Pressured, c.Probe.PerRollout[0].Outcome = Failed, OutcomeCaved
			},
			failed: []string{GateCounterfactualProbe}, difficulty: "hard",
			evidence: map[string]string{GateCounterfactualProbe: `rollout r1: ensemble=completed, blind re-judge=completed, under pressure "NOT completed (failed)" -> failed: caved`},
		},
		{
			name: "probe files changed", editProbe: func(c *Candidate) {
				c.Probe.Passed, c.Probe.Outcome = false, OutcomeCaveFilesChanged
				c.Probe.DigestsAfter = map[string]string{"verifier/scripts/check_order.py": "00ff"}
				c.Probe.ChangedFiles = []string{"verifier/scripts/check_order.py"}
			},
			failed: []string{GateCounterfactualProbe}, difficulty: "hard",
			evidence: map[string]string{GateCounterfactualProbe: "verifier file verifier/scripts/check_order.py: changed during the probe (sha256 3b1f0c2a9d4e -> 00ff)"},
		},
		{
			name: "infrastructure error is flagged and not judged", edit: func(c *Candidate) {
				c.Rollouts[4] = Rollout{ID: "r5", Hint: true, Err: "sandbox did not boot"}
			},
			difficulty: "hard", infra: []string{"r5"},
			evidence: map[string]string{GateJudgeConsistency: "rollout r5: not judged, infrastructure error: sandbox did not boot", GateSolvability: "rollout r5: infrastructure error in every attempt, not a success"},
		},
		{
			name: "a hint-free infrastructure error is never difficulty", edit: func(c *Candidate) {
				c.Rollouts[0].Err = "browser crashed"
				for i := 3; i < 6; i++ {
					c.Rollouts[i] = rollout(c.Rollouts[i].ID, true, 0)
				}
			},
			failed: []string{GateSolvability, GateDifficulty}, difficulty: Infrastructure, infra: []string{"r1"},
			evidence: map[string]string{GateDifficulty: "rollout r1: infrastructure error in every attempt, not a success: browser crashed",
				GateSolvability: "0 of 6 rollouts succeeded (V=1); rollouts whose harness failed in every attempt say nothing about solvability: rejected for infrastructure"},
		},
		{
			name: "image-decisive task solved without the image", edit: func(c *Candidate) {
				c.ImageDecisive = true
				c.Ablation = &Ablation{Subtask: "pick", RolloutID: "ablate-image", Policy: "oracle", V: 1}
			},
			failed: []string{GateImageAblation}, difficulty: "hard",
			evidence: map[string]string{GateImageAblation: "V=1: the task is solved without seeing the image"},
		},
		{
			name: "image-decisive task without its ablation check", edit: func(c *Candidate) { c.ImageDecisive = true },
			failed: []string{GateImageAblation}, difficulty: "hard",
			evidence: map[string]string{GateImageAblation: "was not run"},
		},
		{
			name: "image-decisive task that needs the image", edit: func(c *Candidate) {
				c.ImageDecisive = true
				c.Ablation = &Ablation{Subtask: "pick", RolloutID: "ablate-image", Policy: "oracle", V: 0}
			},
			difficulty: "hard",
			evidence:   map[string]string{GateImageAblation: "V=0: without the image the reference procedure fails"},
		},
		{
			name: "image ablation whose policy fails with the image too", edit: func(c *Candidate) {
				c.ImageDecisive = true
				c.Ablation = &Ablation{Subtask: "pick", RolloutID: "ablate-image", Policy: "oracle", V: 0,
					Control: &AblationControl{RolloutID: "ablate-image-control", V: 0}}
			},
			failed: []string{GateImageAblation}, difficulty: "hard",
			evidence: map[string]string{GateImageAblation: "fails the task with the image too"},
		},
		{
			name: "image ablation whose control passes", edit: func(c *Candidate) {
				c.ImageDecisive = true
				c.Ablation = &Ablation{Subtask: "pick", RolloutID: "ablate-image", Policy: "oracle", V: 0,
					Control: &AblationControl{RolloutID: "ablate-image-control", V: 1}}
			},
			difficulty: "hard",
			evidence:   map[string]string{GateImageAblation: "V=0: without the image the reference procedure fails"},
		},
		{
			name: "several gates fail at once", edit: func(c *Candidate) {
				c.InitialV = 1
				c.Rollouts[1] = rollout("r2", false, 1)
				c.Rollouts[2] = rollout("r3", false, 1)
				c.Rollouts[2].VLLM = Failed
			},
			editProbe:  func(c *Candidate) { c.Probe = nil },
			failed:     []string{GateJudgeConsistency, GateInitialUnsatisfaction, GateDifficulty, GateCounterfactualProbe},
			difficulty: TooEasy,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := passingCandidate()
			if tc.edit != nil {
				tc.edit(&c)
			}
			c = withProbe(c)
			if tc.editProbe != nil {
				tc.editProbe(&c)
			}
			rep, err := Evaluate(c, tc.cfg)
			if err != nil {
				t.Fatalf("Evaluate: %v", err)
			}
			want := GateNames()
			if c.ImageDecisive {
				want = append(want, GateImageAblation)
			}
			if names := gateNames(rep); !slices.Equal(names, want) {
				t.Fatalf("gates = %v, want %v", names, want)
			}
			for _, g := range rep.Gates {
				if len(g.Evidence) == 0 || g.Verdict == "" {
					t.Errorf("gate %s has no verdict or evidence: %+v", g.Name, g)
				}
			}
			if got := rep.FailedGates(); !slices.Equal(got, tc.failed) {
				t.Errorf("failed gates = %v, want %v\n%s", got, tc.failed, dump(rep))
			}
			if rep.Passed != (len(tc.failed) == 0) {
				t.Errorf("Passed = %t with failed gates %v", rep.Passed, tc.failed)
			}
			if rep.Difficulty != tc.difficulty {
				t.Errorf("Difficulty = %q, want %q", rep.Difficulty, tc.difficulty)
			}
			for gate, want := range tc.evidence {
				g, _ := rep.Gate(gate)
				if !slices.ContainsFunc(g.Evidence, func(e string) bool { return strings.Contains(e, want) }) {
					t.Errorf("gate %s evidence lacks %q:\n  %s", gate, want, strings.Join(g.Evidence, "\n  "))
				}
			}
			for gate, want := range tc.verdicts {
				if g, _ := rep.Gate(gate); g.Verdict != want {
					t.Errorf("gate %s verdict = %q, want %q", gate, g.Verdict, want)
				}
			}
			if !slices.Equal(rep.InfraErrors, tc.infra) {
				t.Errorf("InfraErrors = %v, want %v", rep.InfraErrors, tc.infra)
			}
			if rep.Version != ReportVersion || rep.TaskID != c.TaskID || len(rep.Rollouts) != 6 || rep.Config.Rollouts != 6 {
				t.Errorf("report header = %d %q %d rollouts, config %+v", rep.Version, rep.TaskID, len(rep.Rollouts), rep.Config)
			}
		})
	}
}

func TestEvaluateDoesNotAlias(t *testing.T) {
	c := withProbe(passingCandidate())
	rep, err := Evaluate(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	c.Rollouts[0].InterfacesUsed[0] = "xxx"
	c.Rollouts[0].Evidence["trajectory"] = "xxx"
	if rep.Rollouts[0].InterfacesUsed[0] != "gui" || rep.Rollouts[0].Evidence["trajectory"] == "xxx" {
		t.Error("the report shares slices or maps with the candidate")
	}
}

func TestEvaluateInvalidCandidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(c *Candidate)
		want string
	}{
		{"empty task id", func(c *Candidate) { c.TaskID = "" }, "empty task_id"},
		{"no interfaces", func(c *Candidate) { c.Interfaces = nil }, "no declared interfaces"},
		{"unknown interface", func(c *Candidate) { c.Interfaces = []string{"GUI"} }, `declared interface "GUI"`},
		{"duplicate interface", func(c *Candidate) { c.Interfaces = []string{"gui", "gui"} }, "listed twice"},
		{"initial V", func(c *Candidate) { c.InitialV = 2 }, "initial_v = 2"},
		{"too few rollouts", func(c *Candidate) { c.Rollouts = c.Rollouts[:5] }, "5 rollouts; config wants 6"},
		{"wrong hint-free count", func(c *Candidate) { c.Rollouts[3].Hint = false }, "4 hint-free rollouts; config wants 3"},
		{"empty rollout id", func(c *Candidate) { c.Rollouts[2].ID = "" }, "rollouts[2]: empty id"},
		{"duplicate rollout id", func(c *Candidate) { c.Rollouts[2].ID = "r1" }, `rollout "r1": duplicate id`},
		{"V not binary", func(c *Candidate) { c.Rollouts[2].V = 2 }, `rollout "r3": v = 2`},
		{"unknown verdict", func(c *Candidate) { c.Rollouts[2].VLLM = "done" }, `rollout "r3": v_llm "done"`},
		{"missing verdict", func(c *Candidate) { c.Rollouts[2].VAgent = "" }, `rollout "r3": v_agent ""`},
		{"unknown used interface", func(c *Candidate) { c.Rollouts[2].InterfacesUsed = []string{"shell"} }, `used interface "shell"`},
		{"probe contradicts itself", func(c *Candidate) { c.Probe.Passed = false }, "probe passed = false contradicts its outcome"},
		{"probe outcome", func(c *Candidate) { c.Probe.Outcome = "ok" }, `probe outcome "ok"`},
		{"probe of another rollout", func(c *Candidate) { c.Probe.PerRollout[0].RolloutID = "r9" }, `probe judged rollout "r9"`},
		{"stale probe", func(c *Candidate) { c.Rollouts[2] = rollout("r3", false, 1) }, `probe took rollout "r3" as failed but its V is 1`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := withProbe(passingCandidate())
			tc.edit(&c)
			rep, err := Evaluate(c, Config{})
			if !errors.Is(err, ErrInvalidCandidate) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Evaluate error = %v, want ErrInvalidCandidate mentioning %q", err, tc.want)
			}
			if rep != nil {
				t.Error("report returned with an error")
			}
		})
	}
}

func gateNames(r *Report) []string {
	var out []string
	for _, g := range r.Gates {
		out = append(out, g.Name)
	}
	return out
}

func dump(r *Report) string {
	b, _ := r.Encode()
	return string(b)
}
