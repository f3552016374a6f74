// Package validate is the five-layer world check every synthesized day
// passes before its state is accepted:
//
//  1. lint: the delta's static checks (docs/delta.md) and the
//     cross-persona identity check (no name another persona reserves);
//  2. replay: the delta applied twice to fresh copies of the parent gives
//     equal content hashes;
//  3. produces: every declared row, file and account exists and changed;
//  4. health: the world boots as a live instance, every declared account
//     logs in and its history pages render what the world holds, every
//     active MCP service loads, the credentials are in the workspace;
//  5. review: a reviewer outside the implementer checks the materialised
//     day (read back from its databases and files) against its plan (each event's skill review, and rules over the whole day).
//
// Check runs them in order and stops at the first that fails; a Report is
// the verdict with each layer's problems, a value and never an error. Only
// a failure of the harness itself is an error.
//
// It imports delta, health, persona, rollout, skill, state, store, world.
package validate
