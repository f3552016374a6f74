package generator

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const pdfParamsJSON = `{
	"title": "Desk Power Setup",
	"author": "Alex Doe",
	"date": "2026-03-04T09:00:00Z",
	"paragraphs": ["The surge protector has six outlets and a display panel.", "Café costs €3."],
	"table": {"header": ["Item", "Qty"], "rows": [["Surge protector", 1]]}
}`

func genPDF(t *testing.T, params string) []byte {
	t.Helper()
	b, err := PDF().Generate(json.RawMessage(params))
	if err != nil {
		t.Fatalf("Generate: %v", err)
	}
	if !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("output does not start with %%PDF-: %q", b[:min(len(b), 16)])
	}
	return b
}

func TestPDFDates(t *testing.T) {
	b := genPDF(t, pdfParamsJSON)
	dates := regexp.MustCompile(`D:\d{8,14}`).FindAll(b, -1)
	if len(dates) != 2 {
		t.Fatalf("found %d D: dates (%q), want 2 (creation and modification)", len(dates), dates)
	}
	for _, d := range dates {
		if string(d) != "D:20260304090000" {
			t.Errorf("date %q, want D:20260304090000", d)
		}
	}
	for _, key := range []string{"/CreationDate (D:20260304090000)", "/ModDate (D:20260304090000)"} {
		if !bytes.Contains(b, []byte(key)) {
			t.Errorf("PDF lacks %s", key)
		}
	}
	if bytes.Contains(b, []byte("/ID")) {
		t.Error("PDF has a trailer /ID")
	}

	// The offset is folded into UTC.
	b = genPDF(t, strings.Replace(pdfParamsJSON, "2026-03-04T09:00:00Z", "2026-03-04T11:00:00+02:00", 1))
	if !bytes.Contains(b, []byte("/CreationDate (D:20260304090000)")) {
		t.Error("+02:00 date not converted to UTC")
	}
}

func TestPDFText(t *testing.T) {
	const tool = "/usr/bin/pdftotext"
	if _, err := os.Stat(tool); err != nil {
		t.Skipf("skipping: %s not found (install poppler-utils to check the PDF's text)", tool)
	}
	path := t.TempDir() + "/doc.pdf"
	if err := os.WriteFile(path, genPDF(t, pdfParamsJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tool, path, "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	text := string(out)
	for _, want := range []string{
		"Desk Power Setup",
		"The surge protector has six outlets and a display panel.",
		"Café costs €3.",
		"Surge protector",
		"Alex Doe",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("pdftotext output lacks %q:\n%s", want, text)
		}
	}
}

func TestPDFParamsChangeOutput(t *testing.T) {
	a := genPDF(t, pdfParamsJSON)
	b := genPDF(t, strings.Replace(pdfParamsJSON, "2026-03-04", "2026-03-05", 1))
	if bytes.Equal(a, b) {
		t.Error("changing the date did not change the PDF")
	}
}
