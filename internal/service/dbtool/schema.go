package dbtool

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// Struct tags AddTool reads on the fields of a tool's argument type, besides
// json and jsonschema (the description): the bounds of a number, as in
// `json:"limit,omitempty" minimum:"1" maximum:"100"`. They go into the
// input schema, and the argument checker refuses a value outside them.
const (
	tagMinimum = "minimum"
	tagMaximum = "maximum"
)

// applyBounds sets the minimum and maximum of the properties of s, the
// schema inferred for the struct type t, from the tags of t's fields.
func applyBounds(s *jsonschema.Schema, t reflect.Type) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil
	}
	for i := range t.NumField() {
		f := t.Field(i)
		lo, hasLo := f.Tag.Lookup(tagMinimum)
		hi, hasHi := f.Tag.Lookup(tagMaximum)
		if !hasLo && !hasHi {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" {
			name = f.Name
		}
		p := s.Properties[name]
		if types, _ := schemaTypes(p); p == nil || len(types) != 1 || (types[0] != "integer" && types[0] != "number") {
			return fmt.Errorf("field %s: minimum and maximum bound a number, and %s is not one", f.Name, name)
		}
		for _, b := range []struct {
			tag  string
			text string
			ok   bool
			dst  **float64
		}{{tagMinimum, lo, hasLo, &p.Minimum}, {tagMaximum, hi, hasHi, &p.Maximum}} {
			if !b.ok {
				continue
			}
			v, err := strconv.ParseFloat(b.text, 64)
			if err != nil {
				return fmt.Errorf("field %s: tag %s:%q is not a number", f.Name, b.tag, b.text)
			}
			*b.dst = &v
		}
		if p.Minimum != nil && p.Maximum != nil && *p.Minimum > *p.Maximum {
			return fmt.Errorf("field %s: minimum %v is above maximum %v", f.Name, *p.Minimum, *p.Maximum)
		}
	}
	return nil
}

// portable returns s as the function-calling adapters of the common model
// APIs take it (servicetest.SchemaProblems has their rules and where each
// comes from), changing what jsonschema.For infers from Go types so:
//
//   - a pointer or slice, which may be null, has the one type of its value
//     (the type list ["null", "string"] becomes "string"): an optional
//     argument is one left out of "required", and the argument checker,
//     built from the schema before this change, still takes null for it;
//   - an object schema always has "properties", empty when there are none;
//   - "additionalProperties" is dropped: Gemini refuses the member, and the
//     argument checker refuses an unknown argument at any depth anyway.
//
// s is not modified; what the copy does not change it shares with s.
func portable(s *jsonschema.Schema) (*jsonschema.Schema, error) {
	if s == nil {
		return nil, nil
	}
	c := *s
	if s.Types != nil {
		types, _ := schemaTypes(s)
		if len(types) != 1 {
			return nil, fmt.Errorf("a schema of the types %v: give it one type (and null at most)", s.Types)
		}
		c.Type, c.Types = types[0], nil
	}
	c.AdditionalProperties = nil
	if c.Type == "object" && c.Properties == nil {
		c.Properties = map[string]*jsonschema.Schema{}
	}
	if s.Properties != nil {
		c.Properties = make(map[string]*jsonschema.Schema, len(s.Properties))
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			p, err := portable(s.Properties[name])
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", name, err)
			}
			c.Properties[name] = p
		}
	}
	var err error
	if c.Items, err = portable(s.Items); err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	return &c, nil
}

// Portable returns s in the form the model APIs' function-calling adapters
// take (see portable); the service engine publishes a definition's schemas
// in it and checks arguments against s itself, so an optional argument
// whose type includes null takes null as if it were left out.
func Portable(s *jsonschema.Schema) (*jsonschema.Schema, error) { return portable(s) }
