package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
)

// Shape fits a result (JSON from SQL) to its output schema, keeping the
// order of object keys as the SQL wrote them:
//   - a property the schema does not require is left out when it is null
//     (write CASE WHEN x THEN ... END, or nullif(x, ”), to leave a false or
//     empty value out, as Go's omitempty does);
//   - a property of type boolean that SQL gives as 0 or 1 becomes false or
//     true (SQLite has no booleans);
//   - a required array that is null becomes [] (a result never holds null
//     where its schema wants an array).
//
// Anything else passes as it is, byte for byte (strings keep SQLite's
// escaping); the result must be one JSON object.
func Shape(raw []byte, schema map[string]any) (json.RawMessage, error) {
	if !json.Valid(raw) {
		return nil, fmt.Errorf("not JSON: %.120s", raw)
	}
	return shape(raw, compileOutput(schema))
}

// outSchema is an output schema as shape reads it, compiled once per tool
// (a result's keys are looked up in a short list rather than in the
// schema's maps: on a 40-message read_thread that was a tenth of the
// server's time).
type outSchema struct {
	typ   string // typeOf the schema
	props []outProp
	items *outSchema
}

type outProp struct {
	name     string
	required bool
	schema   *outSchema // nil: no schema (a required name with no property)
}

// compileOutput compiles a JSON Schema for shape; nil for none.
func compileOutput(m map[string]any) *outSchema {
	if m == nil {
		return nil
	}
	o := &outSchema{typ: typeOf(m)}
	if items, ok := m["items"].(map[string]any); ok {
		o.items = compileOutput(items)
	}
	props, _ := m["properties"].(map[string]any)
	required, _ := m["required"].([]any)
	for _, name := range slices.Sorted(maps.Keys(props)) {
		ps, _ := props[name].(map[string]any)
		o.props = append(o.props, outProp{name: name, required: contains(required, name), schema: compileOutput(ps)})
	}
	for _, r := range required {
		if name, ok := r.(string); ok && props[name] == nil {
			o.props = append(o.props, outProp{name: name, required: true})
		}
	}
	return o
}

// prop returns the property name of an object schema o (zero if none).
func (o *outSchema) prop(name []byte) outProp {
	if o != nil {
		for _, p := range o.props {
			if p.name == string(name) {
				return p
			}
		}
	}
	return outProp{}
}

func (o *outSchema) kind() string {
	if o == nil {
		return ""
	}
	return o.typ
}

// shape is Shape on raw that should be JSON (SQLite's or the engine's
// own): it is not validated first, and text that is not JSON ends in an
// error, never a panic.
func shape(raw []byte, schema *outSchema) (_ json.RawMessage, err error) {
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("not JSON: %.120s", raw)
		}
	}()
	s := shaper{in: raw, out: make([]byte, 0, len(raw))}
	s.space()
	if s.pos >= len(raw) || raw[s.pos] != '{' {
		return nil, fmt.Errorf("not a JSON object: %.120s", raw)
	}
	if err := s.value(schema); err != nil {
		return nil, err
	}
	return s.out, nil
}

// shaper copies valid JSON from in to out, applying the schema's rules.
type shaper struct {
	in  []byte
	pos int
	out []byte
}

