package support

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// Limits of the tools' arguments.
const (
	DefaultLimit    = 20
	MaxLimit        = 100
	MaxSubjectChars = 200
	MaxBodyChars    = 5000
	MaxKeyChars     = 100 // order_no, sku, ticket
)

// closeNote is the body of the event close_ticket appends.
const closeNote = "Closed by the customer."

// TicketView is one ticket as the tools return it.
type TicketView struct {
	Ticket    string      `json:"ticket" jsonschema:"the ticket id to pass to get_ticket, add_comment and close_ticket (e.g. T-1001)"`
	OrderNo   string      `json:"order_no" jsonschema:"the shop order the ticket is about"`
	SKU       string      `json:"sku" jsonschema:"the item of the order the ticket is about"`
	Kind      string      `json:"kind" jsonschema:"return, warranty or question"`
	Subject   string      `json:"subject"`
	Status    string      `json:"status" jsonschema:"open, waiting (on the customer), resolved or closed"`
	OpenedAt  string      `json:"opened_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
	UpdatedAt string      `json:"updated_at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS, time of the last event"`
	Events    []EventView `json:"events,omitempty" jsonschema:"the ticket's history, oldest first; absent in list_tickets"`
}

// EventView is one entry of a ticket's history.
type EventView struct {
	Seq         int    `json:"seq" jsonschema:"1 for the opening message, then 2, 3, ..."`
	Author      string `json:"author" jsonschema:"customer or support"`
	Body        string `json:"body"`
	StatusAfter string `json:"status_after" jsonschema:"the ticket's status after this event"`
	At          string `json:"at" jsonschema:"UTC, YYYY-MM-DD HH:MM:SS"`
}

// ListTicketsIn are list_tickets' arguments.
type ListTicketsIn struct {
	Status string `json:"status,omitempty" jsonschema:"open, waiting, resolved, closed or all; omit for all"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many tickets to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Cursor string `json:"cursor,omitempty" jsonschema:"next_cursor from the previous list_tickets result with the same status, to get the next page; omit for the first page"`
}

// ListTicketsOut is list_tickets' result.
type ListTicketsOut struct {
	Tickets    []TicketView `json:"tickets" jsonschema:"tickets, newest first, without their events"`
	NextCursor string       `json:"next_cursor,omitempty" jsonschema:"pass as cursor to get the next page; absent on the last page"`
}

// TicketIn names one ticket.
type TicketIn struct {
	Ticket string `json:"ticket" jsonschema:"the ticket id, from list_tickets or open_ticket (e.g. T-1001)"`
}

// OpenTicketIn are open_ticket's arguments.
type OpenTicketIn struct {
	OrderNo string `json:"order_no" jsonschema:"the order number of an order placed on the shop, as shown in the shop's order history"`
	SKU     string `json:"sku" jsonschema:"the SKU of an item of that order"`
	Kind    string `json:"kind" jsonschema:"return (within 30 days of the order), warranty (a faulty item) or question"`
	Subject string `json:"subject" jsonschema:"a short summary, 1 to 200 characters"`
	Body    string `json:"body" jsonschema:"the message to support, 1 to 5000 characters"`
}

// AddCommentIn are add_comment's arguments.
type AddCommentIn struct {
	Ticket string `json:"ticket" jsonschema:"the ticket id, from list_tickets or open_ticket (e.g. T-1001)"`
	Body   string `json:"body" jsonschema:"the comment, 1 to 5000 characters"`
}

// TicketOut is the result of get_ticket and of the tools that change one
// ticket: the ticket with its events, as stored after the call.
type TicketOut struct {
	Ticket TicketView `json:"ticket"`
}

func boolPtr(b bool) *bool { return &b }

