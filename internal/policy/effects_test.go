package policy

import (
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/task"
)

// TestEffectSteps: writes, submissions and MCP calls that change things
// are effects; reads, a login's click and pages opened are not.
func TestEffectSteps(t *testing.T) {
	tk := &task.Task{Reference: []task.Step{
		{Tool: "shell.run", Args: map[string]any{"command": "cat logins.txt"}},
		{Tool: "browser.open", Args: map[string]any{"url": "site:maps/login"}},
		{Tool: "browser.click", Args: map[string]any{"selector": "#login-submit"}},
		{Tool: "browser.read", Args: map[string]any{"selector": "#results"}},
		{Tool: "shell.run", Args: map[string]any{"command": "python3 rank.py > plans/cafes.csv"}},
		{Tool: "browser.click", Args: map[string]any{"selector": `form[action="/do/save"] button`}},
		{Tool: "mcp.calendar__list_events"},
		{Tool: "mcp.calendar__create_event"},
		{Tool: "file.write", Args: map[string]any{"path": "a.txt"}},
		{Tool: "shell.run", Args: map[string]any{"command": "cat a.txt > b.txt"}},
	}}
	if got, want := EffectSteps(tk), []int{4, 5, 7, 8, 9}; !slices.Equal(got, want) {
		t.Fatalf("effects %v, want %v", got, want)
	}
}
