package support

import (
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/delta"
)

// This file is the "god mode" synthesis API: Go functions that build delta
// operations seeding or changing a world's support database. They are for
// world synthesis, never tools; the model sees only their results. A delta
// cannot look across databases, so they do not check the order and item
// against the shop: the synthesizer seeds tickets for orders it seeded.

// Ticket is a ticket to insert with its events.
type Ticket struct {
	ID       string // ext_id, the natural key; e.g. "T-1001"
	OrderNo  string // an order of the shop
	SKU      string // an item of that order
	Kind     string // return, warranty, question
	Subject  string
	Status   string // open, waiting, resolved, closed; "" means the last event's status_after, or open
	OpenedAt time.Time
	// UpdatedAt zero means the last event's At, or OpenedAt.
	UpdatedAt time.Time
	// Events are numbered 1, 2, ... in this order.
	Events []Event
}

// Event is one event of a seeded ticket.
type Event struct {
	Author      string // customer or support
	Body        string
	StatusAfter string // open, waiting, resolved, closed
	At          time.Time
}

// ErrSeed is wrapped by every error of the synthesis functions.
var ErrSeed = errors.New("support: bad seed")

func seedErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrSeed, fmt.Sprintf(format, args...))
}

// CreateOp returns the db.create operation that creates the support
// database with Schema.
func CreateOp() delta.Op {
	return delta.Op{Op: delta.OpDBCreate, DB: DBName, SQL: Schema()}
}

// ticketKey is the natural key of a ticket.
func ticketKey(id string) map[string]delta.Value {
	return map[string]delta.Value{"ext_id": delta.Lit(id)}
}

// eventKey is the natural key of event seq of ticket id.
func eventKey(id string, seq int) map[string]delta.Value {
	return map[string]delta.Value{"ticket_id": delta.RefTo("tickets", ticketKey(id), "id"), "seq": delta.Lit(seq)}
}

func checkEvent(id string, seq int, e Event) error {
	switch {
	case e.Author != AuthorCustomer && e.Author != AuthorSupport:
		return seedErr("ticket %s event %d: author %q is not customer or support", id, seq, e.Author)
	case e.Body == "" || utf8.RuneCountInString(e.Body) > MaxBodyChars:
		return seedErr("ticket %s event %d: Body must be 1 to %d characters", id, seq, MaxBodyChars)
	case !validStatus(e.StatusAfter):
		return seedErr("ticket %s event %d: StatusAfter %q is not open, waiting, resolved or closed", id, seq, e.StatusAfter)
	case e.At.IsZero():
		return seedErr("ticket %s event %d: At is required", id, seq)
	}
	return nil
}

func eventOp(id string, seq int, e Event) delta.Op {
	return delta.Op{Op: delta.OpDBInsert, DB: DBName, Table: "ticket_events", Key: eventKey(id, seq),
		Values: map[string]delta.Value{
			"author":       delta.Lit(e.Author),
			"body":         delta.Lit(e.Body),
			"status_after": delta.Lit(e.StatusAfter),
			"at":           delta.Lit(e.At.UTC().Format(TimeFormat)),
		}}
}

// TicketOps returns the db.insert of t followed by those of its events,
// keyed by natural keys (an event's ticket_id refers to t by ext_id).
func TicketOps(t Ticket) ([]delta.Op, error) {
	last := StatusOpen
	updated := t.OpenedAt
	if n := len(t.Events); n > 0 {
		last, updated = t.Events[n-1].StatusAfter, t.Events[n-1].At
	}
	if t.Status == "" {
		t.Status = last
	}
	if t.UpdatedAt.IsZero() {
		t.UpdatedAt = updated
	}
	switch {
	case t.ID == "" || utf8.RuneCountInString(t.ID) > MaxKeyChars:
		return nil, seedErr("ticket ID must be 1 to %d characters", MaxKeyChars)
	case t.OrderNo == "" || t.SKU == "":
		return nil, seedErr("ticket %s: OrderNo and SKU are required", t.ID)
	case !validKind(t.Kind):
		return nil, seedErr("ticket %s: kind %q is not return, warranty or question", t.ID, t.Kind)
	case t.Subject == "" || utf8.RuneCountInString(t.Subject) > MaxSubjectChars:
		return nil, seedErr("ticket %s: Subject must be 1 to %d characters", t.ID, MaxSubjectChars)
	case !validStatus(t.Status):
		return nil, seedErr("ticket %s: status %q is not open, waiting, resolved or closed", t.ID, t.Status)
	case len(t.Events) > 0 && t.Status != last:
		return nil, seedErr("ticket %s: status %q differs from the last event's status_after %q", t.ID, t.Status, last)
	case t.OpenedAt.IsZero():
		return nil, seedErr("ticket %s: OpenedAt is required", t.ID)
	case t.UpdatedAt.Before(t.OpenedAt):
		return nil, seedErr("ticket %s: UpdatedAt is before OpenedAt", t.ID)
	}
	ops := []delta.Op{{Op: delta.OpDBInsert, DB: DBName, Table: "tickets", Key: ticketKey(t.ID),
		Values: map[string]delta.Value{
			"order_no":   delta.Lit(t.OrderNo),
			"sku":        delta.Lit(t.SKU),
			"kind":       delta.Lit(t.Kind),
			"subject":    delta.Lit(t.Subject),
			"status":     delta.Lit(t.Status),
			"opened_at":  delta.Lit(t.OpenedAt.UTC().Format(TimeFormat)),
			"updated_at": delta.Lit(t.UpdatedAt.UTC().Format(TimeFormat)),
		}}}
	for i, e := range t.Events {
		if err := checkEvent(t.ID, i+1, e); err != nil {
			return nil, err
		}
		ops = append(ops, eventOp(t.ID, i+1, e))
	}
	return ops, nil
}

// StatusOps returns the operations that change ticket extID's status to
// status at at: the insert of event seq (by support, with note as its body)
// and the update of the ticket's status and updated_at. A delta's keys are
// literals, so the caller passes seq, the ticket's number of events plus
// one.
func StatusOps(extID string, seq int, status string, at time.Time, note string) ([]delta.Op, error) {
	switch {
	case extID == "":
		return nil, seedErr("ticket id is required")
	case seq < 1:
		return nil, seedErr("ticket %s: seq %d must be at least 1", extID, seq)
	}
	e := Event{Author: AuthorSupport, Body: note, StatusAfter: status, At: at}
	if err := checkEvent(extID, seq, e); err != nil {
		return nil, err
	}
	return []delta.Op{
		eventOp(extID, seq, e),
		{Op: delta.OpDBUpdate, DB: DBName, Table: "tickets", Key: ticketKey(extID),
			Set: map[string]delta.Value{"status": delta.Lit(status), "updated_at": delta.Lit(at.UTC().Format(TimeFormat))}},
	}, nil
}
