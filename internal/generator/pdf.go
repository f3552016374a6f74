package generator

import (
	"bytes"
	"encoding/json"
	"strings"
	"time"

	"codeberg.org/go-pdf/fpdf"
)

// PDF returns the "pdf" generator: an A4 document with a title, an
// optional byline, paragraphs and an optional table, set in the core
// Helvetica font.
//
// Determinism: the creation and modification dates are both the "date"
// param (in UTC), the catalog is sorted, no font is embedded, and fpdf
// writes no trailer /ID for unencrypted documents, so equal params give
// equal bytes.
func PDF() Generator { return pdfGen{} }

type pdfGen struct{}

func (pdfGen) Name() string { return "pdf" }

type pdfParams struct {
	Title      string   `json:"title"`
	Author     string   `json:"author"`
	Date       string   `json:"date"`
	Paragraphs []string `json:"paragraphs"`
	Table      *table   `json:"table"`
}

// pdfMinYear keeps dates away from the zero time.Time, which fpdf would
// replace with the current time.
const pdfMinYear = 1970

func (g pdfGen) Generate(params json.RawMessage) ([]byte, error) {
	name := g.Name()
	var p pdfParams
	if err := decodeParams(name, params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Title) == "" {
		return nil, paramErr(name, "title", "is required: a non-empty string")
	}
	if p.Date == "" {
		return nil, paramErr(name, "date", `is required: an RFC 3339 timestamp (e.g. "2026-03-04T09:00:00Z")`)
	}
	date, err := time.Parse(time.RFC3339, p.Date)
	if err != nil {
		return nil, paramErr(name, "date", `%s is not RFC 3339 (e.g. "2026-03-04T09:00:00Z")`, quoteShort(p.Date))
	}
	date = date.UTC()
	if y := date.Year(); y < pdfMinYear || y > 9999 {
		return nil, paramErr(name, "date", "%s is out of range: the year (in UTC) must be between %d and 9999", quoteShort(p.Date), pdfMinYear)
	}
	if len(p.Paragraphs) > MaxPDFParagraphs {
		return nil, limitErr(name, "paragraphs", "has %d paragraphs, more than the limit of %d", len(p.Paragraphs), MaxPDFParagraphs)
	}
	size, breaks := len(p.Title)+len(p.Author), 0
	count := func(s string) {
		size += len(s)
		breaks += strings.Count(s, "\n")
	}
	for _, para := range p.Paragraphs {
		count(para)
	}
	var rows [][]string
	if p.Table != nil {
		if rows, err = p.Table.cells(name, "table", MaxPDFRows, MaxPDFColumns); err != nil {
			return nil, err
		}
		for _, h := range p.Table.Header {
			count(h)
		}
		for _, r := range rows {
			for _, c := range r {
				count(c)
			}
		}
	}
	if size > MaxPDFTextBytes {
		return nil, limitErr(name, "", "the text is %d bytes in total, more than the limit of %d", size, MaxPDFTextBytes)
	}
	if breaks > MaxPDFLineBreaks {
		return nil, limitErr(name, "", "the text has %d line breaks in total, more than the limit of %d", breaks, MaxPDFLineBreaks)
	}
	return renderPDF(p.Title, p.Author, date, p.Paragraphs, p.Table, rows)
}

// PDF layout, in millimetres and points.
const (
	pdfTitleSize = 18.0
	pdfBodySize  = 11.0
	pdfSmallSize = 9.0
	pdfLine      = 5.5 // body line height
	pdfCellLine  = 4.5 // table line height
)

