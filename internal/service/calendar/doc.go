// Package calendar is the persona's calendar service: a definition,
// service.yaml, that the service engine (internal/service/engine) serves
// over MCP, and the Go hooks it needs. Its state is one SQLite database of
// the world, db/calendar.sqlite, whose tables the definition declares.
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
//   - hooks: the SQL functions calendar_* (Hooks) for what SQL cannot say:
//     reading times and rules, expanding occurrences (recurrence.go), the
//     hours of find_free_time, and guest names compared with Unicode case
//     folding.
//   - synthesis ops: EventOps, ResponseOps and CreateOp build internal/delta
//     operations that seed or change a world's calendar; they are Go
//     functions for world synthesis, never tools.
//
// It imports internal/world, internal/state, internal/delta and
// internal/service/engine only.
package calendar
