// Package policy holds scripted policies: an oracle that solves the
// approval-purchase task family through the real interfaces, and degraded
// variants of it (ignores the images, skips the approval, uses one interface
// only, stops early) so that an ensemble's rollouts disagree. They are
// scripts, not models: the gate report names them as such.
//
// The oracle reads everything it acts on from the world through the agent
// tools (the approval from the messages service, the requirements from the
// files, the products and their photos from the shop); it knows the task
// family's procedure, not the answer.
package policy
