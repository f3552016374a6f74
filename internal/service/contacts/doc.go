// Package contacts is the persona's address book, served over MCP with the
// official Go SDK. Its state is one SQLite database of the world,
// db/contacts.sqlite, whose tables Schema declares.
//
// Glossary:
//   - contact: a person, named by its ext_id (the "contact" argument and field
//     of every tool), with name, email, phone, company, role, notes and the
//     time of its last change (updated_at).
//   - tag: a lowercase label of a contact (letters, digits, - and _).
//   - tool error: a call the model can fix (unknown contact, invalid email,
//     duplicate email). It is a tool result with IsError and a message naming
//     the fix, never a protocol error, and it changes nothing.
//   - seed: a contact a world synthesizer writes through delta operations
//     (InsertOps, TagOp, UpdateOp), never through the tools.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package contacts
