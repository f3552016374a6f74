// Package attack is the adversarial suite: it has no code, only tests that
// attack live instances of the case-study world the way a hostile agent
// would, and check that every attempt is refused or contained.
//
// Glossary:
//   - attacker A, victims B and C: three instances of the task's W0 started
//     with rollout.Env.Start; S is a fourth attacker instance with a short
//     shell timeout, for the attacks that run until the limit.
//   - attack: one named attempt in a category (network, filesystem, proc,
//     device, resources, privilege, web, mcp, browser, files) with the action tried
//     and the containment it must meet.
//   - invariants: checked before and after every attack: the state.Hash of
//     B's and C's worlds and of W0's lower, the digest of the task's
//     verifier directory, a clean store.Check, and B still answering on its
//     shop, its MCP service and its shell.
//   - known hole: an attack that is not contained yet. It is reported as a
//     skip ("KNOWN HOLE: ...") naming the fix; once the fix lands the test
//     fails until the marker is removed, so a hole cannot close silently.
//
// `go test ./internal/attack -update` rewrites the generated table in
// docs/SECURITY.md from the results; without -update the test checks that
// the counts recorded there are current.
//
// It imports the project's packages only from its tests.
package attack
