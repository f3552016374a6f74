// Package tasks is the persona's to-do service: a definition, service.yaml,
// that the service engine (internal/service/engine) serves over MCP with no
// Go hooks. Its state is one SQLite database of the world, db/tasks.sqlite,
// whose tables the definition declares.
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
//   - synthesis ("god mode"): the definition's ops (add_project, add_todo,
//     complete_todo, archive_project) build delta operations that seed or
//     change a world's tasks database by natural key; CreateOp, ProjectOp,
//     TodoOp and the like are their Go face for world synthesis, never
//     tools.
//
// It imports internal/world, internal/state, internal/delta and
// internal/service/engine only.
package tasks
