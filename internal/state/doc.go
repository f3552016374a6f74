// Package state reads world-state directories logically: it opens their
// SQLite databases, describes their tables (columns, primary key, natural
// key), computes the content hash of a whole world and the diff between two.
//
// Glossary:
//   - logical hash: a SHA-256 over content only — the manifest without its
//     parent, the accounts, each database's schema and rows in primary-key
//     order with typed values, each file's relative path, mode and bytes. Page
//     layout, mtimes and the order of operations that produced the content do
//     not matter; one changed cell or byte does.
//   - natural key: the columns that identify a row across worlds. A table
//     declares it with a unique index named TABLE_nk, or else with its first
//     UNIQUE constraint; tables with neither are keyed by primary key.
//   - Diff: rows added, changed and deleted per table (by natural key) and
//     files added, changed and deleted, as text for people and JSON for
//     programs.
//   - skipped: home entries the hash, the diff and Copy cannot take (fifos,
//     sockets, devices, entries past world.Walk's limits); the hash and the
//     diff leave them out and list them (Summary.Skipped, Diff.Skipped),
//     Copy refuses them. Home is read with world.Walk: no symlink followed.
//
// Errors of Summarize, Compare and ReadLayout name paths relative to the
// world root, never the root: the runtime hands them to agents.
//
// It imports internal/world (and golang.org/x/sys) only.
package state
