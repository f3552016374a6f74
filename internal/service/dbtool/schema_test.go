package dbtool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type pageIn struct {
	Limit int    `json:"limit,omitempty" jsonschema:"how many to return, 1 to 100; omit for 20" minimum:"1" maximum:"100"`
	Min   int    `json:"min,omitempty" minimum:"-5"`
	Query string `json:"query,omitempty"`
}

type noIn struct{}

type optionalIn struct {
	Title  *string   `json:"title,omitempty" jsonschema:"a new title; omit to keep it"`
	Tags   []string  `json:"tags,omitempty"`
	Fields *nestedIn `json:"fields,omitempty"`
	Empty  noIn      `json:"empty,omitzero"`
}

type nestedIn struct {
	Note *string `json:"note,omitempty"`
}

type listOut struct {
	Items []item `json:"items"`
	Next  *item  `json:"next,omitempty"`
	Count *int64 `json:"count,omitempty"`
}

type item struct {
	Tags []string `json:"tags"`
}

// toolsOf registers tools with every shape of arguments and results the
// services use and lists them through a client.
func toolsOf(t *testing.T) (*mcp.ClientSession, map[string]*mcp.Tool) {
	d, _ := testDB(t)
	srv := NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	AddTool(srv, d, &mcp.Tool{Name: "page", Description: "pages"}, func(ctx context.Context, in pageIn) (listOut, error) {
		return listOut{Items: []item{{Tags: []string{}}}}, nil
	})
	AddTool(srv, d, &mcp.Tool{Name: "none", Description: "takes nothing"}, func(ctx context.Context, in noIn) (listOut, error) {
		return listOut{Items: []item{}}, nil
	})
	AddTool(srv, d, &mcp.Tool{Name: "edit", Description: "edits"}, func(ctx context.Context, in optionalIn) (item, error) {
		return item{Tags: []string{fmt.Sprint(in.Title == nil, in.Tags == nil, in.Fields != nil && in.Fields.Note == nil)}}, nil
	})
	cs := connectMemory(t, serverOf(func() *mcp.Server { return srv }))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	tools := map[string]*mcp.Tool{}
	for _, tool := range res.Tools {
		tools[tool.Name] = tool
	}
	return cs, tools
}

// The schemas AddTool publishes are the ones the common function-calling
// adapters take: an object root with properties even when there are none,
// one type per schema (an optional argument is one left out of required,
// never a ["null", ...] type), no additionalProperties.
func TestSchemasFitModelAdapters(t *testing.T) {
	_, tools := toolsOf(t)
	for _, tool := range tools {
		for _, p := range SchemaProblems(tool) {
			t.Errorf("%s: %s", tool.Name, p)
		}
	}
	wantSchema(t, tools["none"].InputSchema, "", `{"type":"object","properties":{}}`)
	edit := tools["edit"].InputSchema
	wantSchema(t, edit, "title", `{"type":"string","description":"a new title; omit to keep it"}`)
	wantSchema(t, edit, "tags", `{"type":"array","items":{"type":"string"}}`)
	wantSchema(t, edit, "fields", `{"type":"object","properties":{"note":{"type":"string"}}}`)
	wantSchema(t, edit, "empty", `{"type":"object","properties":{}}`)
	if _, ok := edit.(map[string]any)["required"]; ok {
		t.Errorf("input schema %v requires an optional argument", edit)
	}
	wantSchema(t, tools["page"].OutputSchema, "", `{"type":"object","required":["items"],"properties":{
		"items":{"type":"array","items":{"type":"object","required":["tags"],"properties":{"tags":{"type":"array","items":{"type":"string"}}}}},
		"next":{"type":"object","required":["tags"],"properties":{"tags":{"type":"array","items":{"type":"string"}}}},
		"count":{"type":"integer"}}}`)
}

// wantSchema fails the test unless the property prop of schema (schema
// itself if prop is empty) is the JSON want.
func wantSchema(t *testing.T, schema any, prop, want string) {
	t.Helper()
	got := schema
	if prop != "" {
		props, _ := schema.(map[string]any)["properties"].(map[string]any)
		got = props[prop]
	}
	var w any
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatal(err)
	}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		t.Errorf("schema of %q:\n got %s\nwant %s", prop, gb, wb)
	}
}

// An optional argument of a pointer or slice type still takes null, as
// leaving it out, although its schema names one type.
func TestOptionalArgumentsTakeNull(t *testing.T) {
	cs, _ := toolsOf(t)
	got := call[item](t, cs, "edit", map[string]any{"title": nil, "tags": nil, "fields": map[string]any{"note": nil}})
	if fmt.Sprint(got.Tags) != "[true true true]" {
		t.Errorf("title, tags and fields.note nil = %v, want all true", got.Tags)
	}
}

