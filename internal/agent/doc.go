// Package agent is the harness an agent acts through: the tools of the
// three interfaces (GUI through a real browser, MCP through the official
// client, CLI through the sandboxed shell, plus the vision tool), each call
// recorded as a trajectory step with its interface, arguments, observation,
// error and timing. Policies (internal/policy) drive it.
//
// Glossary:
//   - Env: one rollout's tools; every call appends a Step.
//   - Trajectory: the record of a rollout (docs/trajectory.md, version 1).
//   - Policy: decides the actions; scripted policies today, model-driven
//     ones behind the same interface in a later wave.
//   - Harness: the tool loop a model drives; TokenMode (token in, token
//     out) makes it hold the token sequence itself and send the engine
//     ids (TokenModel), so that each compaction segment is one causal
//     chain whatever the chat template does (docs/harness.md).
//
// The harness measures wall time per step; it is not part of the
// deterministic core.
package agent
