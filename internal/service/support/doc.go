// Package support is the help desk of the shop website: support tickets
// about orders the persona placed on the shop, served over MCP with the
// official Go SDK. Its state is one SQLite database of the world,
// db/support.sqlite, whose tables Schema declares; it reads the shop's
// database, db/shop.sqlite, read-only to check orders and their items.
//
// Glossary:
//   - ticket: one support request, named by its ext_id (the "ticket"
//     argument and field, e.g. "T-1001"), about one item (sku) of one shop
//     order (order_no). Its kind is return, warranty or question and its
//     status open, waiting (on the customer), resolved or closed.
//   - event: one entry of a ticket's history, numbered by seq from 1: the
//     opening message, a comment, or a status change, with its author
//     (customer or support) and the ticket's status after it. Every status
//     change appends an event.
//   - return window: a return ticket is refused when the order was placed
//     more than ReturnDays days before the injected clock.
//   - tool error: a call the model can fix (unknown order, item not in the
//     order, late return, unknown ticket). It is a tool result with IsError
//     and a message naming the fix, never a protocol error, and it changes
//     nothing.
//   - synthesis ("god mode"): CreateOp, TicketOps and StatusOps build delta
//     operations that seed or change a world's support database; they are
//     Go functions for world synthesis, never tools.
//
// Both databases are connections held open between calls and reopened
// when a file is replaced (dbtool.DB). Time comes from the injected
// world.Clock; ids are MAX(id)+1 within a transaction, so the same calls on
// the same world give the same database.
//
// It imports internal/world, internal/state and internal/delta only.
package support
