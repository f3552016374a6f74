// Package catalog writes and reads the shared, read-only product catalog of
// the case study: a freelance audio-visual technician buys a rack surge
// protector, and two candidates (CandidateWhite, CandidateBlack) tie on every
// listed spec, so only their product photos tell them apart.
//
// Glossary:
//   - catalog directory: a directory in the world layout (docs/world.md) with
//     persona "catalog", day 0 and a fixed clock; its products live in
//     db/catalog.sqlite (table products) and its photos in home/images.
//   - Product: one row of products with its specs decoded (Specs keeps the
//     listed order). SurgeSpecs is the typed view of a surge protector's specs.
//   - Rank: the case study's ranking of rack protectors (1U, >= 8 outlets,
//     >= 2000 J; then joules descending, price ascending).
//   - Catalog: an open, read-only catalog (lookups and search) for websites.
//   - Build: Write's case study, then the generated domains of the fifteen
//     sites (docs/catalog.md), drawn from a seed; each domain has its own
//     generator (the seed and its name), its tables and its search pages.
//
// Write and Build are deterministic: the same bytes of images and the same
// content hash on every run (of the same seed). The package imports
// internal/world and internal/state only.
package catalog
