package generator

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzGenerate checks that no name and params make a generator panic, and
// that accepted params give the same bytes twice.
func FuzzGenerate(f *testing.F) {
	for _, c := range loadCases(f) {
		f.Add(c.Generator, string(c.Params))
	}
	seeds := []struct{ name, params string }{
		{"csv", `{"header":["a"],"rows":[[null],[1e400],[-0],[true]]}`},
		{"markdown", `{"title":"t","sections":[{"table":{"header":["|"],"rows":[["\n"]]}}]}`},
		{"pdf", `{"title":"\u0000\t\r","date":"9999-12-31T23:59:59-23:59","paragraphs":["\ud800","` + "\x01" + `"],"table":{"header":["",""],"rows":[["",""]]}}`},
		{"png", `{"width":1,"height":1,"shapes":[{"kind":"circle","x":-65536,"y":65536,"r":65536,"color":"#000000"}]}`},
		{"png", `{"width":5,"height":5,"shapes":[{"kind":"roundrect","x":1,"y":1,"w":1,"h":1,"r":65536,"color":"#000000"}]}`},
		{"product_image", `{"kind":"surge_protector","width":64,"height":4096,"outlets":12,"display_panel":true}`},
		{"product_image", `{"kind":"generic","width":4096,"height":64,"outlets":0}`},
		{"text", `{"lines":null}`},
		{"nope", `{}`},
		{"text", `{`},
		{"text", `{"lines":[]}}`},
	}
	for _, s := range seeds {
		f.Add(s.name, s.params)
	}
	r := Default()
	f.Fuzz(func(t *testing.T, name, params string) {
		a, err := r.Generate(name, json.RawMessage(params))
		if err != nil {
			return
		}
		b, err := r.Generate(name, json.RawMessage(params))
		if err != nil {
			t.Fatalf("second run failed: %v", err)
		}
		if !bytes.Equal(a, b) {
			t.Fatal("two runs gave different bytes")
		}
	})
}
