// Package trainer is the rollout service for RL trainers (docs/segment.md):
// a trainer asks for a train step's batch, and the service samples tasks of
// the pool's RL split, runs the adaptive rollout scheduler of internal/rl
// over fresh instances with the harness pointed at the trainer's inference
// engine, verifies every rollout, and returns exactly G selected rollouts
// per ready task as segment samples with their rewards and advantages.
//
// Glossary:
//   - Request: one step's ask (step, tasks, G, engine, sampling, policy
//     version), or an offline Policy of the registry instead of an engine.
//   - Batch: the step's result: GroupReports for every sampled task and the
//     Samples of the ready ones; saved in DIR/rl/batches/ so that a repeated
//     request returns the same batch.
//   - Sample: one segment of one selected rollout, with the rollout's
//     reward, advantage over the pool of K and loss weight.
//   - RolloutJob, RolloutResult: one rollout as a unit of work with JSON
//     input and output (Service.Rollout).
//   - State: each task's kappa after a step, saved in DIR/rl/state/ and
//     loaded by train step, so a resumed run continues.
//   - PolicyFactory: an offline policy (the scripted replay ensemble, the
//     learnable softmax and the observation-driven learned:observe of the
//     learning checks).
//   - marker: a requested step's request, kept in DIR/rl/requests/ until
//     its batch is saved, so a restarted service resumes it; finished
//     rollouts are kept beside their trajectories and read back.
//   - OutageError: a rollout the engine's outage stopped: no try, no
//     verdict; the step waits for the engine (HTTP 503, retriable).
//   - ToSkyRL: a batch as SkyRL's step-wise generator output.
//   - Service.Handler: the HTTP API; Export the JSONL of saved batches.
//
// It imports the rollout harness, policies, the pool and internal/rl; the
// scheduler's decisions are internal/rl's, which this package only drives.
package trainer
