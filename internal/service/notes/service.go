package notes

import (
	"database/sql/driver"
	_ "embed"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

// Hooks are what the definition needs in Go: the check of a link target
// (an http(s) URL with a host, or a clean home-relative path).
var Hooks = engine.Hooks{Funcs: map[string]engine.Func{
	// notes_target_error(target): NULL, or why link_note refuses target.
	"notes_target_error": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		var s string
		switch x := a[0].(type) {
		case string:
			s = x
		case []byte: // a target with a NUL character arrives as a BLOB
			s = string(x)
		}
		if _, err := checkTarget(s); err != nil {
			return err.Error(), nil
		}
		return nil, nil
	}},
}}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("notes", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }
