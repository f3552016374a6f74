package payments

import (
	"database/sql/driver"
	_ "embed"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

// Hooks are what the definition needs in Go: the money arithmetic, reading
// an amount a model wrote and writing cents as a decimal string.
var Hooks = engine.Hooks{Funcs: map[string]engine.Func{
	// payments_amount(s): the cents of a positive decimal amount with at
	// most 2 decimals (ParseAmount), or NULL when s is not one.
	"payments_amount": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		var s string
		switch x := a[0].(type) {
		case string:
			s = x
		case []byte:
			s = string(x)
		default:
			return nil, nil
		}
		if c, ok := ParseAmount(s); ok {
			return c, nil
		}
		return nil, nil
	}},
	// payments_cents(c): c cents as a decimal string with two decimals
	// (FormatCents); NULL stays NULL.
	"payments_cents": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
		if c, ok := a[0].(int64); ok {
			return FormatCents(c), nil
		}
		return nil, nil
	}},
}}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("payments", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string { return Compiled().Def.Schema() }
