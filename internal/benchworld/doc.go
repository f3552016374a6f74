// Package benchworld generates, from a seed, a benchmark world shaped like the
// paper's: a shared read-only catalog of more than 50 MiB, and one persona's
// state across 15 website and 8 MCP-service databases (about 48 tables,
// more than 10K rows on day 0) with a home of more than 50 files including
// PDFs, images and photos, grown by day deltas that each change a few tens
// of KiB. Everything is a pure function of the seed: the day deltas go
// through internal/delta like any synthesized world.
//
// It imports internal/world, internal/delta and internal/state.
package benchworld
