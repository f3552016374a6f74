package generator

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Markdown returns the "markdown" generator: a title and sections of
// paragraphs, bullets and an optional table become a CommonMark document
// with a GitHub-flavoured table.
func Markdown() Generator { return markdownGen{} }

type markdownGen struct{}

func (markdownGen) Name() string { return "markdown" }

type markdownParams struct {
	Title    string            `json:"title"`
	Sections []markdownSection `json:"sections"`
}

type markdownSection struct {
	Heading    string   `json:"heading"`
	Paragraphs []string `json:"paragraphs"`
	Bullets    []string `json:"bullets"`
	Table      *table   `json:"table"`
}

func (g markdownGen) Generate(params json.RawMessage) ([]byte, error) {
	var p markdownParams
	if err := decodeParams(g.Name(), params, &p); err != nil {
		return nil, err
	}
	if strings.TrimSpace(p.Title) == "" {
		return nil, paramErr(g.Name(), "title", "is required: a non-empty string")
	}
	blocks := []string{"# " + oneLine(p.Title)}
	rowsLeft := MaxRows
	for i, s := range p.Sections {
		path := fmt.Sprintf("sections[%d]", i)
		if h := oneLine(s.Heading); h != "" {
			blocks = append(blocks, "## "+h)
		}
		for _, para := range s.Paragraphs {
			if para = strings.TrimRight(para, " \t\r\n"); para != "" {
				blocks = append(blocks, para)
			}
		}
		if len(s.Bullets) > 0 {
			var b strings.Builder
			for j, item := range s.Bullets {
				if j > 0 {
					b.WriteByte('\n')
				}
				item = strings.TrimRight(item, " \t\r\n")
				b.WriteString("- " + strings.ReplaceAll(item, "\n", "\n  "))
			}
			blocks = append(blocks, b.String())
		}
		if s.Table != nil {
			rows, err := s.Table.cells(g.Name(), path+".table", rowsLeft, MaxColumns)
			if err != nil {
				return nil, err
			}
			rowsLeft -= len(rows)
			blocks = append(blocks, markdownTable(s.Table.Header, rows))
		}
	}
	out := strings.Join(blocks, "\n\n") + "\n"
	if len(out) > MaxOutputBytes {
		return nil, limitErr(g.Name(), "sections", "would produce %d bytes, more than the limit of %d", len(out), MaxOutputBytes)
	}
	return []byte(out), nil
}

// oneLine folds line breaks into spaces and trims s.
func oneLine(s string) string {
	return strings.TrimSpace(strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s))
}

func markdownTable(header []string, rows [][]string) string {
	esc := strings.NewReplacer("|", `\|`, "\r\n", " ", "\n", " ", "\r", " ")
	var b strings.Builder
	line := func(cells []string) {
		b.WriteByte('|')
		for _, c := range cells {
			b.WriteString(" " + strings.TrimSpace(esc.Replace(c)) + " |")
		}
	}
	line(header)
	b.WriteString("\n|")
	for range header {
		b.WriteString(" --- |")
	}
	for _, r := range rows {
		b.WriteByte('\n')
		line(r)
	}
	return b.String()
}
