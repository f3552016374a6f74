package generator

import (
	"bytes"
	"encoding/json"
)

// Text returns the "text" generator: {"lines": [...]} becomes the lines,
// each terminated by "\n".
func Text() Generator { return textGen{} }

type textGen struct{}

func (textGen) Name() string { return "text" }

type textParams struct {
	Lines []string `json:"lines"`
}

func (g textGen) Generate(params json.RawMessage) ([]byte, error) {
	var p textParams
	if err := decodeParams(g.Name(), params, &p); err != nil {
		return nil, err
	}
	if p.Lines == nil {
		return nil, paramErr(g.Name(), "lines", "is required: an array of strings (may be empty)")
	}
	n := 0
	for _, l := range p.Lines {
		n += len(l) + 1
	}
	if n > MaxOutputBytes {
		return nil, limitErr(g.Name(), "lines", "would produce %d bytes, more than the limit of %d", n, MaxOutputBytes)
	}
	var b bytes.Buffer
	b.Grow(n)
	for _, l := range p.Lines {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.Bytes(), nil
}
