package calendar

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit     = 50
	MaxLimit         = 200
	DefaultDays      = 7 // list_events' default window: from to from+7 days
	MaxWindowDays    = 366
	MaxTitleChars    = 200
	MaxLocationChars = 200
	MaxNotesChars    = 10000
	MaxNameChars     = 200
	MaxGuests        = 100
	MaxEventDays     = 14 // the longest an event may last
	DefaultBetween   = "09:00-17:00"
)

// ListEventsIn are list_events' arguments.
type ListEventsIn struct {
	From   string `json:"from,omitempty" jsonschema:"first day to list, YYYY-MM-DD (UTC); omit for today"`
	To     string `json:"to,omitempty" jsonschema:"last day to list, YYYY-MM-DD, inclusive; omit for 7 days after from; at most 366 days after from"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many occurrences to return, 1 to 200; omit for 50" minimum:"1" maximum:"200"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_events result with the same from and to, to get the next page; omit for the first page"`
}

// ListEventsOut is list_events' result.
type ListEventsOut struct {
	From       string       `json:"from" jsonschema:"the first day listed"`
	To         string       `json:"to" jsonschema:"the last day listed, inclusive"`
	Events     []Occurrence `json:"events" jsonschema:"occurrences of confirmed events overlapping the days, earliest first; a recurring event appears once per occurrence"`
	NextCursor string       `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// Occurrence is one occurrence of an event in list_events.
type Occurrence struct {
	Event      string `json:"event" jsonschema:"the event id to pass to get_event, update_event, cancel_event and respond"`
	Occurrence int    `json:"occurrence" jsonschema:"which repeat of a recurring event this is, from 1; 1 for a one-off event"`
	Title      string `json:"title"`
	StartsAt   string `json:"starts_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	EndsAt     string `json:"ends_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	Location   string `json:"location,omitempty"`
	Organizer  string `json:"organizer"`
	Recurrence string `json:"recurrence,omitempty" jsonschema:"the event's repeat rule; absent for a one-off event"`
	MyResponse string `json:"my_response,omitempty" jsonschema:"your answer to the invitation (needs-action, accepted, declined, tentative); absent when you are not a guest"`
}

// EventIn names one event.
type EventIn struct {
	Event string `json:"event" jsonschema:"the event id, as list_events returns it (e.g. evt-3)"`
}

