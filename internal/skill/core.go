package skill

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/mail"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/world"
)

// coreSkills are the skills every world starts with and the case study's.
func coreSkills() []Skill {
	return []Skill{
		provisionService(), createWebAccount(), dmConversation(), shopPurchase(),
		updateInventory(), draftBOM(), saveSpecSheet(), writeNote(), siteHistory(), serviceEvent(),
		defineService(), appRecord(),
	}
}

func lit(v any) delta.Value { return delta.Lit(v) }

func strp(s string) *string { return &s }

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("skill: marshal params: %v", err))
	}
	return b
}

// Provision is provision_service's parameters.
type Provision struct {
	DB string `json:"db"`
}

// Check implements Checker.
func (p *Provision) Check() error {
	if p.DB == "" {
		return errors.New("field db is required: a site or service name, e.g. \"shop\" or \"mail\"")
	}
	return nil
}

func provisionService() Skill {
	return Make(Def[Provision]{
		Doc: Doc{Name: "provision_service", Summary: "Start using a website or MCP service: create its per-persona database with the service's schema.",
			Interfaces: []string{GUI, MCP}, Setup: true, Changes: []string{"a new database db/NAME.sqlite with the site's or service's schema (mail: with its standard folders)"},
			Constraints: []string{"the schema is the service's own", "created once, on the first day the persona uses it"},
			Example:     rawJSON(Provision{DB: "mail"})},
		Emit: func(b *Builder, p *Provision) error {
			if b.State.DBs[p.DB] {
				return fmt.Errorf("%s is provisioned already", p.DB)
			}
			var ddl []string
			switch p.DB {
			case "shop":
				ddl = shop.Schema()
			case "mail":
				b.Op(mail.CreateOps()...)
				b.State.DBs[p.DB] = true
				return nil
			default:
				if st, err := site.Lookup(p.DB); err == nil && st.Schema != nil {
					ddl = st.Schema()
					break
				}
				spec, err := service.Lookup(p.DB)
				if err != nil {
					return err
				}
				ddl = spec.Schema()
			}
			b.Op(delta.Op{Op: delta.OpDBCreate, DB: p.DB, SQL: ddl})
			b.State.DBs[p.DB] = true
			return nil
		},
		Propose: func(d *Draw) (*Provision, error) {
			for _, s := range append(append([]string{}, d.Persona.Sites...), d.Persona.Services...) {
				if _, defined := d.Definitions[s]; defined {
					continue // define_service's
				}
				if !d.State.DBs[s] && roadmapDay(d, s) <= d.Day {
					return &Provision{DB: s}, nil
				}
			}
			return nil, ErrSkip
		},
		Review: func(c *Check, p *Provision) []string {
			if _, err := c.Count(p.DB, "sqlite_schema", "1"); err != nil {
				return []string{err.Error()}
			}
			return nil
		},
	})
}

// roadmapDay is the day the persona starts using service s: its roadmap
// entry's, else day 0.
func roadmapDay(d *Draw, s string) int {
	for _, r := range d.Persona.Roadmap {
		if r.Service == s {
			return r.FromDay
		}
	}
	return 0
}

// WebAccount is create_web_account's parameters.
type WebAccount struct {
	Site string `json:"site"`
}

// LoginsFile is where the persona keeps web logins.
const LoginsFile = "notes/logins.md"

