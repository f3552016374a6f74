package tasks

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit    = 20
	MaxLimit        = 100
	MaxTitleChars   = 200
	MaxNotesChars   = 5000
	MaxProjectChars = 100
	MaxQueryChars   = 200
)

// Todo is one to-do as the tools return it.
type Todo struct {
	Todo        string `json:"todo" jsonschema:"the to-do id to pass to update_todo, complete_todo, reopen_todo and delete_todo"`
	Project     string `json:"project" jsonschema:"the project's name"`
	Title       string `json:"title"`
	Notes       string `json:"notes,omitempty"`
	DueOn       string `json:"due_on,omitempty" jsonschema:"due date, YYYY-MM-DD; absent when the to-do has none"`
	Priority    string `json:"priority" jsonschema:"low, medium or high"`
	Status      string `json:"status" jsonschema:"open or done"`
	Overdue     bool   `json:"overdue,omitempty" jsonschema:"true when open and due before today"`
	CreatedAt   string `json:"created_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	CompletedAt string `json:"completed_at,omitempty" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS; absent unless done"`
}

// Project is one project as the tools return it.
type Project struct {
	Name     string `json:"name" jsonschema:"the project's name, the project argument of the other tools"`
	Archived bool   `json:"archived,omitempty" jsonschema:"true if archived: hidden by default, takes no new to-dos"`
	Open     int    `json:"open" jsonschema:"open to-dos"`
	Overdue  int    `json:"overdue" jsonschema:"open to-dos due before today"`
	Done     int    `json:"done" jsonschema:"done to-dos"`
}

// ListProjectsIn are list_projects' arguments.
type ListProjectsIn struct {
	IncludeArchived bool `json:"include_archived,omitempty" jsonschema:"true to list archived projects too; omit to list active ones only"`
}

// ListProjectsOut is list_projects' result.
type ListProjectsOut struct {
	Today    string    `json:"today" jsonschema:"today's date, YYYY-MM-DD, against which overdue is counted"`
	Projects []Project `json:"projects" jsonschema:"projects by name"`
}

// ListTodosIn are list_todos' arguments.
type ListTodosIn struct {
	Project   string `json:"project,omitempty" jsonschema:"a project name from list_projects; omit for every project"`
	Status    string `json:"status,omitempty" jsonschema:"open, done or all; omit for open"`
	DueBefore string `json:"due_before,omitempty" jsonschema:"YYYY-MM-DD: only to-dos due strictly before this date (to-dos without a due date are left out); omit for no date filter"`
	Limit     int    `json:"limit,omitempty" jsonschema:"how many to-dos to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor    string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_todos result with the same filters, to get the next page; omit for the first page"`
}

// ListTodosOut is list_todos' result.
type ListTodosOut struct {
	Today      string `json:"today" jsonschema:"today's date, YYYY-MM-DD"`
	Todos      []Todo `json:"todos" jsonschema:"to-dos by due date (undated last), then priority (high first), then creation order"`
	NextCursor string `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// SearchTodosIn are search_todos' arguments.
type SearchTodosIn struct {
	Query  string `json:"query" jsonschema:"text to find in titles, notes and project names; plain text, case-insensitive, not a pattern"`
	Status string `json:"status,omitempty" jsonschema:"open, done or all; omit for all"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many matches to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
}

// SearchTodosOut is search_todos' result.
type SearchTodosOut struct {
	Todos []Todo `json:"todos" jsonschema:"matching to-dos in list_todos order"`
	More  bool   `json:"more,omitempty" jsonschema:"true if more to-dos match than were returned"`
}

// CreateTodoIn are create_todo's arguments.
type CreateTodoIn struct {
	Title    string `json:"title" jsonschema:"what to do, 1 to 200 characters"`
	Project  string `json:"project" jsonschema:"the name of an active project, from list_projects"`
	DueOn    string `json:"due_on,omitempty" jsonschema:"due date, YYYY-MM-DD; omit for none"`
	Priority string `json:"priority,omitempty" jsonschema:"low, medium or high; omit for medium"`
	Notes    string `json:"notes,omitempty" jsonschema:"details, at most 5000 characters"`
}

