package synth

import (
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/shop"
)

func skillProvision() Skill {
	return Skill{
		Name:        "provision_service",
		Interfaces:  []string{"gui", "mcp"},
		Description: "Start using a website or MCP service: create its per-persona database with the service's schema.",
		Constraints: []string{"the schema is the service's own; created once, on the first day the persona uses it"},
		Emit: func(b *Builder, p Params) error {
			var ddl []string
			switch db := p.str("db"); db {
			case "shop":
				ddl = shop.Schema()
			case "mail":
				// The mailbox starts with its standard folders.
				b.d.Ops = append(b.d.Ops, mail.CreateOps()...)
				return nil
			default:
				if st, err := site.Lookup(db); err == nil && st.Schema != nil {
					ddl = st.Schema() // a website of the registry
					break
				}
				spec, err := service.Lookup(db)
				if err != nil {
					return fmt.Errorf("provision_service: %w", err)
				}
				ddl = spec.Schema()
			}
			b.op(delta.Op{Op: delta.OpDBCreate, DB: p.str("db"), SQL: ddl})
			return nil
		},
	}
}

func skillAccount() Skill {
	return Skill{
		Name:        "create_web_account",
		Interfaces:  []string{"gui", "cli"},
		Description: "Sign up on a website and keep the login in a notes file in the home directory.",
		Constraints: []string{"the password hash uses a fixed salt", "the credentials are discoverable in the workspace"},
		Emit: func(b *Builder, p Params) error {
			site := p.str("site")
			for _, a := range b.Persona.Accounts {
				if a.Site != site {
					continue
				}
				b.op(delta.Op{Op: delta.OpAccountCreate, Site: site, Username: a.Username, Password: a.Password, Salt: b.Persona.ID + "/" + site, Display: b.Persona.Name})
				path := "notes/logins.md"
				b.op(delta.Op{Op: delta.OpFileAppend, Path: path, Content: strp(fmt.Sprintf("- %s: user `%s`, password `%s`\n", site, a.Username, a.Password))})
				b.producesFile(path)
				b.d.Produces.Accounts = append(b.d.Produces.Accounts, accountRef(site, a.Username))
				return nil
			}
			return fmt.Errorf("create_web_account: persona has no account on %q", site)
		},
	}
}

func skillConversation() Skill {
	return Skill{
		Name:        "dm_conversation",
		Interfaces:  []string{"mcp"},
		Description: "Exchange direct messages with a contact, continuing the thread if it exists.",
		Constraints: []string{"messages continue the thread's sequence", "timestamps are frozen literals within the day", "senders are the persona or the thread's participants"},
		Emit: func(b *Builder, p Params) error {
			ext, title := p.str("thread"), p.str("title")
			with, _ := p["with"].([]string)
			msgs, _ := p["messages"].([]Msg)
			threadKey := map[string]delta.Value{"ext_id": lit(ext)}
			if !b.threads[ext] {
				kind := "dm"
				if len(with) > 1 {
					kind = "group"
				}
				b.op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "threads", Key: threadKey,
					Values: map[string]delta.Value{"title": lit(title), "kind": lit(kind), "created_at": lit(msgs[0].At)}})
				for _, name := range append([]string{b.Persona.Name}, with...) {
					b.op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "participants",
						Key: map[string]delta.Value{"thread_id": delta.RefTo("threads", threadKey, "id"), "name": lit(name)}})
				}
				b.threads[ext] = true
				b.producesRow("messages", "threads", map[string]any{"ext_id": ext})
			}
			for _, m := range msgs {
				b.msgCount[ext]++
				read := 0
				if m.From == b.Persona.Name || m.Read {
					read = 1
				}
				b.op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "messages",
					Key:    map[string]delta.Value{"thread_id": delta.RefTo("threads", threadKey, "id"), "seq": lit(b.msgCount[ext])},
					Values: map[string]delta.Value{"sender": lit(m.From), "body": lit(m.Body), "sent_at": lit(m.At), "is_read": lit(read)}})
			}
			return nil
		},
	}
}

// Msg is one message of a conversation event.
type Msg struct {
	From, Body, At string
	Read           bool
}

func skillPurchase() Skill {
	return Skill{
		Name:        "shop_purchase",
		Interfaces:  []string{"gui"},
		Description: "Buy catalog items on the shop: an order with its items appears in the order history.",
		Constraints: []string{"items are real catalog SKUs at catalog prices", "the order total is the sum of the items"},
		Emit: func(b *Builder, p Params) error {
			no := p.str("order_no")
			items, _ := p["items"].([]OrderItem)
			total := 0
			for _, it := range items {
				total += it.Qty * it.PriceCents
				b.op(delta.Op{Op: delta.OpDBInsert, DB: "shop", Table: "order_items",
					Key:    map[string]delta.Value{"order_no": lit(no), "sku": lit(it.SKU)},
					Values: map[string]delta.Value{"qty": lit(it.Qty), "price_cents": lit(it.PriceCents)}})
			}
			b.op(delta.Op{Op: delta.OpDBInsert, DB: "shop", Table: "orders", Key: map[string]delta.Value{"order_no": lit(no)},
				Values: map[string]delta.Value{"username": lit(p.str("username")), "placed_at": lit(p.str("at")), "total_cents": lit(total)}})
			b.producesRow("shop", "orders", map[string]any{"order_no": no})
			return nil
		},
	}
}

