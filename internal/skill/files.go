package skill

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/world"
)

// fileSkills are the events of the home directory: files the persona
// writes from the ledger's records and the catalog's entities, by the
// deterministic generators.
func fileSkills() []Skill {
	return []Skill{
		exportCSV(), writeScript(), saveInvoicePDF(), savePhoto(), journalEntry(), meetingNotes(),
		readingList(), budgetSheet(), tripItinerary(), projectReadme(), shoppingList(),
	}
}

// money formats cents as a signed decimal amount, e.g. "-12.50".
func money(cents int64) string {
	sign := ""
	if cents < 0 {
		sign, cents = "-", -cents
	}
	return fmt.Sprintf("%s%d.%02d", sign, cents/100, cents%100)
}

// generate appends the file.write of path by generator gen with params.
func generate(b *Builder, p, gen, kind string, params any) {
	b.Op(delta.Op{Op: delta.OpFileWrite, Path: p, Generator: &delta.GeneratorRef{Name: gen, Params: rawJSON(params)}})
	b.FileWritten(p, kind)
}

// checkPath returns an error naming field unless p is a clean home path
// ending in ext.
func checkPath(field, p, ext string) error {
	if p == "" {
		return fmt.Errorf("field %s is required", field)
	}
	clean, err := world.CleanHomePath(p)
	if err != nil || clean != p {
		return fmt.Errorf("field %s %q is not a clean path relative to home", field, p)
	}
	if !strings.HasSuffix(p, ext) {
		return fmt.Errorf("field %s %q does not end in %s", field, p, ext)
	}
	return nil
}

// fresh reports whether the ledger has no file at p.
func fresh(d *Draw, p string) bool {
	_, ok := d.State.Files[p]
	return !ok
}

// pickN returns n distinct rows of rows (all when fewer), drawn in order.
func pickN(d *Draw, rows [][]any, n int) [][]any {
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	n = min(n, len(rows))
	for i := 0; i < n; i++ {
		j := i + d.Rand.IntN(len(idx)-i)
		idx[i], idx[j] = idx[j], idx[i]
	}
	out := make([][]any, n)
	for i := range out {
		out[i] = rows[idx[i]]
	}
	return out
}

// catalogHas returns a problem line unless the catalog query has a row.
func catalogHas(c *Check, what, query string, args ...any) []string {
	if c.Catalog == nil {
		return nil
	}
	rows, err := c.Catalog.Query(query, args...)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("%s: %v", what, err)}
	case len(rows) == 0:
		return []string{what + ": not in the catalog"}
	}
	return nil
}

// --- export_csv ---

// Export is export_csv's parameters: ledger records as CSV rows.
type Export struct {
	Path string `json:"path"`
	// Source is transactions or orders; its header is fixed.
	Source string  `json:"source"`
	Rows   [][]any `json:"rows"`
}

var exportHeaders = map[string][]string{
	"transactions": {"id", "booked_at", "account", "amount", "payee", "category"},
	"orders":       {"order_no", "site", "sku", "qty", "total", "status", "date"},
}

// Check implements Checker.
func (p *Export) Check() error {
	if err := checkPath("path", p.Path, ".csv"); err != nil {
		return err
	}
	h, ok := exportHeaders[p.Source]
	if !ok {
		return fmt.Errorf("field source %q is not transactions or orders", p.Source)
	}
	if len(p.Rows) == 0 {
		return errors.New("field rows is empty")
	}
	for i, r := range p.Rows {
		if len(r) != len(h) {
			return fmt.Errorf("rows[%d] has %d cells; the columns are %s", i, len(r), strings.Join(h, ","))
		}
		if _, ok := r[0].(string); !ok {
			return fmt.Errorf("rows[%d][0] is not a string id", i)
		}
	}
	return nil
}

func exportRows(s *State, source string) [][]any {
	var rows [][]any
	switch source {
	case "transactions":
		for _, t := range s.Payments {
			rows = append(rows, []any{t.ID, t.At, t.Account, money(t.Cents), t.Payee, t.Category})
		}
	case "orders":
		for _, o := range s.Orders {
			rows = append(rows, []any{o.No, o.Site, o.SKU, o.Qty, money(o.Cents), o.Status, Date(o.Day)})
		}
	}
	return rows
}

func exportCSV() Skill {
	return Make(Def[Export]{
		Doc: Doc{Name: "export_csv", Summary: "Export the persona's transactions or orders so far to a CSV in the home directory.",
			Interfaces: []string{CLI, MCP}, Files: []string{"csv"},
			Changes:     []string{"a CSV file under exports/ with one row per ledger record"},
			Constraints: []string{"rows are records of the ledger (transaction ids, order numbers), in booking order", "amounts are decimal dollars", "the header is fixed per source"},
			Continues:   []string{"payment_book", "payment_transfer", "shop_purchase"},
			Example: rawJSON(Export{Path: "exports/orders-2026-03-03.csv", Source: "orders",
				Rows: [][]any{{"SO-AR-001", "shop", "XLR-25", 2, "39.98", "placed", "2026-03-03"}}})},
		Emit: func(b *Builder, p *Export) error {
			var known []string
			for _, r := range exportRows(b.State, p.Source) {
				known = append(known, r[0].(string))
			}
			for i, r := range p.Rows {
				if !slices.Contains(known, r[0].(string)) {
					return fmt.Errorf("rows[%d]: %v is not a record of the ledger's %s", i, r[0], p.Source)
				}
			}
			generate(b, p.Path, "csv", "csv", map[string]any{"header": exportHeaders[p.Source], "rows": p.Rows})
			return nil
		},
		Propose: func(d *Draw) (*Export, error) {
			var sources []string
			for _, s := range []string{"orders", "transactions"} {
				if len(exportRows(d.State, s)) > 0 && fresh(d, fmt.Sprintf("exports/%s-%s.csv", s, d.Date())) {
					sources = append(sources, s)
				}
			}
			if len(sources) == 0 {
				return nil, ErrSkip
			}
			s := Pick(d, sources)
			return &Export{Path: fmt.Sprintf("exports/%s-%s.csv", s, d.Date()), Source: s, Rows: exportRows(d.State, s)}, nil
		},
		Review: func(c *Check, p *Export) []string {
			texts := []string{strings.Join(exportHeaders[p.Source], ",")}
			for _, r := range p.Rows {
				texts = append(texts, r[0].(string))
			}
			return c.FileHas(p.Path, texts...)
		},
	})
}

// --- write_script ---

// Script is write_script's parameters: a python3 script that summarizes
// a CSV of the home directory.
type Script struct {
	Path string `json:"path"`
	// CSV is the file it reads, relative to home.
	CSV string `json:"csv"`
}

// Check implements Checker.
func (p *Script) Check() error {
	if err := checkPath("path", p.Path, ".py"); err != nil {
		return err
	}
	return checkPath("csv", p.CSV, ".csv")
}

