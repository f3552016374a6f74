package messages

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/messages.sqlite).
const DBName = "messages"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE threads (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  kind TEXT NOT NULL CHECK (kind IN ('dm','group')),
  created_at TEXT NOT NULL
)`,
		`CREATE TABLE participants (
  id INTEGER PRIMARY KEY,
  thread_id INTEGER NOT NULL REFERENCES threads(id),
  name TEXT NOT NULL,
  role TEXT NOT NULL DEFAULT '',
  UNIQUE(thread_id, name)
)`,
		`CREATE TABLE messages (
  id INTEGER PRIMARY KEY,
  thread_id INTEGER NOT NULL REFERENCES threads(id),
  seq INTEGER NOT NULL,
  sender TEXT NOT NULL,
  body TEXT NOT NULL,
  sent_at TEXT NOT NULL,
  is_read INTEGER NOT NULL DEFAULT 0,
  UNIQUE(thread_id, seq)
)`,
		// The unread messages, which list_threads counts per thread.
		`CREATE INDEX messages_unread ON messages(thread_id) WHERE is_read = 0`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"threads", []string{"id", "ext_id", "title", "kind", "created_at"}},
	{"participants", []string{"id", "thread_id", "name", "role"}},
	{"messages", []string{"id", "thread_id", "seq", "sender", "body", "sent_at", "is_read"}},
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
