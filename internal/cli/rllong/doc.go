// Package rllong holds no code: its test is the rollout service's long
// run (issue 32's "done when"): `wildawm rl serve` in a child process
// over many steps with an engine that goes away and comes back, the
// service killed (SIGKILL) and restarted mid-step, and steps that drop
// tasks; every step must be computed once, nothing finished lost, and each
// batch must satisfy slime's contract. It is a package of its own so that
// its minutes do not add to internal/cli's.
package rllong
