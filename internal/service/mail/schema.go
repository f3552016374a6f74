package mail

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/mail.sqlite).
const DBName = "mail"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// The standard folders, in the order CreateOps and TestSQL create them.
const (
	Inbox   = "inbox"
	Sent    = "sent"
	Archive = "archive"
	Drafts  = "drafts"
	Trash   = "trash"
)

// StandardFolders lists the folders every mailbox has, in id order.
func StandardFolders() []string { return []string{Inbox, Sent, Archive, Drafts, Trash} }

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE folders (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL UNIQUE
)`,
		`CREATE TABLE mails (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  folder_id INTEGER NOT NULL REFERENCES folders(id),
  thread_key TEXT NOT NULL,
  from_addr TEXT NOT NULL,
  to_addrs TEXT NOT NULL DEFAULT '',
  cc_addrs TEXT NOT NULL DEFAULT '',
  subject TEXT NOT NULL DEFAULT '',
  body TEXT NOT NULL DEFAULT '',
  sent_at TEXT NOT NULL,
  is_read INTEGER NOT NULL DEFAULT 0,
  is_starred INTEGER NOT NULL DEFAULT 0
)`,
		`CREATE INDEX mails_folder ON mails(folder_id, sent_at)`,
		`CREATE INDEX mails_thread ON mails(thread_key, sent_at)`,
		`CREATE TABLE attachments (
  id INTEGER PRIMARY KEY,
  mail_id INTEGER NOT NULL REFERENCES mails(id),
  filename TEXT NOT NULL,
  home_path TEXT NOT NULL,
  UNIQUE(mail_id, filename)
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"folders", []string{"id", "name"}},
	{"mails", []string{"id", "ext_id", "folder_id", "thread_key", "from_addr", "to_addrs", "cc_addrs", "subject", "body", "sent_at", "is_read", "is_starred"}},
	{"attachments", []string{"id", "mail_id", "filename", "home_path"}},
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
