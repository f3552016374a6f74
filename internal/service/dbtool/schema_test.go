package dbtool

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Portable makes a schema one the common function-calling adapters take:
// one type per schema (an optional argument is one left out of required,
// never a ["null", ...] type), properties on every object even when there
// are none, no additionalProperties; the rest (descriptions, bounds,
// required) is kept, and the schema given is not changed.
func TestPortable(t *testing.T) {
	const in = `{"type": "object", "additionalProperties": false, "required": ["name"], "properties": {
		"name": {"type": "string", "description": "who"},
		"title": {"type": ["null", "string"], "description": "a new title; omit to keep it"},
		"tags": {"type": ["array", "null"], "items": {"type": ["string", "null"]}},
		"fields": {"type": ["null", "object"], "additionalProperties": false, "properties": {"note": {"type": ["null", "string"]}}},
		"meta": {"type": "object", "additionalProperties": {"type": "string"}},
		"empty": {"type": "object"},
		"limit": {"type": "integer", "minimum": 1, "maximum": 100}}}`
	s := schemaOf(t, in)
	before, _ := json.Marshal(s)
	if probs := SchemaProblems(&mcp.Tool{Name: "edit", InputSchema: s}); len(probs) == 0 {
		t.Fatal("SchemaProblems finds nothing wrong with the schema before Portable: the test proves nothing")
	}
	p, err := Portable(s)
	if err != nil {
		t.Fatal(err)
	}
	wantSchema(t, p, "", `{"type":"object","required":["name"],"properties":{
		"name":{"type":"string","description":"who"},
		"title":{"type":"string","description":"a new title; omit to keep it"},
		"tags":{"type":"array","items":{"type":"string"}},
		"fields":{"type":"object","properties":{"note":{"type":"string"}}},
		"meta":{"type":"object","properties":{}},
		"empty":{"type":"object","properties":{}},
		"limit":{"type":"integer","minimum":1,"maximum":100}}}`)
	for _, pr := range SchemaProblems(&mcp.Tool{Name: "edit", InputSchema: p, OutputSchema: p}) {
		t.Error(pr)
	}
	if after, _ := json.Marshal(s); string(after) != string(before) {
		t.Errorf("Portable changed the schema it was given:\n%s\nnow\n%s", before, after)
	}
	none, err := Portable(schemaOf(t, `{"type": "object"}`))
	if err != nil {
		t.Fatal(err)
	}
	wantSchema(t, none, "", `{"type":"object","properties":{}}`)

	// Two types other than null have no one type to publish.
	_, err = Portable(schemaOf(t, `{"type": "object", "properties": {"a": {"type": "object", "properties": {"id": {"type": ["string", "integer"]}}}}}`))
	if err == nil || !strings.Contains(err.Error(), "property a: property id: a schema of the types [string integer]: give it one type") {
		t.Errorf("two types: %v", err)
	}
}

// wantSchema fails the test unless the property prop of schema (schema
// itself if prop is empty) is the JSON want.
func wantSchema(t *testing.T, schema any, prop, want string) {
	t.Helper()
	b, err := json.Marshal(schema)
	if err != nil {
		t.Fatal(err)
	}
	var got any
	json.Unmarshal(b, &got)
	if prop != "" {
		props, _ := got.(map[string]any)["properties"].(map[string]any)
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