// UpdateTodoIn are update_todo's arguments; omitted fields are unchanged.
type UpdateTodoIn struct {
	Todo     string  `json:"todo" jsonschema:"the to-do id, from list_todos or search_todos"`
	Title    *string `json:"title,omitempty" jsonschema:"new title, 1 to 200 characters"`
	Project  *string `json:"project,omitempty" jsonschema:"name of an active project to move the to-do to"`
	DueOn    *string `json:"due_on,omitempty" jsonschema:"new due date, YYYY-MM-DD; an empty string removes the due date"`
	Priority *string `json:"priority,omitempty" jsonschema:"low, medium or high"`
	Notes    *string `json:"notes,omitempty" jsonschema:"new notes (replacing the old ones), at most 5000 characters; an empty string clears them"`
}

// TodoIn names one to-do.
type TodoIn struct {
	Todo string `json:"todo" jsonschema:"the to-do id, from list_todos or search_todos (e.g. todo-3)"`
}

// TodoOut is the result of the tools that change one to-do: the to-do as
// stored after the call (before it, for delete_todo).
type TodoOut struct {
	Todo Todo `json:"todo"`
}

// ProjectIn names one project.
type ProjectIn struct {
	Name string `json:"name" jsonschema:"the project's name, 1 to 100 characters"`
}

// ArchiveProjectIn are archive_project's arguments.
type ArchiveProjectIn struct {
	Project string `json:"project" jsonschema:"the name of an active project, from list_projects"`
}

