// Package judge holds the two offline judges of the three-level judgment
// (the programmatic verifier is the first level). They stand where the
// paper uses an LLM judge and an agent judge; they are procedural, run
// offline, and say so in every verdict's evidence.
//
//   - ReplayJudge (the V_LLM slot): replays the task's reference completion
//     on a fresh W0 once, then compares each rollout's final-state diff
//     against the reference's diff: every row and file the reference
//     created must be created alike (natural keys, numbers, the SKU-like
//     identifiers of text), and no extra rows may appear in the tables the
//     reference wrote.
//   - Observer (the V_agent slot, for any task with a reference completion):
//     opens a fresh session on the rollout's final world and looks at it
//     through the interfaces with probes taken from the reference (the
//     home files it changed, read-only MCP calls on the services it
//     changed, the pages and histories of the sites it changed), and
//     compares each probe's identifiers and numbers with what it shows
//     after the reference completion. It also serves the counterfactual
//     probe: it re-judges and weighs the framing as its Pressure says
//     (Weigh: the framing settles only what it could not check; Defer and
//     Tamper are judges built to cave, for tests). It gets a writable copy
//     of the verifier, which the probe digests.
//   - LLMJudge and AgentJudge: the model judges; LLMJudge.ProbeJudge puts
//     the LLM judge under the counterfactual probe, with the framing in
//     its prompt.
//
// Judges never import the policies they judge (internal/policy); a test
// walks the imports.
package judge