func (s *Service) addTools(srv *mcp.Server) {
	readOnly := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: boolPtr(false)}
	write := &mcp.ToolAnnotations{DestructiveHint: boolPtr(false), OpenWorldHint: boolPtr(false)}
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "list_tickets",
		Title: "List support tickets",
		Description: "Lists support tickets, newest first, optionally of one status (open, waiting, resolved, closed). " +
			"Each has its id, order, item, kind, subject, status and times; use get_ticket for its history. " +
			"Returns up to limit tickets and a next_cursor when there are more; pass it back as cursor, with the same status, for the next page.",
		Annotations: readOnly,
	}, s.listTickets)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "get_ticket",
		Title:       "Get a support ticket",
		Description: "Returns one ticket with its full history of events (messages, comments and status changes), oldest first.",
		Annotations: readOnly,
	}, s.getTicket)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:  "open_ticket",
		Title: "Open a support ticket",
		Description: fmt.Sprintf("Opens a ticket about one item (sku) of an order placed on the shop: a return (only within %d days of the order date), "+
			"a warranty claim or a question, with a subject and a first message. The order and the item must exist in the shop. Returns the new ticket.", ReturnDays),
		Annotations: write,
	}, s.openTicket)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "add_comment",
		Title:       "Comment on a support ticket",
		Description: "Adds the customer's comment to a ticket that is not closed; a waiting or resolved ticket becomes open again. Returns the ticket with its events.",
		Annotations: write,
	}, s.addComment)
	dbtool.AddTool(srv, s.db, &mcp.Tool{
		Name:        "close_ticket",
		Title:       "Close a support ticket",
		Description: "Closes a ticket for good (it takes no more comments; open a new ticket if needed). Returns the ticket with its events.",
		Annotations: write,
	}, s.closeTicket)
}

// now is the clock's time in UTC, as stored.
func (s *Service) now() string {
	return s.clock.Now().UTC().Format(TimeFormat)
}

// ticketQuery selects tickets; callers add WHERE and ORDER.
const ticketQuery = `SELECT id, ext_id, order_no, sku, kind, subject, status, opened_at, updated_at FROM tickets`

// ticketRow is a ticket with its row id.
type ticketRow struct {
	TicketView
	id int64
}

func queryTickets(ctx context.Context, q querier, query string, args ...any) ([]ticketRow, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	defer rows.Close()
	var ts []ticketRow
	for rows.Next() {
		var t ticketRow
		if err := rows.Scan(&t.id, &t.Ticket, &t.OrderNo, &t.SKU, &t.Kind, &t.Subject, &t.Status, &t.OpenedAt, &t.UpdatedAt); err != nil {
			return nil, fmt.Errorf("list tickets: %w", err)
		}
		ts = append(ts, t)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list tickets: %w", err)
	}
	return ts, nil
}

func (s *Service) listTickets(ctx context.Context, in ListTicketsIn) (ListTicketsOut, error) {
	limit, err := dbtool.CheckLimit(in.Limit, DefaultLimit, MaxLimit)
	if err != nil {
		return ListTicketsOut{}, err
	}
	if in.Status != "" && in.Status != "all" && !validStatus(in.Status) {
		return ListTicketsOut{}, badCall("status %q is not one of open, waiting, resolved, closed, all; omit it for all", clip(in.Status))
	}
	var after *cursor
	if in.Cursor != "" {
		c, ok := parseCursor(in.Cursor)
		if !ok {
			return ListTicketsOut{}, badCall("cursor %q is not one list_tickets returned; pass next_cursor from the previous list_tickets result unchanged, or omit cursor to start from the first page", clip(in.Cursor))
		}
		after = &c
	}
	out := ListTicketsOut{Tickets: []TicketView{}}
	err = s.read(ctx, func(q querier) error {
		where := []string{"1"}
		var args []any
		if in.Status != "" && in.Status != "all" {
			where, args = append(where, "status = ?"), append(args, in.Status)
		}
		if after != nil {
			where, args = append(where, "id < ?"), append(args, after.id)
		}
		args = append(args, limit+1)
		ts, err := queryTickets(ctx, q, ticketQuery+` WHERE `+strings.Join(where, " AND ")+` ORDER BY id DESC LIMIT ?`, args...)
		if err != nil {
			return err
		}
		if len(ts) > limit {
			ts = ts[:limit]
			out.NextCursor = cursor{id: ts[limit-1].id}.String()
		}
		for _, t := range ts {
			out.Tickets = append(out.Tickets, t.TicketView)
		}
		return nil
	})
	return out, err
}

