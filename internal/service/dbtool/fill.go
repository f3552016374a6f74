package dbtool

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// A tool's output schema gives each field one type (portable), so a
// result must never hold null: a client that validates results against
// the schema (the TypeScript SDK's does) refuses one. Go writes a nil
// slice or map as null, so AddTool fills every nil slice or map of a
// result that would be written (not omitempty) with an empty one, by a
// filler built once from the result type; and it refuses a result type
// with a pointer or interface field that would be written as null.

// filler fills the nil slices and maps of the addressable value v; nil
// means the type has nothing to fill.
type filler func(v reflect.Value)

var (
	jsonMarshaler = reflect.TypeFor[json.Marshaler]()
	textMarshaler = reflect.TypeFor[encoding.TextMarshaler]()
)

// newFiller returns the filler of results of type t.
func newFiller(t reflect.Type) (filler, error) {
	return fillerOf(t, map[reflect.Type]bool{})
}

func fillerOf(t reflect.Type, visiting map[reflect.Type]bool) (filler, error) {
	if t.Implements(jsonMarshaler) || t.Implements(textMarshaler) ||
		reflect.PointerTo(t).Implements(jsonMarshaler) || reflect.PointerTo(t).Implements(textMarshaler) {
		return nil, nil // written as it says
	}
	if visiting[t] {
		return nil, fmt.Errorf("%s is recursive", t)
	}
	visiting[t] = true
	defer delete(visiting, t)
	switch t.Kind() {
	case reflect.Pointer:
		elem, err := fillerOf(t.Elem(), visiting)
		if err != nil || elem == nil {
			return nil, err
		}
		return func(v reflect.Value) {
			if !v.IsNil() {
				elem(v.Elem())
			}
		}, nil
	case reflect.Slice, reflect.Array:
		elem, err := fillerOf(t.Elem(), visiting)
		if err != nil || elem == nil {
			return nil, err
		}
		return func(v reflect.Value) {
			for i := range v.Len() {
				elem(v.Index(i))
			}
		}, nil
	case reflect.Map:
		// Map values are not addressable: a map of values to fill would
		// need copying, and no result has one.
		if f, err := fillerOf(t.Elem(), visiting); err != nil || f != nil {
			return nil, fmt.Errorf("%s: a map whose values hold slices, maps or pointers is not supported in a result", t)
		}
		return nil, nil
	case reflect.Interface:
		return nil, fmt.Errorf("an interface (%s) has no type for the output schema", t)
	case reflect.Struct:
		return structFiller(t, visiting)
	}
	return nil, nil
}

// fieldFill is what a struct's filler does to one field.
type fieldFill struct {
	index []int
	empty bool   // set to an empty slice or map when nil
	fill  filler // then fill what it holds
}

func structFiller(t reflect.Type, visiting map[reflect.Type]bool) (filler, error) {
	var fields []fieldFill
	for _, f := range reflect.VisibleFields(t) {
		tag := f.Tag.Get("json")
		if !f.IsExported() || tag == "-" || (f.Anonymous && f.Type.Kind() == reflect.Struct && tag == "") {
			continue // unwritten, or an embedded struct whose fields VisibleFields lists
		}
		_, opts, _ := strings.Cut(tag, ",")
		omitted := false
		for _, o := range strings.Split(opts, ",") {
			omitted = omitted || o == "omitempty" || o == "omitzero"
		}
		fill, err := fillerOf(f.Type, visiting)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t, f.Name, err)
		}
		ff := fieldFill{index: f.Index, fill: fill}
		switch f.Type.Kind() {
		case reflect.Slice, reflect.Map:
			ff.empty = !omitted
		case reflect.Pointer, reflect.Interface:
			if !omitted {
				return nil, fmt.Errorf("%s.%s: a nil %s is written as null, which the output schema does not allow: tag it omitempty", t, f.Name, f.Type)
			}
		}
		if ff.empty || ff.fill != nil {
			fields = append(fields, ff)
		}
	}
	if len(fields) == 0 {
		return nil, nil
	}
	return func(v reflect.Value) {
		for _, ff := range fields {
			fv, err := v.FieldByIndexErr(ff.index)
			if err != nil {
				continue // through a nil embedded pointer: not written
			}
			if ff.empty && fv.IsNil() {
				if fv.Kind() == reflect.Slice {
					fv.Set(reflect.MakeSlice(fv.Type(), 0, 0))
				} else {
					fv.Set(reflect.MakeMap(fv.Type()))
				}
			}
			if ff.fill != nil {
				ff.fill(fv)
			}
		}
	}, nil
}