func (s *shaper) space() {
	for s.pos < len(s.in) {
		switch s.in[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// value copies the value at pos.
func (s *shaper) value(schema *outSchema) error {
	s.space()
	if s.pos >= len(s.in) {
		return errors.New("unexpected end of JSON")
	}
	switch c := s.in[s.pos]; {
	case c == '{':
		return s.object(schema)
	case c == '[':
		return s.array(schema)
	case c == '"':
		end := s.stringEnd()
		s.out = append(s.out, s.in[s.pos:end]...)
		s.pos = end
	default: // a number, true, false or null
		end := s.pos
	scan:
		for end < len(s.in) {
			switch s.in[end] {
			case ',', ']', '}', ' ', '\t', '\n', '\r':
				break scan
			}
			end++
		}
		lit := s.in[s.pos:end]
		s.pos = end
		if schema.kind() == "boolean" && c != 't' && c != 'f' && c != 'n' {
			var f float64
			if err := json.Unmarshal(lit, &f); err == nil {
				if f != 0 {
					s.out = append(s.out, "true"...)
				} else {
					s.out = append(s.out, "false"...)
				}
				return nil
			}
		}
		s.out = append(s.out, lit...)
	}
	return nil
}

// stringEnd returns the index after the string starting at pos: the
// first quote not escaped (an even run of backslashes before it), found
// with IndexByte rather than byte by byte (bodies are most of a result).
func (s *shaper) stringEnd() int {
	i := s.pos + 1
	for {
		j := bytes.IndexByte(s.in[i:], '"')
		if j < 0 {
			return len(s.in)
		}
		k := i + j
		n := 0
		for m := k - 1; m >= i && s.in[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return k + 1
		}
		i = k + 1
	}
}

// isNull reports whether the value at pos is null.
func (s *shaper) isNull() bool {
	s.space()
	return bytes.HasPrefix(s.in[s.pos:], []byte("null"))
}

func (s *shaper) object(schema *outSchema) error {
	s.pos++ // {
	s.out = append(s.out, '{')
	first := true
	for {
		s.space()
		if s.in[s.pos] == '}' {
			s.pos++
			s.out = append(s.out, '}')
			return nil
		}
		if s.in[s.pos] == ',' {
			s.pos++
			s.space()
		}
		if s.in[s.pos] != '"' {
			return errors.New("an object key is not a string")
		}
		end := s.stringEnd()
		key := s.in[s.pos:end]
		s.pos = end
		s.space()
		if s.in[s.pos] != ':' {
			return errors.New("no colon after an object key")
		}
		s.pos++
		name := key[1 : len(key)-1] // the common case: no escapes
		if bytes.IndexByte(name, '\\') >= 0 {
			var n string
			if err := json.Unmarshal(key, &n); err != nil {
				return err
			}
			name = []byte(n)
		}
		prop := schema.prop(name)
		ps := prop.schema
		if s.isNull() {
			switch {
			case !prop.required:
				s.pos += len("null")
				continue
			case ps.kind() == "array":
				s.pos += len("null")
				s.out = appendKey(s.out, key, first)
				s.out = append(s.out, "[]"...)
				first = false
				continue
			}
		}
		s.out = appendKey(s.out, key, first)
		first = false
		if err := s.value(ps); err != nil {
			return err
		}
		if err := s.next('}'); err != nil {
			return err
		}
	}
}

// next checks that a value is followed by a comma or by end.
func (s *shaper) next(end byte) error {
	s.space()
	if c := s.in[s.pos]; c != ',' && c != end {
		return fmt.Errorf("%q after a value", c)
	}
	return nil
}

func appendKey(out, key []byte, first bool) []byte {
	if !first {
		out = append(out, ',')
	}
	out = append(out, key...)
	return append(out, ':')
}

func contains(list []any, name string) bool {
	for _, x := range list {
		if s, ok := x.(string); ok && s == name {
			return true
		}
	}
	return false
}

func (s *shaper) array(schema *outSchema) error {
	var items *outSchema
	if schema != nil {
		items = schema.items
	}
	s.pos++ // [
	s.out = append(s.out, '[')
	first := true
	for {
		s.space()
		switch s.in[s.pos] {
		case ']':
			s.pos++
			s.out = append(s.out, ']')
			return nil
		case ',':
			s.pos++
		}
		if !first {
			s.out = append(s.out, ',')
		}
		first = false
		if err := s.value(items); err != nil {
			return err
		}
		if err := s.next(']'); err != nil {
			return err
		}
	}
}

// typeOf returns the non-null type a schema names, "" if none or several.
func typeOf(s map[string]any) string {
	switch t := s["type"].(type) {
	case string:
		return t
	case []any:
		one := ""
		for _, x := range t {
			if x == "null" {
				continue
			}
			if one != "" {
				return ""
			}
			one, _ = x.(string)
		}
		return one
	}
	return ""
}