func renderPDF(title, author string, date time.Time, paras []string, tbl *table, rows [][]string) ([]byte, error) {
	doc := fpdf.New("P", "mm", "A4", "")
	doc.SetCatalogSort(true)
	doc.SetCreationDate(date)
	doc.SetModificationDate(date)
	doc.SetTitle(oneLine(title), true)
	if author != "" {
		doc.SetAuthor(oneLine(author), true)
	}
	// Core fonts use cp1252; characters outside it become '.'.
	tr := doc.UnicodeTranslatorFromDescriptor("")
	text := func(s string) string { return tr(pdfClean(s)) }

	doc.AddPage()
	doc.SetFont("Helvetica", "B", pdfTitleSize)
	doc.MultiCell(0, 8.5, text(oneLine(title)), "", "L", false)
	doc.SetFont("Helvetica", "", pdfSmallSize)
	doc.SetTextColor(90, 90, 90)
	byline := date.Format("2 January 2006")
	if a := oneLine(author); a != "" {
		byline = a + " - " + byline
	}
	doc.MultiCell(0, pdfLine, text(byline), "", "L", false)
	doc.SetTextColor(0, 0, 0)
	doc.Ln(4)

	doc.SetFont("Helvetica", "", pdfBodySize)
	for _, para := range paras {
		para = strings.TrimRight(para, " \t\r\n")
		if para == "" {
			continue
		}
		doc.MultiCell(0, pdfLine, text(para), "", "L", false)
		doc.Ln(2.5)
	}
	if tbl != nil {
		doc.Ln(2)
		pdfTable(doc, text, tbl.Header, rows)
	}
	var b bytes.Buffer
	if err := doc.Output(&b); err != nil {
		return nil, &ParamError{Generator: "pdf", Msg: "cannot render the document: " + err.Error(), Err: err}
	}
	return b.Bytes(), nil
}

// pdfTable draws a bordered table with equal column widths, wrapping cell
// text and repeating the header on each new page.
func pdfTable(doc *fpdf.Fpdf, text func(string) string, header []string, rows [][]string) {
	left, top, right, bottom := doc.GetMargins()
	pageW, pageH := doc.GetPageSize()
	colW := (pageW - left - right) / float64(len(header))
	limitY := pageH - bottom
	maxLines := int((pageH-top-bottom)/pdfCellLine) / 2 // a row never fills more than half a page

	split := func(cells []string) ([][][]byte, float64) {
		out := make([][][]byte, len(cells))
		n := 1
		for i, c := range cells {
			lines := doc.SplitLines([]byte(text(c)), colW)
			if len(lines) > maxLines {
				lines = lines[:maxLines]
			}
			out[i] = lines
			n = max(n, len(lines))
		}
		return out, float64(n)*pdfCellLine + 1
	}
	draw := func(cells [][][]byte, h float64, fill bool) {
		x, y := left, doc.GetY()
		for _, lines := range cells {
			style := "D"
			if fill {
				style = "FD"
			}
			doc.Rect(x, y, colW, h, style)
			for k, l := range lines {
				doc.SetXY(x, y+0.5+float64(k)*pdfCellLine)
				doc.CellFormat(colW, pdfCellLine, string(l), "", 0, "L", false, 0, "")
			}
			x += colW
		}
		doc.SetXY(left, y+h)
	}
	doc.SetFont("Helvetica", "B", pdfSmallSize)
	headerCells, hh := split(header)
	drawHeader := func() {
		doc.SetFont("Helvetica", "B", pdfSmallSize)
		doc.SetFillColor(230, 230, 230)
		draw(headerCells, hh, true)
		doc.SetFont("Helvetica", "", pdfSmallSize)
	}
	if doc.GetY()+hh > limitY {
		doc.AddPage()
	}
	drawHeader()
	for _, r := range rows {
		cells, h := split(r)
		if doc.GetY()+h > limitY {
			doc.AddPage()
			drawHeader()
		}
		draw(cells, h, false)
	}
}

// pdfClean replaces tabs with spaces and drops other control characters
// except newlines.
func pdfClean(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t':
			return ' '
		case r == '\n':
			return r
		case r < 0x20 || r == 0x7f:
			return -1
		}
		return r
	}, s)
}
