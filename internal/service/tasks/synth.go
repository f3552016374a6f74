package tasks

import (
	"errors"
	"fmt"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
)

// This file is the "god mode" synthesis API: Go functions that build delta
// operations seeding or changing a world's tasks database, through the
// definition's synthesis operations (service.yaml, ops). They are for world
// synthesis, never tools; the model sees only their results.

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

// CreateOp returns the db.create operation that creates the tasks database
// with Schema.
func CreateOp() delta.Op { return Compiled().Def.CreateOp() }

// op returns the one delta operation of the definition's synthesis
// operation name; a seed it refuses is an error wrapping ErrSeed.
func op(name string, params map[string]any) (delta.Op, error) {
	ops, err := Compiled().Op(name, params)
	switch {
	case err != nil:
		return delta.Op{}, fmt.Errorf("%w: %v", ErrSeed, err)
	case len(ops) != 1:
		return delta.Op{}, fmt.Errorf("tasks: service.yaml: op %s emitted %d operations, want 1", name, len(ops))
	}
	return ops[0], nil
}

// ProjectOp returns the db.insert of p.
func ProjectOp(p SeedProject) (delta.Op, error) {
	return op("add_project", map[string]any{"name": p.Name, "archived": p.Archived})
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
	params := map[string]any{"ext_id": t.ID, "project": t.Project, "title": t.Title, "notes": t.Notes,
		"due_on": nil, "priority": t.Priority, "status": t.Status, "created_at": "", "completed_at": nil}
	if t.DueOn != "" {
		params["due_on"] = t.DueOn
	}
	if !t.CreatedAt.IsZero() {
		params["created_at"] = t.CreatedAt.UTC().Format(TimeFormat)
	}
	if !t.CompletedAt.IsZero() {
		params["completed_at"] = t.CompletedAt.UTC().Format(TimeFormat)
	}
	return op("add_todo", params)
}

// CompleteOp returns the db.update that marks to-do id done at at.
func CompleteOp(id string, at time.Time) delta.Op {
	return must(op("complete_todo", map[string]any{"ext_id": id, "completed_at": at.UTC().Format(TimeFormat)}))
}

// ArchiveOp returns the db.update that archives the project of that name.
func ArchiveOp(name string) delta.Op {
	return must(op("archive_project", map[string]any{"name": name}))
}

// must returns o of an operation without checks, which fails only when the
// embedded definition is broken (as Compiled panics then).
func must(o delta.Op, err error) delta.Op {
	if err != nil {
		panic("tasks: service.yaml: " + err.Error())
	}
	return o
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