// EventDetail is one event with its guests, the result of get_event,
// create_event, update_event and cancel_event.
type EventDetail struct {
	Event      string  `json:"event"`
	Title      string  `json:"title"`
	StartsAt   string  `json:"starts_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS; for a recurring event, the first occurrence"`
	EndsAt     string  `json:"ends_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	Location   string  `json:"location,omitempty"`
	Notes      string  `json:"notes,omitempty"`
	Organizer  string  `json:"organizer"`
	Recurrence string  `json:"recurrence,omitempty" jsonschema:"the repeat rule, FREQ=DAILY|WEEKLY with COUNT=n or UNTIL=YYYY-MM-DD; absent for a one-off event"`
	Status     string  `json:"status" jsonschema:"confirmed or cancelled"`
	Guests     []Guest `json:"guests" jsonschema:"invited people and their responses, in invitation order"`
	MyResponse string  `json:"my_response,omitempty" jsonschema:"your answer to the invitation; absent when you are not a guest"`
}

// Guest is one invitation of an event.
type Guest struct {
	Name        string `json:"name"`
	Response    string `json:"response" jsonschema:"needs-action, accepted, declined or tentative"`
	RespondedAt string `json:"responded_at,omitempty" jsonschema:"UTC, when they answered"`
}

// CreateEventIn are create_event's arguments.
type CreateEventIn struct {
	Title      string   `json:"title" jsonschema:"what the event is, 1 to 200 characters"`
	StartsAt   string   `json:"starts_at" jsonschema:"start, UTC, YYYY-MM-DD HH:MM (seconds optional)"`
	EndsAt     string   `json:"ends_at" jsonschema:"end, UTC, YYYY-MM-DD HH:MM; after starts_at and at most 14 days later"`
	Location   string   `json:"location,omitempty" jsonschema:"where, at most 200 characters"`
	Notes      string   `json:"notes,omitempty" jsonschema:"description or agenda, at most 10000 characters"`
	Guests     []string `json:"guests,omitempty" jsonschema:"names of the people to invite (not yourself); each gets an invitation awaiting their answer"`
	Recurrence string   `json:"recurrence,omitempty" jsonschema:"repeat rule: FREQ=DAILY or FREQ=WEEKLY with COUNT=n or UNTIL=YYYY-MM-DD, e.g. FREQ=WEEKLY;COUNT=4; omit for a one-off event"`
}

// UpdateEventIn are update_event's arguments; omitted fields keep their
// value.
type UpdateEventIn struct {
	Event      string  `json:"event" jsonschema:"the event id, as list_events returns it"`
	Title      *string `json:"title,omitempty" jsonschema:"new title, 1 to 200 characters"`
	StartsAt   *string `json:"starts_at,omitempty" jsonschema:"new start, UTC, YYYY-MM-DD HH:MM"`
	EndsAt     *string `json:"ends_at,omitempty" jsonschema:"new end, UTC, YYYY-MM-DD HH:MM"`
	Location   *string `json:"location,omitempty" jsonschema:"new location; empty to clear it"`
	Notes      *string `json:"notes,omitempty" jsonschema:"new notes; empty to clear them"`
	Recurrence *string `json:"recurrence,omitempty" jsonschema:"new repeat rule (FREQ=DAILY|WEEKLY with COUNT=n or UNTIL=YYYY-MM-DD); empty to make it a one-off event"`
}

// RespondIn are respond's arguments.
type RespondIn struct {
	Event    string `json:"event" jsonschema:"the event id of an invitation you received"`
	Response string `json:"response" jsonschema:"accepted, declined or tentative"`
}

// RespondOut is respond's result.
type RespondOut struct {
	Event       string `json:"event"`
	Title       string `json:"title"`
	Response    string `json:"response"`
	Previous    string `json:"previous" jsonschema:"your response before this call"`
	RespondedAt string `json:"responded_at"`
}

// FindFreeTimeIn are find_free_time's arguments.
type FindFreeTimeIn struct {
	Date            string `json:"date,omitempty" jsonschema:"the day to search, YYYY-MM-DD (UTC); omit for today"`
	DurationMinutes int    `json:"duration_minutes" jsonschema:"length of the slot needed, in minutes, 1 to 1440" minimum:"1" maximum:"1440"`
	Between         string `json:"between,omitempty" jsonschema:"the hours to search, HH:MM-HH:MM (UTC, end may be 24:00); omit for 09:00-17:00"`
}

// FindFreeTimeOut is find_free_time's result.
type FindFreeTimeOut struct {
	Date            string     `json:"date"`
	Between         string     `json:"between"`
	DurationMinutes int        `json:"duration_minutes"`
	Found           bool       `json:"found" jsonschema:"true if a slot of that length is free"`
	StartsAt        string     `json:"starts_at,omitempty" jsonschema:"the earliest free slot's start; absent when none was found"`
	EndsAt          string     `json:"ends_at,omitempty" jsonschema:"the earliest free slot's end"`
	Free            []Interval `json:"free" jsonschema:"every free interval within between, of any length, earliest first"`
}

// Interval is a span of time.
type Interval struct {
	StartsAt string `json:"starts_at"`
	EndsAt   string `json:"ends_at"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_events",
		Title: "List calendar events",
		Description: "Lists the confirmed events overlapping a range of days (UTC), earliest first, with recurring events " +
			"expanded into one entry per occurrence. Defaults to today and the next 7 days. Each entry has the event id " +
			"for get_event, update_event, cancel_event and respond, and your response when you are invited. Returns up to " +
			"limit entries and a next_cursor when there are more; pass it back as cursor with the same from and to.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, s.listEvents)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "get_event",
		Title:       "Get an event",
		Description: "Returns one event with its notes, repeat rule, status (confirmed or cancelled) and every guest's response. The event id comes from list_events.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, s.getEvent)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "create_event",
		Title: "Create an event",
		Description: fmt.Sprintf("Creates an event organized by %s and invites the guests (their responses start as needs-action). "+
			"Times are UTC, YYYY-MM-DD HH:MM; the end must be after the start. For a repeating event give recurrence, "+
			"FREQ=DAILY or FREQ=WEEKLY with COUNT=n or UNTIL=YYYY-MM-DD. Check find_free_time first to avoid conflicts. "+
			"Returns the event with its new id.", s.self),
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.createEvent)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "update_event",
		Title: "Update an event",
		Description: "Changes the title, times, location, notes or repeat rule of a confirmed event you organize; omitted fields " +
			"keep their value. A change to a recurring event applies to every occurrence. To answer an invitation use respond.",
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}, s.updateEvent)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "cancel_event",
		Title: "Cancel an event",
		Description: "Cancels an event you organize, every occurrence of it; it stays visible to get_event with status cancelled " +
			"but no longer appears in list_events. To decline someone else's event use respond with declined.",
		Annotations: &mcp.ToolAnnotations{DestructiveHint: boolPtr(true), OpenWorldHint: boolPtr(false)},
	}, s.cancelEvent)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "respond",
		Title: "Respond to an invitation",
		Description: fmt.Sprintf("Answers an invitation %s received: accepted, declined or tentative. It applies to every "+
			"occurrence of a recurring event. Declined events still appear in list_events but do not block find_free_time.", s.self),
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)},
	}, s.respond)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "find_free_time",
		Title: "Find free time",
		Description: "Finds the earliest free slot of duration_minutes on one day (UTC) within the hours between " +
			"(default 09:00-17:00), skipping events you have not declined and, today, the time already past. Also " +
			"returns every free interval of the day within those hours.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)},
	}, s.findFreeTime)
}

