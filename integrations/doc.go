// Package integrations holds wildawm's trainer integrations, written in
// Python against the rollout service (docs/segment.md):
//
//   - python/wildawm_rl.py: a standard-library client of `wildawm rl serve`
//     that requests a step's batch, long-polls it, retries through engine
//     outages (503) and service restarts, and checks its invariants;
//   - slime/wildawm_slime.py: a slime rollout function and reward
//     post-process hook that train on wildawm batches with the paper's recipe,
//     fitting each step to slime's global batch (wildawm_fill).
//
// It has no Go code of its own; its test runs the Python tests.
package integrations
