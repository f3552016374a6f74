package calendar

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// dayURIPrefix is the start of a day resource's URI, calendar://day/{date}.
const dayURIPrefix = "calendar://day/"

// DayURI returns the resource URI of the day of t (UTC).
func DayURI(t time.Time) string {
	return dayURIPrefix + t.UTC().Format(DateFormat)
}

// renderDay renders the day keys[0] (YYYY-MM-DD) as text, one line per
// occurrence of a confirmed event overlapping it:
// "HH:MM-HH:MM TITLE @ LOCATION (event ID, occurrence N, organizer X, you: R)".
func (s *Service) renderDay(ctx context.Context, q querier, keys []string) (string, error) {
	date := keys[0]
	day, ok := parseDate(date)
	if !ok || date != day.Format(DateFormat) {
		return "", badCall("%q is not a date; use YYYY-MM-DD", date)
	}
	occs, err := s.occurrences(ctx, q, day, day.AddDate(0, 0, 1))
	if err != nil {
		return "", err
	}
	var text strings.Builder
	fmt.Fprintf(&text, "%s (%s), times UTC\n\n", day.Format(DateFormat), day.Weekday())
	if len(occs) == 0 {
		text.WriteString("No events.\n")
	}
	for _, o := range occs {
		start, end := time.Unix(o.span.Start, 0).UTC(), time.Unix(o.span.End, 0).UTC()
		span := start.Format("15:04") + "-" + end.Format("15:04")
		if start.Format(DateFormat) != date || end.Format(DateFormat) != date {
			span = start.Format("2006-01-02 15:04") + " to " + end.Format("2006-01-02 15:04")
		}
		fmt.Fprintf(&text, "%s %s", span, o.e.title)
		if o.e.location != "" {
			fmt.Fprintf(&text, " @ %s", o.e.location)
		}
		fmt.Fprintf(&text, " (event %s", o.e.extID)
		if o.e.recurrence != "" {
			fmt.Fprintf(&text, ", occurrence %d", o.span.Index)
		}
		fmt.Fprintf(&text, ", organizer %s", o.e.organizer)
		if o.e.myResponse != "" {
			fmt.Fprintf(&text, ", you: %s", o.e.myResponse)
		}
		text.WriteString(")\n")
	}
	return text.String(), nil
}
