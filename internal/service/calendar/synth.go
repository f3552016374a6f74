package calendar

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/delta"
)

// Event is an event as world synthesis writes it. Empty Status means
// confirmed; times are UTC in TimeFormat; Recurrence is "" or a rule
// ParseRule accepts, stored as given (write its canonical Rule.String()).
type Event struct {
	ExtID      string
	Title      string
	Location   string
	StartsAt   string
	EndsAt     string
	Notes      string
	Organizer  string
	Recurrence string
	Status     string
	Guests     []Invitation
}

// Invitation is one guest of an Event. Empty Response means needs-action.
type Invitation struct {
	Guest       string
	Response    string
	RespondedAt string
}

// Response is a guest's answer to an invitation that already exists.
type Response struct {
	Event       string // the event's ext_id
	Guest       string
	Response    string // accepted, declined, tentative or needs-action
	RespondedAt string // UTC, TimeFormat
}

// CreateOp returns the db.create operation that makes the calendar database
// with Schema.
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

// eventKey is the natural key of the event with that ext_id.
func eventKey(extID string) map[string]delta.Value {
	return map[string]delta.Value{"ext_id": delta.Lit(extID)}
}

// invitationKey is the natural key of guest's invitation to the event.
func invitationKey(extID, guest string) map[string]delta.Value {
	return map[string]delta.Value{"event_id": delta.RefTo("events", eventKey(extID), "id"), "guest": delta.Lit(guest)}
}

// EventOps returns the operations that insert e and its invitations, keyed
// by natural key (events by ext_id, invitations by the event's id, found by
// ref, and the guest). Applying them to a world that already has the event
// changes nothing (db.insert is idempotent). Call Check first: EventOps
// does not validate.
func EventOps(e Event) []delta.Op {
	status := e.Status
	if status == "" {
		status = StatusConfirmed
	}
	ops := []delta.Op{{Op: delta.OpDBInsert, DB: DBName, Table: "events", Key: eventKey(e.ExtID),
		Values: map[string]delta.Value{
			"title":      delta.Lit(e.Title),
			"location":   delta.Lit(e.Location),
			"starts_at":  delta.Lit(e.StartsAt),
			"ends_at":    delta.Lit(e.EndsAt),
			"notes":      delta.Lit(e.Notes),
			"organizer":  delta.Lit(e.Organizer),
			"recurrence": delta.Lit(e.Recurrence),
			"status":     delta.Lit(status),
		}}}
	for _, g := range e.Guests {
		resp := g.Response
		if resp == "" {
			resp = ResponseNeedsAction
		}
		ops = append(ops, delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "invitations", Key: invitationKey(e.ExtID, g.Guest),
			Values: map[string]delta.Value{"response": delta.Lit(resp), "responded_at": delta.Lit(g.RespondedAt)}})
	}
	return ops
}

// ResponseOps returns the operation that records r: a db.update of the
// invitation by natural key. The invitation must exist when it is applied
// (else the delta fails to apply).
func ResponseOps(r Response) []delta.Op {
	return []delta.Op{{Op: delta.OpDBUpdate, DB: DBName, Table: "invitations", Key: invitationKey(r.Event, r.Guest),
		Set: map[string]delta.Value{"response": delta.Lit(r.Response), "responded_at": delta.Lit(r.RespondedAt)}}}
}

// Check reports whether the service can serve e as written: the same rules
// as create_event (title, times, recurrence, lengths) plus an ext_id, an
// organizer, a known status and valid, distinct invitations. Times and
// recurrence must already be in their canonical forms.
func (e Event) Check() error {
	var errs []error
	if strings.TrimSpace(e.ExtID) == "" {
		errs = append(errs, errors.New("ext_id is empty"))
	}
	if strings.TrimSpace(e.Organizer) == "" {
		errs = append(errs, errors.New("organizer is empty"))
	}
	if e.Status != "" && e.Status != StatusConfirmed && e.Status != StatusCancelled {
		errs = append(errs, fmt.Errorf("status %q is not confirmed or cancelled", e.Status))
	}
	for _, f := range []struct {
		name, v  string
		maxChars int
	}{{"title", e.Title, MaxTitleChars}, {"location", e.Location, MaxLocationChars}, {"notes", e.Notes, MaxNotesChars}} {
		switch n := utf8.RuneCountInString(f.v); {
		case f.name == "title" && strings.TrimSpace(f.v) == "":
			errs = append(errs, errors.New("title is empty"))
		case n > f.maxChars:
			errs = append(errs, fmt.Errorf("%s is %d characters; use at most %d", f.name, n, f.maxChars))
		case strings.ContainsRune(f.v, 0):
			errs = append(errs, fmt.Errorf("%s contains a NUL character", f.name))
		}
	}
	if start, end, rule, msg := checkWhen(e.StartsAt, e.EndsAt, e.Recurrence); msg != "" {
		errs = append(errs, errors.New(msg))
	} else if s, en, r := start.Format(TimeFormat), end.Format(TimeFormat), rule.String(); s != e.StartsAt || en != e.EndsAt || r != e.Recurrence {
		errs = append(errs, fmt.Errorf("write times as %q and recurrence as %q (canonical forms)", s+" / "+en, r))
	}
	seen := map[string]bool{}
	for i, g := range e.Guests {
		switch g.Response {
		case "", ResponseNeedsAction, ResponseAccepted, ResponseDeclined, ResponseTentative:
		default:
			errs = append(errs, fmt.Errorf("guests[%d]: response %q is not valid", i, g.Response))
		}
		if strings.TrimSpace(g.Guest) == "" {
			errs = append(errs, fmt.Errorf("guests[%d]: guest is empty", i))
		}
		if seen[g.Guest] {
			errs = append(errs, fmt.Errorf("guests[%d]: %q is listed twice", i, g.Guest))
		}
		seen[g.Guest] = true
		if g.RespondedAt != "" {
			if t, ok := parseTime(g.RespondedAt); !ok || t.Format(TimeFormat) != g.RespondedAt {
				errs = append(errs, fmt.Errorf("guests[%d]: responded_at %q is not %s", i, g.RespondedAt, TimeFormat))
			}
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("calendar event %q: %w", e.ExtID, err)
	}
	return nil
}
