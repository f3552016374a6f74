// Package notes is the persona's markdown notes, served over MCP with the
// official Go SDK. Its state is one SQLite database of the world,
// db/notes.sqlite, whose tables Schema declares.
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
//     (InsertOps, LinkOp, UpdateOp, PinOp), never through the tools.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package notes
