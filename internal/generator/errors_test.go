package generator

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParamErrors(t *testing.T) {
	tests := []struct {
		gen, params string
		field       string // want ParamError.Field
		msg         string // want substring of Error()
		limit       bool   // want errors.Is(err, ErrLimit)
	}{
		// Unknown fields, at any depth, case-sensitively.
		{"text", `{"lines":[],"colour":1}`, "colour", `unknown field; params accepts "lines"`, false},
		{"text", `{"Lines":[]}`, "Lines", "unknown field", false},
		{"markdown", `{"title":"t","sections":[{"heading":"h"},{"heading":"h","extra":true}]}`, "sections[1].extra", `unknown field; sections[1] accepts "heading", "paragraphs", "bullets", "table"`, false},
		{"png", `{"width":1,"height":1,"shapes":[{"kind":"rect","x":0,"y":0,"w":1,"h":1,"color":"#000000","alpha":1}]}`, "shapes[0].alpha", "unknown field", false},
		{"text", `{"lines":[],"lines":[]}`, "lines", "appears more than once", false},

		// Wrong types.
		{"text", `{"lines":"hello"}`, "lines", "expected an array, got the string \"hello\"", false},
		{"text", `{"lines":["a",2]}`, "lines[1]", "expected a string, got the number 2", false},
		{"png", `{"width":"10","height":1}`, "width", `expected an integer, got the string "10"`, false},
		{"png", `{"width":1.5,"height":1}`, "width", "expected an integer between", false},
		{"png", `{"width":1e30,"height":1}`, "width", "expected an integer between", false},
		{"product_image", `{"kind":"generic","display_panel":"yes"}`, "display_panel", "expected true or false", false},
		{"markdown", `{"title":"t","sections":{}}`, "sections", "expected an array, got an object", false},
		{"csv", `{"header":["a"],"rows":[[{"x":1}]]}`, "rows[0][0]", "expected a string, number, bool or null, got an object", false},
		{"csv", `{"header":["a"],"rows":[[[1]]]}`, "rows[0][0]", "got an array", false},
		{"text", `[]`, "", "params must be a JSON object, got an array", false},
		{"text", `"x"`, "", "params must be a JSON object", false},
		{"text", `{"lines":[]} {}`, "", "unexpected data after the params object", false},
		{"text", `{"lines":[`, "lines", "not valid JSON", false},
		{"text", `{"lines":[}`, "lines", "not valid JSON", false},
		{"text", `{"lines":null}`, "lines", "is required", false},

		// Missing required fields.
		{"text", `{}`, "lines", "is required", false},
		{"text", ``, "lines", "is required", false},
		{"csv", `{"rows":[]}`, "header", "is required", false},
		{"markdown", `{"sections":[]}`, "title", "is required", false},
		{"pdf", `{"title":"t"}`, "date", "is required: an RFC 3339 timestamp", false},
		{"pdf", `{"date":"2026-03-04T09:00:00Z"}`, "title", "is required", false},
		{"png", `{"height":10}`, "width", "is required", false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"rect","x":0,"y":0,"w":3,"color":"#000000"}]}`, "shapes[0].h", "is required", false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"circle","x":0,"y":0,"color":"#000000"}]}`, "shapes[0].r", "is required", false},
		{"png", `{"width":10,"height":10,"shapes":[{"x":0,"y":0,"color":"#000000"}]}`, "shapes[0].kind", "is required", false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"rect","x":0,"y":0,"w":1,"h":1}]}`, "shapes[0].color", "is required", false},
		{"product_image", `{}`, "kind", "is required", false},

		// Row-length mismatch.
		{"csv", `{"header":["a","b"],"rows":[["1","2"],["3"]]}`, "rows[1]", "has 1 cells, want 2", false},
		{"markdown", `{"title":"t","sections":[{"table":{"header":["a"],"rows":[["1","2"]]}}]}`, "sections[0].table.rows[0]", "has 2 cells, want 1", false},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","table":{"header":["a","b"],"rows":[[1,2],[3,4,5]]}}`, "table.rows[1]", "has 3 cells, want 2", false},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","table":{"rows":[]}}`, "table.header", "is required", false},

		// Bad values.
		{"png", `{"width":0,"height":10}`, "width", "0 is out of range", false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"star","x":0,"y":0,"color":"#000000"}]}`, "shapes[0].kind", `"star" is not a shape kind`, false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"circle","x":0,"y":0,"r":2,"w":3,"color":"#000000"}]}`, "shapes[0].w", `is not used by kind "circle"`, false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"rect","x":0,"y":0,"w":1,"h":1,"r":1,"color":"#000000"}]}`, "shapes[0].r", `is not used by kind "rect"`, false},
		{"png", `{"width":10,"height":10,"shapes":[{"kind":"rect","x":99999999,"y":0,"w":1,"h":1,"color":"#000000"}]}`, "shapes[0].x", "out of range", false},
		{"product_image", `{"kind":"toaster"}`, "kind", `"toaster" is not a product kind`, false},
		{"product_image", `{"kind":"generic","outlets":-1}`, "outlets", "out of range", false},
		{"product_image", `{"kind":"generic","width":10}`, "width", "10 is out of range: expected an integer between 64 and 4096", false},

		// Bad colours.
		{"png", `{"width":1,"height":1,"background":"red"}`, "background", `"red" is not a colour of the form "#rrggbb"`, false},
		{"png", `{"width":1,"height":1,"background":"#12345g"}`, "background", "is not a colour", false},
		{"png", `{"width":1,"height":1,"background":"#fff"}`, "background", "is not a colour", false},
		{"png", `{"width":9,"height":9,"shapes":[{"kind":"rect","x":0,"y":0,"w":1,"h":1,"color":"#0000001"}]}`, "shapes[0].color", "is not a colour", false},
		{"product_image", `{"kind":"generic","body_color":"blue"}`, "body_color", "is not a colour", false},

		// Bad dates.
		{"pdf", `{"title":"t","date":"yesterday"}`, "date", `"yesterday" is not RFC 3339 (e.g. "2026-03-04T09:00:00Z")`, false},
		{"pdf", `{"title":"t","date":"2026-03-04"}`, "date", "is not RFC 3339", false},
		{"pdf", `{"title":"t","date":"2026-03-04 09:00:00Z"}`, "date", "is not RFC 3339", false},
		{"pdf", `{"title":"t","date":"0001-01-01T00:00:00Z"}`, "date", "out of range", false},
		{"pdf", `{"title":"t","date":1772614800}`, "date", "expected a string", false},

		// Limits.
		{"png", `{"width":4097,"height":10}`, "width", "too large: images are at most 4096x4096", true},
		{"png", `{"width":10,"height":100000}`, "height", "too large", true},
		{"product_image", `{"kind":"generic","outlets":13}`, "outlets", "at most 12", true},
		{"product_image", `{"kind":"generic","height":5000}`, "height", "too large", true},
		{"csv", `{"header":["a"],"rows":` + repeatJSON(`["x"]`, MaxRows+1) + `}`, "rows", "more than the limit of 100000", true},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","table":{"header":` + repeatJSON(`"c"`, MaxPDFColumns+1) + `}}`, "table.header", "more than the limit", true},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","paragraphs":["` + strings.Repeat("x", MaxPDFTextBytes) + `"]}`, "", "more than the limit", true},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","paragraphs":["` + strings.Repeat(`a\n`, MaxPDFLineBreaks+1) + `"]}`, "", "line breaks in total, more than the limit", true},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","paragraphs":` + repeatJSON(`"a"`, MaxPDFParagraphs+1) + `}`, "paragraphs", "more than the limit", true},
		{"pdf", `{"title":"t","date":"2026-03-04T09:00:00Z","table":{"header":["a"],"rows":` + repeatJSON(`[1]`, MaxPDFRows+1) + `}}`, "table.rows", "more than the limit of 5000", true},
		{"text", `{"lines":` + repeatJSON(`"`+strings.Repeat("x", 1<<16)+`"`, MaxOutputBytes>>16) + `}`, "lines", "more than the limit", true},
		{"text", `{"lines":["` + strings.Repeat("x", MaxParamsBytes) + `"]}`, "", "more than the limit", true},
		{"png", `{"width":4096,"height":4096,"shapes":` + repeatJSON(`{"kind":"rect","x":0,"y":0,"w":4096,"h":4096,"color":"#000000"}`, 20) + `}`, "shapes", "more than", true},
	}
	r := Default()
	for _, tt := range tests {
		name := tt.gen + " " + tt.params
		if len(name) > 100 {
			name = name[:100]
		}
		t.Run(name, func(t *testing.T) {
			_, err := r.Generate(tt.gen, json.RawMessage(tt.params))
			if err == nil {
				t.Fatal("no error")
			}
			var pe *ParamError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v (%T) is not a *ParamError", err, err)
			}
			if pe.Generator != tt.gen {
				t.Errorf("Generator = %q, want %q", pe.Generator, tt.gen)
			}
			if pe.Field != tt.field {
				t.Errorf("Field = %q, want %q (error: %v)", pe.Field, tt.field, err)
			}
			msg := err.Error()
			if !strings.HasPrefix(msg, tt.gen+": ") {
				t.Errorf("error %q does not start with %q", msg, tt.gen+": ")
			}
			if tt.field != "" && !strings.Contains(msg, `field "`+tt.field+`": `) {
				t.Errorf("error %q does not name field %q", msg, tt.field)
			}
			if !strings.Contains(msg, tt.msg) {
				t.Errorf("error %q does not contain %q", msg, tt.msg)
			}
			if got := errors.Is(err, ErrLimit); got != tt.limit {
				t.Errorf("errors.Is(err, ErrLimit) = %v, want %v", got, tt.limit)
			}
		})
	}
}

func TestErrorMessageExample(t *testing.T) {
	_, err := PDF().Generate(json.RawMessage(`{"title":"t","date":"yesterday"}`))
	want := `pdf: field "date": "yesterday" is not RFC 3339 (e.g. "2026-03-04T09:00:00Z")`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant    %s", err, want)
	}
}

// repeatJSON returns a JSON array of n copies of elem.
func repeatJSON(elem string, n int) string {
	var b strings.Builder
	b.WriteByte('[')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(elem)
	}
	b.WriteByte(']')
	return b.String()
}
