package taskgen

import (
	"slices"
	"testing"

	"github.com/wildawm/wildawm/internal/task"
)

func TestCompleteSubtasks(t *testing.T) {
	var ref Steps
	ref.MCP("payments", "get_balance", nil, "")
	ref.Shell("cat "+LoginsFile, "the login")
	ref.Login("devices", Login{User: "u", Password: "p"})
	ref.Shell("python3 x.py", "")
	tk := &task.Task{Reference: ref, Subtasks: []task.Subtask{
		{ID: "balance", Interface: task.MCP}, {ID: "wishlist", Interface: task.GUI}, {ID: "table", Interface: task.CLI}}}
	if !CompleteSubtasks(tk) {
		t.Fatal("no login sub-task added")
	}
	var got []string
	for _, s := range tk.Subtasks {
		got = append(got, s.ID+":"+s.Interface)
	}
	want := []string{"balance:mcp", LoginSubtask + ":cli", "wishlist:gui", "table:cli"}
	if !slices.Equal(got, want) {
		t.Fatalf("sub-tasks %v, want %v", got, want)
	}
	if tk.Subtasks[1].Title != "Find the devices login in ~/"+LoginsFile || !tk.Subtasks[1].Support {
		t.Fatalf("title %q, support %t: want a support sub-task", tk.Subtasks[1].Title, tk.Subtasks[1].Support)
	}
	if CompleteSubtasks(tk) {
		t.Fatal("added twice")
	}
	// A reference that never reads the logins gets nothing.
	var plain Steps
	plain.Login("devices", Login{User: "u", Password: "p"})
	tk = &task.Task{Reference: plain, Subtasks: []task.Subtask{{ID: "a", Interface: task.GUI}}}
	if CompleteSubtasks(tk) || len(tk.Subtasks) != 1 {
		t.Fatalf("sub-tasks changed: %+v", tk.Subtasks)
	}
}
