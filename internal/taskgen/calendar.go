package taskgen

import (
	"fmt"
	"os"

	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// calendarTime is how the calendar service stores times; a create_event
// argument may leave the seconds out (calendarSeconds adds them).
const calendarTime = "2006-01-02 15:04:05"

func calendarSeconds(s string) string {
	if len(s) == len("2006-01-02 15:04") {
		return s + ":00"
	}
	return s
}

// busy reports the first confirmed one-off event overlapping [start, end)
// (calendar times), as "TITLE (START-END)", or "".
func busy(w *World, start, end string) (string, error) {
	if _, err := os.Stat(world.DBPath(w.Dir, "calendar")); err != nil {
		return "", nil
	}
	rows, err := w.Query("calendar", `SELECT title, starts_at, ends_at FROM events WHERE status = 'confirmed' AND recurrence = '' AND starts_at < ? AND ends_at > ? ORDER BY starts_at LIMIT 1`, calendarSeconds(end), calendarSeconds(start))
	if err != nil || len(rows) == 0 {
		return "", err
	}
	return fmt.Sprintf("%q (%s-%s)", str(rows[0][0]), str(rows[0][1]), str(rows[0][2])), nil
}

// freeHour is the first of hours whose hour on day (YYYY-MM-DD) no
// confirmed one-off event overlaps; hours[0] when none is free (the
// draft is then refused by CheckCalendar, saying what it would overlap).
func freeHour(w *World, day string, hours ...int) (int, error) {
	for _, h := range hours {
		over, err := busy(w, fmt.Sprintf("%s %02d:00", day, h), fmt.Sprintf("%s %02d:00", day, h+1))
		if err != nil {
			return 0, err
		}
		if over == "" {
			return h, nil
		}
	}
	return hours[0], nil
}

// CheckCalendar holds a draft's reference to the world's clock and
// calendar: every event it books (calendar create_event) starts after the
// world's clock and does not overlap a confirmed one-off event already in
// the calendar. Its error says which step and why; a family whose sketch
// picks a slot without looking is caught here, before the task is kept.
// (Recurring events are not expanded.)
func CheckCalendar(w *World, t *task.Task) error {
	now, err := worldNow(w)
	if err != nil {
		return err
	}
	for i, s := range t.Reference {
		if s.Interface != task.MCP || s.Tool != "mcp.calendar__create_event" {
			continue
		}
		start, _ := s.Args["starts_at"].(string)
		end, _ := s.Args["ends_at"].(string)
		if calendarSeconds(start) <= now.Format(calendarTime) {
			return fmt.Errorf("reference step %d books %q at %s, not after the world's clock (%s)", i+1, s.Args["title"], start, now.Format(calendarTime))
		}
		over, err := busy(w, start, end)
		if err != nil {
			return err
		}
		if over != "" {
			return fmt.Errorf("reference step %d books %q at %s-%s, over %s already in the calendar", i+1, s.Args["title"], start, end, over)
		}
	}
	return nil
}
