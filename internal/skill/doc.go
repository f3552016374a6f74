// Package skill is the event skill library: reusable recipes for what
// happens in a persona's life ("enroll in a course and submit an
// assignment"), each documented (interfaces, the state it changes across
// sites, services and files, the consistency rules it keeps) and each
// with typed parameters and a procedural implementation that emits delta
// operations by natural key.
//
// Glossary:
//   - Skill: one recipe. Emit turns its parameters (JSON, decoded strictly
//     into the skill's own type, so a missing or mistyped field is an
//     error naming the field) into operations; Propose draws parameters
//     for a day from the persona, the catalog and the ledger; Review checks
//     the materialised world against the parameters (the reviewer layer
//     of the world check).
//   - Library: the skills by name (All builds it; no package state).
//   - Builder: one day's delta being emitted, with the ledger.
//   - State: the ledger, what earlier events left that later ones continue
//     (threads and their next message, mails, events, orders, files).
//     Serialisable, so a day's planning is a job with plain input.
//   - Draw: what Propose sees: persona, day, seeded random source,
//     catalog, ledger.
//   - Catalog: the shared read-only catalog, queried with cached rows.
//   - Check: what Review sees: the materialised world.
//
// It imports delta, world, persona, service, the services' synthesis helpers and
// the site registry.
package skill
