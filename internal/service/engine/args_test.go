package engine_test

import (
	"testing"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

const pantry = `
wildawm_service: 1
name: pantry
title: Pantry
instructions: The pantry of {{self}}.
health_tool: count
tables:
  - name: items
    columns: [id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, qty INTEGER NOT NULL]
    key: [name]
tools:
  - name: count
    description: Counts the items.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - result: SELECT json_object('n', count(*)) FROM items
  - name: stock
    description: Stocks items.
    annotations: {readOnlyHint: false}
    input:
      type: object
      properties:
        where: {type: string, enum: [fridge, shelf]}
        items:
          type: array
          items:
            type: object
            properties:
              name: {type: string}
              qty: {type: integer, minimum: 1, maximum: 99}
              unit: {type: [string, "null"], enum: [g, ml, null]}
            required: [name, qty]
      required: [items]
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - exec: INSERT INTO items (name, qty) SELECT json_extract(value, '$.name'), json_extract(value, '$.qty') FROM json_each(:items)
      - result: SELECT json_object('n', :changes)
test:
  self: Alex
  now: "2026-03-01T09:00:00Z"
  sql: []
`

// TestNestedArguments: arguments below the top level are checked against
// their schema, and the error names the argument by its path.
func TestNestedArguments(t *testing.T) {
	d, err := engine.Parse([]byte(pantry))
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, servicetest.Open(t, c, servicetest.NewWorld(t, d)))
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"items": []any{map[string]any{"name": "rice", "qty": "two"}}}, `argument "items[0].qty" of stock must be an integer, not a string`},
		{map[string]any{"items": []any{map[string]any{"name": "rice", "qty": 1}, map[string]any{"qty": 2}}}, `argument "items[1].name" of stock is required`},
		{map[string]any{"items": []any{map[string]any{"name": "rice", "qty": 0}}}, `argument "items[0].qty" of stock must be between 1 and 99, not 0`},
		{map[string]any{"items": []any{map[string]any{"name": "rice", "qty": 1, "brand": "x"}}}, `argument "items[0]" of stock has no field "brand"; it takes name, qty, unit`},
		{map[string]any{"items": []any{map[string]any{"name": "rice", "qty": 1, "unit": "kg"}}}, `argument "items[0].unit" of stock must be one of "g", "ml", null, not "kg"`},
		{map[string]any{"items": []any{}, "where": "attic"}, `argument "where" of stock must be one of "fridge", "shelf", not "attic"`},
		{map[string]any{"items": []any{"rice"}}, `argument "items" of stock must be an array whose items are an object (item 0 is not)`},
	} {
		if got := servicetest.CallError(t, cs, "stock", tc.args); got != tc.want {
			t.Errorf("stock(%v) = %q\n want %q", tc.args, got, tc.want)
		}
	}
	res := servicetest.Call[map[string]any](t, cs, "stock", map[string]any{"where": "shelf", "items": []any{map[string]any{"name": "rice", "qty": 2.0, "unit": nil}}})
	if res["n"] != 1.0 {
		t.Errorf("stock = %v", res)
	}
}
