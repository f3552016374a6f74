package calendar

import (
	"cmp"
	"database/sql"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
)

// occurrence is one occurrence of a confirmed event.
type occurrence struct {
	from, to   int64 // start and end, Unix seconds (written as TimeFormat only when shown)
	index      int
	event      string // ext_id
	title      string
	location   sql.NullString
	organizer  string
	recurrence sql.NullString
	response   sql.NullString // the persona's response to the invitation
}

// occurrencesIn returns the occurrences of the confirmed events
// overlapping [from, to) (TimeFormat), ordered by (start, event,
// occurrence): what list_events' page step reads, with the rules
// expanded in Go (SQL cannot say them, and expanding them through
// calendar_occurrences and json_each cost list_events 1.4x the
// hand-written service's time).
func occurrencesIn(c *engine.Call, from, to, self string) ([]occurrence, error) {
	f, ok1 := parseTime(from)
	t, ok2 := parseTime(to)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("occurrences: window %q-%q is not two times", from, to)
	}
	rows, err := c.Q.QueryContext(c.Ctx, `SELECT e.ext_id, e.title, e.starts_at, e.ends_at, e.location, e.organizer, e.recurrence,
       (SELECT i.response FROM invitations i WHERE i.event_id = e.id AND i.guest = ?)
FROM events e WHERE e.status = 'confirmed' AND e.starts_at < ? ORDER BY e.id`, self, to)
	if err != nil {
		return nil, fmt.Errorf("occurrences: %w", err)
	}
	defer rows.Close()
	var out []occurrence
	for rows.Next() {
		var o occurrence
		var startsAt, endsAt string
		if err := rows.Scan(&o.event, &o.title, &startsAt, &endsAt, &o.location, &o.organizer, &o.recurrence, &o.response); err != nil {
			return nil, fmt.Errorf("occurrences: %w", err)
		}
		start, ok1 := parseTime(startsAt)
		end, ok2 := parseTime(endsAt)
		rule, rerr := ParseRule(o.recurrence.String)
		if !ok1 || !ok2 || rerr != nil {
			return nil, fmt.Errorf("unreadable event times %q-%q or recurrence %q", startsAt, endsAt, o.recurrence.String)
		}
		for _, sp := range rule.expand(start.Unix(), end.Unix(), f.Unix(), t.Unix()) {
			o.from, o.to, o.index = sp.Start, sp.End, sp.Index
			out = append(out, o)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("occurrences: %w", err)
	}
	// By start as Unix seconds, which orders as the start's text does
	// (four-digit years).
	slices.SortFunc(out, func(a, b occurrence) int {
		if c := cmp.Compare(a.from, b.from); c != 0 {
			return c
		}
		if c := strings.Compare(a.event, b.event); c != 0 {
			return c
		}
		return cmp.Compare(a.index, b.index)
	})
	return out, nil
}

// occurrencePage is list_events' page step: from :first_day to :last_day
// (dates the checks accepted), after the cursor (:c_start, :c_event,
// :c_digits) when there is one, at most :page_size occurrences, as the
// JSON array :events of the items json_object would write, and
// :next_cursor (the last item's cursor when there are more, else NULL).
func occurrencePage(c *engine.Call) error {
	first, err := time.Parse(DateFormat, c.Text("first_day"))
	if err != nil {
		return fmt.Errorf("list_events page: first_day: %w", err)
	}
	last, err := time.Parse(DateFormat, c.Text("last_day"))
	if err != nil {
		return fmt.Errorf("list_events page: last_day: %w", err)
	}
	limit := int(c.Int("page_size"))
	if limit < 1 {
		return fmt.Errorf("list_events page: page_size is %v", c.Params["page_size"])
	}
	occs, err := occurrencesIn(c, first.Format(TimeFormat), last.AddDate(0, 0, 1).Format(TimeFormat), c.Text("self"))
	if err != nil {
		return err
	}
	after := c.Params["c_start"] != nil
	var cStart, cEvent string
	var cIndex int64
	if after {
		cStart, cEvent = c.Text("c_start"), c.Text("c_event")
		if cIndex, err = strconv.ParseInt(c.Text("c_digits"), 10, 64); err != nil {
			return fmt.Errorf("list_events page: cursor occurrence: %w", err)
		}
	}
	b := []byte{'['}
	n := 0
	var lastShown *occurrence
	more := false
	for i := range occs {
		o := &occs[i]
		if after {
			start := unixText(o.from)
			if !(start > cStart || start == cStart && (o.event > cEvent || o.event == cEvent && int64(o.index) > cIndex)) {
				continue
			}
		}
		if n == limit {
			more = true
			break
		}
		if n > 0 {
			b = append(b, ',')
		}
		b = appendItem(b, o)
		lastShown = o
		n++
	}
	c.Params["events"] = string(append(b, ']'))
	c.Params["next_cursor"] = nil
	if more {
		c.Params["next_cursor"] = dbtool.EncodeCursor("c1", unixText(lastShown.from), lastShown.event, strconv.Itoa(lastShown.index))
	}
	return nil
}

