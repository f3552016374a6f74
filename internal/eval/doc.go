// Package eval evaluates an agent on a benchmark: k rollouts of every case,
// each in a fresh instance and judged by the benchmark, summarised as the
// paper's pass@k and pass^k and its behaviour measures (docs/eval.md).
//
// Glossary:
//   - Adapter: a benchmark: its name, its cases, and how a rollout of a case
//     is run and judged. Split, the in-domain split of a task pool
//     (pool.json's val split), is the first; an external benchmark
//     (WebArena-style sites, OSWorld-style VM tasks) is another.
//   - Case: one task of a benchmark, with its difficulty and family.
//   - Agent: who acts: the policy of each rollout of a case (a scripted
//     replay, named scripted:..., or a model, model:...).
//   - Record: one finished rollout: V, the criteria passed, its steps,
//     interfaces, switches, GUI steps and model turns, its outcome and
//     failure class, and where its trajectory is.
//   - counted: a rollout that ended without an infrastructure or set-up
//     failure; only counted rollouts enter the rates, the others are
//     counted apart (a format failure is the agent's and counts as failed).
//   - pass@k: the unbiased estimate 1 - C(n-c,k)/C(n,k) per task (n counted
//     rollouts, c passed), averaged over the tasks with n >= k.
//   - pass^k: the unbiased estimate C(c,k)/C(n,k) that k rollouts all
//     pass; "all passed" is the observed share of tasks whose every counted
//     rollout passed.
//   - Behaviour: interfaces per episode, the interface-switch rate, the
//     share of GUI actions, long turns, solve rate by step budget.
//   - Report: eval.json: the records, the per-task table and the overall
//     figures; a rerun with the same output directory resumes from it.
//
// It may import agent, pool, rollout, task and world.
package eval