// OrderItem is one line of a purchase.
type OrderItem struct {
	SKU        string
	Qty        int
	PriceCents int
}

func skillInventory() Skill {
	return Skill{
		Name:        "update_inventory",
		Interfaces:  []string{"cli"},
		Description: "Record gear stock in the inventory CSV (write it anew or append rows).",
		Constraints: []string{"columns sku,item,qty,location", "SKUs of catalog items are the shop's SKUs"},
		Emit: func(b *Builder, p Params) error {
			path := p.str("path")
			rows, _ := p["rows"].([][]any)
			if p["append"] == true {
				var sb strings.Builder
				for _, r := range rows {
					for i, c := range r {
						if i > 0 {
							sb.WriteByte(',')
						}
						fmt.Fprint(&sb, c)
					}
					sb.WriteByte('\n')
				}
				b.op(delta.Op{Op: delta.OpFileAppend, Path: path, Content: strp(sb.String())})
			} else {
				b.op(delta.Op{Op: delta.OpFileWrite, Path: path, Generator: &delta.GeneratorRef{Name: "csv",
					Params: rawJSON(map[string]any{"header": []string{"sku", "item", "qty", "location"}, "rows": rows})}})
			}
			b.producesFile(path)
			return nil
		},
	}
}

func skillBOM() Skill {
	return Skill{
		Name:        "draft_bom",
		Interfaces:  []string{"cli"},
		Description: "Draft a project's bill of materials in markdown.",
		Constraints: []string{"requirements are stated as measurable specs"},
		Emit: func(b *Builder, p Params) error {
			path := p.str("path")
			b.op(delta.Op{Op: delta.OpFileWrite, Path: path, Generator: &delta.GeneratorRef{Name: "markdown", Params: rawJSON(map[string]any{
				"title": p.str("title"), "sections": p["sections"]})}})
			b.producesFile(path)
			return nil
		},
	}
}

// SpecRow is one model on a spec sheet.
type SpecRow struct {
	SKU        string
	Title      string
	Joules     int
	Outlets    int
	RackUnits  int
	PriceCents int
}

func skillSpecSheet() Skill {
	return Skill{
		Name:        "save_spec_sheet",
		Interfaces:  []string{"cli", "gui"},
		Description: "Save a supplier's PDF spec sheet comparing catalog models.",
		Constraints: []string{"rows are real catalog products with their catalog specs and prices", "the PDF has a fixed creation date"},
		Emit: func(b *Builder, p Params) error {
			path := p.str("path")
			rows, _ := p["rows"].([]SpecRow)
			table := make([][]any, len(rows))
			for i, r := range rows {
				table[i] = []any{r.SKU, r.Title, r.Joules, r.Outlets, r.RackUnits, fmt.Sprintf("%d.%02d", r.PriceCents/100, r.PriceCents%100)}
			}
			b.op(delta.Op{Op: delta.OpFileWrite, Path: path, Generator: &delta.GeneratorRef{Name: "pdf", Params: rawJSON(map[string]any{
				"title": p.str("title"), "author": p.str("author"), "date": p.str("date"),
				"paragraphs": []string{p.str("intro")},
				"table":      map[string]any{"header": []string{"SKU", "Model", "Joules", "Outlets", "Rack units", "Price USD"}, "rows": table},
			})}})
			b.producesFile(path)
			return nil
		},
	}
}

func skillNote() Skill {
	return Skill{
		Name:        "write_note",
		Interfaces:  []string{"cli"},
		Description: "Write a markdown note in the home directory.",
		Emit: func(b *Builder, p Params) error {
			path := p.str("path")
			b.op(delta.Op{Op: delta.OpFileWrite, Path: path, Generator: &delta.GeneratorRef{Name: "markdown", Params: rawJSON(map[string]any{
				"title": p.str("title"), "sections": []map[string]any{{"paragraphs": []string{p.str("body")}}}})}})
			b.producesFile(path)
			return nil
		},
	}
}

// skillSiteHistory writes rows of a website's history (a saved recipe, a
// booking) by natural key. The rows are the ones the site's own form
// writes for the persona; the plan computes them from the catalog.
func skillSiteHistory() Skill {
	return Skill{
		Name:        "site_history",
		Interfaces:  []string{"gui"},
		Description: "Use a website as the persona: save, book, follow; the rows land in the site's per-persona database and show on its history pages.",
		Constraints: []string{"the site's database was provisioned earlier", "each row's key is the table's natural key", "values reference real catalog records"},
		Emit: func(b *Builder, p Params) error {
			db, table := p.str("site"), p.str("table")
			if db == "" || table == "" {
				return fmt.Errorf("site_history: params site and table are required")
			}
			if _, err := site.Lookup(db); err != nil {
				return fmt.Errorf("site_history: %w", err)
			}
			key, ok1 := p["key"].(map[string]any)
			values, ok2 := p["values"].(map[string]any)
			if !ok1 || len(key) == 0 || !ok2 && p["values"] != nil {
				return fmt.Errorf("site_history %s.%s: key must be a non-empty object of column values and values an object", db, table)
			}
			op := delta.Op{Op: delta.OpDBInsert, DB: db, Table: table, Key: map[string]delta.Value{}, Values: map[string]delta.Value{}}
			for k, v := range key {
				op.Key[k] = lit(v)
			}
			for k, v := range values {
				op.Values[k] = lit(v)
			}
			b.op(op)
			b.producesRow(db, table, key)
			return nil
		},
	}
}
