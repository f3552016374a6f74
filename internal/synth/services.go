package synth

import (
	"time"

	"github.com/wildawm/wildawm/internal/service/calendar"
	"github.com/wildawm/wildawm/internal/service/contacts"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/service/notes"
	"github.com/wildawm/wildawm/internal/service/payments"
	"github.com/wildawm/wildawm/internal/service/support"
	"github.com/wildawm/wildawm/internal/service/tasks"
	"github.com/wildawm/wildawm/internal/skill"
)

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
			e("service_event", skill.ServiceEvent{Contacts: []contacts.Seed{
				{Name: maya.Name, Email: email(maya.Name), Company: "Harbor Hall", Role: maya.Role, UpdatedAt: ts(0, "08:00")},
				{Name: priya.Name, Email: email(priya.Name), Role: priya.Role, Tags: []string{"crew"}, UpdatedAt: ts(0, "08:01")},
				{Name: jonas.Name, Email: email(jonas.Name), Company: "Lindqvist Pro Audio", Role: jonas.Role, Tags: []string{"supplier"}, UpdatedAt: ts(0, "08:02")},
			}}),
			e("service_event", skill.ServiceEvent{Account: &payments.SeedAccount{ID: "chk-main", Name: "Business checking", Kind: "checking", Currency: "USD", BalanceCents: 420000}}),
			e("service_event", skill.ServiceEvent{Transactions: []payments.SeedTransaction{
				{ID: "tx-0001", Account: "chk-main", BookedAt: ts(0, "10:13"), AmountCents: -int64(order.Qty * order.PriceCents), Payee: "Shop", Memo: "order SO-10412", Category: "equipment"},
			}}),
		},
		1: {
			e("service_event", skill.ServiceEvent{Ticket: &support.Ticket{ID: "T-1001", OrderNo: "SO-10412", SKU: order.SKU, Kind: "question",
				Subject: "Connector type of the cables", OpenedAt: ts(1, "09:10"), Events: []support.Event{
					{Author: "customer", Body: "Are these cables Neutrik-compatible on both ends?", StatusAfter: "open", At: ts(1, "09:10")},
					{Author: "support", Body: "Yes, both ends are standard XLR and fit Neutrik connectors.", StatusAfter: "resolved", At: ts(1, "15:40")},
				}}}),
			e("service_event", skill.ServiceEvent{Notes: []notes.Seed{
				{Notebook: "Projects", Title: "Venue rack", Body: "Bill of materials drafted; waiting for Maya's sign-off on the surge protection.", Links: []string{PathBOM}, CreatedAt: ts(1, "12:00")},
			}}),
			e("service_event", skill.ServiceEvent{
				Projects: []tasks.SeedProject{{Name: "Venue rack"}},
				Todos: []tasks.SeedTodo{
					{ID: "todo-1", Project: "Venue rack", Title: "Get the surge protection approved and ordered", DueOn: "2026-03-07", Priority: "high", CreatedAt: ts(1, "12:05")},
				},
			}),
		},
		2: {
			e("service_event", skill.ServiceEvent{Mail: &mail.Mail{ExtID: "m-000001", From: email(jonas.Name), To: []string{mailAddress(p.Name)},
				Subject: "Surge protector line-up", Body: "Hi Alex, attached is our current surge protection spec sheet. Best, Jonas",
				SentAt: ts(2, "08:39"), Attachments: []mail.Attachment{{HomePath: PathSpecSheet}}}}),
		},
		3: {
			e("service_event", skill.ServiceEvent{Event: &calendar.Event{ExtID: "evt-venue-install", Title: "Venue rack install", Location: "Harbor Hall",
				StartsAt: at(8, "09:00"), EndsAt: at(8, "15:00"), Organizer: p.Name,
				Guests: []calendar.Invitation{{Guest: priya.Name}, {Guest: maya.Name}}}}),
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
