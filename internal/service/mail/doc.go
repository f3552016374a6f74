// Package mail is the persona's mailbox, served over MCP with the official Go
// SDK. Its state is one SQLite database of the world, db/mail.sqlite, whose
// tables Schema declares, plus the files of the world's home directory that
// attachments name.
//
// Glossary:
//   - folder: a named mailbox (inbox, sent, archive, drafts, trash, or a
//     custom one); every mail is in exactly one.
//   - mail: one message, named by its ext_id (the "mail" argument and field of
//     every tool, e.g. m-000123); is_read and is_starred are the persona's
//     flags.
//   - thread key: the conversation a mail belongs to; a reply shares the
//     thread key of the mail it answers.
//   - attachment: a file of a mail, stored as a path relative to the
//     persona's home directory (home_path); the file lives in the world's
//     home/, never in the database.
//   - SelfAddress: the persona's address; send_mail writes from it.
//   - tool error: a call the model can fix (unknown mail, bad argument). It is
//     a tool result with IsError and a message naming the fix, never a
//     protocol error, and it changes nothing.
//   - ops builders (FolderOps, DeliverOps, SentOps, CreateOps): the world
//     synthesizer's way to write mail into a day's delta; they are Go
//     functions, never tools.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package mail