func createWebAccount() Skill {
	return Make(Def[WebAccount]{
		Doc: Doc{Name: "create_web_account", Summary: "Sign up on a website and keep the login in a notes file in the home directory.",
			Interfaces: []string{GUI, CLI}, Files: []string{"markdown"}, Setup: true,
			Changes:     []string{"an account (fixed-salt password hash) in accounts.json", "a line with the username and password appended to notes/logins.md"},
			Constraints: []string{"the password hash uses a fixed salt (persona/site)", "the credentials are discoverable in the workspace"},
			Example:     rawJSON(WebAccount{Site: "shop"})},
		Emit: func(b *Builder, p *WebAccount) error {
			a, ok := b.Persona.Account(p.Site)
			if !ok {
				return fmt.Errorf("persona has no account on %q: add one to the persona's accounts", p.Site)
			}
			if b.State.Accounts[p.Site] {
				return fmt.Errorf("the account on %s exists already", p.Site)
			}
			b.Op(delta.Op{Op: delta.OpAccountCreate, Site: p.Site, Username: a.Username, Password: a.Password, Salt: b.Persona.ID + "/" + p.Site, Display: b.Persona.Name})
			b.Op(delta.Op{Op: delta.OpFileAppend, Path: LoginsFile, Content: strp(fmt.Sprintf("- %s: user `%s`, password `%s`\n", p.Site, a.Username, a.Password))})
			b.FileWritten(LoginsFile, "markdown")
			b.ProducesAccount(p.Site, a.Username)
			b.State.Accounts[p.Site] = true
			return nil
		},
		Propose: func(d *Draw) (*WebAccount, error) {
			for _, a := range d.Persona.Accounts {
				if d.State.DBs[a.Site] && !d.State.Accounts[a.Site] {
					return &WebAccount{Site: a.Site}, nil
				}
			}
			return nil, ErrSkip
		},
		Review: func(c *Check, p *WebAccount) []string {
			a, _ := c.Persona.Account(p.Site)
			return c.FileHas(LoginsFile, a.Username, a.Password)
		},
	})
}

// Msg is one message of a conversation.
type Msg struct {
	From string `json:"from"`
	Body string `json:"body"`
	At   string `json:"at"`
	Read bool   `json:"read,omitempty"`
}

// Conversation is dm_conversation's parameters: messages on a thread,
// which is created (with title and with) when it is new.
type Conversation struct {
	Thread   string   `json:"thread"`
	Title    string   `json:"title,omitempty"`
	With     []string `json:"with,omitempty"`
	Messages []Msg    `json:"messages"`
}

// Check implements Checker.
func (p *Conversation) Check() error {
	if p.Thread == "" {
		return errors.New("field thread is required, e.g. \"dm-maya-okafor\"")
	}
	if len(p.Messages) == 0 {
		return errors.New("field messages is empty: give at least one message")
	}
	for i, m := range p.Messages {
		if m.From == "" || m.Body == "" {
			return fmt.Errorf("messages[%d]: from and body are required", i)
		}
		if _, err := Time(m.At); err != nil {
			return fmt.Errorf("messages[%d].at %q is not YYYY-MM-DD HH:MM:SS", i, m.At)
		}
	}
	return nil
}

func dmConversation() Skill {
	return Make(Def[Conversation]{
		Doc: Doc{Name: "dm_conversation", Summary: "Exchange direct messages with a contact, continuing the thread if it exists.",
			Interfaces: []string{MCP}, Services: []string{"messages"},
			Changes:     []string{"messages.threads and participants when the thread is new", "messages.messages, one row per message, numbered on from the thread's last"},
			Constraints: []string{"messages continue the thread's sequence", "timestamps are frozen literals within the day", "senders are the persona or the thread's participants"},
			Continues:   []string{"dm_conversation"},
			Example:     rawJSON(Conversation{Thread: "dm-maya-okafor", Title: "Maya Okafor", With: []string{"Maya Okafor"}, Messages: []Msg{{From: "Maya Okafor", Body: "Can we talk tomorrow?", At: "2026-03-03 11:00:00", Read: true}}})},
		Emit: emitConversation,
		Propose: func(d *Draw) (*Conversation, error) {
			if !d.State.DBs["messages"] {
				return nil, ErrSkip
			}
			c := d.Contact()
			th := c.Thread
			if th == "" {
				th = "dm-" + slug(c.Name)
			}
			first := Pick(d, smallTalk)
			reply := Pick(d, replies)
			p := &Conversation{Thread: th, Messages: []Msg{
				{From: c.Name, Body: fmt.Sprintf(first, firstName(d.Persona.Name)), At: d.Hour(8, 12), Read: true},
				{From: d.Persona.Name, Body: fmt.Sprintf(reply, firstName(c.Name)), At: d.Hour(12, 18)},
			}}
			if d.State.Threads[th] == nil {
				p.Title, p.With = c.Name, []string{c.Name}
			}
			return p, nil
		},
		Review: func(c *Check, p *Conversation) []string {
			var out []string
			for _, m := range p.Messages {
				out = append(out, c.Has("message at "+m.At, "messages", "messages", "sender = ? AND body = ? AND sent_at = ?", m.From, m.Body, m.At)...)
			}
			return out
		},
	})
}

