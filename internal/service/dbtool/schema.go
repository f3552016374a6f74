package dbtool

import (
	"fmt"
	"maps"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// Portable returns s in the form the function-calling adapters of the
// common model APIs take (SchemaProblems has their rules and where each
// comes from); the service engine publishes a definition's schemas in it
// and checks arguments against s itself (Args and the engine's deeper
// checks), so:
//
//   - a schema of a type and null has the one type (the type list
//     ["string", "null"] becomes "string"): an optional argument is one
//     left out of "required", and it still takes null, as if it were left
//     out;
//   - an object schema always has "properties", empty when there are none;
//   - "additionalProperties" is dropped: Gemini refuses the member, and the
//     arguments are checked against s, which keeps it.
//
// s is not modified; what the copy does not change it shares with s.
func Portable(s *jsonschema.Schema) (*jsonschema.Schema, error) {
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
			p, err := Portable(s.Properties[name])
			if err != nil {
				return nil, fmt.Errorf("property %s: %w", name, err)
			}
			c.Properties[name] = p
		}
	}
	var err error
	if c.Items, err = Portable(s.Items); err != nil {
		return nil, fmt.Errorf("items: %w", err)
	}
	return &c, nil
}
