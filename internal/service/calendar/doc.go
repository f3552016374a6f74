// Package calendar is the persona's calendar service, served over MCP with
// the official Go SDK. Its state is one SQLite database of the world,
// db/calendar.sqlite, whose tables Schema declares.
//
// Glossary:
//   - event: a calendar entry, named by its ext_id (the "event" argument and
//     field of every tool), with UTC start and end, an organizer and a status
//     (confirmed or cancelled).
//   - recurrence: "" or a small RRULE subset, FREQ=DAILY|WEEKLY with exactly
//     one of COUNT=n or UNTIL=YYYY-MM-DD; see Rule.
//   - occurrence: one instance of an event in time, numbered from 1; a
//     one-off event has one occurrence. list_events expands recurrences into
//     occurrences within a window.
//   - invitation: a guest of an event and their response (needs-action,
//     accepted, declined, tentative). The persona's own invitation is the one
//     whose guest is Self; respond changes it.
//   - Self: the persona's name: the organizer of every event create_event
//     writes, and the guest respond answers for.
//   - tool error: a call the model can fix (unknown event, bad argument). It
//     is a tool result with IsError and a message naming the fix, never a
//     protocol error, and it changes nothing.
//   - synthesis ops: EventOps, ResponseOps and CreateOp build internal/delta
//     operations that seed or change a world's calendar; they are Go
//     functions for world synthesis, never tools.
//
// The database is one connection held open between calls and reopened
// when the file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package calendar
