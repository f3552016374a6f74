package support

import (
	"database/sql/driver"
	_ "embed"
	"errors"
	"fmt"
	"os"
	"strconv"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/world"
)

//go:embed service.yaml
var definition []byte

// DBName is the name of the service's database in a world (db/support.sqlite).
const DBName = "support"

// ShopDBName is the name of the shop's database in a world (db/shop.sqlite),
// read for orders and their items (the definition's reads).
const ShopDBName = "shop"

// TimeFormat is the format of the time columns (UTC), the shop's too.
const TimeFormat = "2006-01-02 15:04:05"

// Hooks are what the definition needs in Go: a step that tells a world
// without a shop (a tool error the model can act on) from a shop database
// that fails, and the check of a list_tickets cursor.
var Hooks = engine.Hooks{
	Funcs: map[string]engine.Func{
		// support_cursor_id(cursor): the row id a list_tickets cursor
		// continues before, NULL when it is not one.
		"support_cursor_id": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
			s, _ := a[0].(string)
			if id, ok := parseCursor(s); ok {
				return id, nil
			}
			return nil, nil
		}},
	},
	Steps: map[string]engine.StepFunc{"support_shop": needShop},
}

// needShop fails with a tool error when the world has no shop database:
// such a world has no orders to open a ticket about.
func needShop(c *engine.Call) error {
	_, err := os.Stat(world.DBPath(c.Env.WorldDir, ShopDBName))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return c.BadCall("there are no shop orders in this world, so no ticket can be opened; support tickets are only for orders placed on the shop website")
	case err != nil:
		return fmt.Errorf("shop database: %w", err)
	}
	return nil
}

// parseCursor returns the row id of a cursor list_tickets made
// (cursor_encode('s1', id)).
func parseCursor(s string) (int64, bool) {
	parts, ok := dbtool.DecodeCursor(s, "s1", 1)
	if !ok {
		return 0, false
	}
	id, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || id < 1 {
		return 0, false
	}
	return id, true
}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("support", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }
