package dbtool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
)

// ToolError is a failure the model can fix; its message names the problem
// and the fix.
type ToolError struct{ Msg string }

func (e *ToolError) Error() string { return e.Msg }

// BadCall returns a ToolError.
func BadCall(format string, args ...any) error {
	return &ToolError{Msg: fmt.Sprintf(format, args...)}
}

// Args checks a tool's arguments against the top level of its input
// schema: which keys exist, which are required, the JSON type of each (of
// an array's items too) and the bounds of numbers. It is built once per
// tool, not a general schema validator run on every call; the service
// engine checks what lies deeper. A bad argument is a ToolError that names
// it and what the tool takes, and the same bad call always gets the same
// message.
type Args struct {
	tool     string
	props    map[string]*jsonschema.Schema
	names    string // the property names, for messages
	required []string
}

// NewArgs returns the checker of the tool's arguments against its input
// schema s.
func NewArgs(tool string, s *jsonschema.Schema) *Args {
	a := &Args{tool: tool, props: s.Properties, required: s.Required}
	names := slices.Sorted(maps.Keys(s.Properties))
	if len(names) == 0 {
		a.names = "no arguments"
	} else {
		a.names = "the arguments " + strings.Join(names, ", ")
	}
	return a
}

// Check checks raw (absent or null means no arguments) and returns the
// arguments by name, an integral number written otherwise (7.0) rewritten
// as an integer; a bad argument is a ToolError naming it. An optional
// argument whose type includes null takes null.
func (a *Args) Check(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if t := bytes.TrimSpace(raw); len(t) == 0 || bytes.Equal(t, []byte("null")) {
		raw = json.RawMessage("{}")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return nil, BadCall("%s takes a JSON object of named arguments (%s); got %s", a.tool, a.names, jsonKind(raw))
	}
	if dup := duplicateKey(raw); dup != "" {
		return nil, duplicateKeyError(a.tool, dup)
	}
	// In name order: the same bad call always gets the same message.
	for _, name := range slices.Sorted(maps.Keys(fields)) {
		v := fields[name]
		p, ok := a.props[name]
		if !ok {
			return nil, BadCall("%s has no argument %q; it takes %s", a.tool, name, a.names)
		}
		norm, err := checkKind(v, p)
		if err != "" {
			return nil, BadCall("argument %q of %s must be %s", name, a.tool, err)
		}
		if err := checkBounds(v, p); err != "" {
			return nil, BadCall("argument %q of %s must be %s%s", name, a.tool, err, describe(p))
		}
		if norm != nil {
			fields[name] = norm
		}
	}
	for _, name := range a.required {
		if _, ok := fields[name]; !ok {
			return nil, BadCall("argument %q of %s is required%s", name, a.tool, describe(a.props[name]))
		}
	}
	return fields, nil
}

// checkKind checks the JSON value v against the types schema s names (and,
// for an array, each item against s's items), as JSON Schema does: null
// only where the types include it, and a number with no fraction (7.0,
// 1e2) as an integer. It returns what v must be when it is not, and v
// rewritten as a plain integer when it was an integral number written
// otherwise (so that an integer argument reaches SQL as an integer, not a
// real).
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
