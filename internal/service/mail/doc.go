// Package mail is the persona's mailbox, served over MCP by the service
// engine from its definition, service.yaml (tools, resource, test world).
// Its state is one SQLite database of the world, db/mail.sqlite, plus the
// files of the world's home directory that attachments name.
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
//   - hooks: what stays in Go (Hooks): the check of an address, reading a
//     stored address list, and send_mail's attachments, which must be
//     regular files inside home after following symlinks.
//   - ops builders (FolderOps, DeliverOps, SentOps, CreateOps): the world
//     synthesizer's way to write mail into a day's delta; they are Go
//     functions, never tools.
//
// It imports internal/world, internal/state, internal/delta and the service
// engine only.
package mail
