package taskgen

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// TestCheckCalendar: a reference that books before the world's clock, or
// over a confirmed meeting, is refused naming the step and the meeting; a
// free slot after the clock passes, and freeHour finds one around a
// meeting.
func TestCheckCalendar(t *testing.T) {
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "w"), state.TestWorld{SQL: map[string][]string{"calendar": {
		`CREATE TABLE events (id INTEGER PRIMARY KEY, title TEXT, starts_at TEXT, ends_at TEXT, status TEXT, recurrence TEXT)`,
		`INSERT INTO events VALUES (1, 'Dentist', '2026-03-08 10:00:00', '2026-03-08 11:00:00', 'confirmed', '')`,
		`INSERT INTO events VALUES (2, 'Cancelled lunch', '2026-03-08 14:00:00', '2026-03-08 15:00:00', 'cancelled', '')`,
	}}})
	w := &World{Dir: dir, Manifest: &world.Manifest{Clock: "2026-03-05T09:30:00Z"}}
	book := func(start, end string) *task.Task {
		var ref Steps
		ref.MCP("calendar", "list_events", nil, "")
		ref.MCP("calendar", "create_event", map[string]any{"title": "Coffee", "starts_at": start, "ends_at": end}, "")
		return &task.Task{Reference: ref}
	}
	for _, c := range []struct{ start, end, want string }{
		{"2026-03-08 16:00", "2026-03-08 17:00", ""},
		{"2026-03-08 10:30", "2026-03-08 11:30", `step 2 books "Coffee" at 2026-03-08 10:30-2026-03-08 11:30, over "Dentist"`},
		{"2026-03-08 11:00", "2026-03-08 12:00", ""}, // right after it
		{"2026-03-08 14:00", "2026-03-08 15:00", ""}, // over a cancelled one
		{"2026-03-04 10:00", "2026-03-04 11:00", "not after the world's clock"},
	} {
		err := CheckCalendar(w, book(c.start, c.end))
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("booking %s-%s: %v, want %q", c.start, c.end, err, c.want)
		}
	}
	if h, err := freeHour(w, "2026-03-08", 10, 11, 14); err != nil || h != 11 {
		t.Errorf("freeHour around the dentist: %d %v, want 11", h, err)
	}
}
