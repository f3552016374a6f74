package delta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/world"
)

// Version is the delta format version this code reads and writes.
const Version = 1

// Limits against hostile input.
const (
	MaxDeltaBytes = 64 << 20
	MaxOps        = 200_000
	MaxSQLBytes   = 64 << 10
)

// Delta is one day's transformation of a world.
type Delta struct {
	Version int    `json:"version"`
	Persona string `json:"persona"`
	Day     int    `json:"day"`
	// Clock is the frozen instant of the end of the day (RFC 3339, UTC); it
	// becomes the manifest's clock.
	Clock string `json:"clock"`
	// Catalog, when set, changes the catalog the world references.
	Catalog world.ID `json:"catalog,omitzero"`
	// Services are service definitions the world serves from this day on
	// (added to the parent's, sorted by name); the day's ops create their
	// databases.
	Services []world.ServiceRef `json:"services,omitempty"`
	Ops      []Op               `json:"ops"`
	Produces world.Produces     `json:"produces"`
}

// Operation names.
const (
	OpDBCreate      = "db.create"
	OpDBInsert      = "db.insert"
	OpDBUpdate      = "db.update"
	OpDBDelete      = "db.delete"
	OpFileWrite     = "file.write"
	OpFileAppend    = "file.append"
	OpFileDelete    = "file.delete"
	OpFileMove      = "file.move"
	OpAccountCreate = "account.create"
)

// Op is one operation. Which fields apply depends on Op; see docs/delta.md.
type Op struct {
	Op string `json:"op"`

	DB     string           `json:"db,omitempty"`
	Table  string           `json:"table,omitempty"`
	SQL    []string         `json:"sql,omitempty"`
	Key    map[string]Value `json:"key,omitempty"`
	Values map[string]Value `json:"values,omitempty"`
	Set    map[string]Value `json:"set,omitempty"`

	Path          string        `json:"path,omitempty"`
	From          string        `json:"from,omitempty"`
	To            string        `json:"to,omitempty"`
	Content       *string       `json:"content,omitempty"`
	ContentBase64 *string       `json:"content_base64,omitempty"`
	Generator     *GeneratorRef `json:"generator,omitempty"`
	Mode          string        `json:"mode,omitempty"`

	Site     string `json:"site,omitempty"`
	Username string `json:"username,omitempty"`
	Password string `json:"password,omitempty"`
	Salt     string `json:"salt,omitempty"`
	Display  string `json:"display,omitempty"`
}

// GeneratorRef names a deterministic content generator and its parameters.
type GeneratorRef struct {
	Name   string          `json:"name"`
	Params json.RawMessage `json:"params"`
}

// fieldsOf lists the fields each operation takes; any other set field is a
// lint error.
var fieldsOf = map[string][]string{
	OpDBCreate:      {"db", "sql"},
	OpDBInsert:      {"db", "table", "key", "values"},
	OpDBUpdate:      {"db", "table", "key", "set"},
	OpDBDelete:      {"db", "table", "key"},
	OpFileWrite:     {"path", "content", "content_base64", "generator", "mode"},
	OpFileAppend:    {"path", "content", "content_base64"},
	OpFileDelete:    {"path"},
	OpFileMove:      {"from", "to"},
	OpAccountCreate: {"site", "username", "password", "salt", "display"},
}

// setFields returns the names of the fields set in o (besides "op").
func (o *Op) setFields() []string {
	var f []string
	add := func(name string, set bool) {
		if set {
			f = append(f, name)
		}
	}
	add("db", o.DB != "")
	add("table", o.Table != "")
	add("sql", o.SQL != nil)
	add("key", o.Key != nil)
	add("values", o.Values != nil)
	add("set", o.Set != nil)
	add("path", o.Path != "")
	add("from", o.From != "")
	add("to", o.To != "")
	add("content", o.Content != nil)
	add("content_base64", o.ContentBase64 != nil)
	add("generator", o.Generator != nil)
	add("mode", o.Mode != "")
	add("site", o.Site != "")
	add("username", o.Username != "")
	add("password", o.Password != "")
	add("salt", o.Salt != "")
	add("display", o.Display != "")
	return f
}

// Value is a column value in a delta: a JSON scalar (number, string, bool,
// null), {"sql": EXPR} (an SQL expression evaluated at apply time),
// {"ref": {"table": T, "key": {...}, "column": C}} (a column of another row
// found by natural key) or {"base64": "..."} (a BLOB).
type Value struct {
	raw json.RawMessage
}

// Value kinds.
const (
	KindLiteral = "literal"
	KindSQL     = "sql"
	KindRef     = "ref"
	KindBlob    = "base64"
)