var smallTalk = []string{
	"Hi %s, do you have a minute this week to go over the plan?",
	"Morning %s! Quick question about what we discussed.",
	"Hey %s, just checking in. How is everything going?",
	"%s, can you send me the latest numbers when you get a chance?",
	"Hi %s, I found something you might like, will share later.",
}

var replies = []string{
	"Sure %s, let's find a slot.",
	"Thanks %s, I'll get back to you this afternoon.",
	"Good to hear from you %s. Sending it over now.",
	"On it, %s.",
	"Sounds good %s, talk soon.",
}

func firstName(name string) string {
	first, _, _ := strings.Cut(name, " ")
	return first
}

// slug is a name's id form ("Maya Okafor" is "maya-okafor").
func slug(s string) string { return persona.Slug(s) }

func emitConversation(b *Builder, p *Conversation) error {
	if err := b.Need("messages"); err != nil {
		return err
	}
	threadKey := map[string]delta.Value{"ext_id": lit(p.Thread)}
	th := b.State.Threads[p.Thread]
	if th == nil {
		if p.Title == "" || len(p.With) == 0 {
			return fmt.Errorf("thread %s is new: give its title and with (the participants besides the persona)", p.Thread)
		}
		kind := "dm"
		if len(p.With) > 1 {
			kind = "group"
		}
		b.Op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "threads", Key: threadKey,
			Values: map[string]delta.Value{"title": lit(p.Title), "kind": lit(kind), "created_at": lit(p.Messages[0].At)}})
		for _, name := range append([]string{b.Persona.Name}, p.With...) {
			b.Op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "participants",
				Key: map[string]delta.Value{"thread_id": delta.RefTo("threads", threadKey, "id"), "name": lit(name)}})
		}
		th = &Thread{Title: p.Title, With: p.With}
		b.State.Threads[p.Thread] = th
		b.ProducesRow("messages", "threads", map[string]any{"ext_id": p.Thread})
	}
	for i, m := range p.Messages {
		if m.From != b.Persona.Name && !contains(th.With, m.From) {
			return fmt.Errorf("messages[%d].from %q is neither the persona nor a participant of %s (%s)", i, m.From, p.Thread, strings.Join(th.With, ", "))
		}
		th.Seq++
		th.Last = m.From
		read := 0
		if m.From == b.Persona.Name || m.Read {
			read = 1
		}
		b.Op(delta.Op{Op: delta.OpDBInsert, DB: "messages", Table: "messages",
			Key:    map[string]delta.Value{"thread_id": delta.RefTo("threads", threadKey, "id"), "seq": lit(th.Seq)},
			Values: map[string]delta.Value{"sender": lit(m.From), "body": lit(m.Body), "sent_at": lit(m.At), "is_read": lit(read)}})
	}
	return nil
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// OrderItem is one line of a purchase.
type OrderItem struct {
	SKU        string `json:"sku"`
	Qty        int    `json:"qty"`
	PriceCents int    `json:"price_cents"`
}

// Purchase is shop_purchase's parameters.
type Purchase struct {
	OrderNo  string      `json:"order_no"`
	Username string      `json:"username"`
	At       string      `json:"at"`
	Items    []OrderItem `json:"items"`
}

// Check implements Checker.
func (p *Purchase) Check() error {
	if p.OrderNo == "" || p.Username == "" {
		return errors.New("fields order_no and username are required")
	}
	if _, err := Time(p.At); err != nil {
		return fmt.Errorf("field at %q is not YYYY-MM-DD HH:MM:SS", p.At)
	}
	if len(p.Items) == 0 {
		return errors.New("field items is empty")
	}
	for i, it := range p.Items {
		if it.SKU == "" || it.Qty < 1 || it.PriceCents < 0 {
			return fmt.Errorf("items[%d]: sku, qty >= 1 and price_cents >= 0 are required", i)
		}
	}
	return nil
}

