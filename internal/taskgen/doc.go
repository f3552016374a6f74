// Package taskgen is task synthesis from synthesized worlds: task families
// that sketch XAI tasks (each needs the GUI, MCP and CLI, with a script
// whose result informs a later decision) from a live world's own data, and
// author their seven artifacts (task spec, verifier, rubric, hint, ordered
// sub-tasks with interfaces, reference completion, internal rationale).
//
// Glossary:
//   - World: a W0 world state read-only (its databases, home files, the
//     logins the persona keeps), with the catalog.
//   - Family: one kind of task (Name, Sketch, Author); All lists the
//     registry, and every family passes the one shared suite.
//   - Sketch: what a task is about, as plain data (family, parameters, the
//     core actions and artifacts the diversity gate compares).
//   - Draft: an authored task and its verifier scripts; Save writes a task
//     directory (docs/task.md).
//   - SketchBackend, AuthorBackend: what stands in for the families in
//     Synth; the llm ones (LLMSketcher, a model exploring a live instance
//     through agent.Harness; LLMAuthor, a model handing in the seven
//     artifacts with submit_task) are in llm_sketch.go and llm_author.go.
//
// The procedural path is deterministic: a family's sketches come from the
// world and a seeded generator, never the clock. The llm backends are a
// model's, bounded by the harness's turn and wall-time budgets.
package taskgen
