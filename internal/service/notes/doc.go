// Package notes is the persona's markdown notes: a declarative definition,
// service.yaml, that internal/service/engine serves over MCP. Its state is
// one SQLite database of the world, db/notes.sqlite, whose tables the
// definition declares (Schema).
//
// Glossary:
//   - notebook: a named group of notes (its name is its key).
//   - note: a titled markdown body in one notebook, named by its ext_id (the
//     "note" argument and field of every tool); pinned notes list first.
//   - link: a note's reference to a home-relative file path or an http(s) URL.
//   - tool error: a call the model can fix (unknown note, bad argument). It is
//     a tool result with IsError and a message naming the fix, never a
//     protocol error, and it changes nothing.
//   - seed: a note a world synthesizer writes through delta operations
//     (InsertOps, LinkOp, UpdateOp, PinOp), never through the tools; they
//     are the definition's synthesis operations (ops).
//
// What is Go: the hook the definition calls (notes_target_error, the rules
// of a link target), the synthesis API over the definition's operations
// (synth.go) and the test world's fixtures (testing.go).
//
// It imports internal/service/engine, internal/service/dbtool,
// internal/delta, internal/world and internal/state only.
package notes