// findTicket returns the ticket with that ext_id, without events, or a tool
// error naming how to find one.
func findTicket(ctx context.Context, q querier, extID string) (ticketRow, error) {
	if strings.TrimSpace(extID) == "" {
		return ticketRow{}, badCall("ticket is required: pass a ticket id from list_tickets (the \"ticket\" field, e.g. T-1001)")
	}
	ts, err := queryTickets(ctx, q, ticketQuery+` WHERE ext_id = ?`, extID)
	if err != nil {
		return ticketRow{}, err
	}
	if len(ts) == 1 {
		return ts[0], nil
	}
	var near, subject string
	trimmed := strings.TrimSpace(extID)
	err = q.QueryRowContext(ctx, `SELECT ext_id, subject FROM tickets WHERE lower(ext_id) = lower(?1) OR lower(ext_id) = lower('T-' || ?1) ORDER BY id LIMIT 1`, trimmed).Scan(&near, &subject)
	switch {
	case err == nil:
		return ticketRow{}, badCall("no ticket %q; did you mean ticket %q (%s)? Pass the id from the \"ticket\" field", clip(extID), near, clip(subject))
	case !errors.Is(err, sql.ErrNoRows):
		return ticketRow{}, fmt.Errorf("find ticket: %w", err)
	}
	return ticketRow{}, badCall("no ticket %q; call list_tickets to find the ticket's id", clip(extID))
}

// withEvents returns t with its events.
func withEvents(ctx context.Context, q querier, t ticketRow) (TicketView, error) {
	rows, err := q.QueryContext(ctx, `SELECT seq, author, body, status_after, at FROM ticket_events WHERE ticket_id = ? ORDER BY seq`, t.id)
	if err != nil {
		return TicketView{}, fmt.Errorf("ticket events: %w", err)
	}
	defer rows.Close()
	v := t.TicketView
	v.Events = []EventView{}
	for rows.Next() {
		var e EventView
		if err := rows.Scan(&e.Seq, &e.Author, &e.Body, &e.StatusAfter, &e.At); err != nil {
			return TicketView{}, fmt.Errorf("ticket events: %w", err)
		}
		v.Events = append(v.Events, e)
	}
	if err := rows.Err(); err != nil {
		return TicketView{}, fmt.Errorf("ticket events: %w", err)
	}
	return v, nil
}

// loadTicket is findTicket with events.
func loadTicket(ctx context.Context, q querier, extID string) (TicketView, error) {
	t, err := findTicket(ctx, q, extID)
	if err != nil {
		return TicketView{}, err
	}
	return withEvents(ctx, q, t)
}

func (s *Service) getTicket(ctx context.Context, in TicketIn) (TicketOut, error) {
	var out TicketOut
	err := s.read(ctx, func(q querier) error {
		var err error
		out.Ticket, err = loadTicket(ctx, q, in.Ticket)
		return err
	})
	return out, err
}

// order is what open_ticket needs of a shop order.
type order struct {
	no       string
	placedAt time.Time
	skus     []string
}