// ProjectOut is the result of create_project and archive_project.
type ProjectOut struct {
	Project Project `json:"project"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	write := func(idempotent, destructive bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{IdempotentHint: idempotent, DestructiveHint: boolPtr(destructive), OpenWorldHint: boolPtr(false)}
	}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_projects",
		Title: "List projects",
		Description: "Lists the to-do projects by name with their numbers of open, overdue and done to-dos, and today's date. " +
			"Archived projects are left out unless include_archived is true. Use it to find a project's name for list_todos or create_todo.",
		Annotations: readOnly,
	}, s.listProjects)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_todos",
		Title: "List to-dos",
		Description: "Lists to-dos ordered by due date (undated last), then priority (high first), then creation order, " +
			"optionally of one project, by status (open by default) and due strictly before a date. Each to-do has its id, " +
			"project, title, due date, priority, status and overdue (open and due before today). Returns up to limit to-dos " +
			"and a next_cursor when there are more; pass it back as cursor, with the same filters, for the next page.",
		Annotations: readOnly,
	}, s.listTodos)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "search_todos",
		Title: "Search to-dos",
		Description: "Finds to-dos whose title, notes or project name contains the query (case-insensitive plain text, not a pattern), " +
			"open and done unless status says otherwise, in list_todos order.",
		Annotations: readOnly,
	}, s.searchTodos)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "create_todo",
		Title:       "Create a to-do",
		Description: "Adds an open to-do to an active project, with an optional due date (YYYY-MM-DD), priority (low, medium, high; medium by default) and notes. Returns it with its new id.",
		Annotations: write(false, false),
	}, s.createTodo)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "update_todo",
		Title:       "Update a to-do",
		Description: "Changes a to-do's title, project, due date, priority or notes; fields not given stay as they are. An empty due_on removes the due date. Use complete_todo and reopen_todo to change its status.",
		Annotations: write(true, false),
	}, s.updateTodo)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "complete_todo",
		Title:       "Complete a to-do",
		Description: "Marks an open to-do done, recording now as its completed_at. Returns the to-do.",
		Annotations: write(false, false),
	}, s.completeTodo)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "reopen_todo",
		Title:       "Reopen a to-do",
		Description: "Marks a done to-do open again and clears its completed_at. Returns the to-do.",
		Annotations: write(false, false),
	}, s.reopenTodo)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "delete_todo",
		Title:       "Delete a to-do",
		Description: "Deletes a to-do for good (open or done) and returns it as it was. To finish a to-do use complete_todo instead.",
		Annotations: write(false, true),
	}, s.deleteTodo)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "create_project",
		Title:       "Create a project",
		Description: "Creates an empty project with that name (unique, ignoring case). Returns it.",
		Annotations: write(false, false),
	}, s.createProject)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "archive_project",
		Title:       "Archive a project",
		Description: "Archives an active project: it is hidden from list_projects by default and takes no new to-dos; its to-dos are kept and still listed. Returns it.",
		Annotations: write(false, false),
	}, s.archiveProject)
}

// today is the clock's date in UTC.
func (s *Service) today() string {
	return s.clock.Now().UTC().Format(DateFormat)
}

// checkStatus returns the statuses a status filter selects.
func checkStatus(status, def string) ([]string, error) {
	if status == "" {
		status = def
	}
	switch status {
	case StatusOpen, StatusDone:
		return []string{status}, nil
	case "all":
		return []string{StatusOpen, StatusDone}, nil
	}
	return nil, badCall("status %q is not one of open, done, all; omit it for %s", clip(status), def)
}

func checkPriority(p string) error {
	switch p {
	case PriorityLow, PriorityMedium, PriorityHigh:
		return nil
	}
	return badCall("priority %q is not one of low, medium, high", clip(p))
}

func checkDate(field, d string) error {
	if _, ok := parseDate(d); !ok {
		return badCall("%s %q is not a date; use YYYY-MM-DD, e.g. 2026-03-15", field, clip(d))
	}
	return nil
}

func checkText(field, v string, max int, required bool) error {
	n := utf8.RuneCountInString(v)
	switch {
	case required && strings.TrimSpace(v) == "":
		return badCall("%s is empty; pass the %s", field, field)
	case n > max:
		return badCall("%s is %d characters; use at most %d", field, n, max)
	case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
		return badCall("%s contains invalid characters (NUL or invalid UTF-8)", field)
	}
	return nil
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	r := []rune(s)
	if len(r) <= 60 {
		return s
	}
	return string(r[:60]) + "…"
}

// todoQuery selects to-dos with their sort keys; callers add WHERE and ORDER.
const todoQuery = `SELECT id, ext_id, project, title, notes, due_on, priority, status, created_at, completed_at, due_key, prio_rank FROM (
  SELECT t.id, t.ext_id, p.name AS project, t.title, t.notes, COALESCE(t.due_on, '') AS due_on, t.priority, t.status,
    t.created_at, COALESCE(t.completed_at, '') AS completed_at, t.project_id,
    COALESCE(t.due_on, '` + noDue + `') AS due_key,
    CASE t.priority WHEN 'high' THEN 0 WHEN 'medium' THEN 1 ELSE 2 END AS prio_rank
  FROM todos t JOIN projects p ON p.id = t.project_id)`

const todoOrder = ` ORDER BY due_key, prio_rank, id`

// todoRow is a to-do with its row id and sort keys.
type todoRow struct {
	Todo
	id   int64
	key  cursor
	proj int64
}

func (s *Service) queryTodos(ctx context.Context, q querier, today, query string, args ...any) ([]todoRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list todos: %w", err)
	}
	defer rows.Close()
	var ts []todoRow
	for rows.Next() {
		var t todoRow
		if err := rows.Scan(&t.id, &t.Todo.Todo, &t.Project, &t.Title, &t.Notes, &t.DueOn, &t.Priority, &t.Status, &t.CreatedAt, &t.CompletedAt, &t.key.due, &t.key.rank); err != nil {
			return nil, fmt.Errorf("list todos: %w", err)
		}
		t.key.id = t.id
		t.Overdue = t.Status == StatusOpen && t.DueOn != "" && t.DueOn < today
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list todos: %w", err)
	}
	return ts, nil
}

func (s *Service) listProjects(ctx context.Context, in ListProjectsIn) (ListProjectsOut, error) {
	today := s.today()
	out := ListProjectsOut{Today: today, Projects: []Project{}}
	err := s.read(ctx, func(q querier) error {
		query := `SELECT p.name, p.archived,
  (SELECT COUNT(*) FROM todos t WHERE t.project_id = p.id AND t.status = 'open'),
  (SELECT COUNT(*) FROM todos t WHERE t.project_id = p.id AND t.status = 'open' AND t.due_on IS NOT NULL AND t.due_on < ?),
  (SELECT COUNT(*) FROM todos t WHERE t.project_id = p.id AND t.status = 'done')
FROM projects p`
		if !in.IncludeArchived {
			query += ` WHERE p.archived = 0`
		}
		query += ` ORDER BY lower(p.name), p.name`
		rows, err := q.QueryContext(ctx, query, today)
		if err != nil {
			return fmt.Errorf("list projects: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var p Project
			if err := rows.Scan(&p.Name, &p.Archived, &p.Open, &p.Overdue, &p.Done); err != nil {
				return fmt.Errorf("list projects: %w", err)
			}
			out.Projects = append(out.Projects, p)
		}
		return rows.Err()
	})
	return out, err
}

func (s *Service) listTodos(ctx context.Context, in ListTodosIn) (ListTodosOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListTodosOut{}, err
	}
	statuses, err := checkStatus(in.Status, StatusOpen)
	if err != nil {
		return ListTodosOut{}, err
	}
	if in.DueBefore != "" {
		if err := checkDate("due_before", in.DueBefore); err != nil {
			return ListTodosOut{}, err
		}
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListTodosOut{}, badCall("cursor %q is not one list_todos returned; pass next_cursor from the previous list_todos result unchanged, or omit cursor to start from the first page", clip(in.Cursor))
		}
		after = &c
	}
	today := s.today()
	out := ListTodosOut{Today: today, Todos: []Todo{}}
	err = s.read(ctx, func(q querier) error {
		where := []string{`status IN (` + placeholders(len(statuses)) + `)`}
		var args []any
		for _, st := range statuses {
			args = append(args, st)
		}
		if in.Project != "" {
			p, err := findProject(ctx, q, in.Project)
			if err != nil {
				return err
			}
			where = append(where, `project_id = ?`)
			args = append(args, p.id)
		}
		if in.DueBefore != "" {
			where = append(where, `due_on <> '' AND due_on < ?`)
			args = append(args, in.DueBefore)
		}
		if after != nil {
			where = append(where, `(due_key, prio_rank, id) > (?, ?, ?)`)
			args = append(args, after.due, after.rank, after.id)
		}
		args = append(args, limit+1)
		ts, err := s.queryTodos(ctx, q, today, todoQuery+` WHERE `+strings.Join(where, " AND ")+todoOrder+` LIMIT ?`, args...)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts = ts[:limit]
			out.NextCursor = ts[limit-1].key.String()
		}
		for _, t := range ts {
			out.Todos = append(out.Todos, t.Todo)
		}
		return nil
	})
	return out, err
}

func placeholders(n int) string {
	return strings.TrimSuffix(strings.Repeat("?, ", n), ", ")
}

func (s *Service) searchTodos(ctx context.Context, in SearchTodosIn) (SearchTodosOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return SearchTodosOut{}, err
	}
	statuses, err := checkStatus(in.Status, "all")
	if err != nil {
		return SearchTodosOut{}, err
	}
	query := strings.TrimSpace(in.Query)
	switch n := utf8.RuneCountInString(query); {
	case query == "":
		return SearchTodosOut{}, badCall("query is empty; pass a word or phrase to look for, e.g. \"invoice\"")
	case n > MaxQueryChars:
		return SearchTodosOut{}, badCall("query is %d characters; use at most %d (a distinctive word or phrase)", n, MaxQueryChars)
	}
	today := s.today()
	out := SearchTodosOut{Todos: []Todo{}}
	err = s.read(ctx, func(q querier) error {
		// Bound as a parameter; instr (not LIKE) so that % and _ are plain
		// characters. lower() folds ASCII letters only.
		args := []any{query}
		for _, st := range statuses {
			args = append(args, st)
		}
		args = append(args, limit+1)
		ts, err := s.queryTodos(ctx, q, today, todoQuery+`
WHERE (instr(lower(title), lower(?)) > 0 OR instr(lower(notes), lower(?1)) > 0 OR instr(lower(project), lower(?1)) > 0)
  AND status IN (`+placeholders(len(statuses))+`)`+todoOrder+` LIMIT ?`, args...)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts, out.More = ts[:limit], true
		}
		for _, t := range ts {
			out.Todos = append(out.Todos, t.Todo)
		}
		return nil
	})
	return out, err
}

// project is a row of projects.
type project struct {
	id       int64
	name     string
	archived bool
}

// findProject returns the project with that name, or a tool error naming
// how to find one (and a close match when there is one).
func findProject(ctx context.Context, q querier, name string) (project, error) {
	if strings.TrimSpace(name) == "" {
		return project{}, badCall("project is required: pass a project name from list_projects")
	}
	var p project
	err := q.QueryRowContext(ctx, `SELECT id, name, archived FROM projects WHERE name = ?`, name).Scan(&p.id, &p.name, &p.archived)
	if err == nil {
		return p, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return project{}, fmt.Errorf("find project: %w", err)
	}
	var near string
	err = q.QueryRowContext(ctx, `SELECT name FROM projects WHERE lower(name) = lower(?) ORDER BY id LIMIT 1`, strings.TrimSpace(name)).Scan(&near)
	switch {
	case err == nil:
		return project{}, badCall("no project %q; did you mean project %q? Project names are exact", clip(name), near)
	case !errors.Is(err, sql.ErrNoRows):
		return project{}, fmt.Errorf("find project: %w", err)
	}
	return project{}, badCall("no project %q; call list_projects (with include_archived for archived ones) to see project names, or create_project to make it", clip(name))
}

// activeProject is findProject for a project that must take new to-dos.
func activeProject(ctx context.Context, q querier, name string) (project, error) {
	p, err := findProject(ctx, q, name)
	if err == nil && p.archived {
		return project{}, badCall("project %q is archived and takes no new to-dos; pick an active project from list_projects or create_project a new one", p.name)
	}
	return p, err
}

// findTodo returns the to-do with that ext_id, or a tool error.
func (s *Service) findTodo(ctx context.Context, q querier, extID string) (todoRow, error) {
	if strings.TrimSpace(extID) == "" {
		return todoRow{}, badCall("todo is required: pass a to-do id from list_todos or search_todos (the \"todo\" field)")
	}
	ts, err := s.queryTodos(ctx, q, s.today(), todoQuery+` WHERE ext_id = ?`, extID)
	if err != nil {
		return todoRow{}, err
	}
	if len(ts) == 1 {
		if err := q.QueryRowContext(ctx, `SELECT project_id FROM todos WHERE id = ?`, ts[0].id).Scan(&ts[0].proj); err != nil {
			return todoRow{}, fmt.Errorf("find todo: %w", err)
		}
		return ts[0], nil
	}
	var near, title string
	err = q.QueryRowContext(ctx, `SELECT ext_id, title FROM todos WHERE lower(ext_id) = lower(?1) OR lower(title) = lower(?1) ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &title)
	switch {
	case err == nil:
		return todoRow{}, badCall("no to-do %q; did you mean to-do %q (%s)? Pass the id from the \"todo\" field", clip(extID), near, clip(title))
	case !errors.Is(err, sql.ErrNoRows):
		return todoRow{}, fmt.Errorf("find todo: %w", err)
	}
	return todoRow{}, badCall("no to-do %q; call list_todos (status all) or search_todos to find the to-do's id", clip(extID))
}