// Ref is a reference to a column of another row of the same database.
type Ref struct {
	Table  string           `json:"table"`
	Key    map[string]Value `json:"key"`
	Column string           `json:"column"`
}

// Lit returns a literal value.
func Lit(v any) Value {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("delta.Lit(%T): %v", v, err))
	}
	return Value{raw: b}
}

// SQLExpr returns an {"sql": expr} value.
func SQLExpr(expr string) Value { return Lit(map[string]string{"sql": expr}) }

// RefTo returns a {"ref": ...} value.
func RefTo(table string, key map[string]Value, column string) Value {
	return Lit(map[string]any{"ref": Ref{Table: table, Key: key, Column: column}})
}

// MarshalJSON returns the value as written.
func (v Value) MarshalJSON() ([]byte, error) {
	if v.raw == nil {
		return []byte("null"), nil
	}
	return v.raw, nil
}

// UnmarshalJSON keeps the raw value; Decode interprets it.
func (v *Value) UnmarshalJSON(b []byte) error {
	v.raw = append(json.RawMessage(nil), b...)
	return nil
}

// decoded is an interpreted Value.
type decoded struct {
	kind string
	lit  any // int64, float64, string, nil, []byte
	sql  string
	ref  *Ref
}

// decode interprets v. Numbers become int64 when integral, else float64;
// booleans become 1 or 0.
func (v Value) decode() (decoded, error) {
	raw := bytes.TrimSpace(v.raw)
	if len(raw) == 0 {
		return decoded{kind: KindLiteral}, nil
	}
	switch raw[0] {
	case '{':
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(raw, &obj); err != nil {
			return decoded{}, fmt.Errorf("not a valid object: %v", err)
		}
		if len(obj) != 1 {
			return decoded{}, fmt.Errorf(`an object value must have exactly one of "sql", "ref" or "base64"`)
		}
		for k, r := range obj {
			switch k {
			case "sql":
				var s string
				if err := json.Unmarshal(r, &s); err != nil {
					return decoded{}, fmt.Errorf(`"sql" must be a string expression`)
				}
				return decoded{kind: KindSQL, sql: s}, nil
			case "ref":
				var ref Ref
				if err := strictUnmarshal(r, &ref); err != nil {
					return decoded{}, fmt.Errorf(`"ref": %v (want {"table": T, "key": {...}, "column": C})`, err)
				}
				return decoded{kind: KindRef, ref: &ref}, nil
			case "base64":
				var s string
				if err := json.Unmarshal(r, &s); err != nil {
					return decoded{}, fmt.Errorf(`"base64" must be a string`)
				}
				b, err := decodeBase64(s)
				if err != nil {
					return decoded{}, fmt.Errorf(`"base64": %v`, err)
				}
				return decoded{kind: KindBlob, lit: b}, nil
			default:
				return decoded{}, fmt.Errorf(`unknown value form %q: want "sql", "ref" or "base64"`, k)
			}
		}
	case '[':
		return decoded{}, fmt.Errorf("arrays are not column values; store JSON text as a string")
	}
	lit, err := scalar(raw)
	if err != nil {
		return decoded{}, err
	}
	return decoded{kind: KindLiteral, lit: lit}, nil
}

// scalar decodes a JSON scalar into an SQLite value.
func scalar(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var x any
	if err := dec.Decode(&x); err != nil {
		return nil, fmt.Errorf("not a JSON value: %v", err)
	}
	switch x := x.(type) {
	case nil, string:
		return x, nil
	case bool:
		if x {
			return int64(1), nil
		}
		return int64(0), nil
	case json.Number:
		return number(x)
	}
	return nil, fmt.Errorf("unsupported value %s", raw)
}

// number converts a JSON number to int64 when integral and in range, else
// float64.
func number(n json.Number) (any, error) {
	if i, err := strconv.ParseInt(n.String(), 10, 64); err == nil {
		return i, nil
	}
	f, err := strconv.ParseFloat(n.String(), 64)
	if err != nil || math.IsInf(f, 0) {
		return nil, fmt.Errorf("number %s is out of range", n)
	}
	return f, nil
}

// Parse reads a delta strictly: unknown fields and trailing data are errors
// that name the operation index.
func Parse(r io.Reader) (*Delta, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDeltaBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read delta: %w", err)
	}
	if len(b) > MaxDeltaBytes {
		return nil, fmt.Errorf("delta is larger than %d MiB", MaxDeltaBytes>>20)
	}
	return ParseBytes(b)
}