// pyQuote quotes s as a Python string literal.
func pyQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// summarizeScript is the script's text: it finds home from its own path,
// so it runs from any directory.
func summarizeScript(scriptPath, csvPath string) string {
	depth := strings.Count(scriptPath, "/")
	return fmt.Sprintf(`#!/usr/bin/env python3
"""Summarize %[1]s: its number of rows and the total of each numeric column
(a TOTAL row is left out)."""
import csv
from pathlib import Path

HOME = Path(__file__).resolve().parents[%[2]d]
DATA = HOME / %[3]s


def main():
    with open(DATA, newline="") as f:
        rows = [r for r in csv.DictReader(f) if str(next(iter(r.values()), "")).strip().upper() != "TOTAL"]
    print(f"{len(rows)} rows in %[1]s")
    if not rows:
        return
    for col in rows[0]:
        try:
            total = sum(float(r[col]) for r in rows if r[col] not in ("", None))
        except ValueError:
            continue
        print(f"{col}: total {total:.2f}")


if __name__ == "__main__":
    main()
`, csvPath, depth, pyQuote(csvPath))
}

func scriptFor(csvPath string) string {
	return "scripts/summarize_" + strings.ReplaceAll(strings.TrimSuffix(path.Base(csvPath), ".csv"), "-", "_") + ".py"
}

func writeScript() Skill {
	return Make(Def[Script]{
		Doc: Doc{Name: "write_script", Summary: "Write a small python3 script that reads a CSV of the home directory and prints its row count and column totals.",
			Interfaces: []string{CLI}, Files: []string{"script"},
			Changes:     []string{"an executable (0755) python3 script under scripts/"},
			Constraints: []string{"the CSV exists in the world (the ledger lists it)", "the script's text is a pure function of its paths", "the persona works with python"},
			Continues:   []string{"export_csv", "budget_sheet", "update_inventory"},
			Example:     rawJSON(Script{Path: "scripts/summarize_orders_2026_03_03.py", CSV: "exports/orders-2026-03-03.csv"})},
		Emit: func(b *Builder, p *Script) error {
			f, ok := b.State.Files[p.CSV]
			if !ok || f.Kind != "csv" {
				return fmt.Errorf("field csv: %s is not a CSV of the ledger", p.CSV)
			}
			text := summarizeScript(p.Path, p.CSV)
			b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Content: &text, Mode: "0755"})
			b.FileWritten(p.Path, "script")
			return nil
		},
		Propose: func(d *Draw) (*Script, error) {
			if !slices.Contains(d.Persona.Tools, "python") {
				return nil, ErrSkip
			}
			var csvs []string
			for _, f := range sortedKeys(d.State.Files) {
				if d.State.Files[f].Kind == "csv" && fresh(d, scriptFor(f)) {
					csvs = append(csvs, f)
				}
			}
			if len(csvs) == 0 {
				return nil, ErrSkip
			}
			f := Pick(d, csvs)
			return &Script{Path: scriptFor(f), CSV: f}, nil
		},
		Review: func(c *Check, p *Script) []string {
			out := c.FileHas(p.Path, "#!/usr/bin/env python3", pyQuote(p.CSV))
			if full, err := world.HomePath(c.Dir, p.Path); err == nil {
				if fi, err := os.Stat(full); err == nil && fi.Mode().Perm()&0o111 == 0 {
					out = append(out, fmt.Sprintf("%s is not executable (%v)", p.Path, fi.Mode().Perm()))
				}
			}
			return out
		},
	})
}

// --- save_invoice_pdf ---

// InvoiceLine is one line of an invoice.
type InvoiceLine struct {
	SKU       string `json:"sku"`
	Title     string `json:"title"`
	Qty       int    `json:"qty"`
	UnitCents int64  `json:"unit_cents"`
}

// Invoice is save_invoice_pdf's parameters.
type Invoice struct {
	Path    string `json:"path"`
	OrderNo string `json:"order_no"`
	Site    string `json:"site"`
	// Date is the invoice's fixed date, RFC 3339.
	Date       string        `json:"date"`
	Lines      []InvoiceLine `json:"lines"`
	TotalCents int64         `json:"total_cents"`
}

// Check implements Checker.
func (p *Invoice) Check() error {
	if err := checkPath("path", p.Path, ".pdf"); err != nil {
		return err
	}
	if err := checkRequired("order_no", p.OrderNo, "site", p.Site); err != nil {
		return err
	}
	if _, err := time.Parse(time.RFC3339, p.Date); err != nil {
		return fmt.Errorf("field date %q is not RFC 3339 (e.g. 2026-03-03T20:00:00Z)", p.Date)
	}
	if len(p.Lines) == 0 {
		return errors.New("field lines is empty")
	}
	var sum int64
	for i, l := range p.Lines {
		if l.Title == "" || l.Qty < 1 || l.UnitCents < 0 {
			return fmt.Errorf("lines[%d]: title, qty >= 1 and unit_cents >= 0 are required", i)
		}
		sum += int64(l.Qty) * l.UnitCents
	}
	if sum != p.TotalCents {
		return fmt.Errorf("field total_cents %d is not the sum of the lines (%d)", p.TotalCents, sum)
	}
	return nil
}

func invoicePath(no string) string { return "invoices/" + slug(no) + ".pdf" }

// pdfText is how the pdf generator stores a metadata string (UTF-16BE
// with a byte-order mark).
func pdfText(s string) string {
	var b bytes.Buffer
	b.WriteString("\xfe\xff")
	for _, u := range utf16.Encode([]rune(s)) {
		b.WriteByte(byte(u >> 8))
		b.WriteByte(byte(u))
	}
	return b.String()
}

func saveInvoicePDF() Skill {
	return Make(Def[Invoice]{
		Doc: Doc{Name: "save_invoice_pdf", Summary: "Save the PDF invoice of an order in the home directory (it comes the day after the order).",
			Interfaces: []string{GUI, CLI}, Files: []string{"pdf"},
			Changes:     []string{"a PDF under invoices/ with the order's lines and total"},
			Constraints: []string{"the order is in the ledger, placed on an earlier day", "the total is the order's total", "the PDF's date is fixed: the end of the order's day"},
			Continues:   []string{"shop_purchase"},
			Example: rawJSON(Invoice{Path: "invoices/so-ar-001.pdf", OrderNo: "SO-AR-001", Site: "shop", Date: "2026-03-03T20:00:00Z",
				Lines: []InvoiceLine{{SKU: "XLR-25", Title: "XLR cable 25 ft", Qty: 2, UnitCents: 1999}}, TotalCents: 3998})},
		Emit: func(b *Builder, p *Invoice) error {
			i := slices.IndexFunc(b.State.Orders, func(o OrderRef) bool { return o.No == p.OrderNo && o.Site == p.Site })
			if i < 0 {
				return fmt.Errorf("field order_no: %s is not a %s order of the ledger", p.OrderNo, p.Site)
			}
			if o := b.State.Orders[i]; o.Cents != p.TotalCents {
				return fmt.Errorf("field total_cents %d is not order %s's total %d", p.TotalCents, p.OrderNo, o.Cents)
			}
			rows := make([][]any, 0, len(p.Lines)+1)
			for _, l := range p.Lines {
				rows = append(rows, []any{l.SKU, l.Title, l.Qty, money(l.UnitCents), money(int64(l.Qty) * l.UnitCents)})
			}
			rows = append(rows, []any{"", "Total", "", "", money(p.TotalCents)})
			generate(b, p.Path, "pdf", "pdf", map[string]any{"title": "Invoice " + p.OrderNo, "author": siteLabel(p.Site), "date": p.Date,
				"paragraphs": []string{"Billed to " + b.Persona.Name + ".", fmt.Sprintf("Order %s on %s. Amounts in %s.", p.OrderNo, siteLabel(p.Site), Currency)},
				"table":      map[string]any{"header": []string{"SKU", "Item", "Qty", "Unit", "Amount"}, "rows": rows}})
			return nil
		},
		Propose: func(d *Draw) (*Invoice, error) {
			var due []OrderRef
			for _, o := range d.State.Orders {
				if o.Day < d.Day && o.Cents > 0 && fresh(d, invoicePath(o.No)) {
					due = append(due, o)
				}
			}
			if len(due) == 0 {
				return nil, ErrSkip
			}
			o := Pick(d, due)
			line := InvoiceLine{SKU: o.SKU, Title: "Order " + o.No, Qty: 1, UnitCents: o.Cents}
			if rows, err := d.Catalog.Query(`SELECT title, price_cents FROM products WHERE sku = ?`, o.SKU); err == nil && len(rows) > 0 {
				line.Title = Str(rows[0][0])
				if unit := Int(rows[0][1]); o.Qty > 0 && unit*int64(o.Qty) == o.Cents {
					line.Qty, line.UnitCents = o.Qty, unit
				}
			}
			return &Invoice{Path: invoicePath(o.No), OrderNo: o.No, Site: o.Site, Date: Clock(o.Day), Lines: []InvoiceLine{line}, TotalCents: o.Cents}, nil
		},
		Review: func(c *Check, p *Invoice) []string {
			b, err := c.File(p.Path)
			if err != nil {
				return []string{fmt.Sprintf("invoice %s: %v", p.Path, err)}
			}
			if !bytes.HasPrefix(b, []byte("%PDF-")) || !bytes.Contains(b, []byte(pdfText("Invoice "+p.OrderNo))) {
				return []string{fmt.Sprintf("%s is not a PDF titled Invoice %s", p.Path, p.OrderNo)}
			}
			return nil
		},
	})
}

// --- save_photo ---

// Shape is one shape of a photo (the png generator's).
type Shape struct {
	Kind  string `json:"kind"`
	X     int    `json:"x"`
	Y     int    `json:"y"`
	W     int    `json:"w,omitempty"`
	H     int    `json:"h,omitempty"`
	R     int    `json:"r,omitempty"`
	Color string `json:"color"`
}

// Photo is save_photo's parameters: a PNG and its sidecar note.
type Photo struct {
	Path       string  `json:"path"`
	Caption    string  `json:"caption"`
	Width      int     `json:"width"`
	Height     int     `json:"height"`
	Background string  `json:"background"`
	Shapes     []Shape `json:"shapes"`
}

var colorRE = regexp.MustCompile(`^#[0-9a-f]{6}$`)

// Check implements Checker.
func (p *Photo) Check() error {
	if err := checkPath("path", p.Path, ".png"); err != nil {
		return err
	}
	if err := checkRequired("caption", p.Caption); err != nil {
		return err
	}
	if p.Width < 1 || p.Width > 4096 || p.Height < 1 || p.Height > 4096 {
		return fmt.Errorf("fields width, height: %dx%d is not within 1 to 4096", p.Width, p.Height)
	}
	if !colorRE.MatchString(p.Background) {
		return fmt.Errorf("field background %q is not #rrggbb (lower case)", p.Background)
	}
	if len(p.Shapes) == 0 {
		return errors.New("field shapes is empty")
	}
	for i, s := range p.Shapes {
		if !colorRE.MatchString(s.Color) {
			return fmt.Errorf("shapes[%d].color %q is not #rrggbb (lower case)", i, s.Color)
		}
		switch s.Kind {
		case "rect", "roundrect":
			if s.W < 1 || s.H < 1 {
				return fmt.Errorf("shapes[%d]: a %s needs w and h of at least 1", i, s.Kind)
			}
		case "circle":
			if s.R < 1 || s.W != 0 || s.H != 0 {
				return fmt.Errorf("shapes[%d]: a circle has r of at least 1 and no w or h", i)
			}
		default:
			return fmt.Errorf("shapes[%d].kind %q is not rect, roundrect or circle", i, s.Kind)
		}
	}
	return nil
}

func sidecar(png string) string { return strings.TrimSuffix(png, ".png") + ".txt" }

func (s Shape) describe() string {
	if s.Kind == "circle" {
		return fmt.Sprintf("circle at %d,%d r %d %s", s.X, s.Y, s.R, s.Color)
	}
	return fmt.Sprintf("%s at %d,%d size %dx%d %s", s.Kind, s.X, s.Y, s.W, s.H, s.Color)
}

var skyColors = []string{"#f4a261", "#e76f51", "#8ecae6", "#264653", "#ffb4a2"}
var accentColors = []string{"#e63946", "#ffd166", "#06d6a0", "#118ab2", "#8338ec"}

