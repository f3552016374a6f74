package mail

import (
	"database/sql/driver"
	_ "embed"
	"encoding/json"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

// Hooks are what the definition needs in Go: address lists, the check of
// one address, and the attachments of send_mail, which are files of the
// world's home directory.
var Hooks = engine.Hooks{
	Funcs: map[string]engine.Func{
		// mail_addrs(list): a stored comma list of addresses as a JSON
		// array of strings.
		"mail_addrs": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
			b, err := json.Marshal(splitAddrs(text(a[0])))
			return string(b), err
		}},
		// mail_address_error(addr): NULL, or what is wrong with addr.
		"mail_address_error": {Args: 1, Fn: func(a []driver.Value) (driver.Value, error) {
			if msg := checkAddress(text(a[0])); msg != "" {
				return msg, nil
			}
			return nil, nil
		}},
	},
	Steps: map[string]engine.StepFunc{
		// attachments checks send_mail's attachments (paths relative to
		// home) and binds att, a JSON array of {filename, home_path}.
		"attachments": func(c *engine.Call) error {
			var paths []string
			if s := c.Text("attachments"); s != "" {
				if err := json.Unmarshal([]byte(s), &paths); err != nil {
					return c.BadCall("attachments must be an array of paths relative to your home directory: %v", err)
				}
			}
			atts, err := checkAttachments(c.Env.WorldDir, paths)
			if err != nil {
				return err
			}
			b, err := json.Marshal(atts)
			if err != nil {
				return err
			}
			c.Params["att"] = string(b)
			return nil
		},
	},
}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("mail", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key
// (its first UNIQUE constraint).
func Schema() []string { return Compiled().Def.Schema() }

// text is an SQL function's argument as text (engine.Text).
func text(v driver.Value) string { return engine.Text(v) }