// appendItem writes o as list_events' json_object of it: NULL for an
// empty location or recurrence and for no response (the result's shaping
// drops them).
func appendItem(b []byte, o *occurrence) []byte {
	str := func(b []byte, key string, s string, null bool) []byte {
		b = append(b, key...)
		if null {
			return append(b, "null"...)
		}
		return engine.AppendJSONText(b, s)
	}
	b = str(b, `{"event":`, o.event, false)
	b = append(b, `,"occurrence":`...)
	b = strconv.AppendInt(b, int64(o.index), 10)
	b = str(b, `,"title":`, o.title, false)
	b = appendTime(append(b, `,"starts_at":`...), o.from)
	b = appendTime(append(b, `,"ends_at":`...), o.to)
	b = str(b, `,"location":`, o.location.String, !o.location.Valid || o.location.String == "")
	b = str(b, `,"organizer":`, o.organizer, false)
	b = str(b, `,"recurrence":`, o.recurrence.String, !o.recurrence.Valid || o.recurrence.String == "")
	b = str(b, `,"my_response":`, o.response.String, !o.response.Valid)
	return append(b, '}')
}

// freeTime is find_free_time's walk over the day's window (:win_from to
// :win_to, TimeFormat): the occurrences you have not declined, in order,
// and the gaps between the latest end so far and each next start, from
// :first_free to :last_free (Unix seconds), as the JSON array :free of
// {starts_at, ends_at}; then the first gap of at least :slot seconds as
// :slot_start and :slot_end (NULL when none).
func freeTime(c *engine.Call) error {
	occs, err := occurrencesIn(c, c.Text("win_from"), c.Text("win_to"), c.Text("self"))
	if err != nil {
		return err
	}
	firstFree, lastFree, slot := c.Int("first_free"), c.Int("last_free"), c.Int("slot")
	type gap struct{ a, b int64 }
	var gaps []gap
	latest := firstFree // the latest end so far, and never before first_free
	for _, o := range occs {
		if o.response.Valid && o.response.String == "declined" {
			continue
		}
		gaps = append(gaps, gap{latest, min(o.from, lastFree)})
		latest = max(latest, o.to)
	}
	gaps = append(gaps, gap{latest, lastFree})
	b := []byte{'['}
	c.Params["slot_start"], c.Params["slot_end"] = nil, nil
	n := 0
	for _, g := range gaps {
		if g.b <= g.a {
			continue
		}
		if n > 0 {
			b = append(b, ',')
		}
		n++
		b = appendTime(append(b, `{"starts_at":`...), g.a)
		b = appendTime(append(b, `,"ends_at":`...), g.b)
		b = append(b, '}')
		if c.Params["slot_start"] == nil && g.b-g.a >= slot {
			c.Params["slot_start"], c.Params["slot_end"] = unixText(g.a), unixText(g.a+slot)
		}
	}
	c.Params["free"] = string(append(b, ']'))
	return nil
}

// appendTime writes Unix seconds t as the JSON string of unixText(t),
// which needs no escapes.
func appendTime(b []byte, t int64) []byte {
	b = append(b, '"')
	b = time.Unix(t, 0).UTC().AppendFormat(b, TimeFormat)
	return append(b, '"')
}
