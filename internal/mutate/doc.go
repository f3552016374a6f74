// Package mutate runs the mutation check of a synthesised task: breaking
// one criterion's target in the reference's solved world must fail that
// criterion and only it. Check derives every mutation by execution, with no
// knowledge of the task: from the diff W0 -> W_ref, each mutation undoes or
// perturbs one thing the reference changed, is applied to a private copy of
// W_ref, and V is computed on the copy. W_ref is copied once per check:
// each mutation changes one database, one home path or only the answer,
// only the criteria that can read that thing are computed again (every
// script criterion among them), and the thing is copied back from W_ref.
//
// Glossary:
//   - W0, W_ref: the task's initial world and the world the reference
//     completion left (both read-only; never written).
//   - mutation (candidate): one small change to a copy of W_ref — a row the
//     reference added deleted, duplicated or with one column perturbed, a
//     changed column restored to its W0 value, a deleted row re-inserted, a
//     file the reference wrote deleted, a line dropped, a token changed, a
//     junk line appended, a removed file restored — or a wrong final answer.
//   - flip: a criterion that passes on W_ref and fails on the mutated copy.
//   - isolated: some mutation flips the criterion and nothing else.
//   - entangled: every mutation that flips it flips others too (the
//     criterion is redundant with them, or checks nothing of its own).
//   - untargeted: no mutation of what the reference changed flips it: it
//     checks something the reference did not change (e.g. it already holds
//     in W0).
//   - unresolved: the evaluation cap was hit before any mutation flipped it.
//
// It imports internal/state, internal/task, internal/verify and
// internal/world.
package mutate
