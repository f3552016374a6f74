// Package persona is the persona bible: the concrete person whose computer
// a world is, the procedural generator that draws one from a seed and the
// catalog's entities, the diversity gate that keeps accepted personas apart,
// and the identity registry that keeps names reserved by one persona out of
// every other's world.
//
// Glossary:
//   - Persona: profile, demographics, contacts, tools, sites and services,
//     a services roadmap bound to story arcs, arcs, web accounts and a
//     compact signature (docs/persona.md).
//   - Arc: a multi-day story ("plan a trip to Lisbon"), identified by its
//     template and anchor, one at least image-decisive.
//   - Grounding: the catalog entities and registries a persona is drawn
//     from (cities, cuisines, teams, subjects, sites, services).
//   - Gate: the diversity gate over accepted personas; Verdict names the
//     reasons of a rejection.
//   - Identities: the names each accepted persona reserves.
//
// It imports nothing else of the project.
package persona
