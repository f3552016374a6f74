package calendar

import (
	"database/sql/driver"
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

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

// Limits of the tools' arguments (service.yaml states them to the model and
// checks them; Event.Check checks seeds against the same).
const (
	MaxTitleChars    = 200
	MaxLocationChars = 200
	MaxNotesChars    = 10000
	MaxNameChars     = 200
	MaxGuests        = 100
	MaxEventDays     = 14 // the longest an event may last
)

// Hooks are what the definition needs in Go: the recurrence rules and the
// times they run on (recurrence.go), and the guest list's checks, whose
// names compare with Unicode case folding, which SQLite's lower() lacks.
var Hooks = engine.Hooks{Steps: map[string]engine.StepFunc{"occurrence_page": occurrencePage, "free_time": freeTime}, Funcs: map[string]engine.Func{
	// calendar_time(s): s as a stored time (TimeFormat, UTC), or NULL
	// when it is not a time parseTime reads.
	"calendar_time": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		t, ok := parseTime(text(a[0]))
		if !ok {
			return nil, nil
		}
		return t.Format(TimeFormat), nil
	}},
	// calendar_rule(s): the canonical form of the recurrence s ("" for a
	// one-off event), or NULL when s is not a rule.
	"calendar_rule": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		r, err := ParseRule(text(a[0]))
		if err != nil {
			return nil, nil
		}
		return r.String(), nil
	}},
	// calendar_when_error(starts_at, ends_at, recurrence): NULL, or why
	// create_event and update_event refuse those times and rule.
	"calendar_when_error": {Args: 3, Fn: func(a []driver.Value) (driver.Value, error) {
		if _, _, _, msg := checkWhen(text(a[0]), text(a[1]), text(a[2])); msg != "" {
			return msg, nil
		}
		return nil, nil
	}},
	// calendar_occurrences(recurrence, starts_at, ends_at, from, to): the
	// occurrences of an event overlapping [from, to) as a JSON array of
	// [index, starts_at, ends_at], in time order. A stored time or rule
	// the service cannot read is an error (the call's internal error).
	"calendar_occurrences": {Args: 5, Fn: func(a []driver.Value) (driver.Value, error) {
		return occurrences(text(a[0]), text(a[1]), text(a[2]), text(a[3]), text(a[4]))
	}},
	// calendar_between(s): find_free_time's hours "HH:MM-HH:MM" as the
	// JSON array [from, to] of minutes after midnight, or NULL.
	"calendar_between": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		from, to, ok := parseBetween(text(a[0]))
		if !ok {
			return nil, nil
		}
		return fmt.Sprintf("[%d,%d]", from, to), nil
	}},
	// calendar_guests_error(guests, self): NULL, or why create_event
	// refuses the guests (a JSON array of names, or NULL for none).
	"calendar_guests_error": {Args: 2, Fn: func(a []driver.Value) (driver.Value, error) {
		var guests []string
		if s := text(a[0]); s != "" {
			if err := json.Unmarshal([]byte(s), &guests); err != nil {
				return nil, fmt.Errorf("guests: %w", err)
			}
		}
		if msg := guestsError(guests, text(a[1])); msg != "" {
			return msg, nil
		}
		return nil, nil
	}},
}}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("calendar", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }

// text is an SQL function's argument as text (engine.Text).
func text(v driver.Value) string { return engine.Text(v) }

// occurrences is calendar_occurrences.
func occurrences(recurrence, startsAt, endsAt, from, to string) (string, error) {
	start, ok1 := parseTime(startsAt)
	end, ok2 := parseTime(endsAt)
	rule, err := ParseRule(recurrence)
	if !ok1 || !ok2 || err != nil {
		return "", fmt.Errorf("unreadable event times %q-%q or recurrence %q", startsAt, endsAt, recurrence)
	}
	f, ok1 := parseTime(from)
	t, ok2 := parseTime(to)
	if !ok1 || !ok2 {
		return "", fmt.Errorf("calendar_occurrences: window %q-%q is not two times", from, to)
	}
	var b strings.Builder
	b.WriteByte('[')
	for i, sp := range rule.expand(start.Unix(), end.Unix(), f.Unix(), t.Unix()) {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `[%d,"%s","%s"]`, sp.Index, unixText(sp.Start), unixText(sp.End))
	}
	b.WriteByte(']')
	return b.String(), nil
}

