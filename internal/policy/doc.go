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
//
// Hostile is the adversarial suite's RL agent: one of HostileAttacks on its
// own world or answer (an overlong answer, names no store keeps, a PNG
// bomb, fifos for the file tools, files made unreadable after the
// reference solution), each of which must score as the agent's failure.
package policy