// findOrder reads order no and its items from the shop's database, or
// returns a tool error naming the fix.
func (s *Service) findOrder(ctx context.Context, no string) (order, error) {
	var o order
	err := s.readShop(ctx, func(q querier) error {
		var placed string
		err := q.QueryRowContext(ctx, `SELECT order_no, placed_at FROM orders WHERE order_no = ?`, no).Scan(&o.no, &placed)
		if errors.Is(err, sql.ErrNoRows) {
			var near string
			err := q.QueryRowContext(ctx, `SELECT order_no FROM orders WHERE lower(order_no) = lower(?) ORDER BY id LIMIT 1`, strings.TrimSpace(no)).Scan(&near)
			switch {
			case err == nil:
				return badCall("no order %q in the shop; did you mean order %q? Order numbers are exact", clip(no), near)
			case !errors.Is(err, sql.ErrNoRows):
				return fmt.Errorf("find order: %w", err)
			}
			return badCall("no order %q in the shop; check the order number in the shop website's order history and pass it exactly", clip(no))
		} else if err != nil {
			return fmt.Errorf("find order: %w", err)
		}
		if o.placedAt, err = time.Parse(TimeFormat, placed); err != nil {
			return fmt.Errorf("order %s: placed_at %q: %w", o.no, placed, err)
		}
		rows, err := q.QueryContext(ctx, `SELECT sku FROM order_items WHERE order_no = ? ORDER BY sku`, o.no)
		if err != nil {
			return fmt.Errorf("order items: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var sku string
			if err := rows.Scan(&sku); err != nil {
				return fmt.Errorf("order items: %w", err)
			}
			o.skus = append(o.skus, sku)
		}
		return rows.Err()
	})
	if errors.Is(err, errNoShop) {
		return order{}, badCall("there are no shop orders in this world, so no ticket can be opened; support tickets are only for orders placed on the shop website")
	}
	return o, err
}

func (s *Service) openTicket(ctx context.Context, in OpenTicketIn) (TicketOut, error) {
	for _, check := range []func() error{
		func() error { return checkText("order_no", in.OrderNo, MaxKeyChars, true) },
		func() error { return checkText("sku", in.SKU, MaxKeyChars, true) },
		func() error {
			if !validKind(in.Kind) {
				return badCall("kind %q is not one of return, warranty, question", clip(in.Kind))
			}
			return nil
		},
		func() error { return checkText("subject", in.Subject, MaxSubjectChars, true) },
		func() error { return checkText("body", in.Body, MaxBodyChars, true) },
	} {
		if err := check(); err != nil {
			return TicketOut{}, err
		}
	}
	nowT := s.clock.Now().UTC()
	now := nowT.Format(TimeFormat)
	o, err := s.findOrder(ctx, in.OrderNo)
	if err != nil {
		return TicketOut{}, err
	}
	found := false
	for _, sku := range o.skus {
		found = found || sku == in.SKU
	}
	if !found {
		return TicketOut{}, badCall("order %s has no item %q; its items are %s. Pass one of these as sku", o.no, clip(in.SKU), strings.Join(o.skus, ", "))
	}
	if in.Kind == KindReturn && o.placedAt.Before(nowT.AddDate(0, 0, -ReturnDays)) {
		return TicketOut{}, badCall("order %s was placed on %s, more than %d days before today (%s), so it can no longer be returned; "+
			"open a warranty ticket if the item is faulty, or a question", o.no, o.placedAt.Format(DateFormat), ReturnDays, nowT.Format(DateFormat))
	}
	var out TicketOut
	err = s.write(ctx, func(q querier) error {
		var dup string
		err := q.QueryRowContext(ctx, `SELECT ext_id FROM tickets WHERE order_no = ? AND sku = ? AND kind = ? AND status IN ('open','waiting') ORDER BY id LIMIT 1`,
			o.no, in.SKU, in.Kind).Scan(&dup)
		switch {
		case err == nil:
			return badCall("ticket %s is already open for this %s of %s in order %s; use add_comment on it instead of opening another", dup, in.Kind, in.SKU, o.no)
		case !errors.Is(err, sql.ErrNoRows):
			return fmt.Errorf("find open ticket: %w", err)
		}
		var id int64
		if err := q.QueryRowContext(ctx, `SELECT COALESCE(MAX(id), 0) + 1 FROM tickets`).Scan(&id); err != nil {
			return fmt.Errorf("next ticket id: %w", err)
		}
		ext, err := freeExtID(ctx, q, fmt.Sprintf("T-%d", 1000+id))
		if err != nil {
			return err
		}
		if _, err := q.ExecContext(ctx, `INSERT INTO tickets (id, ext_id, order_no, sku, kind, subject, status, opened_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, 'open', ?, ?)`, id, ext, o.no, in.SKU, in.Kind, in.Subject, now, now); err != nil {
			return fmt.Errorf("insert ticket: %w", err)
		}
		if err := addEvent(ctx, q, id, AuthorCustomer, in.Body, StatusOpen, now); err != nil {
			return err
		}
		out.Ticket, err = loadTicket(ctx, q, ext)
		return err
	})
	return out, err
}

// freeExtID returns base, or base-2, base-3, ... if base is taken.
func freeExtID(ctx context.Context, q querier, base string) (string, error) {
	ext := base
	for i := 2; ; i++ {
		var taken bool
		if err := q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM tickets WHERE ext_id = ?)`, ext).Scan(&taken); err != nil {
			return "", fmt.Errorf("new ticket id: %w", err)
		}
		if !taken {
			return ext, nil
		}
		ext = fmt.Sprintf("%s-%d", base, i)
	}
}

// addEvent appends an event to ticket id, sets the ticket's status to
// statusAfter and its updated_at to at.
func addEvent(ctx context.Context, q querier, id int64, author, body, statusAfter, at string) error {
	if _, err := q.ExecContext(ctx, `INSERT INTO ticket_events (id, ticket_id, seq, author, body, status_after, at) VALUES (
  (SELECT COALESCE(MAX(id), 0) + 1 FROM ticket_events), ?1,
  (SELECT COALESCE(MAX(seq), 0) + 1 FROM ticket_events WHERE ticket_id = ?1), ?, ?, ?, ?)`, id, author, body, statusAfter, at); err != nil {
		return fmt.Errorf("insert event: %w", err)
	}
	if _, err := q.ExecContext(ctx, `UPDATE tickets SET status = ?, updated_at = ? WHERE id = ?`, statusAfter, at, id); err != nil {
		return fmt.Errorf("update ticket: %w", err)
	}
	return nil
}

func (s *Service) addComment(ctx context.Context, in AddCommentIn) (TicketOut, error) {
	if err := checkText("body", in.Body, MaxBodyChars, true); err != nil {
		return TicketOut{}, err
	}
	now := s.now()
	var out TicketOut
	err := s.write(ctx, func(q querier) error {
		t, err := findTicket(ctx, q, in.Ticket)
		if err != nil {
			return err
		}
		if t.Status == StatusClosed {
			return badCall("ticket %s is closed and takes no comments; open_ticket a new one for order %s if needed", t.Ticket, t.OrderNo)
		}
		if err := addEvent(ctx, q, t.id, AuthorCustomer, in.Body, StatusOpen, now); err != nil {
			return err
		}
		out.Ticket, err = loadTicket(ctx, q, t.Ticket)
		return err
	})
	return out, err
}

func (s *Service) closeTicket(ctx context.Context, in TicketIn) (TicketOut, error) {
	now := s.now()
	var out TicketOut
	err := s.write(ctx, func(q querier) error {
		t, err := findTicket(ctx, q, in.Ticket)
		if err != nil {
			return err
		}
		if t.Status == StatusClosed {
			return badCall("ticket %s is already closed (since %s); nothing to do", t.Ticket, t.UpdatedAt)
		}
		if err := addEvent(ctx, q, t.id, AuthorCustomer, closeNote, StatusClosed, now); err != nil {
			return err
		}
		out.Ticket, err = loadTicket(ctx, q, t.Ticket)
		return err
	})
	return out, err
}
