// Package runtime runs live instances: a world state materialised from a
// snapshot, with its websites and MCP services served on loopback and its
// shell sandboxed over the home directory, all reading one frozen clock.
// An instance is resettable to its snapshot. The control surface (create,
// reset, close) is Go API for the orchestrator and never an agent tool.
//
// Glossary:
//   - Instance: one live world for one agent: SiteURLs (GUI: every site of
//     internal/site's registry, each on a port of its own), MCPURL (MCP:
//     service NAME at MCPURL/NAME), Shell (CLI), Dir (the world directory,
//     for the orchestrator only).
//   - Clock: the world's manifest clock, frozen; sites, services and the
//     shell all read it, so the same actions give the same final hash. It
//     holds 1970 to before 2262 (ErrClockRange).
//   - Manager: hosts up to MaxInstances instances (ErrTooManyInstances),
//     each of a world snapshot (ErrNotWorld), behind an agent listener and
//     a control API whose error bodies carry no host path.
package runtime