func unixText(t int64) string { return time.Unix(t, 0).UTC().Format(TimeFormat) }

// checkWhen validates an event's times and rule as create_event and
// update_event store them, and returns them normalized; msg says what is
// wrong, "" when nothing is.
func checkWhen(startsAt, endsAt, recurrence string) (start, end time.Time, rule Rule, msg string) {
	start, ok := parseTime(startsAt)
	if !ok {
		return start, end, rule, fmt.Sprintf("starts_at %q is not a time; use UTC YYYY-MM-DD HH:MM, e.g. \"2026-03-02 14:30\"", clip(startsAt))
	}
	end, ok = parseTime(endsAt)
	if !ok {
		return start, end, rule, fmt.Sprintf("ends_at %q is not a time; use UTC YYYY-MM-DD HH:MM, e.g. \"2026-03-02 15:30\"", clip(endsAt))
	}
	switch {
	case !end.After(start):
		return start, end, rule, fmt.Sprintf("ends_at (%s) must be after starts_at (%s); give the end time of the event", end.Format(TimeFormat), start.Format(TimeFormat))
	case end.Sub(start) > MaxEventDays*24*time.Hour:
		return start, end, rule, fmt.Sprintf("the event lasts from %s to %s, more than %d days; check the dates, or create a repeating event with recurrence", start.Format(TimeFormat), end.Format(TimeFormat), MaxEventDays)
	}
	rule, err := ParseRule(recurrence)
	if err != nil {
		return start, end, rule, err.Error()
	}
	if rule.Freq != "" {
		if end.Unix()-start.Unix() > rule.step() {
			return start, end, rule, fmt.Sprintf("a %s event must end within one %s of its start, so its occurrences do not overlap", strings.ToLower(rule.Freq), map[string]string{"DAILY": "day", "WEEKLY": "week"}[rule.Freq])
		}
		if rule.Count == 0 && rule.Until.Before(time.Date(start.Year(), start.Month(), start.Day(), 0, 0, 0, 0, time.UTC)) {
			return start, end, rule, fmt.Sprintf("recurrence UNTIL=%s is before the first start (%s); give a later UNTIL date", rule.Until.Format(DateFormat), start.Format(DateFormat))
		}
	}
	return start, end, rule, ""
}

// guestsError says why create_event refuses guests, "" when it does not:
// too many, an empty or overlong name, the organizer self, or a name twice
// (ignoring case, as strings.EqualFold compares).
func guestsError(guests []string, self string) string {
	if len(guests) > MaxGuests {
		return fmt.Sprintf("%d guests; invite at most %d", len(guests), MaxGuests)
	}
	var seen []string
	for i, g := range guests {
		g = strings.TrimSpace(g)
		switch {
		case g == "":
			return fmt.Sprintf("guests[%d] is empty; pass each guest's name, or omit guests", i)
		case utf8.RuneCountInString(g) > MaxNameChars || strings.ContainsRune(g, 0):
			return fmt.Sprintf("guests[%d] is not a name (at most %d characters); pass each guest's name", i, MaxNameChars)
		case strings.EqualFold(g, self):
			return fmt.Sprintf("guests[%d] is %q, which is you (the organizer); list only the other people", i, g)
		}
		for _, h := range seen {
			if strings.EqualFold(g, h) {
				return fmt.Sprintf("guest %q is listed twice; name each guest once", g)
			}
		}
		seen = append(seen, g)
	}
	return ""
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

// clip returns s for an error message: at most 60 characters, on one line.
func clip(s string) string { return engine.Clip(engine.OneLine(s), 60) }
