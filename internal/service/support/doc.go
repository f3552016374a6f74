// Package support is the help desk of the shop website: support tickets
// about orders the persona placed on the shop, an MCP service that the
// service engine serves from its definition, service.yaml (tables, tools,
// resource, test world). Its state is one SQLite database of the world,
// db/support.sqlite, whose tables Schema declares; it reads the shop's
// database, db/shop.sqlite, read-only to check orders and their items (the
// definition's reads).
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
//     more than 30 days before the injected clock.
//   - hooks: the Go the definition calls (Hooks): the step that tells a
//     world without a shop database (a tool error) from one that fails, and
//     the check of a list_tickets cursor.
//   - synthesis ("god mode"): CreateOp, TicketOps and StatusOps build delta
//     operations that seed or change a world's support database; they are
//     Go functions for world synthesis, never tools.
//
// It imports internal/service/engine, internal/service/dbtool,
// internal/world, internal/state and internal/delta only.
package support
