package skill

import (
	"errors"
	"fmt"
	"slices"

	"github.com/wildawm/wildawm/internal/service/mail"
)

// Delivery is order_delivered's parameters: an order of an earlier day
// arrives, and the store's delivery notice lands in the mailbox.
type Delivery struct {
	ID    string `json:"id"` // the notice's mail id
	Site  string `json:"site"`
	Order string `json:"order_no"`
	At    string `json:"at"`
}

// Check implements Checker.
func (p *Delivery) Check() error {
	if p.ID == "" || p.Site == "" || p.Order == "" {
		return errors.New("fields id, site and order_no are required")
	}
	return checkTime("at", p.At)
}

// noticeFrom is the address a store's delivery notices come from.
func noticeFrom(site string) string { return "orders@" + site + ".example" }

func orderDelivered() Skill {
	return Make(Def[Delivery]{
		Doc: Doc{Name: "order_delivered", Summary: "An order placed on an earlier day (shop or device store) is delivered: the store's delivery notice arrives by mail, and the order can now be returned or reviewed.",
			Interfaces: []string{MCP, GUI}, Services: []string{"mail"}, Sites: []string{"shop", "devices"},
			Changes:     []string{"mail.mails, one unread notice in inbox from orders@SITE.example naming the order, its item and quantity", "the ledger: the order is delivered"},
			Constraints: []string{"the order was placed on an earlier day and is neither delivered nor returned", "the notice names the order's real order number and SKU", "the mail id is new (the ledger's mail counter)"},
			Continues:   []string{"shop_purchase", "device_order"},
			Example:     rawJSON(Delivery{ID: "m-ar-0003", Site: "shop", Order: "SO-AR-001", At: "2026-03-05 11:00:00"})},
		Emit: func(b *Builder, p *Delivery) error {
			i := slices.IndexFunc(b.State.Orders, func(o OrderRef) bool { return o.Site == p.Site && o.No == p.Order })
			if i < 0 {
				return fmt.Errorf("field order_no: no order %s on %s in the ledger", p.Order, p.Site)
			}
			o := &b.State.Orders[i]
			switch {
			case o.Status != "placed":
				return fmt.Errorf("field order_no: order %s is %s, not placed", p.Order, o.Status)
			case o.Day >= b.Day:
				return fmt.Errorf("field order_no: order %s was placed on day %d; it is delivered on a later day", p.Order, o.Day)
			}
			m := mail.Mail{ExtID: p.ID, From: noticeFrom(p.Site), To: []string{selfAddress(b.Persona)}, Subject: deliverySubject(p.Order),
				Body:   fmt.Sprintf("Hello %s,\n\nyour order %s (%d x %s) was delivered today.\n\nThank you for shopping with us.", firstName(b.Persona.Name), p.Order, o.Qty, o.SKU),
				SentAt: tm(p.At)}
			if err := emitMail(b, m, false, noticeFrom(p.Site)); err != nil {
				return err
			}
			o.Status = "delivered"
			return nil
		},
		Propose: func(d *Draw) (*Delivery, error) {
			if !d.State.DBs["mail"] {
				return nil, ErrSkip
			}
			var open []OrderRef
			for _, o := range d.State.Orders {
				if o.Status == "placed" && o.Day < d.Day {
					open = append(open, o)
				}
			}
			if len(open) == 0 {
				return nil, ErrSkip
			}
			o := Pick(d, open)
			return &Delivery{ID: mailID(d), Site: o.Site, Order: o.No, At: d.Hour(8, 18)}, nil
		},
		Review: func(c *Check, p *Delivery) []string {
			return c.Has("delivery notice "+p.ID, "mail", "mails", "ext_id = ? AND from_addr = ? AND subject = ?", p.ID, noticeFrom(p.Site), deliverySubject(p.Order))
		},
	})
}

func deliverySubject(order string) string { return "Your order " + order + " was delivered" }
