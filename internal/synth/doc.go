// Package synth synthesizes worlds: the stages of the paper's world
// pipeline as jobs with plain input and output, a procedural backend (the
// offline default) and an llm backend, the resumable run that grows many
// personas' worlds through the five-layer check, and the paper's case
// study (a freelance AV technician locking in a rack surge protector)
// with its task.
//
// Glossary:
//   - Backend: who runs the persona, day-plan and day-implementation
//     stages: Procedural (seeded) or LLM (an OpenAI-compatible model under
//     versioned constitutions, prompts/).
//   - PlanJob, ImplJob: a stage's whole input; Key is its idempotency key.
//   - Planner: the procedural day planner (setup, arcs, continuity through
//     the ledger, coverage pressure).
//   - Definitions: the shared library of service definitions, with the
//     shipped ones (defs/) published first; the llm planner adds its own
//     (create_service).
//   - Text skills: skills the llm planner writes as documented text
//     (add_skill), saved next to the library; their events ("text:NAME")
//     are realised by the llm implementer and judged by the llm reviewer.
//   - Run: one run's directory of artifacts; Personas, Worlds, World,
//     Prebake, Stats (Table 2).
//   - Deltas, Grow: the case study's plan turned into deltas and grown.
//
// docs/synthesis.md describes the run; docs/persona.md and docs/skills.md
// the bible and the skills.
package synth
