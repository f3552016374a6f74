package generator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// ParamError reports a parameter that a generator cannot use. Field is the
// path of the offending value in the params object, such as "date",
// "rows[3]" or "sections[0].table.rows[2][1]"; it is empty when the problem
// concerns the params object as a whole.
type ParamError struct {
	Generator string
	Field     string
	Msg       string // what is wrong and what is expected
	Err       error  // optional cause, such as ErrLimit
}

func (e *ParamError) Error() string {
	if e.Field == "" {
		return e.Generator + ": " + e.Msg
	}
	return fmt.Sprintf("%s: field %q: %s", e.Generator, e.Field, e.Msg)
}

func (e *ParamError) Unwrap() error { return e.Err }

// paramErr builds a *ParamError; msg is formatted with args.
func paramErr(gen, field, format string, args ...any) *ParamError {
	return &ParamError{Generator: gen, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// limitErr builds a *ParamError that wraps ErrLimit.
func limitErr(gen, field, format string, args ...any) *ParamError {
	e := paramErr(gen, field, format, args...)
	e.Err = ErrLimit
	return e
}

// decodeParams decodes the JSON object params into dst, a pointer to a
// struct whose fields carry exact `json:"name"` tags. Before decoding, the
// token stream is checked against dst's type so that unknown or duplicate
// keys and values of the wrong type are reported with their full path
// (encoding/json would only name the key, and would match keys
// case-insensitively). Empty params mean {}.
func decodeParams(gen string, params []byte, dst any) error {
	if len(params) > MaxParamsBytes {
		return limitErr(gen, "", "params are %d bytes, more than the limit of %d", len(params), MaxParamsBytes)
	}
	if len(bytes.TrimSpace(params)) == 0 {
		params = []byte("{}")
	}
	c := checker{gen: gen, dec: json.NewDecoder(bytes.NewReader(params))}
	c.dec.UseNumber()
	if err := c.value(reflect.TypeOf(dst).Elem(), ""); err != nil {
		return err
	}
	if _, err := c.dec.Token(); err != io.EOF {
		return paramErr(gen, "", "unexpected data after the params object; params must be a single JSON object")
	}
	d := json.NewDecoder(bytes.NewReader(params))
	d.DisallowUnknownFields()
	if err := d.Decode(dst); err != nil {
		// Unreachable when the checker accepted params; kept as a guard.
		return paramErr(gen, "", "invalid params: %v", err)
	}
	return nil
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// checker walks a JSON token stream against a Go type.
type checker struct {
	gen string
	dec *json.Decoder
}

func (c *checker) token(path string) (json.Token, error) {
	tok, err := c.dec.Token()
	if err == nil {
		return tok, nil
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil, paramErr(c.gen, path, "params are not valid JSON: unexpected end of input")
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return nil, paramErr(c.gen, path, "params are not valid JSON at byte offset %d: %s", se.Offset, trimJSONPrefix(se.Error()))
	}
	return nil, paramErr(c.gen, path, "params are not valid JSON: %s", trimJSONPrefix(err.Error()))
}

func trimJSONPrefix(s string) string { return strings.TrimPrefix(s, "json: ") }

// value reads one value and checks it against t.
func (c *checker) value(t reflect.Type, path string) error {
	tok, err := c.token(path)
	if err != nil {
		return err
	}
	return c.valueFrom(tok, t, path)
}

func (c *checker) valueFrom(tok json.Token, t reflect.Type, path string) error {
	if t == rawMessageType {
		return c.skip(tok, path)
	}
	if t.Kind() == reflect.Pointer {
		if tok == nil {
			return nil
		}
		return c.valueFrom(tok, t.Elem(), path)
	}
	mismatch := func(want string) error {
		return paramErr(c.gen, path, "expected %s, got %s", want, describe(tok))
	}
	field := path
	if field == "" {
		field = "params"
	}
	switch t.Kind() {
	case reflect.Struct:
		if tok != json.Delim('{') {
			if path == "" {
				return paramErr(c.gen, "", "params must be a JSON object, got %s", describe(tok))
			}
			return mismatch("an object")
		}
		seen := make(map[string]bool)
		for c.dec.More() {
			ktok, err := c.token(path)
			if err != nil {
				return err
			}
			key, _ := ktok.(string)
			sub := joinPath(path, key)
			f, ok := fieldByTag(t, key)
			if !ok {
				return paramErr(c.gen, sub, "unknown field; %s accepts %s", field, strings.Join(quotedTags(t), ", "))
			}
			if seen[key] {
				return paramErr(c.gen, sub, "appears more than once")
			}
			seen[key] = true
			if err := c.value(f.Type, sub); err != nil {
				return err
			}
		}
		_, err := c.token(path) // '}'
		return err
	case reflect.Slice:
		if tok == nil {
			return nil
		}
		if tok != json.Delim('[') {
			return mismatch("an array")
		}
		for i := 0; c.dec.More(); i++ {
			if err := c.value(t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		_, err := c.token(path) // ']'
		return err
	case reflect.String:
		if _, ok := tok.(string); !ok {
			return mismatch("a string")
		}
	case reflect.Bool:
		if _, ok := tok.(bool); !ok {
			return mismatch("true or false")
		}
	case reflect.Int:
		n, ok := tok.(json.Number)
		if !ok {
			return mismatch("an integer")
		}
		if _, err := strconv.ParseInt(string(n), 10, 32); err != nil {
			return paramErr(c.gen, path, "expected an integer between %d and %d, got %s", minInt32, maxInt32, n)
		}
	case reflect.Float64:
		if _, ok := tok.(json.Number); !ok {
			return mismatch("a number")
		}
	default:
		return paramErr(c.gen, path, "internal error: unsupported parameter type %s", t)
	}
	return nil
}

const (
	minInt32 = -1 << 31
	maxInt32 = 1<<31 - 1
)

// skip consumes the rest of a value whose first token is tok.
func (c *checker) skip(tok json.Token, path string) error {
	if tok != json.Delim('{') && tok != json.Delim('[') {
		return nil
	}
	for depth := 1; depth > 0; {
		t, err := c.token(path)
		if err != nil {
			return err
		}
		switch t {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
		}
	}
	return nil
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func tagName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	return name
}

func fieldByTag(t reflect.Type, key string) (reflect.StructField, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.IsExported() && tagName(f) == key && key != "" && key != "-" {
			return f, true
		}
	}
	return reflect.StructField{}, false
}

func quotedTags(t reflect.Type) []string {
	var out []string
	for i := range t.NumField() {
		if n := tagName(t.Field(i)); n != "" && n != "-" {
			out = append(out, strconv.Quote(n))
		}
	}
	return out
}

// describe names a JSON token for an error message.
func describe(tok json.Token) string {
	switch v := tok.(type) {
	case nil:
		return "null"
	case string:
		return "the string " + quoteShort(v)
	case json.Number:
		return "the number " + string(v)
	case bool:
		return strconv.FormatBool(v)
	case json.Delim:
		if v == '{' {
			return "an object"
		}
		return "an array"
	}
	return fmt.Sprintf("%v", tok)
}

// quoteShort quotes s for an error message, shortening it if long.
func quoteShort(s string) string {
	const max = 60
	if len(s) > max {
		r := []rune(s)
		if len(r) > max {
			return strconv.Quote(string(r[:max])) + "..."
		}
	}
	return strconv.Quote(s)
}

// table is the shared shape of a table parameter: a header and rows of
// cells, each cell a JSON string, number, bool or null.
type table struct {
	Header []string            `json:"header"`
	Rows   [][]json.RawMessage `json:"rows"`
}

// cells checks t and returns its rows as text. path names the table in
// errors ("table", "sections[0].table", or "" for a top-level table).
func (t *table) cells(gen, path string, maxRows, maxCols int) ([][]string, error) {
	hdr := joinPath(path, "header")
	if len(t.Header) == 0 {
		return nil, paramErr(gen, hdr, "is required: a non-empty array of column names")
	}
	if len(t.Header) > maxCols {
		return nil, limitErr(gen, hdr, "has %d columns, more than the limit of %d", len(t.Header), maxCols)
	}
	rowsPath := joinPath(path, "rows")
	if len(t.Rows) > maxRows {
		return nil, limitErr(gen, rowsPath, "has %d rows, more than the limit of %d", len(t.Rows), maxRows)
	}
	out := make([][]string, len(t.Rows))
	for i, row := range t.Rows {
		rp := fmt.Sprintf("%s[%d]", rowsPath, i)
		if len(row) != len(t.Header) {
			return nil, paramErr(gen, rp, "has %d cells, want %d (the header length)", len(row), len(t.Header))
		}
		out[i] = make([]string, len(row))
		for j, raw := range row {
			s, err := cellText(raw)
			if err != nil {
				return nil, paramErr(gen, fmt.Sprintf("%s[%d]", rp, j), "%v", err)
			}
			out[i][j] = s
		}
	}
	return out, nil
}

// cellText renders a JSON scalar as cell text: strings as themselves,
// numbers as written in the params, booleans as true/false, null as "".
func cellText(raw json.RawMessage) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", errors.New("expected a string, number, bool or null, got nothing")
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return "", fmt.Errorf("invalid string: %v", err)
		}
		return s, nil
	case 'n':
		return "", nil
	case 't', 'f':
		return string(raw), nil
	case '{':
		return "", errors.New("expected a string, number, bool or null, got an object")
	case '[':
		return "", errors.New("expected a string, number, bool or null, got an array")
	}
	return string(raw), nil // a number, already validated as JSON
}

// requireInt returns *p, or an error when p is nil or *p is outside [lo, hi].
func requireInt(gen, field string, p *int, lo, hi int) (int, error) {
	if p == nil {
		return 0, paramErr(gen, field, "is required: an integer between %d and %d", lo, hi)
	}
	return checkInt(gen, field, *p, lo, hi)
}

func checkInt(gen, field string, v, lo, hi int) (int, error) {
	if v < lo || v > hi {
		return 0, paramErr(gen, field, "%d is out of range: expected an integer between %d and %d", v, lo, hi)
	}
	return v, nil
}
