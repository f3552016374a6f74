package benchworld

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/world"
)

// Persona is the benchmark persona's id.
const Persona = "bench-avtech"

// Generator produces the benchmark world's day deltas in order. It is a
// pure function of its seed.
type Generator struct {
	r      *rand.Rand
	day    int
	tables []table
	next   map[string]int // db.table -> next row number
	files  []string       // home files that exist, in creation order
	// Catalog is recorded in the day-0 delta.
	Catalog world.ID
}

// NewGenerator returns a generator for seed.
func NewGenerator(seed uint64) *Generator {
	return &Generator{r: rand.New(rand.NewPCG(seed, 0x77696c6461776d)), tables: allTables(), next: map[string]int{}}
}

func s(v string) *string { return &v }

func params(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func (g *Generator) write(path string, op delta.Op) delta.Op {
	op.Op, op.Path = delta.OpFileWrite, path
	if !slices.Contains(g.files, path) {
		g.files = append(g.files, path)
	}
	return op
}

// Next returns the delta of the next day (day 0 first).
func (g *Generator) Next() *delta.Delta {
	d := &delta.Delta{Version: delta.Version, Persona: Persona, Day: g.day, Clock: clock(g.day)}
	if g.day == 0 {
		g.day0(d)
	} else {
		g.dayN(d)
	}
	g.day++
	return d
}

func (g *Generator) day0(d *delta.Delta) {
	r := g.r
	d.Catalog = g.Catalog
	byDB := map[string][]string{}
	var dbs []string
	for _, t := range g.tables {
		if _, ok := byDB[t.db]; !ok {
			dbs = append(dbs, t.db)
		}
		byDB[t.db] = append(byDB[t.db], t.ddl()...)
	}
	for _, db := range dbs {
		d.Ops = append(d.Ops, delta.Op{Op: delta.OpDBCreate, DB: db, SQL: byDB[db]})
	}
	for _, t := range g.tables {
		for n := range t.rows {
			d.Ops = append(d.Ops, t.insert(r, n, 0))
		}
		g.next[t.db+"."+t.name] = t.rows
	}
	for _, site := range sites {
		d.Ops = append(d.Ops, delta.Op{Op: delta.OpAccountCreate, Site: site, Username: "alex.rivera", Password: fmt.Sprintf("pw-%s-%04d", site, r.IntN(10000)), Salt: Persona + "/" + site})
		d.Produces.Accounts = append(d.Produces.Accounts, world.AccountRef{Site: site, Username: "alex.rivera"})
	}
	// Home: notes, spreadsheets, PDFs, images, photos, text.
	for i := range 12 {
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("docs/note-%02d.md", i), delta.Op{Generator: &delta.GeneratorRef{Name: "markdown", Params: params(map[string]any{
			"title": sentence(r, 4),
			"sections": []map[string]any{
				{"heading": sentence(r, 2), "paragraphs": []string{sentence(r, 60), sentence(r, 40)}, "bullets": []string{sentence(r, 5), sentence(r, 6)}},
			},
		})}}))
	}
	for i := range 6 {
		rows := make([][]any, 80+r.IntN(120))
		for j := range rows {
			rows[j] = []any{fmt.Sprintf("SKU-%05d", r.IntN(99999)), sentence(r, 3), r.IntN(40), float64(r.IntN(50000)) / 100}
		}
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("sheets/inventory-%d.csv", i), delta.Op{Generator: &delta.GeneratorRef{Name: "csv", Params: params(map[string]any{
			"header": []string{"sku", "title", "qty", "unit_price"}, "rows": rows})}}))
	}
	d.Ops = append(d.Ops, g.write("finance/ledger.csv", delta.Op{Content: s("date,payee,amount\n")}))
	for i := range 8 {
		rows := make([][]any, 12)
		for j := range rows {
			rows[j] = []any{sentence(r, 2), fmt.Sprintf("%d J", 600+r.IntN(3000)), fmt.Sprintf("%d V", 110+r.IntN(20))}
		}
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("specs/spec-%02d.pdf", i), delta.Op{Generator: &delta.GeneratorRef{Name: "pdf", Params: params(map[string]any{
			"title": "Spec sheet " + sentence(r, 3), "author": person(r), "date": "2026-02-1" + fmt.Sprint(i%10) + "T10:00:00Z",
			"paragraphs": []string{sentence(r, 80), sentence(r, 60)},
			"table":      map[string]any{"header": []string{"feature", "rating", "voltage"}, "rows": rows},
		})}}))
	}
	colors := []string{"#f4f4f4", "#1e1e1e", "#9a9a9a", "#2a4d8f"}
	for i := range 10 {
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("images/product-%02d.png", i), delta.Op{Generator: &delta.GeneratorRef{Name: "product_image", Params: params(map[string]any{
			"kind": "surge_protector", "body_color": pick(r, colors), "display_panel": r.IntN(2) == 0, "outlets": 4 + r.IntN(6), "width": 480, "height": 320,
		})}}))
	}
	for i := range 12 {
		photo := make([]byte, 150<<10+r.IntN(250<<10))
		for j := range photo {
			photo[j] = byte(r.Uint32())
		}
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("photos/IMG_%04d.jpg", 1000+i), delta.Op{ContentBase64: s(base64.StdEncoding.EncodeToString(photo))}))
	}
	for i := range 10 {
		lines := make([]string, 20+r.IntN(40))
		for j := range lines {
			lines[j] = sentence(r, 8)
		}
		d.Ops = append(d.Ops, g.write(fmt.Sprintf("notes/todo-%02d.txt", i), delta.Op{Generator: &delta.GeneratorRef{Name: "text", Params: params(map[string]any{"lines": lines})}}))
	}
	d.Ops = append(d.Ops, g.write("accounts/passwords.txt", delta.Op{Content: s("# where Alex keeps site logins\nshop: alex.rivera\n"), Mode: "0600"}))
	d.Produces.Files = []string{"finance/ledger.csv", "docs/note-00.md", "specs/spec-00.pdf", "images/product-00.png"}
	d.Produces.Rows = []world.RowRef{{DB: "messages", Table: "messages", Key: map[string]any{"ext": tables[25].ext(0)}}}
}

