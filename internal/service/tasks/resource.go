package tasks

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// URI prefixes of the resources: tasks://project/{project} (a project's
// name) and tasks://todo/{todo} (a to-do's ext_id).
const (
	projectURIPrefix = "tasks://project/"
	todoURIPrefix    = "tasks://todo/"
)

// ResourceTodos bounds the to-dos a project resource lists.
const ResourceTodos = 200

// ProjectURI returns the resource URI of the project with that name.
func ProjectURI(name string) string {
	return projectURIPrefix + dbtool.URIEscape(name)
}

// TodoURI returns the resource URI of the to-do with that ext_id.
func TodoURI(extID string) string {
	return todoURIPrefix + dbtool.URIEscape(extID)
}

// renderProject renders the project keys[0] (its name) as markdown: a
// "# name" heading, a line of counts, then one checklist item per to-do. It
// changes nothing.
func (s *Service) renderProject(ctx context.Context, q querier, keys []string) (string, error) {
	today := s.today()
	p, err := findProject(ctx, q, keys[0])
	if err != nil {
		return "", err
	}
	var open, overdue, done int
	if err := q.QueryRowContext(ctx, `SELECT
  COALESCE(SUM(status = 'open'), 0),
  COALESCE(SUM(status = 'open' AND due_on IS NOT NULL AND due_on < ?), 0),
  COALESCE(SUM(status = 'done'), 0)
FROM todos WHERE project_id = ?`, today, p.id).Scan(&open, &overdue, &done); err != nil {
		return "", fmt.Errorf("count todos: %w", err)
	}
	ts, err := s.queryTodos(ctx, q, today, todoQuery+` WHERE project_id = ? ORDER BY status = 'done', due_key, prio_rank, id LIMIT ?`, p.id, ResourceTodos)
	if err != nil {
		return "", err
	}
	return projectText(p, today, open, overdue, done, ts), nil
}

// renderTodo renders the to-do keys[0] (its ext_id) as markdown. It changes
// nothing.
func (s *Service) renderTodo(ctx context.Context, q querier, keys []string) (string, error) {
	t, err := s.findTodo(ctx, q, keys[0])
	if err != nil {
		return "", err
	}
	return todoText(t.Todo, s.today()), nil
}

func projectText(p project, today string, open, overdue, done int, ts []todoRow) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n", p.name)
	if p.archived {
		b.WriteString("Archived: takes no new to-dos. ")
	}
	fmt.Fprintf(&b, "Today: %s · Open: %d · Overdue: %d · Done: %d\n\n", today, open, overdue, done)
	if total := open + done; len(ts) < total {
		fmt.Fprintf(&b, "Showing the first %d of %d to-dos; list_todos with project %q and status all pages through them all.\n\n", len(ts), total, p.name)
	}
	if len(ts) == 0 {
		b.WriteString("No to-dos.\n")
	}
	for _, t := range ts {
		box := " "
		if t.Status == StatusDone {
			box = "x"
		}
		fmt.Fprintf(&b, "- [%s] %s (%s)%s\n", box, oneLine(t.Title), t.Todo.Todo, todoFacts(t.Todo))
		if t.Notes != "" {
			fmt.Fprintf(&b, "  Notes: %s\n", clip(oneLine(t.Notes)))
		}
	}
	return b.String()
}

// todoFacts is " · due D · OVERDUE · priority P · done AT", the parts
// that apply.
func todoFacts(t Todo) string {
	var b strings.Builder
	if t.DueOn != "" {
		fmt.Fprintf(&b, " · due %s", t.DueOn)
	}
	if t.Overdue {
		b.WriteString(" · overdue")
	}
	fmt.Fprintf(&b, " · priority %s", t.Priority)
	if t.Status == StatusDone {
		fmt.Fprintf(&b, " · done %s", t.CompletedAt)
	}
	return b.String()
}

func todoText(t Todo, today string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\nTo-do: %s · Project: %s · Status: %s", oneLine(t.Title), t.Todo, t.Project, t.Status)
	if t.Overdue {
		fmt.Fprintf(&b, " · Overdue (today is %s)", today)
	}
	due := t.DueOn
	if due == "" {
		due = "none"
	}
	fmt.Fprintf(&b, " · Due: %s · Priority: %s · Created: %s", due, t.Priority, t.CreatedAt)
	if t.CompletedAt != "" {
		fmt.Fprintf(&b, " · Completed: %s", t.CompletedAt)
	}
	b.WriteString("\n")
	if t.Notes != "" {
		fmt.Fprintf(&b, "\n%s\n", strings.TrimRight(t.Notes, "\n"))
	}
	return b.String()
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