func shopPurchase() Skill {
	return Make(Def[Purchase]{
		Doc: Doc{Name: "shop_purchase", Summary: "Buy catalog items on the shop: an order with its items appears in the order history.",
			Interfaces: []string{GUI}, Sites: []string{"shop"},
			Changes:     []string{"shop.orders, one row", "shop.order_items, one row per item"},
			Constraints: []string{"items are real catalog SKUs at catalog prices", "the order total is the sum of the items"},
			Example:     rawJSON(Purchase{OrderNo: "SO-10001", Username: "alex.rivera", At: "2026-03-02 10:12:00", Items: []OrderItem{{SKU: "XLR-25", Qty: 2, PriceCents: 1999}}})},
		Emit: func(b *Builder, p *Purchase) error {
			if err := b.Need("shop"); err != nil {
				return err
			}
			total := 0
			for _, it := range p.Items {
				total += it.Qty * it.PriceCents
				b.Op(delta.Op{Op: delta.OpDBInsert, DB: "shop", Table: "order_items",
					Key:    map[string]delta.Value{"order_no": lit(p.OrderNo), "sku": lit(it.SKU)},
					Values: map[string]delta.Value{"qty": lit(it.Qty), "price_cents": lit(it.PriceCents)}})
			}
			b.Op(delta.Op{Op: delta.OpDBInsert, DB: "shop", Table: "orders", Key: map[string]delta.Value{"order_no": lit(p.OrderNo)},
				Values: map[string]delta.Value{"username": lit(p.Username), "placed_at": lit(p.At), "total_cents": lit(total)}})
			b.ProducesRow("shop", "orders", map[string]any{"order_no": p.OrderNo})
			b.State.Next("shop_order")
			b.State.Orders = append(b.State.Orders, OrderRef{Site: "shop", No: p.OrderNo, SKU: p.Items[0].SKU, Qty: p.Items[0].Qty, Cents: int64(total), Status: "placed", Day: b.Day})
			return nil
		},
		Propose: func(d *Draw) (*Purchase, error) {
			if !d.Ready("shop") {
				return nil, ErrSkip
			}
			row, err := d.PickRow(`SELECT sku, price_cents FROM products WHERE site = 'shop' ORDER BY id`)
			if err != nil {
				return nil, err
			}
			no := fmt.Sprintf("SO-%s-%03d", strings.ToUpper(initials(d.Persona.ID)), d.State.Peek("shop_order"))
			return &Purchase{OrderNo: no, Username: d.Username("shop"), At: d.Hour(9, 21),
				Items: []OrderItem{{SKU: Str(row[0]), Qty: 1 + d.Rand.IntN(3), PriceCents: int(Int(row[1]))}}}, nil
		},
		Review: func(c *Check, p *Purchase) []string {
			total := 0
			for _, it := range p.Items {
				total += it.Qty * it.PriceCents
			}
			return c.Has("order "+p.OrderNo, "shop", "orders", "order_no = ? AND total_cents = ?", p.OrderNo, total)
		},
	})
}

// initials is a short stable tag of a persona id for derived names.
func initials(id string) string {
	var b strings.Builder
	for _, part := range strings.Split(id, "-") {
		if part != "" {
			b.WriteByte(part[0])
		}
	}
	return b.String()
}

// Inventory is update_inventory's parameters.
type Inventory struct {
	Path   string  `json:"path"`
	Append bool    `json:"append,omitempty"`
	Rows   [][]any `json:"rows"`
}

// Check implements Checker.
func (p *Inventory) Check() error {
	if p.Path == "" || len(p.Rows) == 0 {
		return errors.New("fields path and rows are required")
	}
	for i, r := range p.Rows {
		if len(r) != 4 {
			return fmt.Errorf("rows[%d] has %d cells; the columns are sku,item,qty,location", i, len(r))
		}
	}
	return nil
}

func updateInventory() Skill {
	return Make(Def[Inventory]{
		Doc: Doc{Name: "update_inventory", Summary: "Record stock in an inventory CSV (write it anew or append rows).",
			Interfaces: []string{CLI}, Files: []string{"csv"},
			Changes:     []string{"a CSV file sku,item,qty,location in the home directory"},
			Constraints: []string{"columns sku,item,qty,location", "SKUs of catalog items are the shop's SKUs"},
			Example:     rawJSON(Inventory{Path: "inventory/stock.csv", Rows: [][]any{{"XLR-25", "XLR cable 25 ft", 14, "van bin A"}}})},
		Emit: func(b *Builder, p *Inventory) error {
			if p.Append {
				var sb strings.Builder
				for _, r := range p.Rows {
					for i, c := range r {
						if i > 0 {
							sb.WriteByte(',')
						}
						fmt.Fprint(&sb, c)
					}
					sb.WriteByte('\n')
				}
				b.Op(delta.Op{Op: delta.OpFileAppend, Path: p.Path, Content: strp(sb.String())})
			} else {
				b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Generator: &delta.GeneratorRef{Name: "csv",
					Params: rawJSON(map[string]any{"header": []string{"sku", "item", "qty", "location"}, "rows": p.Rows})}})
			}
			b.FileWritten(p.Path, "csv")
			return nil
		},
		Review: func(c *Check, p *Inventory) []string {
			return c.FileHas(p.Path, fmt.Sprint(p.Rows[0][0]))
		},
	})
}

