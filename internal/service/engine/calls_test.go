package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/world"
)

// greeter is a definition whose tools take arguments of every kind the
// argument check treats apart (required, bounded, nullable, nested, none
// at all) and answer with nulls where the output schema wants none.
const greeter = `
wildawm_service: 1
name: greeter
title: Greeter
instructions: Greets for {{self}}.
health_tool: nils
tables:
  - name: greetings
    columns: [id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE]
    key: [name]
tools:
  - name: greet
    description: Greets someone.
    annotations: {readOnlyHint: true}
    input:
      type: object
      additionalProperties: false
      properties:
        name: {type: string, description: who to greet}
        count: {type: integer, description: "how many times, 1 to 10; omit for 1", minimum: 1, maximum: 10}
        loud: {type: boolean}
        title: {type: [string, "null"], description: a title; omit for none}
        tags: {type: [array, "null"], items: {type: string}}
        fields: {type: object, properties: {note: {type: [string, "null"]}}}
      required: [name]
    output:
      type: object
      properties: {text: {type: string}, unset: {type: array, items: {type: string}}}
      required: [text, unset]
    steps:
      - hook: greet
  - name: nils
    description: Answers with nulls at every depth.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {}}
    output:
      type: object
      required: [list, inner, also]
      properties:
        list: {type: array, items: {type: object, required: [tags], properties: {tags: {type: array, items: {type: string}}}}}
        maybe: {type: array, items: {type: string}}
        inner: {type: object, required: [tags], properties: {tags: {type: array, items: {type: string}}, note: {type: string}}}
        also: {type: array, items: {type: string}}
        note: {type: string}
        done: {type: boolean}
    steps:
      - result: >-
          SELECT json_object('list', json_array(json_object('tags', NULL), json_object('tags', json_array('a'))),
            'maybe', NULL, 'inner', json_object('tags', NULL, 'note', NULL), 'also', NULL, 'note', NULL, 'done', 1)
test:
  self: Alex
  now: "2026-03-01T09:00:00Z"
  sql: []
  calls:
    - {tool: nils}
    - {tool: greet, args: {name: bo, count: 2, title: null, fields: {note: null}}}
`

// openGreeter serves greeter over a test world, logging to log; calls
// counts the runs of greet's hook.
func openGreeter(t *testing.T, log *slog.Logger) (cs *mcp.ClientSession, calls *atomic.Int32) {
	t.Helper()
	calls = new(atomic.Int32)
	c := compileGreeter(t, calls)
	svc, err := engine.New(c, engine.Options{WorldDir: servicetest.NewWorld(t, c.Def), Clock: world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)), Self: "Alex", Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	return servicetest.ConnectMemory(t, svc), calls
}

