// Package payments is the persona's bank: accounts, transactions, transfers
// and monthly statements, served over MCP by the service engine from its
// definition, service.yaml (tools, resources, test world). Its state is
// one SQLite database of the world, db/payments.sqlite.
//
// Glossary:
//   - account: named by its ext_id (the "account" argument), kind checking,
//     savings or credit, one currency, a balance in integer cents (a credit
//     account's negative balance is what is owed).
//   - transaction: one signed booking on an account (negative = money out).
//   - transfer: money moved between two of the persona's accounts in the
//     same currency: a transfers row, two transactions and both balances,
//     in one SQLite transaction (the tool's steps).
//   - statement: an account's opening and closing balance for a month
//     (YYYY-MM); a stored statements row wins, else it is computed from the
//     balance and the transactions.
//   - cents: every amount is an int64 of cents; amounts the model gives are
//     decimal strings with at most 2 decimals, never floats. Reading and
//     writing them is the Go hooks' part (money.go, Hooks).
//   - synthesis ("god mode"): CreateOp, AccountOp, TransactionOp, BookOps,
//     TransferOps, StatementOp build delta operations; never tools.
//
// It imports internal/world, internal/state, internal/delta and the service
// engine only.
package payments
