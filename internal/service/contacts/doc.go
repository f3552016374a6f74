// Package contacts is the persona's address book: an MCP service that the
// service engine serves from its definition, service.yaml (tables, tools,
// resource, test world). Its state is one SQLite database of the world,
// db/contacts.sqlite, whose tables Schema declares.
//
// Glossary:
//   - contact: a person, named by its ext_id (the "contact" argument and field
//     of every tool), with name, email, phone, company, role, notes and the
//     time of its last change (updated_at).
//   - tag: a lowercase label of a contact (letters, digits, - and _).
//   - hooks: the Go the definition calls as SQL functions (Hooks): the
//     field validators (email, phone, tag: text.go), the tag's Unicode
//     lower-casing and the decoding of update_contact's fields with Go's
//     JSON rules.
//   - seed: a contact a world synthesizer writes through delta operations
//     (InsertOps, TagOp, UpdateOp), never through the tools; seeds are
//     checked by the same validators as the tools' arguments.
//
// It imports internal/service/engine, internal/service/dbtool,
// internal/world, internal/state and internal/delta only.
package contacts
