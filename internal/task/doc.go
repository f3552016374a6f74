// Package task holds the task format (docs/task.md, version 1): a directory
// with task.json and a verifier/ directory of scripts.
//
// Glossary:
//   - Task: the seven artifacts of a synthesised task — the instruction the
//     solver sees, the verifier V, the rubric R a judge checks, the hint h
//     shown only to hinted rollouts, the ordered sub-tasks, the reference
//     completion and the internal rationale — plus its provenance.
//   - Public: the only part of a Task a solver ever sees.
//   - Criterion: one check v_i of the verifier; V = prod_i v_i. Declarative
//     kinds (sql, file, csv, answer) are evaluated in-process by
//     internal/verify; script criteria run verifier/scripts/NAME.py in a
//     sandbox.
//
// It imports internal/world only.
package task