// clip returns s for an error message: at most 60 characters, on one line.
func clip(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 60 {
		return string(r[:60]) + "…"
	}
	return s
}

// today is midnight UTC of the clock's day.
func (s *Service) today() time.Time {
	now := s.clock.Now().UTC()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
}

// eventColumns are the columns scanEvent reads, with the persona's response.
const eventColumns = `e.id, e.ext_id, e.title, e.location, e.starts_at, e.ends_at, e.notes, e.organizer, e.recurrence, e.status,
  COALESCE((SELECT i.response FROM invitations i WHERE i.event_id = e.id AND i.guest = ?), '')`

// event is a row of events with the persona's response ("" when not a guest).
type event struct {
	id                                   int64
	extID, title, location, startsAt     string
	endsAt, notes, organizer, recurrence string
	status, myResponse                   string
}

type scanner interface{ Scan(dest ...any) error }

func scanEvent(r scanner) (event, error) {
	var e event
	err := r.Scan(&e.id, &e.extID, &e.title, &e.location, &e.startsAt, &e.endsAt, &e.notes, &e.organizer, &e.recurrence, &e.status, &e.myResponse)
	return e, err
}

// findEvent returns the event with that ext_id, or a tool error that names
// the way to find one (and a close match when there is one).
func (s *Service) findEvent(ctx context.Context, q querier, extID string) (event, error) {
	if strings.TrimSpace(extID) == "" {
		return event{}, badCall("event is required: pass an event id from list_events (the \"event\" field)")
	}
	e, err := scanEvent(q.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM events e WHERE e.ext_id = ?`, s.self, extID))
	if err == nil {
		return e, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return event{}, fmt.Errorf("find event: %w", err)
	}
	var near, nearTitle string
	err = q.QueryRowContext(ctx, `SELECT ext_id, title FROM events WHERE lower(ext_id) = lower(?1) OR lower(title) = lower(?1) ORDER BY id LIMIT 1`, strings.TrimSpace(extID)).Scan(&near, &nearTitle)
	switch {
	case err == nil:
		return event{}, badCall("no event %q; did you mean event %q (%s)? Event ids are exact; call list_events to see them", clip(extID), near, nearTitle)
	case errors.Is(err, sql.ErrNoRows):
		return event{}, badCall("no event %q; call list_events for the days around it to see the event ids (the \"event\" field)", clip(extID))
	default:
		return event{}, fmt.Errorf("find event: %w", err)
	}
}

// detail returns e with its guests.
func detail(ctx context.Context, q querier, e event) (EventDetail, error) {
	d := EventDetail{Event: e.extID, Title: e.title, StartsAt: e.startsAt, EndsAt: e.endsAt, Location: e.location, Notes: e.notes,
		Organizer: e.organizer, Recurrence: e.recurrence, Status: e.status, MyResponse: e.myResponse, Guests: []Guest{}}
	rows, err := q.QueryContext(ctx, `SELECT guest, response, responded_at FROM invitations WHERE event_id = ? ORDER BY id`, e.id)
	if err != nil {
		return EventDetail{}, fmt.Errorf("guests: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var g Guest
		if err := rows.Scan(&g.Name, &g.Response, &g.RespondedAt); err != nil {
			return EventDetail{}, fmt.Errorf("guests: %w", err)
		}
		d.Guests = append(d.Guests, g)
	}
	if err := rows.Err(); err != nil {
		return EventDetail{}, fmt.Errorf("guests: %w", err)
	}
	return d, nil
}

// occ is an occurrence with its event.
type occ struct {
	e    *event
	span span
}

// occurrences returns the occurrences of confirmed events overlapping
// [from, to), ordered by (start, ext_id, index). A stored time or rule the
// service cannot read is an internal error.
func (s *Service) occurrences(ctx context.Context, q querier, from, to time.Time) ([]occ, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+eventColumns+` FROM events e WHERE e.status = 'confirmed' AND e.starts_at < ? ORDER BY e.id`,
		s.self, to.Format(TimeFormat))
	if err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	defer rows.Close()
	var out []occ
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("list events: %w", err)
		}
		start, ok1 := parseTime(e.startsAt)
		end, ok2 := parseTime(e.endsAt)
		rule, rerr := ParseRule(e.recurrence)
		if !ok1 || !ok2 || rerr != nil {
			return nil, fmt.Errorf("event %s: unreadable times %q-%q or recurrence %q", e.extID, e.startsAt, e.endsAt, e.recurrence)
		}
		for _, sp := range rule.expand(start.Unix(), end.Unix(), from.Unix(), to.Unix()) {
			out = append(out, occ{e: &e, span: sp})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list events: %w", err)
	}
	slices.SortFunc(out, func(a, b occ) int {
		if c := cmp.Compare(a.span.Start, b.span.Start); c != 0 {
			return c
		}
		if c := strings.Compare(a.e.extID, b.e.extID); c != 0 {
			return c
		}
		return a.span.Index - b.span.Index
	})
	return out, nil
}

func unixText(t int64) string { return time.Unix(t, 0).UTC().Format(TimeFormat) }

func (s *Service) listEvents(ctx context.Context, in ListEventsIn) (ListEventsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListEventsOut{}, err
	}
	from := s.today()
	if in.From != "" {
		var ok bool
		if from, ok = parseDate(in.From); !ok {
			return ListEventsOut{}, badCall("from %q is not a date; use YYYY-MM-DD, e.g. %q, or omit it for today", clip(in.From), s.today().Format(DateFormat))
		}
	}
	to := from.AddDate(0, 0, DefaultDays)
	if in.To != "" {
		var ok bool
		if to, ok = parseDate(in.To); !ok {
			return ListEventsOut{}, badCall("to %q is not a date; use YYYY-MM-DD, e.g. %q, or omit it for 7 days after from", clip(in.To), from.AddDate(0, 0, DefaultDays).Format(DateFormat))
		}
	}
	switch days := int(to.Sub(from).Hours() / 24); {
	case to.Before(from):
		return ListEventsOut{}, badCall("to (%s) is before from (%s); give the first day as from and the last as to", to.Format(DateFormat), from.Format(DateFormat))
	case days > MaxWindowDays:
		return ListEventsOut{}, badCall("from %s to %s is %d days; list at most %d days at a time", from.Format(DateFormat), to.Format(DateFormat), days, MaxWindowDays)
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListEventsOut{}, badCall("cursor %q is not one list_events returned; pass next_cursor from the previous list_events result unchanged, or omit cursor to start from the first page", clip(in.Cursor))
		}
		after = &c
	}
	out := ListEventsOut{From: from.Format(DateFormat), To: to.Format(DateFormat), Events: []Occurrence{}}
	err = s.read(ctx, func(q querier) error {
		occs, err := s.occurrences(ctx, q, from, to.AddDate(0, 0, 1))
		if err != nil {
			return err
		}
		for _, o := range occs {
			start := unixText(o.span.Start)
			if after != nil && !after.before(start, o.e.extID, o.span.Index) {
				continue
			}
			if len(out.Events) == limit {
				last := out.Events[limit-1]
				out.NextCursor = cursor{startsAt: last.StartsAt, event: last.Event, index: last.Occurrence}.String()
				break
			}
			out.Events = append(out.Events, Occurrence{Event: o.e.extID, Occurrence: o.span.Index, Title: o.e.title,
				StartsAt: start, EndsAt: unixText(o.span.End), Location: o.e.location, Organizer: o.e.organizer,
				Recurrence: o.e.recurrence, MyResponse: o.e.myResponse})
		}
		return nil
	})
	return out, err
}

func (s *Service) getEvent(ctx context.Context, in EventIn) (EventDetail, error) {
	var out EventDetail
	err := s.read(ctx, func(q querier) error {
		e, err := s.findEvent(ctx, q, in.Event)
		if err != nil {
			return err
		}
		out, err = detail(ctx, q, e)
		return err
	})
	return out, err
}

// checkText fails when v is too long, or empty while required.
func checkText(name, v string, maxChars int, required bool) error {
	n := utf8.RuneCountInString(v)
	switch {
	case required && strings.TrimSpace(v) == "":
		return badCall("%s is empty; pass the %s of the event", name, name)
	case n > maxChars:
		return badCall("%s is %d characters; use at most %d", name, n, maxChars)
	case strings.ContainsRune(v, 0):
		return badCall("%s contains a NUL character; remove it", name)
	}
	return nil
}

// checkEvent validates the fields of an event as create_event or
// update_event would store them, and normalizes its times and recurrence.
func checkEvent(e *event) error {
	if err := checkText("title", e.title, MaxTitleChars, true); err != nil {
		return err
	}
	if err := checkText("location", e.location, MaxLocationChars, false); err != nil {
		return err
	}
	if err := checkText("notes", e.notes, MaxNotesChars, false); err != nil {
		return err
	}
	start, ok := parseTime(e.startsAt)
	if !ok {
		return badCall("starts_at %q is not a time; use UTC YYYY-MM-DD HH:MM, e.g. \"2026-03-02 14:30\"", clip(e.startsAt))
	}
	end, ok := parseTime(e.endsAt)
	if !ok {
		return badCall("ends_at %q is not a time; use UTC YYYY-MM-DD HH:MM, e.g. \"2026-03-02 15:30\"", clip(e.endsAt))
	}
	switch {
	case !end.After(start):
		return badCall("ends_at (%s) must be after starts_at (%s); give the end time of the event", end.Format(TimeFormat), start.Format(TimeFormat))
	case end.Sub(start) > MaxEventDays*24*time.Hour:
		return badCall("the event lasts from %s to %s, more than %d days; check the dates, or create a repeating event with recurrence", start.Format(TimeFormat), end.Format(TimeFormat), MaxEventDays)
	}
	rule, err := ParseRule(e.recurrence)
	if err != nil {
		return badCall("%s", err.Error())
	}
	if rule.Freq != "" {
		if end.Unix()-start.Unix() > rule.step() {
			return badCall("a %s event must end within one %s of its start, so its occurrences do not overlap", strings.ToLower(rule.Freq), map[string]string{"DAILY": "day", "WEEKLY": "week"}[rule.Freq])
		}
		if rule.Count == 0 && rule.Until.Before(time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)) {
			return badCall("recurrence UNTIL=%s is before the first start (%s); give a later UNTIL date", rule.Until.Format(DateFormat), start.Format(DateFormat))
		}
	}
	e.startsAt, e.endsAt, e.recurrence = start.Format(TimeFormat), end.Format(TimeFormat), rule.String()
	return nil
}

func (s *Service) createEvent(ctx context.Context, in CreateEventIn) (EventDetail, error) {
	e := event{title: strings.TrimSpace(in.Title), location: strings.TrimSpace(in.Location), notes: in.Notes,
		startsAt: in.StartsAt, endsAt: in.EndsAt, recurrence: in.Recurrence, organizer: s.self, status: StatusConfirmed}
	if err := checkEvent(&e); err != nil {
		return EventDetail{}, err
	}
	if len(in.Guests) > MaxGuests {
		return EventDetail{}, badCall("%d guests; invite at most %d", len(in.Guests), MaxGuests)
	}
	var guests []string
	for i, g := range in.Guests {
		g = strings.TrimSpace(g)
		switch {
		case g == "":
			return EventDetail{}, badCall("guests[%d] is empty; pass each guest's name, or omit guests", i)
		case utf8.RuneCountInString(g) > MaxNameChars || strings.ContainsRune(g, 0):
			return EventDetail{}, badCall("guests[%d] is not a name (at most %d characters); pass each guest's name", i, MaxNameChars)
		case strings.EqualFold(g, s.self):
			return EventDetail{}, badCall("guests[%d] is %q, which is you (the organizer); list only the other people", i, g)
		}
		for _, h := range guests {
			if strings.EqualFold(g, h) {
				return EventDetail{}, badCall("guest %q is listed twice; name each guest once", g)
			}
		}
		guests = append(guests, g)
	}
	var out EventDetail
	err := s.write(ctx, func(q querier) error {
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM events`).Scan(&e.id); err != nil {
			return fmt.Errorf("new event: %w", err)
		}
		base := fmt.Sprintf("evt-%d", e.id)
		e.extID = base
		for i := 2; ; i++ {
			var taken bool
			if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM events WHERE ext_id = ?)`, e.extID).Scan(&taken); err != nil {
				return fmt.Errorf("new event: %w", err)
			}
			if !taken {
				break
			}
			e.extID = fmt.Sprintf("%s-%d", base, i)
		}
		_, err := q.ExecContext(ctx, `INSERT INTO events (id, ext_id, title, location, starts_at, ends_at, notes, organizer, recurrence, status)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 'confirmed')`, e.id, e.extID, e.title, e.location, e.startsAt, e.endsAt, e.notes, e.organizer, e.recurrence)
		if err != nil {
			return fmt.Errorf("insert event: %w", err)
		}
		for _, g := range guests {
			_, err := q.ExecContext(ctx, `INSERT INTO invitations (id, event_id, guest, response, responded_at)
