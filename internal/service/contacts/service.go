package contacts

import (
	"database/sql/driver"
	_ "embed"
	"encoding/json"
	"errors"
	"strings"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

// DBName is the name of the service's database in a world (db/contacts.sqlite).
const DBName = "contacts"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = "2006-01-02 15:04:05"

// Hooks are what the definition needs in Go: the field validators (shared
// with the synthesis functions, so a seed is checked as a tool call is),
// the tag's Unicode lower-casing, and the decoding of update_contact's
// fields with Go's rules (names matched ignoring case, an unknown one
// refused).
var Hooks = engine.Hooks{
	Funcs: map[string]engine.Func{
		// contacts_invalid(field, value): NULL when value is absent (NULL)
		// or valid for field, else why not (the tool's error).
		"contacts_invalid": {Args: 2, Fn: func(a []driver.Value) (driver.Value, error) {
			if a[1] == nil {
				return nil, nil
			}
			check, ok := validators[text(a[0])]
			if !ok {
				return nil, errors.New("contacts_invalid: unknown field " + text(a[0]))
			}
			if _, err := check(text(a[1])); err != nil {
				return err.Error(), nil
			}
			return nil, nil
		}},
		// contacts_tag(tag): the tag as stored, trimmed and lower-cased
		// (Unicode, unlike SQLite's lower).
		"contacts_tag": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
			return tagKey(text(a[0])), nil
		}},
		// contacts_fields_error(fields): NULL when update_contact's fields
		// argument (JSON text) decodes into Fields, else why not.
		"contacts_fields_error": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
			if _, err := decodeFields(text(a[0])); err != nil {
				return err.Error(), nil
			}
			return nil, nil
		}},
		// contacts_field(fields, name): the field name of update_contact's
		// fields argument, NULL when it is left out or null.
		"contacts_field": {Args: 2, Fn: func(a []driver.Value) (driver.Value, error) {
			f, err := decodeFields(text(a[0]))
			if err != nil {
				return nil, err
			}
			for _, fl := range f.list() {
				if fl.name == text(a[1]) && fl.v != nil {
					return *fl.v, nil
				}
			}
			return nil, nil
		}},
	},
}

// validators check one field's value as the tools take it, by the name
// their errors give it.
var validators = map[string]func(string) (string, error){
	"name":        func(v string) (string, error) { return checkName("name", v) },
	"fields.name": func(v string) (string, error) { return checkName("fields.name", v) },
	"email":       checkEmail,
	"phone":       checkPhone,
	"company":     func(v string) (string, error) { return checkText("company", v, MaxFieldChars, false) },
	"role":        func(v string) (string, error) { return checkText("role", v, MaxFieldChars, false) },
	"notes":       func(v string) (string, error) { return checkText("notes", v, MaxNotesChars, true) },
	"tag":         normTag,
}

// decodeFields decodes update_contact's fields argument as encoding/json
// does (names matched ignoring case, an unknown one refused), with the
// errors the tool gives.
func decodeFields(raw string) (Fields, error) {
	dec := json.NewDecoder(strings.NewReader(raw))
	dec.DisallowUnknownFields()
	var f Fields
	if err := dec.Decode(&f); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return f, badCall("argument %q of update_contact must be %s, not %s", "fields."+te.Field, te.Type.String(), te.Value)
		}
		return f, badCall("the arguments of update_contact are not valid: %v", err)
	}
	return f, nil
}

// text is an SQL function's argument as text (engine.Text).
func text(v driver.Value) string { return engine.Text(v) }

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("contacts", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }
