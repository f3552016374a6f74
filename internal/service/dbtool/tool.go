package dbtool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolError is a failure the model can fix; its message names the problem
// and the fix.
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

// BadCall returns a ToolError.
func BadCall(format string, args ...any) error {
	return &ToolError{Msg: fmt.Sprintf(format, args...)}
}

// AddTool registers fn as the tool t on srv. Its input and output JSON
// Schemas are derived from In and Out (as the SDK's mcp.AddTool derives
// them), with the bounds of In's number fields from their minimum and
// maximum tags (schema.go), and published in the form the model APIs'
// function-calling adapters take (portable: one type per schema, an
// optional argument one left out of "required", "properties" on every
// object, no additionalProperties). The arguments are checked against In
// by a decoder built once here rather than by a general schema validator
// on every call, and the output is encoded once, not validated against its
// own schema: together that is most of the SDK's per-call cost; a nil
// slice or map in the output is written as empty, never as null (fill.go). A bad
// argument (not an object, an unknown or missing field, a wrong type, a
// number outside its bounds) is an isError result that names the field and
// what the tool takes; fn is then not called. An optional argument of a
// pointer or slice type takes null as well, as if it were left out.
// A ToolError from fn becomes an isError result with its message; any
// other error is logged and becomes an isError result that says the
// service failed, without internal detail.
func AddTool[In, Out any](srv *mcp.Server, d *DB, t *mcp.Tool, fn func(context.Context, In) (Out, error)) {
	def, err := d.Schemas.lookup(t.Name, reflect.TypeFor[In](), reflect.TypeFor[Out](), func() (*toolDef, error) {
		in, err := jsonschema.For[In](nil)
		if err == nil {
			err = applyBounds(in, reflect.TypeFor[In]())
		}
		if err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		out, err := jsonschema.For[Out](nil)
		if err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		fill, err := newFiller(reflect.TypeFor[Out]())
		if err != nil {
			return nil, fmt.Errorf("output: %w", err)
		}
		def := &toolDef{args: newArgChecker(t.Name, in), fill: fill}
		if def.in, err = portable(in); err != nil {
			return nil, fmt.Errorf("input schema: %w", err)
		}
		if def.out, err = portable(out); err != nil {
			return nil, fmt.Errorf("output schema: %w", err)
		}
		return def, nil
	})
	if err != nil {
		panic(fmt.Sprintf("%s: tool %s: %v", d.Service, t.Name, err))
	}
	tt := *t
	tt.InputSchema, tt.OutputSchema = def.in, def.out
	args, fill := def.args, def.fill
	srv.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var in In
		if err := args.decode(req.Params.Arguments, &in); err != nil {
			return errorResult(err), nil
		}
		out, err := fn(ctx, in)
		if err != nil {
			var te *ToolError
			if !errors.As(err, &te) {
				d.Log.ErrorContext(ctx, d.Service+" tool failed", LogKeyTool, t.Name, LogKeyDB, d.Path, LogKeyErr, err)
				err = fmt.Errorf("%s failed: the %s service had an internal error and changed nothing; try again later", t.Name, d.Service)
			}
			return errorResult(err), nil
		}
		if fill != nil {
			fill(reflect.ValueOf(&out).Elem())
		}
		// The text is the JSON a model reads: <, > and & stay as they are.
		var text bytes.Buffer
		enc := json.NewEncoder(&text)
		enc.SetEscapeHTML(false)
		err = enc.Encode(out)
		b := bytes.TrimSuffix(text.Bytes(), []byte("\n"))
		if err != nil {
			d.Log.ErrorContext(ctx, d.Service+" tool output failed", LogKeyTool, t.Name, LogKeyErr, err)
			return errorResult(fmt.Errorf("%s failed: the %s service could not encode its answer; try again later", t.Name, d.Service)), nil
		}
		return &mcp.CallToolResult{
			Content:           []mcp.Content{&mcp.TextContent{Text: string(b)}},
			StructuredContent: out,
		}, nil
	})
}

// SchemaCache shares what AddTool derives from a tool's Go types (its
// JSON Schemas and argument checker, tens of KiB per tool) among the
// servers of many instances of a service: a runtime with hundreds of
// instances would otherwise hold hundreds of copies. What it holds is
// never modified once built. The zero value is ready; a nil cache builds
// afresh for every server.
type SchemaCache struct {
	mu   sync.Mutex
	defs map[toolKey]*toolDef
}

