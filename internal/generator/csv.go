package generator

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
)

// CSV returns the "csv" generator: {"header": [...], "rows": [[...], ...]}
// becomes RFC 4180 CSV with "\n" line ends.
func CSV() Generator { return csvGen{} }

type csvGen struct{}

func (csvGen) Name() string { return "csv" }

func (g csvGen) Generate(params json.RawMessage) ([]byte, error) {
	var p table
	if err := decodeParams(g.Name(), params, &p); err != nil {
		return nil, err
	}
	rows, err := p.cells(g.Name(), "", MaxRows, MaxColumns)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	w := csv.NewWriter(&b) // UseCRLF is false: "\n" line ends
	if err := w.Write(p.Header); err != nil {
		return nil, err
	}
	for _, row := range rows {
		if err := w.Write(row); err != nil {
			return nil, err
		}
		if b.Len() > MaxOutputBytes {
			return nil, limitErr(g.Name(), "rows", "would produce more than the limit of %d bytes", MaxOutputBytes)
		}
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return nil, err
	}
	if b.Len() > MaxOutputBytes {
		return nil, limitErr(g.Name(), "rows", "would produce %d bytes, more than the limit of %d", b.Len(), MaxOutputBytes)
	}
	return b.Bytes(), nil
}
