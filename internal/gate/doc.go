// Package gate decides whether a synthesized task is accepted. Its inputs are
// values produced elsewhere (ensemble rollouts, the programmatic verifier, the
// LLM and agent judges); it applies the paper's five quality gates, runs the
// counterfactual probe through a ProbeJudge, drives the revision loop and
// writes the gate report (docs/gate-report.md).
//
// Glossary:
//   - Verdict: a judge's classification of a rollout: completed, failed or
//     world-imperfect.
//   - Rollout: one ensemble attempt at the task: the verifier's V in {0,1},
//     both judges' verdicts, the interfaces actually used, pointers to its
//     evidence, and an infrastructure error if the attempt never really ran.
//   - Candidate: a task under review: declared interfaces, V(W0, W0, empty),
//     its rollouts and the probe's result.
//   - Config: the ensemble's shape (rollouts, hint-free rollouts) and the
//     difficulty levels; its zero value is the paper's configuration.
//   - Gate: one of the five checks, in order: judge_consistency,
//     initial_unsatisfaction, solvability, difficulty, counterfactual_probe;
//     then, beyond the paper, image_ablation for a task that declares an
//     image-decisive sub-task (the reference procedure without the image
//     must fail, and, when its control ran, the same procedure with the
//     image must pass). A rejected gate is a value in the Report, never an error;
//     a rollout whose harness failed in every attempt makes the gates it
//     leaves without evidence fail with verdict infrastructure.
//   - Probe: the counterfactual probe: a blind re-judge, then the opposite
//     framing under pressure, with the verifier files' digests compared
//     before and after.
//   - Revise: the revision loop that feeds failed gates' evidence back to the
//     generator, at most maxRevisions times.
//
// The package imports only the standard library (and may import
// internal/world). It reads no clock and no random source: the same inputs
// give the same report, byte for byte.
package gate
