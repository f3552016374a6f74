package verify

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/task"
)

// TestExampleTask runs the documented example task (internal/task/testdata)
// end to end: it passes on a solved world and fails on W0 with no answer
// (gate 2, initial unsatisfaction).
func TestExampleTask(t *testing.T) {
	py := needPython(t)
	dir := filepath.Join("..", "task", "testdata", "example")
	tk, err := task.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	initial, final := testWorlds(t)
	in := Input{Initial: initial, Final: final, Answer: "The open orders total 5 units.", VerifierDir: filepath.Join(dir, task.VerifierDir), Runner: execRunner{python: py}, Scratch: t.TempDir()}
	r, err := Verify(context.Background(), tk, in)
	if err != nil {
		t.Fatal(err)
	}
	if r.V != 1 {
		t.Fatalf("solved world: V = 0: %+v", r.Criteria)
	}
	in.Final, in.Answer = initial, ""
	r, err = Verify(context.Background(), tk, in)
	if err != nil {
		t.Fatal(err)
	}
	if r.V != 0 || r.Passed != 0 {
		t.Fatalf("V(W0, W0, empty) = %d with %d criteria passing, want 0 and 0: %+v", r.V, r.Passed, r.Criteria)
	}
	if r.ScriptErrors != 1 {
		t.Fatalf("script errors = %d, want 1 (the CSV is missing in W0, so the script raises)", r.ScriptErrors)
	}
}

// TestAttackScriptIsNotVacuous checks that the attack script does report
// writes when nothing stops them, so TestScriptCannotWriteWorlds means
// something.
func TestAttackScriptIsNotVacuous(t *testing.T) {
	py := needPython(t)
	initial, final := testWorlds(t)
	vdir := verifierDir(t, map[string]string{"attack.py": attackScript})
	c := task.Criterion{ID: "attack", Kind: "script", Script: "scripts/attack.py"}
	r, err := Verify(context.Background(), task.TestTask(t, c), Input{Initial: initial, Final: final, VerifierDir: vdir, Runner: execRunner{python: py}, Scratch: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if got := r.Criteria[0]; got.Pass || got.Error != "" {
		t.Fatalf("unsandboxed attack reported no writes: %+v", got)
	}
}
