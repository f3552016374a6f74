package world

import "errors"

// ErrAgentFault is wrapped by every error whose cause is what an agent did
// to its own world or answer: a world it made unverifiable (a name or a file
// no snapshot can hold faithfully, a file it made unreadable), an answer over
// a documented bound. Whoever scores a rollout treats such an error as the
// agent's failure (reward 0, or a format failure where it is one), never as
// an infrastructure failure to retry or leave out: a policy must not escape
// its reward by breaking what judges it.
var ErrAgentFault = errors.New("the agent's own doing")
