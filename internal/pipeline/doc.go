// Package pipeline runs the whole synthesis pipeline once, for one task:
// catalog -> persona world (day deltas with the world checks, into the
// store) -> task authoring -> ensemble rollouts in live instances ->
// three-level judgment -> five gates -> gate report. `wildawm demo` runs it
// on the paper's case study with the scripted ensemble; tests run it with
// altered tasks and ensembles to prove each gate fails where it should.
//
// Every stage writes its artifacts under one directory and is idempotent:
// a run killed half-way is simply run again.
package pipeline
