// Package sft writes the SFT data of a pool (docs/sft.md): at most one
// successful teacher trajectory per task of the sft split, cut into
// segments at compaction, segments over the context limit dropped, the
// teacher's tokens marked trainable. Every record is what the wildawm
// harness sends and receives: its tools, its calls, its observations.
//
//   - Teacher: who wrote the trajectory, as its policy says (model:NAME, a
//     model through a harness; scripted:NAME, a script, never a model).
//   - Source: where the teacher trajectory comes from: gate (the first
//     stored gate rollout V passed, a model's and a hint-free one first)
//     or live (teacher rollouts in fresh instances, verified, up to
//     Exporter.Attempts per task until one passes).
//   - Harnessed: a script's steps replayed through agent.Harness in a
//     fresh instance, each as the harness tool's call (a CSS selector as
//     the element number browser_read showed), so a script's record is
//     the harness's chats; Mapping says how. The replay is what V judges.
//   - Segment: one training sample. With token ids on every turn,
//     rl.Segments cuts the turns (prompt ids, response ids, loss mask 1 on
//     the model's tokens); the messages are rendered too. Without them the
//     turns are rendered as the chats the harness sent and cut by the same
//     rule on messages, the length estimated at 4 bytes a token. The
//     compaction turn is trainable.
//   - Record: one JSONL line (Version 2): task, split, teacher, source,
//     segment index and count, messages, tools and/or token ids, tokens, V.
//     Check holds it to the harness before it is written.
//   - DefaultContextTokens, DefaultMaxTurns, DefaultMaxTokens: the paper's
//     budgets, the command's defaults.
//   - Exporter, Summary: the export over a pool and what it did.
//
// sft imports agent, browser (and its fake's selector matcher), model,
// pool, rl, rollout, site and task; the command line (internal/cli/sft.go)
// makes the teachers from policy.
package sft
