// Package tasks is the persona's to-do service, served over MCP with the
// official Go SDK. Its state is one SQLite database of the world,
// db/tasks.sqlite, whose tables Schema declares.
//
// Glossary:
//   - project: a named list of to-dos (the "project" argument of every tool
//     is its name); an archived project is hidden by default and takes no
//     new to-dos.
//   - todo: one to-do, named by its ext_id (the "todo" argument and field),
//     with a title, notes, an optional due date (YYYY-MM-DD), a priority
//     (low, medium, high) and a status (open, done).
//   - today: the date of the injected world.Clock in UTC. A to-do is
//     overdue when it is open and its due date is before today.
//   - tool error: a call the model can fix (unknown to-do, bad date). It is a
//     tool result with IsError and a message naming the fix, never a
//     protocol error, and it changes nothing.
//   - synthesis ("god mode"): CreateOp, ProjectOp, TodoOp and the like build
//     delta operations that seed or change a world's tasks database; they
//     are Go functions for world synthesis, never tools.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package tasks
