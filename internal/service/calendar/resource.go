package calendar

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// dayURIPrefix is the start of a day resource's URI, calendar://day/{date}.
const dayURIPrefix = "calendar://day/"

// DayURI returns the resource URI of the day of t (UTC).
func DayURI(t time.Time) string {
	return dayURIPrefix + t.UTC().Format(DateFormat)
}

// readResource renders one day as text, one line per occurrence of a
// confirmed event overlapping it:
// "HH:MM-HH:MM TITLE @ LOCATION (event ID, occurrence N, organizer X, you: R)".
func (s *Service) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	date, ok := strings.CutPrefix(uri, dayURIPrefix)
	if !ok {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	day, ok := parseDate(date)
	if !ok || date != day.Format(DateFormat) {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	var text strings.Builder
	err := s.read(ctx, func(q querier) error {
		occs, err := s.occurrences(ctx, q, day, day.AddDate(0, 0, 1))
		if err != nil {
			return err
		}
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
		return nil
	})
	if err != nil {
		s.log.ErrorContext(ctx, "calendar resource failed", dbtool.LogKeyDB, s.path, dbtool.LogKeyErr, err)
		return nil, fmt.Errorf("reading %s: internal error in the calendar service", uri)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "text/plain", Text: text.String()}}}, nil
}
