package judge

import (
	"context"
	"testing"

	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
)

// TestJudgesSeeDeclaredMistakes: a note that differs from the reference's
// only in the one word the task's fact names as a mistake (the course
// chosen) passes the replay judge's likeness rules, but not its check of
// declared mistakes; a word no fact names still passes.
func TestJudgesSeeDeclaredMistakes(t *testing.T) {
	ddl := `CREATE TABLE notes (id INTEGER PRIMARY KEY, ext TEXT NOT NULL UNIQUE, body TEXT)`
	world := func(body string) string {
		sql := []string{ddl}
		if body != "" {
			sql = append(sql, `INSERT INTO notes VALUES (1, 'focus', '`+body+`')`)
		}
		return state.MakeTestWorld(t, t.TempDir(), state.TestWorld{SQL: map[string][]string{"notes": sql}})
	}
	tk := &task.Task{Reference: []task.Step{{Tool: "mcp.notes__create_note", Facts: []task.Fact{{ID: "focus-course", Kind: task.FactChoice, Value: "Organic Chemistry", Wrong: "Cell Biology"}}}}}
	w0, ref := world(""), world("Focus: Organic Chemistry")
	for _, c := range []struct {
		name, body string
		task       *task.Task
		want       gate.Verdict
	}{
		{"the distractor, no facts given", "Focus: Cell Biology", nil, gate.Completed},
		{"the distractor", "Focus: Cell Biology", tk, gate.Failed},
		{"other wording", "Focus on: Organic Chemistry", tk, gate.Completed},
	} {
		j := &ReplayJudge{W0: w0, Ref: ref, Task: c.task}
		got, ev, err := j.Judge(context.Background(), world(c.body))
		if err != nil || got != c.want {
			t.Errorf("%s: %s, want %s: %v %v", c.name, got, c.want, err, ev)
		}
	}
	if m, ok := declaredMistake(tk, "x Cell Biology y", "x Organic Chemistry y"); !ok || m.fact != "focus-course" {
		t.Fatalf("declaredMistake: %+v %t", m, ok)
	}
	if _, ok := declaredMistake(tk, "Cell Biology", "Cell Biology and Organic Chemistry"); ok {
		t.Fatal("a wrong value the reference's world shows too counted as a mistake")
	}
}
