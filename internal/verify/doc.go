// Package verify runs a task's verifier: V(W0, W, a) = prod_i v_i over the
// task's criteria (docs/verifier.md).
//
// Glossary:
//   - W0, W: the initial and final world directories; a: the final answer,
//     at most MaxAnswerBytes (CheckAnswer); a script reads it from the file
//     $VERIFY_ANSWER_FILE (also in $VERIFY_ANSWER, but for a NUL byte).
//   - fault: the agent made its answer or world unverifiable (an error
//     wrapping world.ErrAgentFault); the verdict is Unverifiable: V 0, every
//     criterion failed unchecked. Never a harness error.
//   - declarative criterion: sql, file, csv and answer checks, evaluated
//     in-process on read-only views of the worlds.
//   - script criterion: verifier/scripts/NAME.py run by a Runner (a sandbox)
//     with /worlds/initial, /worlds/final, /verifier and the answer's
//     directory /verify-answer mounted read-only; its verdict is the last
//     stdout line starting with RESULT_JSON=.
//   - script error: a script that crashed, exited non-zero, timed out or
//     printed no valid verdict; its criterion fails (v_i = 0), never passes.
//   - SDK: _verify_sdk.py, the stdlib-only helper module every verifier
//     directory holds (SDKPy, WriteSDK).
//   - Digest: SHA-256 of every file of a verifier directory, so a probe can
//     tell whether anything in it changed.
//
// A criterion that fails is a value in Result; Verify returns an error only
// when the harness itself fails (a world missing, the runner unable to run).
//
// It imports internal/world, internal/state and internal/task.
package verify
