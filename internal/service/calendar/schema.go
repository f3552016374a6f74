package calendar

import (
	"context"
	"fmt"

	"github.com/wildawm/wildawm/internal/state"
)

// DBName is the name of the service's database in a world (db/calendar.sqlite).
const DBName = "calendar"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// DateFormat is the layout of dates in arguments, UNTIL and resource URIs.
const DateFormat = "2006-01-02"

// Event statuses.
const (
	StatusConfirmed = "confirmed"
	StatusCancelled = "cancelled"
)

// Invitation responses.
const (
	ResponseNeedsAction = "needs-action"
	ResponseAccepted    = "accepted"
	ResponseDeclined    = "declined"
	ResponseTentative   = "tentative"
)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string {
	return []string{
		`CREATE TABLE events (
  id INTEGER PRIMARY KEY,
  ext_id TEXT NOT NULL UNIQUE,
  title TEXT NOT NULL,
  location TEXT NOT NULL DEFAULT '',
  starts_at TEXT NOT NULL,
  ends_at TEXT NOT NULL,
  notes TEXT NOT NULL DEFAULT '',
  organizer TEXT NOT NULL,
  recurrence TEXT NOT NULL DEFAULT '',
  status TEXT NOT NULL DEFAULT 'confirmed' CHECK (status IN ('confirmed','cancelled'))
)`,
		`CREATE TABLE invitations (
  id INTEGER PRIMARY KEY,
  event_id INTEGER NOT NULL REFERENCES events(id),
  guest TEXT NOT NULL,
  response TEXT NOT NULL DEFAULT 'needs-action' CHECK (response IN ('needs-action','accepted','declined','tentative')),
  responded_at TEXT NOT NULL DEFAULT '',
  UNIQUE(event_id, guest)
)`,
	}
}

// wantColumns lists the columns the service reads and writes, per table.
var wantColumns = [...]struct {
	table   string
	columns []string
}{
	{"events", []string{"id", "ext_id", "title", "location", "starts_at", "ends_at", "notes", "organizer", "recurrence", "status"}},
	{"invitations", []string{"id", "event_id", "guest", "response", "responded_at"}},
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