VALUES ((SELECT COALESCE(MAX(id), 0) + 1 FROM invitations), ?, ?, 'needs-action', '')`, e.id, g)
			if err != nil {
				return fmt.Errorf("insert invitation: %w", err)
			}
		}
		out, err = detail(ctx, q, e)
		return err
	})
	return out, err
}

// ownEvent finds an event the persona organizes and that is not cancelled.
func (s *Service) ownEvent(ctx context.Context, q querier, extID, tool string) (event, error) {
	e, err := s.findEvent(ctx, q, extID)
	if err != nil {
		return event{}, err
	}
	switch {
	case e.organizer != s.self:
		return event{}, badCall("event %q is organized by %s, so you cannot %s it; to answer the invitation use respond (e.g. response declined)", e.extID, e.organizer, tool)
	case e.status == StatusCancelled:
		return event{}, badCall("event %q is already cancelled; create a new event with create_event instead", e.extID)
	}
	return e, nil
}

func (s *Service) updateEvent(ctx context.Context, in UpdateEventIn) (EventDetail, error) {
	if in.Title == nil && in.StartsAt == nil && in.EndsAt == nil && in.Location == nil && in.Notes == nil && in.Recurrence == nil {
		return EventDetail{}, badCall("nothing to change; pass at least one of title, starts_at, ends_at, location, notes and recurrence")
	}
	var out EventDetail
	err := s.write(ctx, func(q querier) error {
		e, err := s.ownEvent(ctx, q, in.Event, "change")
		if err != nil {
			return err
		}
		set := func(dst *string, v *string, trim bool) {
			if v != nil {
				*dst = *v
				if trim {
					*dst = strings.TrimSpace(*dst)
				}
			}
		}
		set(&e.title, in.Title, true)
		set(&e.startsAt, in.StartsAt, false)
		set(&e.endsAt, in.EndsAt, false)
		set(&e.location, in.Location, true)
		set(&e.notes, in.Notes, false)
		set(&e.recurrence, in.Recurrence, false)
		if err := checkEvent(&e); err != nil {
			return err
		}
		_, err = q.ExecContext(ctx, `UPDATE events SET title = ?, location = ?, starts_at = ?, ends_at = ?, notes = ?, recurrence = ? WHERE id = ?`,
			e.title, e.location, e.startsAt, e.endsAt, e.notes, e.recurrence, e.id)
		if err != nil {
			return fmt.Errorf("update event: %w", err)
		}
		out, err = detail(ctx, q, e)
		return err
	})
	return out, err
}

func (s *Service) cancelEvent(ctx context.Context, in EventIn) (EventDetail, error) {
	var out EventDetail
	err := s.write(ctx, func(q querier) error {
		e, err := s.ownEvent(ctx, q, in.Event, "cancel")
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `UPDATE events SET status = 'cancelled' WHERE id = ?`, e.id); err != nil {
			return fmt.Errorf("cancel event: %w", err)
		}
		e.status = StatusCancelled
		out, err = detail(ctx, q, e)
		return err
	})
	return out, err
}

func (s *Service) respond(ctx context.Context, in RespondIn) (RespondOut, error) {
	resp := strings.ToLower(strings.TrimSpace(in.Response))
	switch resp {
	case ResponseAccepted, ResponseDeclined, ResponseTentative:
	default:
		return RespondOut{}, badCall("response %q is not one of accepted, declined, tentative; pass one of them", clip(in.Response))
	}
	now := s.clock.Now().UTC().Format(TimeFormat)
	var out RespondOut
	err := s.write(ctx, func(q querier) error {
		e, err := s.findEvent(ctx, q, in.Event)
		if err != nil {
			return err
		}
		switch {
		case e.status == StatusCancelled:
			return badCall("event %q was cancelled by %s; there is nothing to respond to", e.extID, e.organizer)
		case e.organizer == s.self:
			return badCall("you organize event %q; respond answers invitations from others. To call it off use cancel_event", e.extID)
		case e.myResponse == "":
			return badCall("you are not invited to event %q (organized by %s), so there is no invitation to answer", e.extID, e.organizer)
		}
		if _, err := q.ExecContext(ctx, `UPDATE invitations SET response = ?, responded_at = ? WHERE event_id = ? AND guest = ?`, resp, now, e.id, s.self); err != nil {
			return fmt.Errorf("respond: %w", err)
		}
		out = RespondOut{Event: e.extID, Title: e.title, Response: resp, Previous: e.myResponse, RespondedAt: now}
		return nil
	})
	return out, err
}

// parseBetween parses "HH:MM-HH:MM" into minutes after midnight; the end may
// be 24:00.
func parseBetween(s string) (from, to int, ok bool) {
	a, b, cut := strings.Cut(strings.ReplaceAll(s, " ", ""), "-")
	if !cut {
		return 0, 0, false
	}
	clock := func(v string) (int, bool) {
		var h, m int
		if len(v) != 5 || v[2] != ':' {
			return 0, false
		}
		if _, err := fmt.Sscanf(v, "%02d:%02d", &h, &m); err != nil || h > 24 || m > 59 || (h == 24 && m != 0) {
			return 0, false
		}
		return h*60 + m, true
	}
	from, ok1 := clock(a)
	to, ok2 := clock(b)
	return from, to, ok1 && ok2 && from < to
}

func (s *Service) findFreeTime(ctx context.Context, in FindFreeTimeIn) (FindFreeTimeOut, error) {
	today := s.today()
	day := today
	if in.Date != "" {
		var ok bool
		if day, ok = parseDate(in.Date); !ok {
			return FindFreeTimeOut{}, badCall("date %q is not a date; use YYYY-MM-DD, e.g. %q, or omit it for today", clip(in.Date), today.Format(DateFormat))
		}
	}
	if day.Before(today) {
		return FindFreeTimeOut{}, badCall("date %s is in the past (today is %s); pass today or a later date", day.Format(DateFormat), today.Format(DateFormat))
	}
	between := in.Between
	if between == "" {
		between = DefaultBetween
	}
	bf, bt, ok := parseBetween(between)
	if !ok {
		return FindFreeTimeOut{}, badCall("between %q is not a range of hours; use HH:MM-HH:MM with the start before the end, e.g. %q", clip(between), DefaultBetween)
	}
	if in.DurationMinutes < 1 || in.DurationMinutes > bt-bf {
		return FindFreeTimeOut{}, badCall("duration_minutes must be between 1 and %d, the length of between %s (got %d)", bt-bf, between, in.DurationMinutes)
	}
	winFrom, winTo := day.Add(time.Duration(bf)*time.Minute), day.Add(time.Duration(bt)*time.Minute)
	out := FindFreeTimeOut{Date: day.Format(DateFormat), Between: between, DurationMinutes: in.DurationMinutes, Free: []Interval{}}
	err := s.read(ctx, func(q querier) error {
		occs, err := s.occurrences(ctx, q, winFrom, winTo)
		if err != nil {
			return err
		}
		cur := winFrom.Unix()
		// Today, the slot cannot start before now (rounded up to a minute).
		if now := s.clock.Now().UTC(); now.After(winFrom) {
			cur = now.Add(time.Minute - time.Nanosecond).Truncate(time.Minute).Unix()
		}
		end, dur := winTo.Unix(), int64(in.DurationMinutes)*60
		gap := func(a, b int64) {
			if b <= a {
				return
			}
			out.Free = append(out.Free, Interval{StartsAt: unixText(a), EndsAt: unixText(b)})
			if !out.Found && b-a >= dur {
				out.Found, out.StartsAt, out.EndsAt = true, unixText(a), unixText(a+dur)
			}
		}
		for _, o := range occs {
			if o.e.myResponse == ResponseDeclined {
				continue
			}
			gap(cur, min(o.span.Start, end))
			cur = max(cur, o.span.End)
		}
		gap(cur, end)
		return nil
	})
	return out, err
}
