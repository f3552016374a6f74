package dbtool

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
)

// fieldsText writes the arguments Check returned as name=JSON, in name
// order.
func fieldsText(fields map[string]json.RawMessage) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		parts = append(parts, k+"="+string(fields[k]))
	}
	return strings.Join(parts, " ")
}

// Args refuses every argument its schema's top level does not allow, with
// a ToolError that names the argument and what the tool takes, and passes
// the rest.
func TestArgsChecksArguments(t *testing.T) {
	a := NewArgs("greet", schemaOf(t, greetInput))
	fields, err := a.Check(json.RawMessage(`{"name": "bo", "count": 2, "loud": true}`))
	if err != nil || fieldsText(fields) != `count=2 loud=true name="bo"` {
		t.Errorf("good call: %v %s", err, fieldsText(fields))
	}
	for _, c := range []struct{ args, want string }{
		{`{}`, `argument "name" of greet is required: who to greet`},
		{``, `argument "name" of greet is required: who to greet`},
		{`null`, `argument "name" of greet is required: who to greet`},
		{`{"name": 7}`, `argument "name" of greet must be a string, not number`},
		{`{"name": "x", "count": "two"}`, `argument "count" of greet must be an integer, not string`},
		{`{"name": "x", "count": 1.5}`, `argument "count" of greet must be an integer, not number`},
		{`{"name": "x", "loud": "yes"}`, `argument "loud" of greet must be a boolean, not string`},
		{`{"name": null}`, `argument "name" of greet must be a string, not null`},
		{`{"name": "x", "extra": 1}`, `greet has no argument "extra"; it takes the arguments count, loud, name, tags, title`},
		{`[1]`, `greet takes a JSON object of named arguments (the arguments count, loud, name, tags, title); got array`},
		{`"name"`, `greet takes a JSON object of named arguments (the arguments count, loud, name, tags, title); got string`},
	} {
		_, err := a.Check(json.RawMessage(c.args))
		var te *ToolError
		switch {
		case err == nil:
			t.Errorf("%s: accepted, want %q", c.args, c.want)
		case !errors.As(err, &te):
			t.Errorf("%s: %v is not a ToolError", c.args, err)
		case err.Error() != c.want:
			t.Errorf("%s:\n got %q\nwant %q", c.args, err, c.want)
		}
	}
	if _, err := NewArgs("ping", schemaOf(t, `{"type": "object"}`)).Check(json.RawMessage(`{"x": 1}`)); err == nil || err.Error() != `ping has no argument "x"; it takes no arguments` {
		t.Errorf("a tool without arguments: %v", err)
	}
}

// Args types the arguments as JSON Schema does: null where the type takes
// it (an optional argument given as null, as if it were left out), an
// integral number written otherwise as an integer (rewritten as one),
// each item of an array against the items' schema.
func TestArgumentsAsJSONSchemaTypesThem(t *testing.T) {
	a := NewArgs("edit", schemaOf(t, `{"type": "object", "properties": {
		"title": {"type": ["null", "string"]},
		"tags": {"type": ["null", "array"], "items": {"type": "string"}},
		"limit": {"type": "integer"}}}`))
	for _, ok := range []struct{ args, want string }{
		{`{"title": null}`, `title=null`},
		{`{"tags": null}`, `tags=null`},
		{`{"title": "x"}`, `title="x"`},
		{`{"limit": 7.0}`, `limit=7`},
		{`{"limit": 1e2}`, `limit=100`},
		{`{"limit": -3}`, `limit=-3`},
		{`{"tags": ["a", "b"]}`, `tags=["a", "b"]`},
	} {
		fields, err := a.Check(json.RawMessage(ok.args))
		if err != nil || fieldsText(fields) != ok.want {
			t.Errorf("%s: %v %s, want %s", ok.args, err, fieldsText(fields), ok.want)
		}
	}
	for _, bad := range []struct{ args, want string }{
		{`{"tags": ["a", null]}`, `argument "tags" of edit must be an array whose items are a string (item 1 is not)`},
		{`{"tags": ["a", 3]}`, `argument "tags" of edit must be an array whose items are a string (item 1 is not)`},
		{`{"tags": "a"}`, `argument "tags" of edit must be an array, not string`},
		{`{"limit": 7.5}`, `argument "limit" of edit must be an integer, not number`},
		{`{"limit": null}`, `argument "limit" of edit must be an integer, not null`},
		{`{"limit": 1e400}`, `argument "limit" of edit must be an integer, not number`},
	} {
		if _, err := a.Check(json.RawMessage(bad.args)); err == nil || err.Error() != bad.want {
			t.Errorf("%s:\n got %v\nwant %s", bad.args, err, bad.want)
		}
	}
}

// A bound in the schema (minimum, maximum) is checked: a value outside it,
// 0 included, is a tool error that names the argument, the range and what
// the argument is for.
func TestBoundedArguments(t *testing.T) {
	a := NewArgs("page", schemaOf(t, `{"type": "object", "properties": {
		"limit": {"type": "integer", "description": "how many to return, 1 to 100; omit for 20", "minimum": 1, "maximum": 100},
		"min": {"type": "integer", "minimum": -5},
		"max": {"type": "number", "maximum": 2.5},
		"query": {"type": "string"}}}`))
	for _, ok := range []string{`{}`, `{"limit": 1}`, `{"limit": 100}`, `{"limit": 1e2}`, `{"min": -5}`, `{"min": 1099511627776}`, `{"max": 2.5}`, `{"max": -1e9}`, `{"query": "-9"}`} {
		if _, err := a.Check(json.RawMessage(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, c := range []struct{ args, want string }{
		{`{"limit": 0}`, `argument "limit" of page must be between 1 and 100, not 0: how many to return, 1 to 100; omit for 20`},
		{`{"limit": 101}`, `argument "limit" of page must be between 1 and 100, not 101: how many to return, 1 to 100; omit for 20`},
		{`{"limit": -1}`, `argument "limit" of page must be between 1 and 100, not -1: how many to return, 1 to 100; omit for 20`},
		{`{"limit": 1e3}`, `argument "limit" of page must be between 1 and 100, not 1000: how many to return, 1 to 100; omit for 20`},
		{`{"min": -6}`, `argument "min" of page must be at least -5, not -6`},
		{`{"max": 2.51}`, `argument "max" of page must be at most 2.5, not 2.51`},
	} {
		if _, err := a.Check(json.RawMessage(c.args)); err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.args, err, c.want)
		}
	}
}

// The same bad call always gets the same message: the first bad argument
// by name, whatever order a map gives.
func TestArgumentErrorsAreDeterministic(t *testing.T) {
	a := NewArgs("greet", schemaOf(t, greetInput))
	args := json.RawMessage(`{"zeta": 1, "alpha": 2, "name": 3, "count": "x"}`)
	var first string
	for i := range 50 {
		_, err := a.Check(args)
		if err == nil {
			t.Fatal("bad arguments accepted")
		}
		if i == 0 {
			first = err.Error()
		} else if err.Error() != first {
			t.Fatalf("call %d: %q, first %q", i, err, first)
		}
	}
	if want := fmt.Sprintf("greet has no argument %q", "alpha"); !strings.HasPrefix(first, want) {
		t.Errorf("the first bad argument by name is alpha: %q", first)
	}
}