// A bound in a struct tag is in the schema (minimum, maximum) and checked
// before the tool runs: a value outside it, 0 included, is a tool error
// that names the argument and the range; an omitted one is the tool's
// default.
func TestBoundedArguments(t *testing.T) {
	cs, tools := toolsOf(t)
	page := tools["page"].InputSchema
	wantSchema(t, page, "limit", `{"type":"integer","description":"how many to return, 1 to 100; omit for 20","minimum":1,"maximum":100}`)
	wantSchema(t, page, "min", `{"type":"integer","minimum":-5}`)
	for _, ok := range []map[string]any{{}, {"limit": 1}, {"limit": 100}, {"limit": 1e2}, {"min": -5}, {"min": 1 << 40}} {
		call[listOut](t, cs, "page", ok)
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"limit": 0}, `argument "limit" of page must be between 1 and 100, not 0: how many to return, 1 to 100; omit for 20`},
		{map[string]any{"limit": 101}, `argument "limit" of page must be between 1 and 100, not 101`},
		{map[string]any{"limit": -1}, `argument "limit" of page must be between 1 and 100, not -1`},
		{map[string]any{"limit": 1e3}, `argument "limit" of page must be between 1 and 100, not 1000`},
		{map[string]any{"min": -6}, `argument "min" of page must be at least -5, not -6`},
	} {
		if msg := callError(t, cs, "page", c.args); !strings.Contains(msg, c.want) {
			t.Errorf("%v: %q, want %q", c.args, msg, c.want)
		}
	}
}

type nilsOut struct {
	List   []item            `json:"list"`
	Maybe  []item            `json:"maybe,omitempty"`
	ByName map[string]string `json:"by_name"`
	Inner  item              `json:"inner"`
	Ptr    *item             `json:"ptr,omitempty"`
	Fixed  [2]item           `json:"fixed"`
	embedded
}

type embedded struct {
	Also []string `json:"also"`
}

// A result never holds null where its output schema names one type: a nil
// slice or map that is written (not omitempty) is written empty, at any
// depth, and a result type whose field would be written as null is refused
// when the tool is added.
func TestResultsNeverHoldNull(t *testing.T) {
	d, _ := testDB(t)
	srv := NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	AddTool(srv, d, &mcp.Tool{Name: "nils", Description: "nils"}, func(ctx context.Context, in noIn) (nilsOut, error) {
		return nilsOut{Maybe: []item{{}}, Ptr: &item{}, List: []item{{}, {Tags: []string{"a"}}}}, nil
	})
	cs := connectMemory(t, serverOf(func() *mcp.Server { return srv }))
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nils"})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	want := `{"list":[{"tags":[]},{"tags":["a"]}],"maybe":[{"tags":[]}],"by_name":{},"inner":{"tags":[]},"ptr":{"tags":[]},"fixed":[{"tags":[]},{"tags":[]}],"also":[]}`
	if got := resultText(res); got != want {
		t.Errorf("text:\n got %s\nwant %s", got, want)
	}
	call[nilsOut](t, cs, "nils", nil) // fits its output schema

	type ptrOut struct {
		P *item `json:"p"`
	}
	type anyOut struct {
		A any `json:"a,omitempty"`
	}
	type badBounds struct {
		Name string `json:"name" minimum:"1"`
	}
	type badNumber struct {
		N int `json:"n" maximum:"ten"`
	}
	type badRange struct {
		N int `json:"n" minimum:"5" maximum:"1"`
	}
	for name, add := range map[string]func(*mcp.Server){
		"pointer written as null": func(s *mcp.Server) {
			AddTool(s, d, &mcp.Tool{Name: "x"}, func(context.Context, noIn) (ptrOut, error) { return ptrOut{}, nil })
		},
		"interface": func(s *mcp.Server) {
			AddTool(s, d, &mcp.Tool{Name: "x"}, func(context.Context, noIn) (anyOut, error) { return anyOut{}, nil })
		},
		"bounds on a string": func(s *mcp.Server) {
			AddTool(s, d, &mcp.Tool{Name: "x"}, func(context.Context, badBounds) (item, error) { return item{}, nil })
		},
		"a bound that is not a number": func(s *mcp.Server) {
			AddTool(s, d, &mcp.Tool{Name: "x"}, func(context.Context, badNumber) (item, error) { return item{}, nil })
		},
		"minimum above maximum": func(s *mcp.Server) {
			AddTool(s, d, &mcp.Tool{Name: "x"}, func(context.Context, badRange) (item, error) { return item{}, nil })
		},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: AddTool did not refuse the tool", name)
				}
			}()
			add(NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil))
		}()
	}
}
