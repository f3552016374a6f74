// Package delta is the deterministic transformation of a world state from
// day d-1 to day d: its format (docs/delta.md), its parser and linter, apply,
// the replay check and the produces check.
//
// Glossary:
//   - Delta: a versioned JSON document: persona, day, frozen clock, an ordered
//     list of operations and a produces declaration.
//   - Op: one declarative operation on a named database (create, insert if
//     absent by natural key, update, delete), on a home file (write, append,
//     delete, move; inline content or a named generator) or on accounts.
//   - Value: a JSON scalar, {"sql": EXPR}, {"ref": ROW}, or {"base64": ...}.
//   - lint: static checks against the parent world's schema; every issue
//     names the operation index and the field.
//   - replay: apply twice to two fresh copies of the parent and compare hashes.
//   - produces check: every declared write exists and changed.
//   - the SQL guard: internal/sqlguard's authorizer, with the delta's
//     policy (deltaPolicy), that lint and apply both install on the
//     connections that compile a delta's SQL (one statement, no recursion,
//     no host tables, no PRAGMA, ATTACH or VACUUM, no CREATE TABLE AS
//     SELECT).
//   - checkHomePath: the one rule for a file operation's home path, called
//     by lint on its model of home and by apply on the disk.
//
// Apply is a pure function of (parent state, delta): no wall clock, no random
// source, no network; the only clock it reads is the deadline that bounds one
// SQL statement (Options.SQLTimeout), a resource limit that can fail an
// apply but never changes its result. It imports internal/world,
// internal/state and internal/sqlguard.
package delta
