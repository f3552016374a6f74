package skill

import (
	"errors"
	"fmt"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
)

// ServiceEvent is service_event's parameters: exactly one of the records,
// in the service package's own synthesis type.
type ServiceEvent struct {
	Contacts     []contacts.Seed            `json:"contacts,omitempty"`
	Mail         *mail.Mail                 `json:"mail,omitempty"`
	Event        *calendar.Event            `json:"event,omitempty"`
	Notes        []notes.Seed               `json:"notes,omitempty"`
	Projects     []tasks.SeedProject        `json:"projects,omitempty"`
	Todos        []tasks.SeedTodo           `json:"todos,omitempty"`
	Transactions []payments.SeedTransaction `json:"transactions,omitempty"`
	Account      *payments.SeedAccount      `json:"account,omitempty"`
	Ticket       *support.Ticket            `json:"ticket,omitempty"`
}

// Check implements Checker.
func (p *ServiceEvent) Check() error {
	n := 0
	for _, set := range []bool{len(p.Contacts) > 0, p.Mail != nil, p.Event != nil, len(p.Notes) > 0,
		len(p.Projects) > 0 || len(p.Todos) > 0, len(p.Transactions) > 0, p.Account != nil, p.Ticket != nil} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errors.New("give exactly one of contacts, mail, event, notes, projects/todos, transactions, account, ticket")
	}
	return nil
}

func serviceEvent() Skill {
	return Make(Def[ServiceEvent]{
		Doc: Doc{Name: "service_event", Summary: "Something happens in one of the persona's services: a contact is saved, a mail arrives, an event is scheduled, a note or a to-do is written, a payment is booked, a ticket is opened.",
			Interfaces: []string{MCP}, Services: []string{"contacts", "mail", "calendar", "notes", "tasks", "payments", "support"},
			Changes:     []string{"rows of one service, as its synthesis helpers emit them by natural key"},
			Constraints: []string{"records reference real files and orders of the world", "timestamps are the day's frozen literals", "ids are the services' own natural keys"}},
		Emit: func(b *Builder, p *ServiceEvent) error {
			var ops []delta.Op
			var err error
			switch {
			case len(p.Contacts) > 0:
				ops, err = contacts.InsertOps(p.Contacts...)
			case p.Mail != nil:
				ops = mail.DeliverOps(*p.Mail)
				b.d.Produces.Rows = append(b.d.Produces.Rows, mail.MailRow(p.Mail.ExtID))
			case p.Event != nil:
				ops = calendar.EventOps(*p.Event)
			case len(p.Notes) > 0:
				ops, err = notes.InsertOps(p.Notes...)
			case len(p.Projects) > 0 || len(p.Todos) > 0:
				for _, pr := range p.Projects {
					op, err := tasks.ProjectOp(pr)
					if err != nil {
						return err
					}
					ops = append(ops, op)
				}
				for _, t := range p.Todos {
					op, err := tasks.TodoOp(t)
					if err != nil {
						return err
					}
					ops = append(ops, op)
				}
			case len(p.Transactions) > 0:
				for _, t := range p.Transactions {
					more, err := payments.BookOps(t)
					if err != nil {
						return err
					}
					ops = append(ops, more...)
				}
			case p.Ticket != nil:
				ops, err = support.TicketOps(*p.Ticket)
			case p.Account != nil:
				var op delta.Op
				op, err = payments.AccountOp(*p.Account)
				ops = []delta.Op{op}
			}
			if err != nil {
				return fmt.Errorf("service_event: %w", err)
			}
			b.Op(ops...)
			return nil
		},
	})
}