func (s *Service) createTodo(ctx context.Context, in CreateTodoIn) (TodoOut, error) {
	if in.Priority == "" {
		in.Priority = PriorityMedium
	}
	for _, check := range []func() error{
		func() error { return checkText("title", in.Title, MaxTitleChars, true) },
		func() error { return checkText("notes", in.Notes, MaxNotesChars, false) },
		func() error { return checkPriority(in.Priority) },
		func() error {
			if in.DueOn == "" {
				return nil
			}
			return checkDate("due_on", in.DueOn)
		},
	} {
		if err := check(); err != nil {
			return TodoOut{}, err
		}
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out TodoOut
	err := s.write(ctx, func(q querier) error {
		p, err := activeProject(ctx, q, in.Project)
		if err != nil {
			return err
		}
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM todos`).Scan(&id); err != nil {
			return fmt.Errorf("next todo id: %w", err)
		}
		ext, err := freeExtID(ctx, q, fmt.Sprintf("todo-%d", id))
		if err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `INSERT INTO todos (id, ext_id, project_id, title, notes, due_on, priority, status, created_at, completed_at)
VALUES (?, ?, ?, ?, ?, NULLIF(?, ''), ?, 'open', ?, NULL)`, id, ext, p.id, in.Title, in.Notes, in.DueOn, in.Priority, now)
		if err != nil {
			return fmt.Errorf("insert todo: %w", err)
		}
		out.Todo, err = s.findTodoRow(ctx, q, ext)
		return err
	})
	return out, err
}

// freeExtID returns base, or base-2, base-3, ... if base is taken.
func freeExtID(ctx context.Context, q querier, base string) (string, error) {
	ext := base
	for i := 2; ; i++ {
		var taken bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM todos WHERE ext_id = ?)`, ext).Scan(&taken); err != nil {
			return "", fmt.Errorf("new todo id: %w", err)
		}
		if !taken {
			return ext, nil
		}
		ext = fmt.Sprintf("%s-%d", base, i)
	}
}

func (s *Service) findTodoRow(ctx context.Context, q querier, extID string) (Todo, error) {
	t, err := s.findTodo(ctx, q, extID)
	return t.Todo, err
}

func (s *Service) updateTodo(ctx context.Context, in UpdateTodoIn) (TodoOut, error) {
	if in.Title == nil && in.Project == nil && in.DueOn == nil && in.Priority == nil && in.Notes == nil {
		return TodoOut{}, badCall("nothing to change; give at least one of title, project, due_on, priority, notes")
	}
	if in.Title != nil {
		if err := checkText("title", *in.Title, MaxTitleChars, true); err != nil {
			return TodoOut{}, err
		}
	}
	if in.Notes != nil {
		if err := checkText("notes", *in.Notes, MaxNotesChars, false); err != nil {
			return TodoOut{}, err
		}
	}
	if in.Priority != nil {
		if err := checkPriority(*in.Priority); err != nil {
			return TodoOut{}, err
		}
	}
	if in.DueOn != nil && *in.DueOn != "" {
		if err := checkDate("due_on", *in.DueOn); err != nil {
			return TodoOut{}, err
		}
	}
	var out TodoOut
	err := s.write(ctx, func(q querier) error {
		t, err := s.findTodo(ctx, q, in.Todo)
		if err != nil {
			return err
		}
		var set []string
		var args []any
		if in.Title != nil {
			set, args = append(set, "title = ?"), append(args, *in.Title)
		}
		if in.Notes != nil {
			set, args = append(set, "notes = ?"), append(args, *in.Notes)
		}
		if in.Priority != nil {
			set, args = append(set, "priority = ?"), append(args, *in.Priority)
		}
		if in.DueOn != nil {
			set, args = append(set, "due_on = NULLIF(?, '')"), append(args, *in.DueOn)
		}
		if in.Project != nil {
			p, err := findProject(ctx, q, *in.Project)
			if err != nil {
				return err
			}
			if p.archived && p.id != t.proj {
				return badCall("project %q is archived and takes no new to-dos; pick an active project from list_projects", p.name)
			}
			set, args = append(set, "project_id = ?"), append(args, p.id)
		}
		if _, err := q.ExecContext(ctx, `UPDATE todos SET `+strings.Join(set, ", ")+` WHERE id = ?`, append(args, t.id)...); err != nil {
			return fmt.Errorf("update todo: %w", err)
		}
		out.Todo, err = s.findTodoRow(ctx, q, t.Todo.Todo)
		return err
	})
	return out, err
}

func (s *Service) completeTodo(ctx context.Context, in TodoIn) (TodoOut, error) {
	now := s.clock.Now().UTC().Format(TimeFormat)
	return s.setStatus(ctx, in.Todo, StatusDone, func(t todoRow) error {
		if t.Status == StatusDone {
			return badCall("to-do %q is already done (completed %s); nothing to do. Use reopen_todo to open it again", t.Todo.Todo, t.CompletedAt)
		}
		return nil
	}, now)
}

func (s *Service) reopenTodo(ctx context.Context, in TodoIn) (TodoOut, error) {
	return s.setStatus(ctx, in.Todo, StatusOpen, func(t todoRow) error {
		if t.Status == StatusOpen {
			return badCall("to-do %q is already open; nothing to do. Use complete_todo to mark it done", t.Todo.Todo)
		}
		return nil
	}, "")
}

func (s *Service) setStatus(ctx context.Context, extID, status string, check func(todoRow) error, completedAt string) (TodoOut, error) {
	var out TodoOut
	err := s.write(ctx, func(q querier) error {
		t, err := s.findTodo(ctx, q, extID)
		if err != nil {
			return err
		}
		if err := check(t); err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE todos SET status = ?, completed_at = NULLIF(?, '') WHERE id = ?`, status, completedAt, t.id); err != nil {
			return fmt.Errorf("set status: %w", err)
		}
		out.Todo, err = s.findTodoRow(ctx, q, t.Todo.Todo)
		return err
	})
	return out, err
}

func (s *Service) deleteTodo(ctx context.Context, in TodoIn) (TodoOut, error) {
	var out TodoOut
	err := s.write(ctx, func(q querier) error {
		t, err := s.findTodo(ctx, q, in.Todo)
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `DELETE FROM todos WHERE id = ?`, t.id); err != nil {
			return fmt.Errorf("delete todo: %w", err)
		}
		out.Todo = t.Todo
		return nil
	})
	return out, err
}

func (s *Service) createProject(ctx context.Context, in ProjectIn) (ProjectOut, error) {
	name := strings.TrimSpace(in.Name)
	if err := checkText("name", name, MaxProjectChars, true); err != nil {
		return ProjectOut{}, err
	}
	var out ProjectOut
	err := s.write(ctx, func(q querier) error {
		var existing string
		var archived bool
		err := q.QueryRowContext(ctx, `SELECT name, archived FROM projects WHERE lower(name) = lower(?) ORDER BY id LIMIT 1`, name).Scan(&existing, &archived)
		switch {
		case err == nil && archived:
			return badCall("project %q already exists (archived); pick another name", existing)
		case err == nil:
			return badCall("project %q already exists; use it with create_todo, or pick another name", existing)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("find project: %w", err)
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO projects (id, name, archived) VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM projects), ?, 0)`, name); err != nil {
			return fmt.Errorf("insert project: %w", err)
		}
		out.Project = Project{Name: name}
		return nil
	})
	return out, err
}

func (s *Service) archiveProject(ctx context.Context, in ArchiveProjectIn) (ProjectOut, error) {
	today := s.today()
	var out ProjectOut
	err := s.write(ctx, func(q querier) error {
		p, err := findProject(ctx, q, in.Project)
		if err != nil {
			return err
		}
		if p.archived {
			return badCall("project %q is already archived; nothing to do", p.name)
		}
		if _, err := q.ExecContext(ctx, `UPDATE projects SET archived = 1 WHERE id = ?`, p.id); err != nil {
			return fmt.Errorf("archive project: %w", err)
		}
		out.Project = Project{Name: p.name, Archived: true}
		return q.QueryRowContext(ctx, `SELECT
  COALESCE(SUM(status = 'open'), 0),
  COALESCE(SUM(status = 'open' AND due_on IS NOT NULL AND due_on < ?), 0),
  COALESCE(SUM(status = 'done'), 0)
FROM todos WHERE project_id = ?`, today, p.id).Scan(&out.Project.Open, &out.Project.Overdue, &out.Project.Done)
	})
	return out, err
}
