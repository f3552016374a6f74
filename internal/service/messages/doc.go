// Package messages is the persona's direct-message service: a declarative
// definition, service.yaml, that internal/service/engine serves over MCP.
// Its state is one SQLite database of the world, db/messages.sqlite, whose
// tables the definition declares (Schema).
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
//   - synthesis operation: add_thread, add_message in service.yaml's ops, the
//     delta operations that write a conversation into a world by natural
//     key (engine.Compiled.Op), never through the tools.
//
// What is Go: the hook the definition calls (messages_same_name, a name
// compared with the persona's under Unicode case folding), New for callers
// that serve one database file outside a world (the conformance suite),
// and the test world's fixtures (testing.go).
//
// It imports internal/service/engine, internal/world and internal/state
// (its tests internal/delta too).
package messages
