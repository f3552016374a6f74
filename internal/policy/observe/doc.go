// Package observe is the learning check's observation-driven policy
// (docs/rl.md, "learned:observe"): a log-linear softmax over hashed
// features that, at each action, chooses among what the rollout's
// observations offer, through the harness's own tools as a model calls
// them.
//
// Glossary:
//   - Kind: an action's first decision (open a website, click a link or a
//     button of the page, fill a form and send it, go back, call an MCP
//     tool, list or print a file, stop); the item of that kind and each
//     value typed or passed are further decisions.
//   - Value: a string or number seen in the instruction, a shell output,
//     an MCP result or a page, with the words next to it.
//   - Model: the weights of the hashed features; Params its JSON, the
//     rollout service's policy_params.
//   - Decision tokens: TokDecide, then TokCand and feature tokens per
//     candidate, answered by ChoiceToken: the samples carry everything
//     Model.TrainStep needs to recompute a decision's log-probability and
//     gradient.
//
// It reads the task's public part only (task.Public: the instruction and
// the hint), never its reference completion or answer; imports_test.go
// holds it to that. It imports the agent's tools, the task's public type
// and internal/rl's surrogate.
package observe
