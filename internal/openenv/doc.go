// Package openenv serves a split of the task pool to OpenEnv clients (the
// meta-pytorch OpenEnv EnvClient over WebSocket, and the trainers built on
// it: TRL, SkyRL, ART). docs/openenv.md is the protocol.
//
// Glossary:
//
//   - Server: the HTTP handler (GET /health, /metadata, /schema, the
//     WebSocket endpoint /ws and the JSON-RPC POST /mcp) and the owner of
//     every session; Close tears them all down.
//   - session: one WebSocket connection. Sessions are bounded
//     (Options.MaxSessions) and end on close, disconnect, idle timeout or
//     the server's Close; each holds at most one episode.
//   - episode: one task in a fresh instance of its initial world W0, from
//     reset to done. It ends on the answer action or on the step budget:
//     the final world is snapshotted and verified, and the last observation
//     carries the verification and the reward (rl.Reward).
//   - Action: what a step sends, a tool by name (a trajectory name such as
//     shell.run, or a model-facing name such as browser_navigate) and its
//     arguments; the answer tool ends the episode. OpenEnv's MCP actions
//     (list_tools, call_tool) are actions too.
//   - rpcSession: a session opened over POST /mcp (OpenEnv's
//     openenv/session/create), holding an episode as a WebSocket does.
//   - TRL class: the Python module WriteTRL writes for TRL's
//     environment_factory, one method per tool of PoolTools.
//   - Observation: what reset and step return inside OpenEnv's
//     {observation, reward, done}: the task's public part and the tools (at
//     reset), the checklist, the step's output, and at the end the
//     verification.
//   - State: the episode's id, task, step count and whether it is done.
//
// It imports agent (the session's tools), rollout (instances, sessions,
// snapshots, verification), runtime (the live instance), task and rl (the
// reward); the command line opens the pool and builds the Options.
package openenv