// Section is a markdown section.
type Section struct {
	Heading    string   `json:"heading,omitempty"`
	Paragraphs []string `json:"paragraphs,omitempty"`
	Bullets    []string `json:"bullets,omitempty"`
}

// Document is the parameters of a markdown file.
type Document struct {
	Path     string    `json:"path"`
	Title    string    `json:"title"`
	Sections []Section `json:"sections"`
}

// Check implements Checker.
func (p *Document) Check() error {
	if p.Path == "" || p.Title == "" {
		return errors.New("fields path and title are required")
	}
	return nil
}

func draftBOM() Skill {
	return Make(Def[Document]{
		Doc: Doc{Name: "draft_bom", Summary: "Draft a project's bill of materials in markdown.",
			Interfaces: []string{CLI}, Files: []string{"markdown"},
			Changes:     []string{"a markdown file with the project's requirements"},
			Constraints: []string{"requirements are stated as measurable specs"},
			Example:     rawJSON(Document{Path: "projects/rack/bom.md", Title: "Rack: bill of materials", Sections: []Section{{Heading: "Power", Bullets: []string{"at least 8 outlets"}}}})},
		Emit: func(b *Builder, p *Document) error {
			b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Generator: &delta.GeneratorRef{Name: "markdown", Params: rawJSON(map[string]any{
				"title": p.Title, "sections": p.Sections})}})
			b.FileWritten(p.Path, "markdown")
			return nil
		},
		Review: func(c *Check, p *Document) []string { return c.FileHas(p.Path, p.Title) },
	})
}

// SpecRow is one model on a spec sheet.
type SpecRow struct {
	SKU        string `json:"sku"`
	Title      string `json:"title"`
	Joules     int    `json:"joules"`
	Outlets    int    `json:"outlets"`
	RackUnits  int    `json:"rack_units"`
	PriceCents int    `json:"price_cents"`
}

// SpecSheet is save_spec_sheet's parameters.
type SpecSheet struct {
	Path   string    `json:"path"`
	Title  string    `json:"title"`
	Author string    `json:"author"`
	Date   string    `json:"date"`
	Intro  string    `json:"intro"`
	Rows   []SpecRow `json:"rows"`
}

func saveSpecSheet() Skill {
	return Make(Def[SpecSheet]{
		Doc: Doc{Name: "save_spec_sheet", Summary: "Save a supplier's PDF spec sheet comparing catalog models.",
			Interfaces: []string{CLI, GUI}, Files: []string{"pdf"},
			Changes:     []string{"a PDF with a table of models, specs and prices"},
			Constraints: []string{"rows are real catalog products with their catalog specs and prices", "the PDF has a fixed creation date"},
			Example:     rawJSON(SpecSheet{Path: "projects/rack/spec.pdf", Title: "Line-up", Author: "Jonas", Date: "2026-03-04T20:00:00Z", Intro: "Prices in USD.", Rows: []SpecRow{{SKU: "SP-1", Title: "Surge 1", Joules: 2000, Outlets: 8, RackUnits: 1, PriceCents: 9999}}})},
		Emit: func(b *Builder, p *SpecSheet) error {
			table := make([][]any, len(p.Rows))
			for i, r := range p.Rows {
				table[i] = []any{r.SKU, r.Title, r.Joules, r.Outlets, r.RackUnits, fmt.Sprintf("%d.%02d", r.PriceCents/100, r.PriceCents%100)}
			}
			b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Generator: &delta.GeneratorRef{Name: "pdf", Params: rawJSON(map[string]any{
				"title": p.Title, "author": p.Author, "date": p.Date,
				"paragraphs": []string{p.Intro},
				"table":      map[string]any{"header": []string{"SKU", "Model", "Joules", "Outlets", "Rack units", "Price USD"}, "rows": table},
			})}})
			b.FileWritten(p.Path, "pdf")
			return nil
		},
		Review: func(c *Check, p *SpecSheet) []string {
			b, err := c.File(p.Path)
			if err != nil {
				return []string{err.Error()}
			}
			if !strings.HasPrefix(string(b), "%PDF-") {
				return []string{fmt.Sprintf("%s is not a PDF", p.Path)}
			}
			return nil
		},
	})
}

