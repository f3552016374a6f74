package notes

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/notes.sqlite).
const DBName = "notes"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE notebooks (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
)`,
		`CREATE TABLE notes (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  notebook_id INTEGER NOT NULL REFERENCES notebooks(id),
  title TEXT NOT NULL,
  body TEXT NOT NULL DEFAULT '',
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  pinned INTEGER NOT NULL DEFAULT 0
)`,
		`CREATE TABLE note_links (
  id INTEGER PRIMARY KEY,
  note_id INTEGER NOT NULL REFERENCES notes(id),
  target TEXT NOT NULL,
  UNIQUE(note_id, target)
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"notebooks", []string{"id", "name"}},
	{"notes", []string{"id", "ext_id", "notebook_id", "title", "body", "created_at", "updated_at", "pinned"}},
	{"note_links", []string{"id", "note_id", "target"}},
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
