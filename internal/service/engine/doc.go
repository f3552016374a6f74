// Package engine serves any service definition over MCP: a definition
// (docs/services/definition.md) declares a service's tables, its tools and
// the SQL each runs, its resources, its synthesis operations and a test
// world, and the engine validates it (Parse, Load), compiles it with the
// service's Go hooks (Compile) and serves one world's database of it
// (New), over stdio and streamable HTTP.
//
// Glossary:
//   - Definition: one service as data, validated on load with problems
//     that name their field (Problems).
//   - Hooks: a definition's logic in Go, for what SQL cannot say: SQL
//     functions and step hooks.
//   - Compiled: a definition ready to serve, its tools' schemas built once.
//   - Service: a compiled definition serving one world's db/NAME.sqlite.
//   - The fast paths, which change how a call runs, never what it answers:
//     SQL that reads no table evaluated in Go as SQLite would (expr.go),
//     results and the objects of rows written in Go (fast.go), leading
//     checks before the transaction (pure.go), parameters bound by
//     position (bind).
//
// It imports internal/service/dbtool, internal/state, internal/world and
// internal/delta.
package engine
