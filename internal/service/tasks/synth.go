package tasks

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/delta"
)

// This file is the "god mode" synthesis API: Go functions that build delta
// operations seeding or changing a world's tasks database. They are for
// world synthesis, never tools; the model sees only their results.

// SeedProject is a project to insert.
type SeedProject struct {
	Name     string // natural key, 1 to 100 characters
	Archived bool
}

// SeedTodo is a to-do to insert.
type SeedTodo struct {
	ID          string // ext_id, the natural key; e.g. "todo-12"
	Project     string // a project's name, inserted before (by ProjectOp)
	Title       string
	Notes       string
	DueOn       string // YYYY-MM-DD or "" for none
	Priority    string // low, medium, high; "" means medium
	Status      string // open, done; "" means open
	CreatedAt   time.Time
	CompletedAt time.Time // required for a done to-do, zero for an open one
}

// ErrSeed is wrapped by every error of the synthesis functions.
var ErrSeed = errors.New("tasks: bad seed")

func seedErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSeed, fmt.Sprintf(format, args...))
}

// CreateOp returns the db.create operation that creates the tasks database
// with Schema.
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

// projectKey is the natural key of a project.
func projectKey(name string) map[string]delta.Value {
	return map[string]delta.Value{"name": delta.Lit(name)}
}

// todoKey is the natural key of a to-do.
func todoKey(id string) map[string]delta.Value {
	return map[string]delta.Value{"ext_id": delta.Lit(id)}
}

// ProjectOp returns the db.insert of p.
func ProjectOp(p SeedProject) (delta.Op, error) {
	if p.Name == "" || utf8.RuneCountInString(p.Name) > MaxProjectChars {
		return delta.Op{}, seedErr("project name %q must be 1 to %d characters", p.Name, MaxProjectChars)
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "projects", Key: projectKey(p.Name),
		Values: map[string]delta.Value{"archived": delta.Lit(p.Archived)}}, nil
}

// TodoOp returns the db.insert of t; its project_id refers to t.Project by
// natural key.
func TodoOp(t SeedTodo) (delta.Op, error) {
	if t.Priority == "" {
		t.Priority = PriorityMedium
	}
	if t.Status == "" {
		t.Status = StatusOpen
	}
	switch {
	case t.ID == "":
		return delta.Op{}, seedErr("to-do ID is required")
	case t.Project == "":
		return delta.Op{}, seedErr("to-do %s: Project is required", t.ID)
	case t.Title == "" || utf8.RuneCountInString(t.Title) > MaxTitleChars:
		return delta.Op{}, seedErr("to-do %s: Title must be 1 to %d characters", t.ID, MaxTitleChars)
	case utf8.RuneCountInString(t.Notes) > MaxNotesChars:
		return delta.Op{}, seedErr("to-do %s: Notes over %d characters", t.ID, MaxNotesChars)
	case t.Priority != PriorityLow && t.Priority != PriorityMedium && t.Priority != PriorityHigh:
		return delta.Op{}, seedErr("to-do %s: priority %q is not low, medium or high", t.ID, t.Priority)
	case t.Status != StatusOpen && t.Status != StatusDone:
		return delta.Op{}, seedErr("to-do %s: status %q is not open or done", t.ID, t.Status)
	case t.CreatedAt.IsZero():
		return delta.Op{}, seedErr("to-do %s: CreatedAt is required", t.ID)
	case t.Status == StatusDone && t.CompletedAt.IsZero():
		return delta.Op{}, seedErr("to-do %s: a done to-do needs CompletedAt", t.ID)
	case t.Status == StatusOpen && !t.CompletedAt.IsZero():
		return delta.Op{}, seedErr("to-do %s: an open to-do has no CompletedAt", t.ID)
	}
	due := delta.Lit(nil)
	if t.DueOn != "" {
		if d, err := time.Parse(DateFormat, t.DueOn); err != nil || d.Format(DateFormat) != t.DueOn {
			return delta.Op{}, seedErr("to-do %s: DueOn %q is not YYYY-MM-DD", t.ID, t.DueOn)
		}
		due = delta.Lit(t.DueOn)
	}
	completed := delta.Lit(nil)
	if !t.CompletedAt.IsZero() {
		completed = delta.Lit(t.CompletedAt.UTC().Format(TimeFormat))
	}
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "todos", Key: todoKey(t.ID),
		Values: map[string]delta.Value{
			"project_id":   delta.RefTo("projects", projectKey(t.Project), "id"),
			"title":        delta.Lit(t.Title),
			"notes":        delta.Lit(t.Notes),
			"due_on":       due,
			"priority":     delta.Lit(t.Priority),
			"status":       delta.Lit(t.Status),
			"created_at":   delta.Lit(t.CreatedAt.UTC().Format(TimeFormat)),
			"completed_at": completed,
		}}, nil
}

// CompleteOp returns the db.update that marks to-do id done at at.
func CompleteOp(id string, at time.Time) delta.Op {
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "todos", Key: todoKey(id),
		Set: map[string]delta.Value{"status": delta.Lit(StatusDone), "completed_at": delta.Lit(at.UTC().Format(TimeFormat))}}
}

// ArchiveOp returns the db.update that archives the project of that name.
func ArchiveOp(name string) delta.Op {
	return delta.Op{Op: delta.OpDBUpdate, DB: DBName, Table: "projects", Key: projectKey(name),
		Set: map[string]delta.Value{"archived": delta.Lit(true)}}
}

// SeedOps returns CreateOp followed by the inserts of projects and then
// todos, in order; the first invalid seed is an error wrapping ErrSeed.
func SeedOps(projects []SeedProject, todos []SeedTodo) ([]delta.Op, error) {
	ops := []delta.Op{CreateOp()}
	for _, p := range projects {
		op, err := ProjectOp(p)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	for _, t := range todos {
		op, err := TodoOp(t)
		if err != nil {
			return nil, err
		}
		ops = append(ops, op)
	}
	return ops, nil
}
