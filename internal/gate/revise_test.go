package gate

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
)

// scripted returns an Attempt that evaluates cands[iteration] and records the
// feedback it was given.
func scripted(t *testing.T, cands []Candidate, got *[]string) Attempt {
	return func(ctx context.Context, iteration int, feedback string) (*Report, error) {
		*got = append(*got, feedback)
		if iteration >= len(cands) {
			t.Fatalf("attempt %d: only %d candidates scripted", iteration, len(cands))
		}
		return Evaluate(cands[iteration], Config{})
	}
}

func tooEasy() Candidate {
	c := passingCandidate()
	c.Rollouts[1] = rollout("r2", false, 1)
	c.Rollouts[2] = rollout("r3", false, 1)
	return withProbe(c)
}

func TestRevise(t *testing.T) {
	pass, easy := withProbe(passingCandidate()), tooEasy()
	satisfied := withProbe(passingCandidate())
	satisfied.InitialV = 1
	for _, tc := range []struct {
		name      string
		max       int
		cands     []Candidate
		passed    bool
		attempts  int
		revisions [][]string // failed gates per revision
	}{
		{"passes first time", 2, []Candidate{pass}, true, 1, nil},
		{"passes after one revision", 2, []Candidate{easy, pass}, true, 2, [][]string{{GateDifficulty}}},
		{"passes at the last revision", 2, []Candidate{easy, satisfied, pass}, true, 3, [][]string{{GateDifficulty}, {GateInitialUnsatisfaction}}},
		{"stops after two revisions", 2, []Candidate{easy, easy, satisfied, pass}, false, 3, [][]string{{GateDifficulty}, {GateDifficulty}}},
		{"no revisions allowed", 0, []Candidate{easy, pass}, false, 1, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var feedback []string
			rep, err := Revise(t.Context(), tc.max, scripted(t, tc.cands, &feedback))
			if err != nil {
				t.Fatalf("Revise: %v", err)
			}
			if rep.Passed != tc.passed || len(feedback) != tc.attempts {
				t.Fatalf("passed %t after %d attempts, want %t after %d", rep.Passed, len(feedback), tc.passed, tc.attempts)
			}
			if len(rep.Revisions) != len(tc.revisions) {
				t.Fatalf("%d revisions recorded, want %d: %+v", len(rep.Revisions), len(tc.revisions), rep.Revisions)
			}
			if feedback[0] != "" {
				t.Errorf("first attempt got feedback %q", feedback[0])
			}
			for i, rv := range rep.Revisions {
				if rv.Iteration != i+1 || !slices.Equal(rv.FailedGates, tc.revisions[i]) {
					t.Errorf("revision %d = iteration %d failed %v, want iteration %d failed %v", i, rv.Iteration, rv.FailedGates, i+1, tc.revisions[i])
				}
				if rv.Feedback == "" || rv.Feedback != feedback[i+1] {
					t.Errorf("revision %d feedback %q differs from what attempt %d received (%q)", i, rv.Feedback, i+1, feedback[i+1])
				}
				for _, g := range rv.FailedGates {
					if !strings.Contains(rv.Feedback, "## "+g+": ") {
						t.Errorf("revision %d feedback does not explain %s:\n%s", i, g, rv.Feedback)
					}
				}
			}
		})
	}
}

func TestFeedbackCarriesEvidence(t *testing.T) {
	c := tooEasy()
	c.Rollouts[4].VLLM, c.Rollouts[4].VAgent = Completed, Completed
	rep, err := Evaluate(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	fb := Feedback(rep)
	for _, want := range []string{
		"Task avtech-d7-budget-report failed 2 of 5 quality gates: judge_consistency, difficulty.",
		"## judge_consistency: inconsistent",
		"- rollout r5: V=0, V_LLM=completed, V_agent=completed: disagree",
		"## difficulty: too_easy",
		"- k = 3 of 3 hint-free rollouts succeeded: r1, r2, r3",
	} {
		if !strings.Contains(fb, want) {
			t.Errorf("feedback lacks %q:\n%s", want, fb)
		}
	}
	if strings.Contains(fb, "## solvability") {
		t.Errorf("feedback includes a gate that passed:\n%s", fb)
	}
	if Feedback(mustEvaluate(t, withProbe(passingCandidate()))) != "" {
		t.Error("feedback for a passing report is not empty")
	}
}

func TestReviseErrors(t *testing.T) {
	boom := errors.New("generator crashed")
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	fail := func(ctx context.Context, i int, fb string) (*Report, error) { return nil, boom }
	none := func(ctx context.Context, i int, fb string) (*Report, error) { return nil, nil }
	ok := func(ctx context.Context, i int, fb string) (*Report, error) { return &Report{Passed: true}, nil }
	for _, tc := range []struct {
		name    string
		ctx     context.Context
		max     int
		attempt Attempt
		want    string
	}{
		{"attempt error", nil, 2, fail, "attempt 0: generator crashed"},
		{"nil report", nil, 2, none, "returned no report"},
		{"negative max", nil, -1, ok, "maxRevisions -1 is negative"},
		{"nil attempt", nil, 2, nil, "nil attempt"},
		{"canceled", canceled, 2, ok, "context canceled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := tc.ctx
			if ctx == nil {
				ctx = t.Context()
			}
			rep, err := Revise(ctx, tc.max, tc.attempt)
			if err == nil || !strings.Contains(err.Error(), tc.want) || rep != nil {
				t.Fatalf("Revise = %v, %v; want an error mentioning %q", rep, err, tc.want)
			}
		})
	}
	// The attempt's error stays inspectable.
	if _, err := Revise(t.Context(), 2, fail); !errors.Is(err, boom) {
		t.Errorf("error %v does not wrap the attempt's", err)
	}
}

func mustEvaluate(t *testing.T, c Candidate) *Report {
	t.Helper()
	rep, err := Evaluate(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// TestReviseLeavesInfrastructureAlone: a task rejected only because its
// rollouts' harness never ran is not sent back to the generator, and the
// feedback never calls it too easy or unsolvable.
func TestReviseLeavesInfrastructureAlone(t *testing.T) {
	c := passingCandidate()
	c.Rollouts[0].Err = "browser crashed"
	c = withProbe(c)
	rep, err := Evaluate(c, Config{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Passed || !InfrastructureOnly(rep) {
		t.Fatalf("want a rejection for infrastructure only: passed %t, gates %v", rep.Passed, rep.FailedGates())
	}
	calls := 0
	got, err := Revise(context.Background(), DefaultMaxRevisions, func(ctx context.Context, i int, feedback string) (*Report, error) {
		calls++
		return rep, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 1 || len(got.Revisions) != 0 {
		t.Errorf("an infrastructure rejection was revised %d times", calls-1)
	}
	fb := Feedback(rep)
	if strings.Contains(fb, "make the task harder") || strings.Contains(fb, "make the task feasible") || !strings.Contains(fb, "not at fault") {
		t.Errorf("feedback blames the task for infrastructure:\n%s", fb)
	}
}
