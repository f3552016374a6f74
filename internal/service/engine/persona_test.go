package engine_test

import (
	"context"
	"testing"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// TestToolDescriptionNamesPersona checks that {{self}} and {{self_address}}
// in a tool's description become the persona's, per instance, while the
// compiled definition keeps the placeholders for the next one.
func TestToolDescriptionNamesPersona(t *testing.T) {
	d, err := engine.Parse([]byte(`
wildawm_service: 1
name: persona
title: Persona
instructions: The outbox of {{self}}.
health_tool: send
tables:
  - name: sent
    columns: [id INTEGER PRIMARY KEY, body TEXT NOT NULL UNIQUE]
    key: [body]
tools:
  - name: send
    description: Sends a message from {{self}} <{{self_address}}>.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output: {type: object, properties: {n: {type: integer}}, required: [n]}
    steps:
      - result: SELECT json_object('n', count(*)) FROM sent
test:
  self: Alex
  self_address: alex@example.com
  now: "2026-03-01T09:00:00Z"
  sql: []
`))
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	for range 2 {
		cs := servicetest.ConnectMemory(t, servicetest.Open(t, c, servicetest.NewWorld(t, d)))
		res, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := res.Tools[0].Description, "Sends a message from Alex <alex@example.com>."; got != want {
			t.Errorf("description = %q, want %q", got, want)
		}
	}
	if got := d.Tools[0].Description; got != "Sends a message from {{self}} <{{self_address}}>." {
		t.Errorf("the definition's description became %q", got)
	}
}
