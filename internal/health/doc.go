// Package health is layer 4 of the paper's five-layer world check, the live
// health check of a world state: boot a fresh instance of a snapshot, find
// every declared account's credentials in the workspace, log in with them,
// render the account's history pages, and load every active MCP service.
//
// Glossary:
//   - Report: the outcome, JSON "version": 1. OK only when every account and
//     every service passed; each failure is one problem line naming the
//     account or service and the fix. A world that fails is a value, not an
//     error: Check returns an error only when the harness itself fails (the
//     snapshot cannot be materialised, a shell cannot run).
//   - credentials discoverable: a file in the persona's home, found through
//     the instance's sandboxed shell (what an agent could do), mentions the
//     username and, next to it, a password that matches the account's stored
//     hash (accounts.json, which the orchestrator reads and the agent may
//     not).
//   - site server: the website an instance serves for an account's site.
//     Today only the shop ("shop"); an account on any other site fails with
//     "no site server for SITE".
//   - active MCP service: a db/NAME.sqlite that is no site's database. Each
//     must load in the instance and answer tools/list and one read-only tool
//     call; today only "messages" has a server (list_threads).
//   - boot failure: runtime.Start refused the world. Check then loads each
//     site and service on a scratch copy of the world, one by one, to name
//     the one that fails.
//
// It imports internal/rollout, internal/runtime, internal/sandbox,
// internal/site/shop, internal/service/messages, internal/state and
// internal/world.
package health