// Note is write_note's parameters.
type Note struct {
	Path  string `json:"path"`
	Title string `json:"title"`
	Body  string `json:"body"`
}

// Check implements Checker.
func (p *Note) Check() error {
	if p.Path == "" || p.Title == "" {
		return errors.New("fields path and title are required")
	}
	return nil
}

func writeNote() Skill {
	return Make(Def[Note]{
		Doc: Doc{Name: "write_note", Summary: "Write a markdown note in the home directory.",
			Interfaces: []string{CLI}, Files: []string{"markdown"},
			Changes:     []string{"a markdown file under notes/"},
			Constraints: []string{"the note refers to the persona's real records"},
			Example:     rawJSON(Note{Path: "notes/todo.md", Title: "To do", Body: "Order the cables."})},
		Emit: func(b *Builder, p *Note) error {
			b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Generator: &delta.GeneratorRef{Name: "markdown", Params: rawJSON(map[string]any{
				"title": p.Title, "sections": []map[string]any{{"paragraphs": []string{p.Body}}}})}})
			b.FileWritten(p.Path, "markdown")
			return nil
		},
		Review: func(c *Check, p *Note) []string { return c.FileHas(p.Path, p.Title) },
	})
}

// WebRow is site_history's parameters: one row of a site's history table
// by natural key.
type WebRow struct {
	Site   string         `json:"site"`
	Table  string         `json:"table"`
	Key    map[string]any `json:"key"`
	Values map[string]any `json:"values,omitempty"`
}

// Check implements Checker.
func (p *WebRow) Check() error {
	if p.Site == "" || p.Table == "" {
		return errors.New("fields site and table are required")
	}
	if len(p.Key) == 0 {
		return errors.New("field key must be a non-empty object of the row's natural-key columns")
	}
	return nil
}

// EmitWebRow writes one row of a site's table by natural key, declares it
// produced and records it in the ledger.
func EmitWebRow(b *Builder, p *WebRow) error {
	if _, err := site.Lookup(p.Site); err != nil {
		return err
	}
	if err := b.Need(p.Site); err != nil {
		return err
	}
	op := delta.Op{Op: delta.OpDBInsert, DB: p.Site, Table: p.Table, Key: map[string]delta.Value{}, Values: map[string]delta.Value{}}
	for _, k := range sortedKeys(p.Key) {
		op.Key[k] = lit(p.Key[k])
	}
	for _, k := range sortedKeys(p.Values) {
		op.Values[k] = lit(p.Values[k])
	}
	b.Op(op)
	b.ProducesRow(p.Site, p.Table, p.Key)
	b.State.AddWeb(p.Site, p.Table, webKey(p.Key))
	return nil
}

// webKey is the ledger's form of a natural key.
func webKey(key map[string]any) string {
	var parts []string
	for _, k := range sortedKeys(key) {
		parts = append(parts, fmt.Sprintf("%s=%v", k, key[k]))
	}
	return strings.Join(parts, "&")
}

func siteHistory() Skill {
	return Make(Def[WebRow]{
		Doc: Doc{Name: "site_history", Summary: "Use a website as the persona: save, book, follow; the row lands in the site's per-persona database and shows on its history pages.",
			Interfaces: []string{GUI}, Changes: []string{"one row of a site's history table, by natural key"},
			Constraints: []string{"the site's database was provisioned earlier", "each row's key is the table's natural key", "values reference real catalog records"},
			Example:     rawJSON(WebRow{Site: "recipes", Table: "saved_recipes", Key: map[string]any{"username": "alex.rivera", "slug": "lentil-soup"}, Values: map[string]any{"saved_at": "2026-03-03 20:15:00"}})},
		Emit: EmitWebRow,
		Review: func(c *Check, p *WebRow) []string {
			var where []string
			var args []any
			for _, k := range sortedKeys(p.Key) {
				where = append(where, fmt.Sprintf("%q = ?", k))
				args = append(args, p.Key[k])
			}
			return c.Has("row "+webKey(p.Key), p.Site, p.Table, strings.Join(where, " AND "), args...)
		},
	})
}