// compileGreeter compiles greeter with its hook, which counts its runs in
// calls, answers a ToolError for the name "bad" and an internal error for
// "crash", and lists the optional arguments it got as null or not at all.
func compileGreeter(t *testing.T, calls *atomic.Int32) *engine.Compiled {
	t.Helper()
	d, err := engine.Parse([]byte(greeter))
	if err != nil {
		t.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{Steps: map[string]engine.StepFunc{"greet": func(c *engine.Call) error {
		calls.Add(1)
		name, _ := c.Params["name"].(string)
		switch name {
		case "bad":
			return c.BadCall("name %q is bad; pick another", name)
		case "crash":
			return errors.New("disk on fire at /secret/path")
		}
		n, _ := c.Params["count"].(int64)
		unset := []string{}
		for _, k := range []string{"count", "loud", "title", "tags", "fields"} {
			if c.Params[k] == nil {
				unset = append(unset, k)
			}
		}
		var err error
		c.Result, err = json.Marshal(map[string]any{"text": strings.Repeat("hi "+name, int(max(n, 1))), "unset": unset})
		return err
	}}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestGreeterPassesTheSuite(t *testing.T) {
	servicetest.Suite(t, compileGreeter(t, new(atomic.Int32)), servicetest.SuiteOptions{})
}

// A tool's arguments are checked against its input schema before its
// steps run: a bad one is a tool error that names it and what the tool
// takes. A ToolError from a step keeps its message; any other failure is
// logged and answered without its detail.
func TestToolCallsCheckArguments(t *testing.T) {
	var logs strings.Builder
	cs, calls := openGreeter(t, slog.New(slog.NewTextHandler(&logs, nil)))

	tools, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var greet *mcp.Tool
	for _, tool := range tools.Tools {
		if tool.Name == "greet" {
			greet = tool
		}
	}
	if greet == nil {
		t.Fatalf("tools/list has no greet: %v", tools.Tools)
	}
	schema, _ := json.Marshal(greet.InputSchema)
	for _, want := range []string{`"required":["name"]`, `"description":"who to greet"`, `"minimum":1`, `"title":{"description":"a title; omit for none","type":"string"}`} {
		if !strings.Contains(string(schema), want) {
			t.Errorf("input schema %s lacks %s", schema, want)
		}
	}
	// Gemini refuses the member; the check refuses unknown arguments.
	if strings.Contains(string(schema), "additionalProperties") {
		t.Errorf("input schema %s has additionalProperties", schema)
	}

	if got := servicetest.ResultText(mustCall(t, cs, "greet", map[string]any{"name": "bo", "count": 2.0})); got != `{"text":"hi bohi bo","unset":["loud","title","tags","fields"]}` {
		t.Errorf("greet = %s", got)
	}
	before := calls.Load()
	for _, c := range []struct {
		args any
		want string
	}{
		{map[string]any{}, `argument "name" of greet is required: who to greet`},
		{nil, `argument "name" of greet is required: who to greet`},
		{map[string]any{"name": 7}, `argument "name" of greet must be a string, not number`},
		{map[string]any{"name": "x", "count": "two"}, `argument "count" of greet must be an integer, not string`},
		{map[string]any{"name": "x", "count": 1.5}, `argument "count" of greet must be an integer, not number`},
		{map[string]any{"name": "x", "count": 0}, `argument "count" of greet must be between 1 and 10, not 0: how many times, 1 to 10; omit for 1`},
		{map[string]any{"name": "x", "loud": "yes"}, `argument "loud" of greet must be a boolean, not string`},
		{map[string]any{"name": nil}, `argument "name" of greet must be a string, not null`},
		{map[string]any{"name": "x", "tags": []any{"a", 3}}, `argument "tags" of greet must be an array whose items are a string (item 1 is not)`},
		{map[string]any{"name": "x", "fields": map[string]any{"note": 3}}, `argument "fields.note" of greet must be a string, not an integer`},
		{map[string]any{"name": "x", "extra": 1}, `greet has no argument "extra"; it takes the arguments count, fields, loud, name, tags, title`},
		{[]any{1}, `greet takes a JSON object of named arguments (the arguments count, fields, loud, name, tags, title); got array`},
		{"name", `greet takes a JSON object of named arguments (the arguments count, fields, loud, name, tags, title); got string`},
	} {
		if got := servicetest.CallError(t, cs, "greet", c.args); got != c.want {
			t.Errorf("greet(%v):\n got %q\nwant %q", c.args, got, c.want)
		}
	}
	if n := calls.Load() - before; n != 0 {
		t.Errorf("the hook ran %d times for bad arguments", n)
	}

	if got := servicetest.CallError(t, cs, "greet", map[string]any{"name": "bad"}); got != `name "bad" is bad; pick another` {
		t.Errorf("tool error: %q", got)
	}
	got := servicetest.CallError(t, cs, "greet", map[string]any{"name": "crash"})
	if want := "greet failed: the greeter service had an internal error and changed nothing; try again later"; got != want {
		t.Errorf("internal error: %q, want %q", got, want)
	}
	if !strings.Contains(logs.String(), "/secret/path") {
		t.Errorf("the internal failure was not logged: %s", logs.String())
	}
}

// An optional argument whose type includes null takes null, at the top
// level or deeper, as if it were left out.
func TestOptionalArgumentsTakeNull(t *testing.T) {
	cs, _ := openGreeter(t, nil)
	got := servicetest.Call[map[string]any](t, cs, "greet", map[string]any{"name": "bo", "title": nil, "tags": nil, "fields": map[string]any{"note": nil}})
	if b, _ := json.Marshal(got["unset"]); string(b) != `["count","loud","title","tags"]` {
		t.Errorf("unset = %s, want title and tags among them", b)
	}
}

// A result never holds null where its output schema wants a value: at any
// depth, a required array that SQL gave as null is written empty and an
// optional property that is null is left out; a 0 or 1 for a boolean is
// false or true. servicetest.Call checks the result against the output
// schema, as a client such as the TypeScript SDK's does.
func TestResultsNeverHoldNull(t *testing.T) {
	cs, _ := openGreeter(t, nil)
	want := `{"list":[{"tags":[]},{"tags":["a"]}],"inner":{"tags":[]},"also":[],"done":true}`
	if got := servicetest.ResultText(mustCall(t, cs, "nils", nil)); got != want {
		t.Errorf("nils:\n got %s\nwant %s", got, want)
	}
	servicetest.Call[map[string]any](t, cs, "nils", nil)
}
