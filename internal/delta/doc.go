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
//
// Apply is a pure function of (parent state, delta): no wall clock, no random
// source, no network. It imports internal/world and internal/state.
package delta
