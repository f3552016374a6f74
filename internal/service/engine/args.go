package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// checkDeep checks what dbtool.Args leaves to the engine: below the top
// level of the arguments, every property against its schema (unknown
// properties of an object with properties, missing required ones, JSON
// types, enum, minimum and maximum, array items), and enum at the top
// level. An error names the argument by its path ("ingredients[1].item")
// and what it must be.
func checkDeep(tool string, fields map[string]json.RawMessage, schema map[string]any) error {
	props, _ := schema["properties"].(map[string]any)
	// Only an object, an array or a value with an enum has anything left
	// to check; the others are not decoded again (most arguments are
	// strings and numbers).
	var deep []string
	for name, raw := range fields {
		if ps, _ := props[name].(map[string]any); ps != nil && (ps["enum"] != nil || composite(raw)) {
			deep = append(deep, name)
		}
	}
	slices.Sort(deep)
	for _, name := range deep {
		ps, _ := props[name].(map[string]any)
		dec := json.NewDecoder(bytes.NewReader(fields[name]))
		dec.UseNumber()
		var v any
		if dec.Decode(&v) != nil {
			continue // dbtool.Args has refused what is not JSON
		}
		if v == nil {
			continue // null where the type takes it (dbtool checked)
		}
		if err := checkEnum(tool, name, v, ps); err != nil {
			return err
		}
		switch x := v.(type) {
		case map[string]any:
			if err := checkObject(tool, name, x, ps); err != nil {
				return err
			}
		case []any:
			if err := checkItems(tool, name, x, ps); err != nil {
				return err
			}
		}
	}
	return nil
}

// composite reports whether the JSON value raw is an object or an array.
func composite(raw json.RawMessage) bool {
	for _, c := range raw {
		switch c {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[':
			return true
		}
		return false
	}
	return false
}

func checkValue(tool, path string, v any, s map[string]any) error {
	if s == nil {
		return nil
	}
	got := kindOf(v)
	types := schemaTypeList(s)
	if len(types) > 0 && !slices.ContainsFunc(types, func(t string) bool { return t == got || t == "number" && got == "integer" }) {
		if got == "number" && slices.Contains(types, "integer") {
			if n, ok := v.(json.Number); ok {
				if f, err := n.Float64(); err == nil && f == float64(int64(f)) {
					got = "integer"
				}
			}
		}
		if !slices.Contains(types, got) {
			return dbtool.BadCall("argument %q of %s must be %s, not %s", path, tool, orArticles(types), article(got))
		}
	}
	if err := checkEnum(tool, path, v, s); err != nil {
		return err
	}
	switch x := v.(type) {
	case map[string]any:
		return checkObject(tool, path, x, s)
	case []any:
		return checkItems(tool, path, x, s)
	case json.Number:
		f, err := x.Float64()
		if err != nil {
			return nil
		}
		lo, okLo := number(s["minimum"])
		hi, okHi := number(s["maximum"])
		switch {
		case okLo && okHi && (f < lo || f > hi):
			return dbtool.BadCall("argument %q of %s must be between %s and %s, not %s", path, tool, fmtNum(lo), fmtNum(hi), x)
		case okLo && f < lo:
			return dbtool.BadCall("argument %q of %s must be at least %s, not %s", path, tool, fmtNum(lo), x)
		case okHi && f > hi:
			return dbtool.BadCall("argument %q of %s must be at most %s, not %s", path, tool, fmtNum(hi), x)
		}
	}
	return nil
}

func checkObject(tool, path string, obj map[string]any, s map[string]any) error {
	props, hasProps := s["properties"].(map[string]any)
	extra, _ := s["additionalProperties"].(map[string]any)
	closed := hasProps && (s["additionalProperties"] == nil || s["additionalProperties"] == false)
	for _, k := range slices.Sorted(maps.Keys(obj)) {
		ps, ok := props[k].(map[string]any)
		switch {
		case ok:
		case closed:
			names := slices.Sorted(maps.Keys(props))
			return dbtool.BadCall("argument %q of %s has no field %q; it takes %s", path, tool, k, strings.Join(names, ", "))
		default:
			ps = extra
		}
		if obj[k] == nil && !slices.Contains(schemaTypeList(ps), "null") && ps != nil {
			if req, _ := s["required"].([]any); slices.Contains(req, any(k)) {
				return dbtool.BadCall("argument %q of %s must be %s, not null", path+"."+k, tool, orArticles(schemaTypeList(ps)))
			}
			continue
		}
		if err := checkValue(tool, path+"."+k, obj[k], ps); err != nil {
			return err
		}
	}
	if req, ok := s["required"].([]any); ok {
		for _, r := range req {
			if name, _ := r.(string); name != "" {
				if _, ok := obj[name]; !ok {
					return dbtool.BadCall("argument %q of %s is required", path+"."+name, tool)
				}
			}
		}
	}
	return nil
}

func checkItems(tool, path string, arr []any, s map[string]any) error {
	items, _ := s["items"].(map[string]any)
	for i, it := range arr {
		if err := checkValue(tool, fmt.Sprintf("%s[%d]", path, i), it, items); err != nil {
			return err
		}
	}
	return nil
}

func checkEnum(tool, path string, v any, s map[string]any) error {
	enum, ok := s["enum"].([]any)
	if !ok || len(enum) == 0 {
		return nil
	}
	for _, e := range enum {
		if fmt.Sprint(e) == fmt.Sprint(v) {
			return nil
		}
	}
	quoted := make([]string, len(enum))
	for i, e := range enum {
		b, _ := json.Marshal(e)
		quoted[i] = string(b)
	}
	got, _ := json.Marshal(v)
	desc := ""
	if d, _ := s["description"].(string); d != "" {
		desc = ": " + d
	}
	return dbtool.BadCall("argument %q of %s must be one of %s, not %s%s", path, tool, strings.Join(quoted, ", "), got, desc)
}

// kindOf names v's JSON type as JSON Schema does.
func kindOf(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		if _, err := strconv.ParseInt(x.String(), 10, 64); err == nil {
			return "integer"
		}
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return "unknown"
}

func schemaTypeList(s map[string]any) []string {
	switch t := s["type"].(type) {
	case string:
		return []string{t}
	case []any:
		var out []string
		for _, x := range t {
			if n, ok := x.(string); ok {
				out = append(out, n)
			}
		}
		return out
	}
	return nil
}

func orArticles(types []string) string {
	var out []string
	for _, t := range types {
		if t != "null" {
			out = append(out, article(t))
		}
	}
	return strings.Join(out, " or ")
}

func article(t string) string {
	switch t {
	case "integer", "object", "array":
		return "an " + t
	}
	return "a " + t
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

func fmtNum(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
