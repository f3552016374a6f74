package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
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
// Anything else passes as it is; the result must be a JSON object.
func Shape(raw []byte, schema map[string]any) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	v, err := decodeOrdered(dec)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %w (%.120s)", err, raw)
	}
	if _, ok := v.(*object); !ok {
		return nil, fmt.Errorf("not a JSON object: %.120s", raw)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("more than one JSON value: %.120s", raw)
	}
	v = shape(v, schema)
	var b bytes.Buffer
	b.Grow(len(raw))
	if err := encodeOrdered(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// object is a JSON object with its keys in order.
type object struct {
	keys []string
	vals []any
}

func decodeOrdered(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return nil, err
				}
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				o.keys, o.vals = append(o.keys, k.(string)), append(o.vals, v)
			}
			_, err := dec.Token()
			return o, err
		case '[':
			arr := []any{}
			for dec.More() {
				v, err := decodeOrdered(dec)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			_, err := dec.Token()
			return arr, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	}
	return tok, nil
}

func shape(v any, schema map[string]any) any {
	if schema == nil {
		return v
	}
	switch x := v.(type) {
	case *object:
		props, _ := schema["properties"].(map[string]any)
		required := map[string]bool{}
		if req, ok := schema["required"].([]any); ok {
			for _, r := range req {
				if s, ok := r.(string); ok {
					required[s] = true
				}
			}
		}
		out := &object{keys: x.keys[:0:0], vals: x.vals[:0:0]}
		for i, k := range x.keys {
			val := x.vals[i]
			ps, _ := props[k].(map[string]any)
			if val == nil {
				switch {
				case !required[k]:
					continue
				case typeOf(ps) == "array":
					val = []any{}
				}
			}
			out.keys, out.vals = append(out.keys, k), append(out.vals, shape(val, ps))
		}
		return out
	case []any:
		items, _ := schema["items"].(map[string]any)
		for i := range x {
			x[i] = shape(x[i], items)
		}
		return x
	case json.Number:
		if typeOf(schema) == "boolean" {
			f, err := x.Float64()
			return err == nil && f != 0
		}
	}
	return v
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

func encodeOrdered(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case *object:
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, k)
			b.WriteByte(':')
			if err := encodeOrdered(b, x.vals[i]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := encodeOrdered(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case nil:
		b.WriteString("null")
	default:
		return fmt.Errorf("unexpected %T", v)
	}
	return nil
}

// writeString writes s as a JSON string with <, > and & as they are (the
// JSON a model reads).
func writeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	enc.Encode(s)
	b.Truncate(b.Len() - 1) // Encode's newline
}
