// Package synth synthesizes worlds and tasks procedurally, the offline
// default of the model-driven stages: a persona bible, a day plan of event
// skills, the day deltas (through internal/delta's lint, replay and produces
// checks into the store) and the task authored from the resulting world.
//
// Glossary:
//   - Persona: the persona bible (profile, contacts, accounts, arcs,
//     signature).
//   - Skill: a reusable event recipe: the interfaces it touches, what it
//     changes, and a procedural implementation that emits delta operations.
//   - Plan: the days, each a list of skill events with their parameters.
//   - Grow: applies each day's delta to its parent with the checks and
//     snapshots it.
//
// Today it holds the paper's case study (a freelance AV technician locking
// in a rack surge protector); later waves add model-driven planners behind
// the same types.
package synth
