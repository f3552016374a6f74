// Package sqlguard is the one rule for the SQL a user writes: a delta's DDL
// and expressions (internal/delta), every SQL text of a service definition
// at `service lint` and when a tool is called (internal/service/engine),
// and a verifier's SQL criteria (internal/verify). The same rule runs when
// the SQL is checked and when it runs.
//
// Glossary:
//   - Policy: what one kind of SQL may do beyond reading (write rows, change
//     the schema, recurse, read a few schema pragmas). The refusals are the
//     same for every policy.
//   - Guard: the SQLite authorizer installed on a connection (Install); it
//     judges the statements compiled inside Run, and lets the caller's own
//     statements (BEGIN, COMMIT, schema reads) through.
//   - One: the textual check every statement passes first: exactly one
//     statement (SQLite's own sqlite3_complete rule, so a trigger's body is
//     one statement) and not VACUUM, which SQLite never shows an
//     authorizer.
//   - Bound: the statement deadline, a wall-clock bound on one statement
//     enforced by cancelling its context (modernc.org/sqlite then
//     interrupts the connection); a statement it stops fails with an error
//     matching ErrTimeout that names the bound. Guard.Watch interrupts the
//     connection when the bound passes while later rows are read, which
//     the driver does not.
//
// It imports no package of the project.
package sqlguard