func savePhoto() Skill {
	return Make(Def[Photo]{
		Doc: Doc{Name: "save_photo", Summary: "Save a photo (a PNG of simple shapes) in photos/, with a sidecar note of what it shows.",
			Interfaces: []string{GUI, CLI}, Files: []string{"png", "text"},
			Changes:     []string{"a PNG under photos/ whose name records the scene, main shape and colour", "a .txt sidecar listing the caption, background and every shape"},
			Constraints: []string{"colours are #rrggbb", "the image is the png generator's, a pure function of the shapes", "the name records the scene, its subject's shape and colour and the background"},
			Example: rawJSON(Photo{Path: "photos/2026-03-03-1-sunset-circle-ffd166-on-f4a261.png", Caption: "Sunset", Width: 320, Height: 200, Background: "#f4a261",
				Shapes: []Shape{{Kind: "circle", X: 160, Y: 120, R: 40, Color: "#ffd166"}, {Kind: "rect", X: 0, Y: 140, W: 320, H: 60, Color: "#264653"}}})},
		Emit: func(b *Builder, p *Photo) error {
			shapes := make([]map[string]any, len(p.Shapes))
			for i, s := range p.Shapes {
				m := map[string]any{"kind": s.Kind, "x": s.X, "y": s.Y, "color": s.Color}
				if s.Kind == "circle" {
					m["r"] = s.R
				} else {
					m["w"], m["h"] = s.W, s.H
					if s.Kind == "roundrect" && s.R > 0 {
						m["r"] = s.R
					}
				}
				shapes[i] = m
			}
			generate(b, p.Path, "png", "png", map[string]any{"width": p.Width, "height": p.Height, "background": p.Background, "shapes": shapes})
			lines := []string{p.Caption, fmt.Sprintf("%dx%d, background %s", p.Width, p.Height, p.Background)}
			for _, s := range p.Shapes {
				lines = append(lines, s.describe())
			}
			generate(b, sidecar(p.Path), "text", "text", map[string]any{"lines": lines})
			b.State.Next("photo")
			return nil
		},
		Propose: func(d *Draw) (*Photo, error) {
			w, h := 320, 240
			sky, accent := Pick(d, skyColors), Pick(d, accentColors)
			var p *Photo
			switch d.Rand.IntN(3) {
			case 0:
				p = &Photo{Caption: "Sunset over the water", Background: sky, Shapes: []Shape{
					{Kind: "circle", X: 80 + d.Rand.IntN(160), Y: 120 + d.Rand.IntN(40), R: 20 + d.Rand.IntN(30), Color: accent},
					{Kind: "rect", X: 0, Y: 170, W: w, H: 70, Color: "#1d3557"}}}
			case 1:
				p = &Photo{Caption: "Still life on the table", Background: "#fdf6e3", Shapes: []Shape{
					{Kind: "roundrect", X: 40, Y: 150, W: 240, H: 60, R: 12, Color: "#8d6e63"},
					{Kind: "circle", X: 120, Y: 130, R: 22, Color: accent},
					{Kind: "circle", X: 180 + d.Rand.IntN(40), Y: 135, R: 16, Color: sky}}}
			default:
				p = &Photo{Caption: "City at night", Background: "#0b132b", Shapes: []Shape{
					{Kind: "rect", X: 30, Y: 90 + d.Rand.IntN(40), W: 60, H: 150, Color: accent},
					{Kind: "rect", X: 120, Y: 60 + d.Rand.IntN(40), W: 70, H: 180, Color: "#3a506b"},
					{Kind: "circle", X: 260, Y: 50, R: 18, Color: "#f1faee"}}}
			}
			p.Width, p.Height = w, h
			subject := p.Shapes[slices.IndexFunc(p.Shapes, func(s Shape) bool { return s.Color == accent })]
			p.Path = fmt.Sprintf("photos/%s-%d-%s-%s-%s-on-%s.png", d.Date(), d.State.Peek("photo"), slug(p.Caption), subject.Kind,
				strings.TrimPrefix(subject.Color, "#"), strings.TrimPrefix(p.Background, "#"))
			return p, nil
		},
		Review: func(c *Check, p *Photo) []string {
			b, err := c.File(p.Path)
			if err != nil {
				return []string{fmt.Sprintf("photo %s: %v", p.Path, err)}
			}
			var out []string
			if !bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")) {
				out = append(out, p.Path+" is not a PNG")
			}
			texts := []string{p.Caption, p.Background}
			for _, s := range p.Shapes {
				texts = append(texts, s.describe())
			}
			return append(out, c.FileHas(sidecar(p.Path), texts...)...)
		},
	})
}

// --- journal_entry ---

// JournalEntry is journal_entry's parameters: a dated entry appended to a
// markdown journal.
type JournalEntry struct {
	Path string `json:"path"`
	// Title is the journal's heading, given only when the file is new.
	Title string `json:"title,omitempty"`
	Date  string `json:"date"`
	Text  string `json:"text"`
}

// Check implements Checker.
func (p *JournalEntry) Check() error {
	if err := checkPath("path", p.Path, ".md"); err != nil {
		return err
	}
	if err := checkRequired("text", p.Text); err != nil {
		return err
	}
	return checkDate("date", p.Date)
}

func journalPath(day int) string { return "journal/" + Date(day)[:7] + ".md" }

func journalEntry() Skill {
	return Make(Def[JournalEntry]{
		Doc: Doc{Name: "journal_entry", Summary: "Append the day's entry to the persona's monthly markdown journal.",
			Interfaces: []string{CLI}, Files: []string{"markdown"},
			Changes:     []string{"journal/YYYY-MM.md: a '## DATE' section appended (the file starts with its title when new)"},
			Constraints: []string{"one entry per day, dated the day", "the entry refers to the ledger's records (events, orders, threads)", "appended, never rewritten"},
			Continues:   []string{"journal_entry", "calendar_schedule", "shop_purchase", "dm_conversation"},
			Example:     rawJSON(JournalEntry{Path: "journal/2026-03.md", Title: "Journal, March 2026", Date: "2026-03-03", Text: "Quiet day. Coffee with Maya is on Thursday."})},
		Emit: func(b *Builder, p *JournalEntry) error {
			if p.Date != Date(b.Day) {
				return fmt.Errorf("field date %s is not the day (%s)", p.Date, Date(b.Day))
			}
			var content strings.Builder
			if f, ok := b.State.Files[p.Path]; !ok {
				if p.Title == "" {
					return fmt.Errorf("field title: %s is new; give the journal's title", p.Path)
				}
				fmt.Fprintf(&content, "# %s\n\n", p.Title)
			} else if f.Day == b.Day {
				return fmt.Errorf("field path: %s has an entry today already", p.Path)
			} else if p.Title != "" {
				return fmt.Errorf("field title: %s exists; leave title out", p.Path)
			}
			fmt.Fprintf(&content, "## %s\n\n%s\n\n", p.Date, p.Text)
			s := content.String()
			b.Op(delta.Op{Op: delta.OpFileAppend, Path: p.Path, Content: &s})
			b.FileWritten(p.Path, "markdown")
			return nil
		},
		Propose: func(d *Draw) (*JournalEntry, error) {
			pth := journalPath(d.Day)
			p := &JournalEntry{Path: pth, Date: d.Date()}
			if f, ok := d.State.Files[pth]; ok && f.Day == d.Day {
				return nil, ErrSkip
			} else if !ok {
				p.Title = "Journal, " + Day0.AddDate(0, 0, d.Day).Format("January 2006")
			}
			lines := []string{Pick(d, []string{"A quiet day.", "Busy day, but a good one.", "Slept badly, then got a lot done.", "Rainy, stayed in most of the day."})}
			if n := len(d.State.Events); n > 0 {
				e := d.State.Events[n-1]
				lines = append(lines, fmt.Sprintf("%s is on %s.", e.Title, e.Start[:10]))
			}
			if n := len(d.State.Orders); n > 0 {
				lines = append(lines, fmt.Sprintf("Order %s is on its way.", d.State.Orders[n-1].No))
			}
			if ids := sortedKeys(d.State.Threads); len(ids) > 0 {
				if th := d.State.Threads[Pick(d, ids)]; len(th.With) > 0 {
					lines = append(lines, "Caught up with "+firstName(th.With[0])+".")
				}
			}
			p.Text = strings.Join(lines, " ")
			return p, nil
		},
		Review: func(c *Check, p *JournalEntry) []string {
			return c.FileHas(p.Path, "## "+p.Date+"\n\n"+p.Text)
		},
	})
}

// --- meeting_notes ---

// MeetingNotes is meeting_notes's parameters.
type MeetingNotes struct {
	Path      string   `json:"path"`
	Event     string   `json:"event"`
	Title     string   `json:"title"`
	StartsAt  string   `json:"starts_at"`
	Attendees []string `json:"attendees"`
	Agenda    []string `json:"agenda"`
	Actions   []string `json:"actions,omitempty"`
}