// DefineService is define_service's parameters: a service definition the
// world serves from today on (the application-creator stage's output,
// published in the shared library).
type DefineService struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
}

func defineService() Skill {
	return Make(Def[DefineService]{
		Doc: Doc{Name: "define_service", Summary: "Start using an application the built-in services lack: the world serves its definition (from the shared library) and gets its database.",
			Interfaces: []string{MCP}, Setup: true, Changes: []string{"the manifest's services name the definition (pinned by hash)", "a new database with the definition's schema"},
			Constraints: []string{"the definition is validated and published in the shared library before the day", "once per world"},
			Example:     rawJSON(DefineService{Name: "habits", SHA256: strings.Repeat("0", 64)})},
		Emit: func(b *Builder, p *DefineService) error {
			id, err := world.ParseID(p.SHA256)
			if err != nil {
				return fmt.Errorf("field sha256: %w", err)
			}
			ref := world.ServiceRef{Name: p.Name, SHA256: id}
			if b.Definitions == nil {
				return errors.New("no definitions library: the builder has no service library to compile the definition from")
			}
			spec, err := b.Definitions.Resolve(ref)
			if err != nil {
				return err
			}
			if b.State.DBs[p.Name] {
				return fmt.Errorf("%s is provisioned already", p.Name)
			}
			if _, err := site.Lookup(p.Name); err == nil {
				return fmt.Errorf("the definition %s has the name of a website; a world's databases need distinct names: rename the definition", p.Name)
			}
			if _, err := service.Lookup(p.Name); err == nil {
				return fmt.Errorf("the definition %s has the name of a built-in service; rename the definition", p.Name)
			}
			b.ServeDefinition(ref)
			b.Op(spec.Compiled().Def.CreateOp())
			b.State.DBs[p.Name] = true
			return nil
		},
		Review: func(c *Check, p *DefineService) []string {
			m, err := world.ReadManifest(c.Dir)
			if err != nil {
				return []string{err.Error()}
			}
			for _, s := range m.Services {
				if s.Name == p.Name && s.SHA256.String() == p.SHA256 {
					if _, err := c.Count(p.Name, "sqlite_schema", "1"); err != nil {
						return []string{err.Error()}
					}
					return nil
				}
			}
			return []string{fmt.Sprintf("the manifest does not serve the definition %s %s", p.Name, p.SHA256)}
		},
		Propose: func(d *Draw) (*DefineService, error) {
			for _, s := range d.Persona.Services {
				def, ok := d.Definitions[s]
				if ok && !d.State.DBs[s] && roadmapDay(d, s) <= d.Day {
					return &DefineService{Name: s, SHA256: def.Ref.SHA256.String()}, nil
				}
			}
			return nil, ErrSkip
		},
	})
}

// AppRecord is app_record's parameters: one synthesis operation of a
// definition-served service (its `ops`, docs/services/definition.md).
type AppRecord struct {
	Service string         `json:"service"`
	Op      string         `json:"op"`
	Params  map[string]any `json:"params"`
}

func appRecord() Skill {
	return Make(Def[AppRecord]{
		Doc: Doc{Name: "app_record", Summary: "Something happens in an application served from a definition (a habit checked in, a budget entry): one of the definition's synthesis operations.",
			Interfaces: []string{MCP}, Changes: []string{"rows of the definition's tables, by natural key, as its operation emits them"},
			Constraints: []string{"the operation's parameters pass its JSON Schema and checks", "the service was defined on an earlier event"},
			Example:     rawJSON(AppRecord{Service: "habits", Op: "add_habit", Params: map[string]any{"ext_id": "stretch", "name": "Stretch", "cadence": "daily", "target": 1, "created_at": "2026-03-02 07:00:00"}})},
		Emit: func(b *Builder, p *AppRecord) error {
			ref, ok := b.State.Services[p.Service]
			if !ok {
				return fmt.Errorf("service %s is not defined in this world: an earlier define_service must add it", p.Service)
			}
			spec, err := b.Definitions.Resolve(ref)
			if err != nil {
				return err
			}
			ops, err := spec.Compiled().Op(p.Op, p.Params)
			if err != nil {
				return err
			}
			b.Op(ops...)
			return nil
		},
	})
}
