package taskgen

import (
	"fmt"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// LoginSubtask is the ID of the sub-task CompleteSubtasks adds.
const LoginSubtask = "find-login"

// CompleteSubtasks completes a decomposition whose reference reads the
// person's logins (LoginsFile) with the shell before it logs in to a site
// and has no sub-task for it: the credentials are nowhere else, so finding
// them is a sub-task of its own, on the CLI, placed before the first GUI
// sub-task (where the reference reads them), marked Support: every task
// that logs in has it, so the interface statistics leave it out. It
// reports whether it added one.
func CompleteSubtasks(t *task.Task) bool {
	if slices.ContainsFunc(t.Subtasks, func(s task.Subtask) bool { return s.ID == LoginSubtask }) {
		return false
	}
	read := slices.IndexFunc(t.Reference, func(s task.Step) bool {
		cmd, _ := s.Args["command"].(string)
		return s.Interface == task.CLI && strings.Contains(cmd, LoginsFile)
	})
	if read < 0 {
		return false
	}
	var sites []string
	for _, s := range t.Reference[read+1:] {
		url, _ := s.Args["url"].(string)
		if site, path, ok := strings.Cut(strings.TrimPrefix(url, "site:"), "/"); ok && strings.HasPrefix(url, "site:") && strings.HasPrefix(path, "login") && !slices.Contains(sites, site) {
			sites = append(sites, site)
		}
	}
	if len(sites) == 0 {
		return false // read, but no site logged in to
	}
	at := slices.IndexFunc(t.Subtasks, func(s task.Subtask) bool { return s.Interface == task.GUI })
	if at < 0 {
		return false
	}
	sub := task.Subtask{ID: LoginSubtask, Title: fmt.Sprintf("Find the %s login in ~/%s", strings.Join(sites, " and "), LoginsFile), Interface: task.CLI, Support: true}
	t.Subtasks = slices.Insert(t.Subtasks, at, sub)
	return true
}