// Check implements Checker.
func (p *MeetingNotes) Check() error {
	if err := checkPath("path", p.Path, ".md"); err != nil {
		return err
	}
	if err := checkRequired("event", p.Event, "title", p.Title); err != nil {
		return err
	}
	if len(p.Attendees) == 0 || len(p.Agenda) == 0 {
		return errors.New("fields attendees and agenda must not be empty")
	}
	return checkTime("starts_at", p.StartsAt)
}

func meetingPath(e EventRef) string { return "meetings/" + e.Start[:10] + "-" + slug(e.Title) + ".md" }

var agendas = [][]string{
	{"What happened since last time", "Plans for the next two weeks", "Open questions"},
	{"Catch up", "Dates that work", "Who brings what"},
	{"Budget so far", "Next steps", "Anything else"},
}

func meetingNotes() Skill {
	return Make(Def[MeetingNotes]{
		Doc: Doc{Name: "meeting_notes", Summary: "Write markdown notes for a calendar event: when, who, the agenda and action items.",
			Interfaces: []string{CLI}, Files: []string{"markdown"},
			Changes:     []string{"a markdown file under meetings/ named by the event's date and title"},
			Constraints: []string{"the event is in the ledger with that title and start, put in the calendar on an earlier day", "attendees are the organizer and the guests", "not for an event the persona declined"},
			Continues:   []string{"calendar_schedule", "calendar_respond", "calendar_reschedule"},
			Example: rawJSON(MeetingNotes{Path: "meetings/2026-03-05-coffee-with-maya.md", Event: "evt-ar-1", Title: "Coffee with Maya", StartsAt: "2026-03-05 10:00:00",
				Attendees: []string{"Alex Rivera", "Maya Okafor"}, Agenda: []string{"Catch up"}, Actions: []string{"Alex: send the photos"}})},
		Emit: func(b *Builder, p *MeetingNotes) error {
			i := eventIndex(b.State, p.Event)
			if i < 0 {
				return fmt.Errorf("field event: %s is not in the ledger", p.Event)
			}
			if e := b.State.Events[i]; e.Title != p.Title || e.Start != p.StartsAt {
				return fmt.Errorf("fields title, starts_at: event %s is %q at %s", p.Event, e.Title, e.Start)
			}
			sections := []map[string]any{
				{"paragraphs": []string{"When: " + p.StartsAt + " UTC"}},
				{"heading": "Attendees", "bullets": p.Attendees},
				{"heading": "Agenda", "bullets": p.Agenda},
			}
			if len(p.Actions) > 0 {
				sections = append(sections, map[string]any{"heading": "Action items", "bullets": p.Actions})
			}
			generate(b, p.Path, "markdown", "markdown", map[string]any{"title": "Notes: " + p.Title, "sections": sections})
			return nil
		},
		Propose: func(d *Draw) (*MeetingNotes, error) {
			var due []EventRef
			for _, e := range d.State.Events {
				if e.Day < d.Day && e.Response != "declined" && fresh(d, meetingPath(e)) {
					due = append(due, e)
				}
			}
			if len(due) == 0 {
				return nil, ErrSkip
			}
			e := Pick(d, due)
			who := []string{}
			for _, n := range append([]string{cmpOr(e.Organizer, d.Persona.Name)}, e.Guests...) {
				if !slices.Contains(who, n) {
					who = append(who, n)
				}
			}
			if !slices.Contains(who, d.Persona.Name) {
				who = append(who, d.Persona.Name)
			}
			actions := []string{fmt.Sprintf("%s: confirm the time with everyone", firstName(d.Persona.Name))}
			if i := slices.IndexFunc(who, func(n string) bool { return n != d.Persona.Name }); i >= 0 {
				actions = append(actions, fmt.Sprintf("%s: bring the notes", firstName(who[i])))
			}
			return &MeetingNotes{Path: meetingPath(e), Event: e.ID, Title: e.Title, StartsAt: e.Start, Attendees: who, Agenda: Pick(d, agendas), Actions: actions}, nil
		},
		Review: func(c *Check, p *MeetingNotes) []string {
			return c.FileHas(p.Path, append([]string{"# Notes: " + p.Title, p.StartsAt}, p.Attendees...)...)
		},
	})
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// --- reading_list ---

// ReadingItem is a catalog paper or news article.
type ReadingItem struct {
	// Kind is paper (ID an archive id) or article (ID a news slug).
	Kind  string `json:"kind"`
	ID    string `json:"id"`
	Title string `json:"title"`
	By    string `json:"by"`
}

// ReadingList is reading_list's parameters.
type ReadingList struct {
	Path  string        `json:"path"`
	Title string        `json:"title"`
	Items []ReadingItem `json:"items"`
}

// Check implements Checker.
func (p *ReadingList) Check() error {
	if err := checkPath("path", p.Path, ".md"); err != nil {
		return err
	}
	if err := checkRequired("title", p.Title); err != nil {
		return err
	}
	if len(p.Items) == 0 {
		return errors.New("field items is empty")
	}
	for i, it := range p.Items {
		if it.Kind != "paper" && it.Kind != "article" {
			return fmt.Errorf("items[%d].kind %q is not paper or article", i, it.Kind)
		}
		if it.ID == "" || it.Title == "" {
			return fmt.Errorf("items[%d]: id and title are required", i)
		}
	}
	return nil
}

// paperCategory is the archive category of a subject of interest.
func paperCategory(subject string) string {
	s := strings.ToLower(subject)
	for _, m := range []struct{ word, cat string }{
		{"statist", "stat.ML"}, {"machine", "cs.LG"}, {"learning", "cs.LG"}, {"robot", "cs.RO"}, {"vision", "cs.CV"}, {"language", "cs.CL"},
		{"linguist", "cs.CL"}, {"database", "cs.DB"}, {"data", "cs.DB"}, {"neuro", "q-bio.NC"}, {"brain", "q-bio.NC"}, {"optim", "math.OC"},
		{"math", "math.OC"}, {"physic", "physics.comp-ph"}, {"ai", "cs.AI"}, {"intelligence", "cs.AI"},
	} {
		if strings.Contains(s, m.word) {
			return m.cat
		}
	}
	return "cs.AI"
}

// firstAuthor is "A et al." of an archive authors JSON list.
func firstAuthor(authors string) string {
	var list []string
	if json.Unmarshal([]byte(authors), &list) != nil || len(list) == 0 {
		return authors
	}
	if len(list) == 1 {
		return list[0]
	}
	return list[0] + " et al."
}

func (it ReadingItem) line() string {
	if it.Kind == "paper" {
		return fmt.Sprintf("%s (%s), arXiv:%s", it.Title, it.By, it.ID)
	}
	return fmt.Sprintf("%s (%s), news/%s", it.Title, it.By, it.ID)
}

func readingList() Skill {
	return Make(Def[ReadingList]{
		Doc: Doc{Name: "reading_list", Summary: "Make a markdown reading list of catalog papers on the persona's subject and recent news articles.",
			Interfaces: []string{CLI, GUI}, Files: []string{"markdown"},
			Changes:     []string{"a markdown file under reading/ with a Papers and an Articles section"},
			Constraints: []string{"items are real catalog papers (by archive id) and articles (by slug) with their titles", "papers are in the category of the persona's subject"},
			Example: rawJSON(ReadingList{Path: "reading/2026-03-03.md", Title: "Reading list: statistics", Items: []ReadingItem{
				{Kind: "paper", ID: "2408.00001", Title: "Efficient mixture of experts at scale", By: "Elin Brightwater et al."}}})},
		Emit: func(b *Builder, p *ReadingList) error {
			var papers, articles []string
			for _, it := range p.Items {
				if it.Kind == "paper" {
					papers = append(papers, it.line())
				} else {
					articles = append(articles, it.line())
				}
			}
			var sections []map[string]any
			if len(papers) > 0 {
				sections = append(sections, map[string]any{"heading": "Papers", "bullets": papers})
			}
			if len(articles) > 0 {
				sections = append(sections, map[string]any{"heading": "Articles", "bullets": articles})
			}
			generate(b, p.Path, "markdown", "markdown", map[string]any{"title": p.Title, "sections": sections})
			return nil
		},
		Propose: func(d *Draw) (*ReadingList, error) {
			pth := "reading/" + d.Date() + ".md"
			if !fresh(d, pth) {
				return nil, ErrSkip
			}
			subject := interest(d, "subject", "artificial intelligence")
			papers, err := d.Catalog.Rows(fmt.Sprintf(`SELECT ext_id, title, authors FROM papers WHERE category = '%s' ORDER BY id`, paperCategory(subject)))
			if err != nil {
				return nil, err
			}
			articles, err := d.Catalog.Rows(`SELECT slug, title, byline FROM articles ORDER BY id`)
			if err != nil {
				return nil, err
			}
			p := &ReadingList{Path: pth, Title: "Reading list: " + subject}
			for _, r := range pickN(d, papers, 3) {
				p.Items = append(p.Items, ReadingItem{Kind: "paper", ID: Str(r[0]), Title: Str(r[1]), By: firstAuthor(Str(r[2]))})
			}
			for _, r := range pickN(d, articles, 2) {
				p.Items = append(p.Items, ReadingItem{Kind: "article", ID: Str(r[0]), Title: Str(r[1]), By: Str(r[2])})
			}
			if len(p.Items) == 0 {
				return nil, ErrSkip
			}
			return p, nil
		},
		Review: func(c *Check, p *ReadingList) []string {
			texts := []string{"# " + p.Title}
			var out []string
			for _, it := range p.Items {
				texts = append(texts, it.Title)
				if it.Kind == "paper" {
					out = append(out, catalogHas(c, "paper "+it.ID, `SELECT 1 FROM papers WHERE ext_id = ? AND title = ?`, it.ID, it.Title)...)
				} else {
					out = append(out, catalogHas(c, "article "+it.ID, `SELECT 1 FROM articles WHERE slug = ? AND title = ?`, it.ID, it.Title)...)
				}
			}
			return append(c.FileHas(p.Path, texts...), out...)
		},
	})
}

// --- budget_sheet ---

// PlanItem is a planned purchase at its catalog price.
type PlanItem struct {
	SKU       string `json:"sku"`
	Title     string `json:"title"`
	Qty       int    `json:"qty"`
	UnitCents int64  `json:"unit_cents"`
}

// BudgetSheet is budget_sheet's parameters.
type BudgetSheet struct {
	Path  string     `json:"path"`
	Items []PlanItem `json:"items"`
}

func checkPlanItems(items []PlanItem) error {
	if len(items) == 0 {
		return errors.New("field items is empty")
	}
	for i, it := range items {
		if it.SKU == "" || it.Title == "" || it.Qty < 1 || it.UnitCents < 0 {
			return fmt.Errorf("items[%d]: sku, title, qty >= 1 and unit_cents >= 0 are required", i)
		}
	}
	return nil
}

// Check implements Checker.
func (p *BudgetSheet) Check() error {
	if err := checkPath("path", p.Path, ".csv"); err != nil {
		return err
	}
	return checkPlanItems(p.Items)
}

func planTotal(items []PlanItem) int64 {
	var t int64
	for _, it := range items {
		t += int64(it.Qty) * it.UnitCents
	}
	return t
}

const shopProducts = `SELECT sku, title, price_cents, category FROM products WHERE site = 'shop' ORDER BY id`

// pickProducts draws up to n distinct shop products, of one category when
// sameCategory.
func pickProducts(d *Draw, n int, sameCategory bool) ([]PlanItem, string, error) {
	rows, err := d.Catalog.Rows(shopProducts)
	if err != nil {
		return nil, "", err
	}
	if len(rows) == 0 {
		return nil, "", ErrSkip
	}
	cat := ""
	if sameCategory {
		cat = Str(Pick(d, rows)[3])
		var same [][]any
		for _, r := range rows {
			if Str(r[3]) == cat {
				same = append(same, r)
			}
		}
		rows = same
	}
	var items []PlanItem
	for _, r := range pickN(d, rows, n) {
		items = append(items, PlanItem{SKU: Str(r[0]), Title: Str(r[1]), Qty: 1 + d.Rand.IntN(3), UnitCents: Int(r[2])})
	}
	return items, cat, nil
}

func catalogPrices(c *Check, items []PlanItem) []string {
	var out []string
	for _, it := range items {
		out = append(out, catalogHas(c, "product "+it.SKU, `SELECT 1 FROM products WHERE sku = ? AND title = ? AND price_cents = ?`, it.SKU, it.Title, it.UnitCents)...)
	}
	return out
}

func budgetSheet() Skill {
	return Make(Def[BudgetSheet]{
		Doc: Doc{Name: "budget_sheet", Summary: "Plan a purchase in a CSV budget sheet: catalog products of one category, quantities, catalog prices and the total.",
			Interfaces: []string{CLI}, Files: []string{"csv"},
			Changes:     []string{"a CSV under budget/ with item,sku,qty,unit_price,subtotal and a TOTAL row"},
			Constraints: []string{"items are shop catalog products at their catalog prices", "the total is the sum of the subtotals"},
			Example: rawJSON(BudgetSheet{Path: "budget/cables-plan-2026-03-03.csv", Items: []PlanItem{
				{SKU: "XLR-25", Title: "XLR cable 25 ft", Qty: 4, UnitCents: 1999}}})},
		Emit: func(b *Builder, p *BudgetSheet) error {
			rows := make([][]any, 0, len(p.Items)+1)
			for _, it := range p.Items {
				rows = append(rows, []any{it.Title, it.SKU, it.Qty, money(it.UnitCents), money(int64(it.Qty) * it.UnitCents)})
			}
			rows = append(rows, []any{"TOTAL", "", "", "", money(planTotal(p.Items))})
			generate(b, p.Path, "csv", "csv", map[string]any{"header": []string{"item", "sku", "qty", "unit_price", "subtotal"}, "rows": rows})
			return nil
		},
		Propose: func(d *Draw) (*BudgetSheet, error) {
			items, cat, err := pickProducts(d, 2+d.Rand.IntN(3), true)
			if err != nil {
				return nil, err
			}
			pth := fmt.Sprintf("budget/%s-plan-%s.csv", slug(cat), d.Date())
			if !fresh(d, pth) {
				return nil, ErrSkip
			}
			return &BudgetSheet{Path: pth, Items: items}, nil
		},
		Review: func(c *Check, p *BudgetSheet) []string {
			texts := []string{"TOTAL,,,," + money(planTotal(p.Items))}
			for _, it := range p.Items {
				texts = append(texts, it.SKU)
			}
			return append(c.FileHas(p.Path, texts...), catalogPrices(c, p.Items)...)
		},
	})
}

// --- trip_itinerary ---

// TripFlight is a catalog flight.
type TripFlight struct {
	Number    string `json:"number"`
	Origin    string `json:"origin"`
	Dest      string `json:"dest"`
	DepartsAt string `json:"departs_at"`
	ArrivesAt string `json:"arrives_at"`
}

// TripHotel is a catalog hotel.
type TripHotel struct {
	Slug    string `json:"slug"`
	Name    string `json:"name"`
	Address string `json:"address"`
}

// Itinerary is trip_itinerary's parameters.
type Itinerary struct {
	Path    string     `json:"path"`
	City    string     `json:"city"`
	Country string     `json:"country"`
	Flight  TripFlight `json:"flight"`
	Hotel   TripHotel  `json:"hotel"`
	Nights  int        `json:"nights"`
}

// Check implements Checker.
func (p *Itinerary) Check() error {
	if err := checkPath("path", p.Path, ".md"); err != nil {
		return err
	}
	if err := checkRequired("city", p.City, "flight.number", p.Flight.Number, "flight.origin", p.Flight.Origin, "flight.dest", p.Flight.Dest, "hotel.slug", p.Hotel.Slug, "hotel.name", p.Hotel.Name); err != nil {
		return err
	}
	if err := checkTime("flight.departs_at", p.Flight.DepartsAt); err != nil {
		return err
	}
	if err := checkTime("flight.arrives_at", p.Flight.ArrivesAt); err != nil {
		return err
	}
	if p.Nights < 1 || p.Nights > 30 {
		return fmt.Errorf("field nights %d is not 1 to 30", p.Nights)
	}
	return nil
}

func tripItinerary() Skill {
	return Make(Def[Itinerary]{
		Doc: Doc{Name: "trip_itinerary", Summary: "Plan a trip in a markdown itinerary: a catalog flight to a city, a hotel there and the nights.",
			Interfaces: []string{CLI, GUI}, Files: []string{"markdown"},
			Changes:     []string{"a markdown file under trips/ with the flight, the stay and a day plan"},
			Constraints: []string{"the flight is a real catalog flight (number and departure) that lands in the city", "the hotel is a catalog hotel of that city", "the trip starts after the day, inside the catalog's schedule", "the persona's interest city is preferred when the catalog has it"},
			Example: rawJSON(Itinerary{Path: "trips/marrow-bay-2026-03-10.md", City: "Marrow Bay", Country: "Norland",
				Flight: TripFlight{Number: "NA100", Origin: "POA", Dest: "SAH", DepartsAt: "2026-03-10 19:00:00", ArrivesAt: "2026-03-10 22:09:00"},
				Hotel:  TripHotel{Slug: "lighthouse-guesthouse-marrow-bay-2", Name: "Lighthouse Guesthouse Marrow Bay", Address: "1 Quay St"}, Nights: 3})},
		Emit: func(b *Builder, p *Itinerary) error {
			arrive := tm(p.Flight.ArrivesAt)
			out := arrive.AddDate(0, 0, p.Nights).Format(time.DateOnly)
			var plan []string
			for i := 1; i < p.Nights; i++ {
				plan = append(plan, fmt.Sprintf("%s: explore %s", arrive.AddDate(0, 0, i).Format(time.DateOnly), p.City))
			}
			plan = append(plan, out+": check out and travel home")
			generate(b, p.Path, "markdown", "markdown", map[string]any{"title": fmt.Sprintf("Trip to %s, %s", p.City, p.Country), "sections": []map[string]any{
				{"heading": "Flight", "bullets": []string{fmt.Sprintf("%s %s -> %s", p.Flight.Number, p.Flight.Origin, p.Flight.Dest),
					"Departs " + p.Flight.DepartsAt, "Arrives " + p.Flight.ArrivesAt}},
				{"heading": "Stay", "bullets": []string{p.Hotel.Name, p.Hotel.Address, fmt.Sprintf("%d nights, %s to %s", p.Nights, arrive.Format(time.DateOnly), out)}},
				{"heading": "Plan", "bullets": plan},
			}})
			return nil
		},
		Propose: func(d *Draw) (*Itinerary, error) {
			cities, err := d.Catalog.Rows(`SELECT c.id, c.name, c.country FROM cities c WHERE EXISTS (SELECT 1 FROM airports a WHERE a.city_id = c.id) AND EXISTS (SELECT 1 FROM hotels h WHERE h.city_id = c.id) ORDER BY c.id`)
			if err != nil {
				return nil, err
			}
			if len(cities) == 0 {
				return nil, ErrSkip
			}
			city := Pick(d, cities)
			if want := d.Persona.Interests["city"]; want != "" {
				for _, c := range cities {
					if strings.EqualFold(Str(c[1]), want) {
						city = c
					}
				}
			}
			flights, err := d.Catalog.Query(`SELECT f.number, f.origin, f.dest, f.departs_at, f.arrives_at FROM flights f JOIN airports a ON a.code = f.dest
				WHERE a.city_id = ? AND f.departs_at >= ? AND f.departs_at < ? ORDER BY f.departs_at, f.id`, Int(city[0]), At(d.Day+3, "00:00"), At(d.Day+21, "00:00"))
			if err != nil {
				return nil, err
			}
			hotels, err := d.Catalog.Query(`SELECT slug, name, address FROM hotels WHERE city_id = ? ORDER BY id`, Int(city[0]))
			if err != nil {
				return nil, err
			}
			if len(flights) == 0 || len(hotels) == 0 {
				return nil, ErrSkip
			}
			f, h := Pick(d, flights), Pick(d, hotels)
			p := &Itinerary{City: Str(city[1]), Country: Str(city[2]), Nights: 2 + d.Rand.IntN(4),
				Flight: TripFlight{Number: Str(f[0]), Origin: Str(f[1]), Dest: Str(f[2]), DepartsAt: Str(f[3]), ArrivesAt: Str(f[4])},
				Hotel:  TripHotel{Slug: Str(h[0]), Name: Str(h[1]), Address: Str(h[2])}}
			p.Path = fmt.Sprintf("trips/%s-%s.md", slug(p.City), p.Flight.DepartsAt[:10])
			if !fresh(d, p.Path) {
				return nil, ErrSkip
			}
			return p, nil
		},
		Review: func(c *Check, p *Itinerary) []string {
			out := c.FileHas(p.Path, p.City, p.Flight.Number, p.Flight.DepartsAt, p.Hotel.Name)
			out = append(out, catalogHas(c, "flight "+p.Flight.Number, `SELECT 1 FROM flights WHERE number = ? AND departs_at = ? AND dest = ?`, p.Flight.Number, p.Flight.DepartsAt, p.Flight.Dest)...)
			return append(out, catalogHas(c, "hotel "+p.Hotel.Slug, `SELECT 1 FROM hotels h JOIN cities c ON c.id = h.city_id WHERE h.slug = ? AND c.name = ?`, p.Hotel.Slug, p.City)...)
		},
	})
}

// --- project_readme ---

// Readme is project_readme's parameters.
type Readme struct {
	Path    string `json:"path"`
	Project string `json:"project"`
	Summary string `json:"summary"`
	// Files are the folder's files (ledger paths); Todos its open to-dos.
	Files []string `json:"files,omitempty"`
	Todos []string `json:"todos,omitempty"`
}

// Check implements Checker.
func (p *Readme) Check() error {
	if err := checkPath("path", p.Path, "/README.md"); err != nil {
		return err
	}
	return checkRequired("project", p.Project, "summary", p.Summary)
}

// projectFolders are the project folders the ledger knows, by project
// name: the tasks projects and the folders under projects/.
func projectFolders(s *State) map[string]string {
	out := map[string]string{}
	for _, p := range s.Projects {
		out[p] = "projects/" + slug(p)
	}
	for f := range s.Files {
		rest, ok := strings.CutPrefix(f, "projects/")
		if !ok {
			continue
		}
		dir, _, ok := strings.Cut(rest, "/")
		if ok && !slices.ContainsFunc(s.Projects, func(p string) bool { return slug(p) == dir }) {
			out[dir] = "projects/" + dir
		}
	}
	return out
}

func projectReadme() Skill {
	return Make(Def[Readme]{
		Doc: Doc{Name: "project_readme", Summary: "Write the README of a project folder: what the project is, its files and its open to-dos.",
			Interfaces: []string{CLI}, Files: []string{"markdown"},
			Changes:     []string{"projects/NAME/README.md"},
			Constraints: []string{"the project is a tasks project or a folder under projects/ of the ledger", "listed files are the folder's files of the ledger", "listed to-dos are the project's open to-dos"},
			Continues:   []string{"todo_add", "draft_bom"},
			Example:     rawJSON(Readme{Path: "projects/home/README.md", Project: "Home", Summary: "Things to do around the flat.", Todos: []string{"Call Maya back"}})},
		Emit: func(b *Builder, p *Readme) error {
			dir := strings.TrimSuffix(p.Path, "/README.md")
			for i, f := range p.Files {
				if _, ok := b.State.Files[f]; !ok || !strings.HasPrefix(f, dir+"/") {
					return fmt.Errorf("files[%d]: %s is not a file of the ledger in %s", i, f, dir)
				}
			}
			sections := []map[string]any{{"paragraphs": []string{p.Summary}}}
			if len(p.Files) > 0 {
				var bullets []string
				for _, f := range p.Files {
					bullets = append(bullets, "`"+strings.TrimPrefix(f, dir+"/")+"`")
				}
				sections = append(sections, map[string]any{"heading": "Files", "bullets": bullets})
			}
			if len(p.Todos) > 0 {
				sections = append(sections, map[string]any{"heading": "Open to-dos", "bullets": p.Todos})
			}
			generate(b, p.Path, "markdown", "markdown", map[string]any{"title": p.Project, "sections": sections})
			return nil
		},
		Propose: func(d *Draw) (*Readme, error) {
			folders := projectFolders(d.State)
			var names []string
			for _, n := range sortedKeys(folders) {
				if fresh(d, folders[n]+"/README.md") {
					names = append(names, n)
				}
			}
			if len(names) == 0 {
				return nil, ErrSkip
			}
			name := Pick(d, names)
			dir := folders[name]
			p := &Readme{Path: dir + "/README.md", Project: name,
				Summary: fmt.Sprintf("What %s keeps for the project %s: its files and open to-dos, as of %s.", firstName(d.Persona.Name), name, d.Date())}
			for _, f := range sortedKeys(d.State.Files) {
				if strings.HasPrefix(f, dir+"/") {
					p.Files = append(p.Files, f)
				}
			}
			for _, t := range d.State.Todos {
				if t.Project == name && !t.Done && t.Title != "" {
					p.Todos = append(p.Todos, t.Title)
				}
			}
			return p, nil
		},
		Review: func(c *Check, p *Readme) []string {
			texts := append([]string{"# " + p.Project, p.Summary}, p.Todos...)
			for _, f := range p.Files {
				texts = append(texts, path.Base(f))
			}
			return c.FileHas(p.Path, texts...)
		},
	})
}

// --- shopping_list ---

// ShoppingList is shopping_list's parameters.
type ShoppingList struct {
	Path  string     `json:"path"`
	Items []PlanItem `json:"items"`
}

// Check implements Checker.
func (p *ShoppingList) Check() error {
	if err := checkPath("path", p.Path, ".txt"); err != nil {
		return err
	}
	return checkPlanItems(p.Items)
}

func (it PlanItem) listLine() string {
	return fmt.Sprintf("[ ] %d x %s (%s), $%s each", it.Qty, it.Title, it.SKU, money(it.UnitCents))
}

func shoppingList() Skill {
	return Make(Def[ShoppingList]{
		Doc: Doc{Name: "shopping_list", Summary: "Write a plain-text shopping list of catalog products with quantities and prices.",
			Interfaces: []string{CLI}, Files: []string{"text"},
			Changes:     []string{"a text file under lists/ with one checkbox line per product and the estimated total"},
			Constraints: []string{"items are shop catalog products at their catalog prices", "the estimate is the sum of quantity times price"},
			Example: rawJSON(ShoppingList{Path: "lists/shopping-2026-03-03.txt", Items: []PlanItem{
				{SKU: "XLR-25", Title: "XLR cable 25 ft", Qty: 2, UnitCents: 1999}}})},
		Emit: func(b *Builder, p *ShoppingList) error {
			lines := []string{"Shopping list", ""}
			for _, it := range p.Items {
				lines = append(lines, it.listLine())
			}
			lines = append(lines, "", "Estimated total: $"+money(planTotal(p.Items)))
			generate(b, p.Path, "text", "text", map[string]any{"lines": lines})
			return nil
		},
		Propose: func(d *Draw) (*ShoppingList, error) {
			pth := "lists/shopping-" + d.Date() + ".txt"
			if !fresh(d, pth) {
				return nil, ErrSkip
			}
			items, _, err := pickProducts(d, 3+d.Rand.IntN(3), false)
			if err != nil {
				return nil, err
			}
			return &ShoppingList{Path: pth, Items: items}, nil
		},
		Review: func(c *Check, p *ShoppingList) []string {
			var texts []string
			for _, it := range p.Items {
				texts = append(texts, it.listLine())
			}
			texts = append(texts, "Estimated total: $"+money(planTotal(p.Items)))
			return append(c.FileHas(p.Path, texts...), catalogPrices(c, p.Items)...)
		},
	})
}
