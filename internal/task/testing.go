package task

import (
	"testing"

	"github.com/wildawm/wildawm/internal/world"
)

// TestTask returns a valid task for tests whose verifier has the given
// criteria (an answer criterion when none is given).
func TestTask(tb testing.TB, criteria ...Criterion) *Task {
	tb.Helper()
	if len(criteria) == 0 {
		criteria = []Criterion{{ID: "answer", Kind: KindAnswer, Contains: []string{"42"}}}
	}
	t := &Task{
		Version:     Version,
		ID:          "test-task",
		Instruction: "Find the total of the open orders and report it.",
		Interfaces:  []string{GUI, CLI},
		Subtasks: []Subtask{
			{ID: "find-orders", Title: "Find the open orders on the shop website", Interface: GUI},
			{ID: "sum", Title: "Sum their totals with a script", Interface: CLI},
		},
		Hint:   "The shop lists open orders under Account, then Orders.",
		Rubric: []string{"The reported total equals the sum of the open orders."},
		Reference: []Step{
			{Interface: GUI, Tool: "browser.navigate", Args: map[string]any{"url": "http://shop.test/orders"}},
			{Interface: CLI, Tool: "shell", Args: map[string]any{"command": "python3 sum.py"}},
		},
		Verifier:   Verifier{Criteria: criteria},
		Provenance: Provenance{Persona: "test-persona", Day: 0, Snapshot: world.Hash([]byte("test snapshot"))},
		Rationale:  "The total is only visible after combining the website and a script.",
	}
	if err := t.Validate(); err != nil {
		tb.Fatalf("TestTask: %v", err)
	}
	return t
}