type toolKey struct {
	tool    string
	in, out reflect.Type
}

// toolDef is what AddTool derives from a tool's types.
type toolDef struct {
	in, out *jsonschema.Schema
	args    *argChecker
	fill    filler // of the results (fill.go)
}

// lookup returns the definition of the tool, building it with build the
// first time.
func (c *SchemaCache) lookup(tool string, in, out reflect.Type, build func() (*toolDef, error)) (*toolDef, error) {
	if c == nil {
		return build()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := toolKey{tool, in, out}
	if def, ok := c.defs[k]; ok {
		return def, nil
	}
	def, err := build()
	if err != nil {
		return nil, err
	}
	if c.defs == nil {
		c.defs = map[toolKey]*toolDef{}
	}
	c.defs[k] = def
	return def, nil
}

func errorResult(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// argChecker checks a tool's arguments against its input schema's top
// level (which keys exist, which are required, what type each is) and
// decodes them into the input type, rejecting unknown fields at any depth.
type argChecker struct {
	tool     string
	props    map[string]*jsonschema.Schema
	names    string // the property names, for messages
	required []string
}

func newArgChecker(tool string, s *jsonschema.Schema) *argChecker {
	c := &argChecker{tool: tool, props: s.Properties, required: s.Required}
	names := make([]string, 0, len(s.Properties))
	for n := range s.Properties {
		names = append(names, n)
	}
	slices.Sort(names)
	if len(names) == 0 {
		c.names = "no arguments"
	} else {
		c.names = "the arguments " + strings.Join(names, ", ")
	}
	return c
}

// Args checks a tool's arguments against the top level of its input
// schema (which keys exist, which are required, the JSON type of each and
// the bounds of numbers) with the messages AddTool's tools give: the
// service engine's tools, which have a schema and no Go input type, use it.
type Args struct{ c *argChecker }

// NewArgs returns the checker of the tool's arguments against its input
// schema s.
func NewArgs(tool string, s *jsonschema.Schema) *Args { return &Args{newArgChecker(tool, s)} }

// Check checks raw (absent or null means no arguments) and returns the
// arguments by name, an integral number written otherwise (7.0) rewritten
// as an integer; a bad argument is a ToolError naming it.
func (a *Args) Check(raw json.RawMessage) (map[string]json.RawMessage, error) {
	fields, _, err := a.c.check(raw)
	return fields, err
}

// decode checks raw and decodes it into in (a pointer to the input type).
func (c *argChecker) decode(raw json.RawMessage, in any) error {
	fields, rewrite, err := c.check(raw)
	if err != nil {
		return err
	}
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	if rewrite {
		var err error
		if raw, err = json.Marshal(fields); err != nil {
			return BadCall("the arguments of %s are not valid: %v", c.tool, err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(in); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return BadCall("argument %q of %s must be %s, not %s", te.Field, c.tool, te.Type.String(), te.Value)
		}
		return BadCall("the arguments of %s are not valid: %v", c.tool, err)
	}
	return nil
}

// check checks raw against the schema's top level and returns its fields
// (nil for no arguments) and whether one was rewritten.
func (c *argChecker) check(raw json.RawMessage) (_ map[string]json.RawMessage, rewrite bool, _ error) {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, false, BadCall("%s takes a JSON object of named arguments (%s); got %s", c.tool, c.names, jsonKind(raw))
	}
	// In name order: the same bad call always gets the same message.
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := fields[name]
		p, ok := c.props[name]
		if !ok {
			return nil, false, BadCall("%s has no argument %q; it takes %s", c.tool, name, c.names)
		}
		norm, err := checkKind(v, p)
		if err != "" {
			return nil, false, BadCall("argument %q of %s must be %s", name, c.tool, err)
		}
		if err := checkBounds(v, p); err != "" {
			return nil, false, BadCall("argument %q of %s must be %s%s", name, c.tool, err, describe(p))
		}
		if norm != nil {
			fields[name], rewrite = norm, true
		}
	}
	for _, name := range c.required {
		if _, ok := fields[name]; !ok {
			return nil, false, BadCall("argument %q of %s is required%s", name, c.tool, describe(c.props[name]))
		}
	}
	return fields, rewrite, nil
}

// checkKind checks the JSON value v against the types schema s names (and,
// for an array, each item against s's items), as JSON Schema does: null
// only where the types include it, and a number with no fraction (7.0,
// 1e2) as an integer. It returns what v must be when it is not, and v
// rewritten as a plain integer when it was an integral number written
// otherwise (the decoder into an int field takes only that).
func checkKind(v json.RawMessage, s *jsonschema.Schema) (norm json.RawMessage, mustBe string) {
	types, nullable := schemaTypes(s)
	got := jsonKind(v)
	if got == "null" {
		if nullable || len(types) == 0 {
			return nil, ""
		}
		return nil, orTypes(types) + ", not null"
	}
	if len(types) == 0 {
		return nil, ""
	}
	for _, t := range types {
		switch {
		case t == got:
		case t == "integer" && got == "number":
			n, ok := integral(v)
			if !ok {
				continue
			}
			if n != nil {
				norm = n
			}
		default:
			continue
		}
		if got == "array" && s.Items != nil {
			var items []json.RawMessage
			if json.Unmarshal(v, &items) != nil {
				return nil, "an array"
			}
			for i, it := range items {
				if _, bad := checkKind(it, s.Items); bad != "" {
					return nil, fmt.Sprintf("an array whose items are %s (item %d is not)", strings.SplitN(bad, ",", 2)[0], i)
				}
			}
		}
		return norm, ""
	}
	return nil, orTypes(types) + ", not " + got
}

// checkBounds checks the JSON number v (of the type s names) against s's
// minimum and maximum, and returns what v must be when it is outside them
// ("between 1 and 100, not 0"). Anything else passes.
func checkBounds(v json.RawMessage, s *jsonschema.Schema) (mustBe string) {
	if s == nil || (s.Minimum == nil && s.Maximum == nil) || jsonKind(v) != "number" {
		return ""
	}
	f, err := strconv.ParseFloat(string(bytes.TrimSpace(v)), 64)
	if err != nil {
		return "a number"
	}
	lo, hi := s.Minimum, s.Maximum
	if (lo == nil || f >= *lo) && (hi == nil || f <= *hi) {
		return ""
	}
	got := strconv.FormatFloat(f, 'f', -1, 64)
	switch {
	case lo != nil && hi != nil:
		return fmt.Sprintf("between %s and %s, not %s", number(*lo), number(*hi), got)
	case lo != nil:
		return fmt.Sprintf("at least %s, not %s", number(*lo), got)
	}
	return fmt.Sprintf("at most %s, not %s", number(*hi), got)
}

func number(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// integral reports whether the JSON number v has no fraction; when it is
// not written as a plain integer it returns that form.
func integral(v json.RawMessage) (json.RawMessage, bool) {
	var n json.Number
	if json.Unmarshal(v, &n) != nil {
		return nil, false
	}
	if _, err := n.Int64(); err == nil {
		return nil, true
	}
	f, err := n.Float64()
	if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<53 {
		return nil, false
	}
	return json.RawMessage(strconv.FormatInt(int64(f), 10)), true
}

// schemaTypes lists the JSON types s names other than null, and whether it
// allows null.
func schemaTypes(s *jsonschema.Schema) (types []string, nullable bool) {
	if s == nil {
		return nil, true
	}
	all := s.Types
	if s.Type != "" {
		all = []string{s.Type}
	}
	for _, t := range all {
		if t == "null" {
			nullable = true
		} else {
			types = append(types, t)
		}
	}
	return types, nullable
}

// orTypes names types for a message: "a string", "an integer or a string".
func orTypes(types []string) string {
	named := make([]string, len(types))
	for i, t := range types {
		named[i] = article(t)
	}
	return strings.Join(named, " or ")
}

// jsonKind names the JSON type of v as JSON Schema does.
func jsonKind(v json.RawMessage) string {
	b := bytes.TrimSpace(v)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func describe(s *jsonschema.Schema) string {
	if s == nil || s.Description == "" {
		return ""
	}
	return ": " + s.Description
}
