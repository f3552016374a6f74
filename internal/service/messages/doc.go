// Package messages is the persona's direct-message service, served over MCP
// with the official Go SDK. Its state is one SQLite database of the world,
// db/messages.sqlite, whose tables Schema declares.
//
// Glossary:
//   - thread: a conversation, named by its ext_id (the "thread" argument and
//     field of every tool), kind "dm" (two people) or "group".
//   - participant: a person in a thread, by display name.
//   - message: one entry of a thread, numbered by seq from 1 within it; is_read
//     records whether the persona has read it.
//   - Self: the persona's own sender name; send_message writes as Self.
//   - tool error: a call the model can fix (unknown thread, bad argument). It
//     is a tool result with IsError and a message naming the fix, never a
//     protocol error, and it changes nothing.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world and internal/state only.
package messages
