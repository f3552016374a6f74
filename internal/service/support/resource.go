package support

import (
	"context"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// ticketURIPrefix is the start of a ticket resource's URI,
// support://ticket/{ext_id}.
const ticketURIPrefix = "support://ticket/"

// TicketURI returns the resource URI of the ticket with that ext_id.
func TicketURI(extID string) string {
	return ticketURIPrefix + dbtool.URIEscape(extID)
}

// renderTicket renders the ticket keys[0] (its ext_id) as text: its
// subject, kind, status, order and item, then one
// "seq. author (at) [status_after]: body" line per event. It changes nothing
// and does not read the shop's database.
func renderTicket(ctx context.Context, q querier, keys []string) (string, error) {
	t, err := loadTicket(ctx, q, keys[0])
	if err != nil {
		return "", err
	}
	return ticketText(t), nil
}

// statusNote is a ticket status as a reader needs it.
func statusNote(status string) string {
	switch status {
	case StatusWaiting:
		return "waiting (on the customer)"
	case StatusClosed:
		return "closed (takes no more comments)"
	}
	return status
}

func ticketText(t TicketView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (ticket %s)\nKind: %s · Status: %s\nOrder: %s · Item (sku): %s\nOpened: %s · Updated: %s\n\n",
		oneLine(t.Subject), t.Ticket, t.Kind, statusNote(t.Status), t.OrderNo, t.SKU, t.OpenedAt, t.UpdatedAt)
	if len(t.Events) == 0 {
		b.WriteString("No history.\n")
		return b.String()
	}
	b.WriteString("History, oldest first:\n")
	for _, e := range t.Events {
		// Continuation lines of a body are indented under their event.
		body := strings.ReplaceAll(strings.TrimRight(e.Body, "\n"), "\n", "\n   ")
		fmt.Fprintf(&b, "%d. %s (%s) [%s]: %s\n", e.Seq, e.Author, e.At, e.StatusAfter, body)
	}
	return b.String()
}

// oneLine joins the lines of s with spaces.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
