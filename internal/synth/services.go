package synth

import (
	"fmt"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
)

// skillServiceEvent writes events into the persona's MCP services through
// each service's synthesis ("god mode") API: contacts, mail, calendar,
// notes, to-dos and payments. The params carry typed records; the service
// packages turn them into delta operations keyed by natural keys.
func skillServiceEvent() Skill {
	return Skill{
		Name:        "service_event",
		Interfaces:  []string{"mcp"},
		Description: "Something happens in one of the persona's services: a contact is saved, a mail arrives, an event is scheduled, a note or a to-do is written, a payment is booked.",
		Constraints: []string{"records reference real files and orders of the world", "timestamps are the day's frozen literals", "ids are the services' own natural keys"},
		Emit: func(b *Builder, p Params) error {
			var ops []delta.Op
			var err error
			switch v := p["event"].(type) {
			case []contacts.Seed:
				ops, err = contacts.InsertOps(v...)
			case mail.Mail:
				ops = mail.DeliverOps(v)
				b.d.Produces.Rows = append(b.d.Produces.Rows, mail.MailRow(v.ExtID))
			case calendar.Event:
				ops = calendar.EventOps(v)
			case []notes.Seed:
				ops, err = notes.InsertOps(v...)
			case todoEvent:
				for _, pr := range v.projects {
					op, err := tasks.ProjectOp(pr)
					if err != nil {
						return err
					}
					ops = append(ops, op)
				}
				for _, t := range v.todos {
					op, err := tasks.TodoOp(t)
					if err != nil {
						return err
					}
					ops = append(ops, op)
				}
			case []payments.SeedTransaction:
				for _, t := range v {
					more, err := payments.BookOps(t)
					if err != nil {
						return err
					}
					ops = append(ops, more...)
				}
			case support.Ticket:
				ops, err = support.TicketOps(v)
			case payments.SeedAccount:
				var op delta.Op
				op, err = payments.AccountOp(v)
				ops = []delta.Op{op}
			default:
				return fmt.Errorf("service_event: unsupported event %T", p["event"])
			}
			if err != nil {
				return fmt.Errorf("service_event: %w", err)
			}
			b.d.Ops = append(b.d.Ops, ops...)
			return nil
		},
	}
}

type todoEvent struct {
	projects []tasks.SeedProject
	todos    []tasks.SeedTodo
}

func ts(day int, hhmm string) time.Time {
	t, err := time.Parse("2006-01-02 15:04:05", at(day, hhmm))
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

// caseStudyServiceEvents are the case study's events in the services other
// than messages and the shop, by day.
func caseStudyServiceEvents(p Persona, order OrderItem) map[int][]Event {
	maya, priya, jonas := p.Contact("venue manager"), p.Contact("install assistant"), p.Contact("equipment supplier")
	email := func(name string) string { return mailAddress(name) }
	return map[int][]Event{
		0: {
			{"service_event", Params{"event": []contacts.Seed{
				{Name: maya.Name, Email: email(maya.Name), Company: "Harbor Hall", Role: maya.Role, UpdatedAt: ts(0, "08:00")},
				{Name: priya.Name, Email: email(priya.Name), Role: priya.Role, Tags: []string{"crew"}, UpdatedAt: ts(0, "08:01")},
				{Name: jonas.Name, Email: email(jonas.Name), Company: "Lindqvist Pro Audio", Role: jonas.Role, Tags: []string{"supplier"}, UpdatedAt: ts(0, "08:02")},
			}}},
			{"service_event", Params{"event": payments.SeedAccount{ID: "chk-main", Name: "Business checking", Kind: "checking", Currency: "USD", BalanceCents: 420000}}},
			{"service_event", Params{"event": []payments.SeedTransaction{
				{ID: "tx-0001", Account: "chk-main", BookedAt: ts(0, "10:13"), AmountCents: -int64(order.Qty * order.PriceCents), Payee: "Shop", Memo: "order SO-10412", Category: "equipment"},
			}}},
		},
		1: {
			{"service_event", Params{"event": support.Ticket{ID: "T-1001", OrderNo: "SO-10412", SKU: order.SKU, Kind: "question",
				Subject: "Connector type of the cables", OpenedAt: ts(1, "09:10"), Events: []support.Event{
					{Author: "customer", Body: "Are these cables Neutrik-compatible on both ends?", StatusAfter: "open", At: ts(1, "09:10")},
					{Author: "support", Body: "Yes, both ends are standard XLR and fit Neutrik connectors.", StatusAfter: "resolved", At: ts(1, "15:40")},
				}}}},
			{"service_event", Params{"event": []notes.Seed{
				{Notebook: "Projects", Title: "Venue rack", Body: "Bill of materials drafted; waiting for Maya's sign-off on the surge protection.", Links: []string{PathBOM}, CreatedAt: ts(1, "12:00")},
			}}},
			{"service_event", Params{"event": todoEvent{
				projects: []tasks.SeedProject{{Name: "Venue rack"}},
				todos: []tasks.SeedTodo{
					{ID: "todo-1", Project: "Venue rack", Title: "Get the surge protection approved and ordered", DueOn: "2026-03-07", Priority: "high", CreatedAt: ts(1, "12:05")},
				},
			}}},
		},
		2: {
			{"service_event", Params{"event": mail.Mail{ExtID: "m-000001", From: email(jonas.Name), To: []string{mailAddress(p.Name)},
				Subject: "Surge protector line-up", Body: "Hi Alex, attached is our current surge protection spec sheet. Best, Jonas",
				SentAt: ts(2, "08:39"), Attachments: []mail.Attachment{{HomePath: PathSpecSheet}}}}},
		},
		3: {
			{"service_event", Params{"event": calendar.Event{ExtID: "evt-venue-install", Title: "Venue rack install", Location: "Harbor Hall",
				StartsAt: at(8, "09:00"), EndsAt: at(8, "15:00"), Organizer: p.Name,
				Guests: []calendar.Invitation{{Guest: priya.Name}, {Guest: maya.Name}}}}},
		},
	}
}

// mailAddress is a contact's address in the case study's mail.
func mailAddress(name string) string {
	out := []byte{}
	for _, r := range name {
		switch {
		case r >= 'A' && r <= 'Z':
			out = append(out, byte(r-'A'+'a'))
		case r >= 'a' && r <= 'z':
			out = append(out, byte(r))
		case r == ' ' && len(out) > 0:
			out = append(out, '.')
		}
	}
	return string(out) + "@mail.example"
}
