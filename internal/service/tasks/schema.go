package tasks

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/tasks.sqlite).
const DBName = "tasks"

// Formats of the time columns (UTC).
const (
	TimeFormat = "2006-01-02 15:04:05"
	DateFormat = "2006-01-02"
)

// Priorities and statuses, as stored.
const (
	PriorityLow    = "low"
	PriorityMedium = "medium"
	PriorityHigh   = "high"
	StatusOpen     = "open"
	StatusDone     = "done"
)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE projects (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0,1))
)`,
		`CREATE TABLE todos (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  project_id INTEGER NOT NULL REFERENCES projects(id),
  title TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  due_on TEXT,
  priority TEXT NOT NULL DEFAULT 'medium' CHECK (priority IN ('low','medium','high')),
  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','done')),
  created_at TEXT NOT NULL,
  completed_at TEXT
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"projects", []string{"id", "name", "archived"}},
	{"todos", []string{"id", "ext_id", "project_id", "title", "notes", "due_on", "priority", "status", "created_at", "completed_at"}},
}

// checkSchema fails unless every table and column the service uses exists.
func checkSchema(ctx context.Context, q state.Querier) error {
	for _, w := range wantColumns {
		t, err := state.DescribeTable(ctx, q, w.table)
		if err != nil {
			return err
		}
		for _, c := range w.columns {
			if _, ok := t.Column(c); !ok {
				return fmt.Errorf("table %s has no column %s", w.table, c)
			}
		}
	}
	return nil
}
