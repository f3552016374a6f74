// Package rl is the pure logic of the paper's RL recipe (docs/rl.md): no I/O,
// no wall clock, no global random source (randomness comes in as a *rand.Rand).
//
// Glossary:
//   - Reward: r_j = -1 on a format failure, else min(1, V + 0.1/N * sum v_i).
//   - Config: G base rollouts per task, chunks of C = 8, kappa_max = 3.
//   - Kappa: the per-task multiplier carried across steps (starts at 1);
//     Config.Launch is how many rollouts a task starts with, Config.Update the
//     kappa after a step.
//   - Group: one task's rollouts in one step, slot by slot; it decides
//     Mastered, Ready or Exhausted and says which slots to launch or cancel.
//   - Outcome: a finished rollout's reward and format-failure flag.
//   - Select: the G-subset of a ready pool with rewards from both halves.
//   - Advantages: the three-case advantage over the finished pool of K.
//   - Turn, Segment, Segments: training samples built from a rollout's turns;
//     TokenWeight the loss weight of a trainable token (L_j).
//
// It imports nothing of the project.
package rl