// dayN changes a few tens of KiB: new rows in about ten tables, some
// updates, a ledger append, a new note, now and then a PDF, a move.
func (g *Generator) dayN(d *delta.Delta) {
	r, day := g.r, g.day
	for range 10 {
		t := tables[r.IntN(len(tables))]
		key := t.db + "." + t.name
		for range 2 + r.IntN(5) {
			n := g.next[key]
			g.next[key]++
			d.Ops = append(d.Ops, t.insert(r, n, day))
			if len(d.Produces.Rows) == 0 {
				d.Produces.Rows = append(d.Produces.Rows, world.RowRef{DB: t.db, Table: t.name, Key: map[string]any{"ext": t.ext(n)}})
			}
		}
	}
	for range 6 {
		t := tables[r.IntN(len(tables))]
		n := r.IntN(g.next[t.db+"."+t.name])
		c := t.cols[r.IntN(len(t.cols))]
		d.Ops = append(d.Ops, delta.Op{Op: delta.OpDBUpdate, DB: t.db, Table: t.name, Key: map[string]delta.Value{"ext": delta.Lit(t.ext(n))},
			Set: map[string]delta.Value{c.name: delta.Lit(value(r, c.kind, day))}})
	}
	line := ""
	for range 3 {
		line += fmt.Sprintf("%s,%s,%.2f\n", stamp(day, r.IntN(1440))[:10], person(r), float64(r.IntN(90000))/100)
	}
	d.Ops = append(d.Ops, delta.Op{Op: delta.OpFileAppend, Path: "finance/ledger.csv", Content: s(line)})
	note := fmt.Sprintf("notes/day-%02d.md", day)
	d.Ops = append(d.Ops, g.write(note, delta.Op{Generator: &delta.GeneratorRef{Name: "markdown", Params: params(map[string]any{
		"title": fmt.Sprintf("Day %d", day), "sections": []map[string]any{{"heading": "Log", "paragraphs": []string{sentence(r, 120), sentence(r, 80)}}},
	})}}))
	d.Produces.Files = []string{"finance/ledger.csv", note}
	if day%3 == 0 {
		inv := fmt.Sprintf("invoices/invoice-%02d.pdf", day)
		d.Ops = append(d.Ops, g.write(inv, delta.Op{Generator: &delta.GeneratorRef{Name: "pdf", Params: params(map[string]any{
			"title": fmt.Sprintf("Invoice %d", 1000+day), "author": person(r), "date": clock(day), "paragraphs": []string{sentence(r, 50)},
		})}}))
		d.Produces.Files = append(d.Produces.Files, inv)
	}
	if day%7 == 0 {
		from := fmt.Sprintf("notes/day-%02d.md", day-6)
		to := "archive/" + from
		d.Ops = append(d.Ops, delta.Op{Op: delta.OpFileMove, From: from, To: to})
		g.files = slices.DeleteFunc(g.files, func(f string) bool { return f == from })
		g.files = append(g.files, to)
		d.Produces.Files = append(d.Produces.Files, to)
	}
}
