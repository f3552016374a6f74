// Package external runs agent CLIs that bring their own tool loop (an
// "external harness") against wildawm: the CLI is a subprocess whose model
// is an OpenAI-compatible endpoint and whose only tools are wildawm's, over
// MCP; its transcript becomes a trajectory (docs/trajectory.md). The set-up
// for users is docs/external-harness.md.
//
// Glossary:
//   - Run: one rollout's inputs: the prompt, the model endpoint and name,
//     the MCP servers by name (the gateway, which serves wildawm's own
//     tools, and each service of the instance), a work directory, a
//     timeout.
//   - Result: the trajectory and the paths of what was kept beside it (the
//     CLI's raw transcript, its log, the generated configuration).
//   - Opencode: the adapter of the opencode CLI (npm package opencode-ai):
//     an isolated home per run, a generated configuration with every
//     built-in tool denied, `opencode run --format json`, the JSON events
//     parsed into steps (ParseOpencode). Cancelling the context kills its
//     whole process group.
//   - Router: how a call of an MCP tool is recorded: the interface (gui,
//     mcp, cli, file) and the trajectory's tool name. GatewayRoutes is the
//     gateway's table; any other server's tool is mcp.SERVER__TOOL.
//
// The CLI's own failures (a non-zero exit, a provider error, a timeout) are
// the outcome infra_error, a value; a transcript that cannot be parsed is
// an error naming its line (LineError).
//
// The package imports agent.
package external
