package gate

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// DefaultMaxRevisions is the paper's bound on fix iterations.
const DefaultMaxRevisions = 2

// Attempt builds a candidate (the first time from scratch, later revised with
// feedback), runs it through the gates and returns its report. iteration is 0
// for the first attempt and i for the i-th revision; feedback is "" at 0.
type Attempt func(ctx context.Context, iteration int, feedback string) (*Report, error)

// Revise runs attempt, and while its report fails, builds diagnostic feedback
// from the failed gates' evidence (Feedback) and runs it again, at most
// maxRevisions more times. It returns the last report, Passed or not, with
// Revisions recording every trip back to the generator. A task rejected after
// the last revision is a report, not an error; the error is for a failed
// attempt, a nil report, cancellation or a negative maxRevisions.
func Revise(ctx context.Context, maxRevisions int, attempt Attempt) (*Report, error) {
	if maxRevisions < 0 {
		return nil, fmt.Errorf("revise: maxRevisions %d is negative", maxRevisions)
	}
	if attempt == nil {
		return nil, errors.New("revise: nil attempt")
	}
	var revisions []Revision
	feedback := ""
	for i := 0; ; i++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("revise: %w", err)
		}
		rep, err := attempt(ctx, i, feedback)
		if err != nil {
			return nil, fmt.Errorf("revise: attempt %d: %w", i, err)
		}
		if rep == nil {
			return nil, fmt.Errorf("revise: attempt %d returned no report", i)
		}
		// A task rejected only for infrastructure is not the generator's to
		// fix: it goes back as it is, to be run again on a healthy harness.
		if rep.Passed || i == maxRevisions || InfrastructureOnly(rep) {
			rep.Revisions = revisions
			return rep, nil
		}
		feedback = Feedback(rep)
		revisions = append(revisions, Revision{Iteration: i + 1, FailedGates: rep.FailedGates(), Feedback: feedback})
	}
}

// InfrastructureOnly reports whether rep failed and every failed gate's
// verdict is Infrastructure: the evidence is missing, not the task wrong.
func InfrastructureOnly(rep *Report) bool {
	failed := 0
	for _, g := range rep.Gates {
		if g.Passed {
			continue
		}
		if g.Verdict != Infrastructure {
			return false
		}
		failed++
	}
	return failed > 0
}

// Feedback renders the failed gates of rep as diagnostic feedback for the
// generator: each failed gate with its verdict and evidence. It is "" when
// every gate passed.
func Feedback(rep *Report) string {
	failed := rep.FailedGates()
	if len(failed) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Task %s failed %d of %d quality gates: %s.\n", rep.TaskID, len(failed), len(rep.Gates), strings.Join(failed, ", "))
	for _, g := range rep.Gates {
		if g.Passed {
			continue
		}
		fmt.Fprintf(&b, "\n## %s: %s\n%s\n", g.Name, g.Verdict, gateAdvice(g.Name, g.Verdict))
		for _, e := range g.Evidence {
			fmt.Fprintf(&b, "- %s\n", e)
		}
	}
	if len(rep.InfraErrors) > 0 {
		fmt.Fprintf(&b, "\nNote: the harness failed in every attempt of %s; those rollouts are not successes, and they say nothing about the task.\n", strings.Join(rep.InfraErrors, ", "))
	}
	return b.String()
}

// gateAdvice tells the generator what a gate's failure usually means.
func gateAdvice(name, verdict string) string {
	if verdict == Infrastructure {
		return "The rollouts' harness failed in every attempt, so this gate has no evidence: the task is not at fault; run it again on a healthy harness."
	}
	switch name {
	case GateJudgeConsistency:
		return "The verifier and the judges disagree: fix the verifier's checks or the rubric so that V=1 exactly when the task is completed; a world-imperfect verdict means the world lacks what the task needs."
	case GateInitialUnsatisfaction:
		return "The verifier accepts the initial world with an empty answer: make its checks require the changes the task asks for."
	case GateSolvability:
		return "No rollout solved the task using every declared interface: make the task feasible in this world, make each declared interface indispensable, or declare only the interfaces it needs."
	case GateDifficulty:
		return "Too many hint-free rollouts succeeded: make the task harder (more dependent sub-tasks, a decision informed by a script's result)."
	case GateImageAblation:
		if verdict == "not_run" {
			return "The task declares an image-decisive sub-task but the image-ablation check did not run: run it."
		}
		if verdict == "uninformative" {
			return "The image-ablation policy fails the task even with the image shown, so the ablation cannot tell whether the picture decides it: make the task solvable by that procedure, or gate it with an ablation policy that solves it."
		}
		return "The reference procedure succeeds with the decisive image withheld: a text order or a text attribute decides the task, not the picture. Make only the picture tell the right choice apart (no listing, ranking or tie-break order may single it out), or drop the image-decisive declaration."
	case GateCounterfactualProbe:
		if verdict == "not_run" {
			return "The probe has not run on this candidate yet; it will once the other gates pass."
		}
		return "The judge's verdict did not survive the probe (a blind re-judge that disagrees, a verdict changed under pressure, or verifier files modified): make the verdict evident from the trajectory and the verifier's evidence."
	}
	return ""
}