// ParseBytes is Parse on a byte slice.
func ParseBytes(b []byte) (*Delta, error) {
	var top struct {
		Version  *int               `json:"version"`
		Persona  string             `json:"persona"`
		Day      int                `json:"day"`
		Clock    string             `json:"clock"`
		Catalog  world.ID           `json:"catalog,omitzero"`
		Services []world.ServiceRef `json:"services,omitempty"`
		Ops      []json.RawMessage  `json:"ops"`
		Produces json.RawMessage    `json:"produces"`
	}
	if err := strictUnmarshal(b, &top); err != nil {
		return nil, fmt.Errorf("delta: %s", jsonError(b, err))
	}
	if err := repeatedKey(b); err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	if top.Version == nil {
		return nil, fmt.Errorf(`delta: field version is missing: add "version": %d`, Version)
	}
	if *top.Version != Version {
		return nil, fmt.Errorf("delta: field version: got %d, this build reads version %d", *top.Version, Version)
	}
	if len(top.Ops) > MaxOps {
		return nil, fmt.Errorf("delta: field ops: %d operations, at most %d; split the day", len(top.Ops), MaxOps)
	}
	d := &Delta{Version: *top.Version, Persona: top.Persona, Day: top.Day, Clock: top.Clock, Catalog: top.Catalog, Services: top.Services, Ops: make([]Op, len(top.Ops))}
	for i, raw := range top.Ops {
		if err := strictUnmarshal(raw, &d.Ops[i]); err != nil {
			return nil, fmt.Errorf("delta: ops[%d]: %s", i, jsonError(raw, err))
		}
	}
	if len(top.Produces) > 0 && string(top.Produces) != "null" {
		dec := json.NewDecoder(bytes.NewReader(top.Produces))
		dec.DisallowUnknownFields()
		dec.UseNumber()
		if err := dec.Decode(&d.Produces); err != nil {
			return nil, fmt.Errorf("delta: produces: %s", jsonError(top.Produces, err))
		}
	}
	return d, nil
}

// Encode returns the canonical JSON of d (indented; map keys sorted).
func (d *Delta) Encode() ([]byte, error) {
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode delta: %w", err)
	}
	return append(b, '\n'), nil
}

func strictUnmarshal(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("unexpected data after the JSON value")
	}
	var extra json.RawMessage
	if err := dec.Decode(&extra); err != io.EOF {
		return errors.New("unexpected data after the JSON value")
	}
	return nil
}

// repeatedKey refuses an object of the document b (valid JSON) that gives a
// key twice: encoding/json keeps the last silently. Keys are compared as
// encoding/json matches field names, ignoring case ("path" and "Path" fill
// the same field), which is also how SQLite compares column names. The error
// names the object by its path, such as ops[3].values, and the key.
func repeatedKey(b []byte) error {
	type frame struct {
		path  string
		seen  map[string]string // folded key -> key as written; nil for an array
		index int               // next element index of an array
		key   string            // the key whose value comes next
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	var stack []*frame
	// child returns the path of the value about to be read.
	child := func() string {
		if len(stack) == 0 {
			return ""
		}
		f := stack[len(stack)-1]
		if f.seen == nil {
			p := fmt.Sprintf("%s[%d]", f.path, f.index)
			f.index++
			return p
		}
		if f.path == "" {
			return f.key
		}
		return f.path + "." + f.key
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if top := len(stack) - 1; top >= 0 && stack[top].seen != nil && stack[top].key == "" {
			if d, ok := tok.(json.Delim); !ok || d != '}' {
				f := stack[top]
				k := tok.(string)
				fold := strings.ToLower(strings.ToUpper(k))
				if prev, dup := f.seen[fold]; dup {
					where := "the top-level object"
					if f.path != "" {
						where = f.path
					}
					if prev == k {
						return fmt.Errorf("%s: key %q appears more than once: give each key once (JSON would keep only the last)", where, k)
					}
					return fmt.Errorf("%s: keys %q and %q are the same key in another letter case: give each key once (JSON would keep only the last)", where, prev, k)
				}
				f.seen[fold] = k
				f.key = k
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, &frame{path: child(), seen: map[string]string{}})
			continue
		case json.Delim('['):
			stack = append(stack, &frame{path: child()})
			continue
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
		default:
			child() // a scalar value: advance the array index
		}
		if top := len(stack) - 1; top >= 0 {
			stack[top].key = ""
		}
	}
}

// jsonError turns a decoding error into a message with line and column.
func jsonError(b []byte, err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		line, col := position(b, syn.Offset)
		return fmt.Sprintf("line %d column %d: %v", line, col, syn)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s: got JSON %s, want %s", typ.Field, typ.Value, typ.Type)
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

func position(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

// sortedKeys returns the keys of m in lexical order: every map in a delta is
// applied in this order, never in Go's random map order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
