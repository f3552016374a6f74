// Package rollout runs an ensemble of policies on a task, each in its own
// fresh instance of the task's initial world, records their trajectories,
// snapshots their final worlds and verifies them.
//
// Glossary:
//   - Spec: one rollout to run: a policy and whether it sees the hint.
//   - Ensemble: the paper's 6 rollouts, 3 with the hint and 3 without.
//   - Result: the trajectory, the final world's snapshot, V's result.
//   - Env: what rollouts run against (a store, the materialiser, the
//     browser, the shells); Factory: the one maker of a command's Envs,
//     one per key (a persona), sharing one browser, one set of shells and
//     the process's uid allocator (sandbox.UIDs), so that no two sandboxes
//     share a uid; ScriptRunner: a verifier's or a mutation check's
//     scripts in the Env's sandboxes, as a uid of their own.
//   - fault: what the agent did to its own answer or world that leaves it
//     unverifiable (an answer over verify.MaxAnswerBytes, a final world the
//     store refuses with world.ErrAgentFault): Trajectory.Fault, set by
//     SnapshotFinal; Judge scores it V 0, never infrastructure.
package rollout
