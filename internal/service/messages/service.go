package messages

import (
	"database/sql/driver"
	_ "embed"
	"errors"
	"log/slog"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/world"
)

//go:embed service.yaml
var definition []byte

// DBName is the name of the service's database in a world (db/messages.sqlite).
const DBName = "messages"

// TimeFormat is the layout of every timestamp column (UTC).
const TimeFormat = engine.TimeFormat

// Hooks are what the definition needs in Go: comparing a name with the
// persona's ignoring case, as Unicode folds it (SQLite's lower() folds
// ASCII only).
var Hooks = engine.Hooks{Funcs: map[string]engine.Func{
	// messages_same_name(a, b): 1 if a and b are equal under Unicode case
	// folding; send_message refuses to message the persona itself.
	"messages_same_name": {Args: 2, Fn: func(a []driver.Value) (driver.Value, error) {
		if strings.EqualFold(str(a[0]), str(a[1])) {
			return int64(1), nil
		}
		return int64(0), nil
	}},
}}

// str is an SQL text argument as a string ("" for NULL or a number).
func str(v driver.Value) string {
	switch x := v.(type) {
	case string:
		return x
	case []byte:
		return string(x)
	}
	return ""
}

// Compiled returns the service's definition, compiled with its hooks
// (once per process; every instance shares it).
var Compiled = engine.Builtin("messages", definition, Hooks)

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }

// Options open the service over one database file, in a world or not (as
// the conformance suite serves it); the registry opens worlds through
// engine.New instead. DBPath, Clock and Self are required.
type Options struct {
	// DBPath is the database (db/messages.sqlite in a world). It must
	// exist; it is held open between calls and reopened when the file is
	// replaced.
	DBPath string
	// Clock gives the sent_at of new messages and created_at of new threads.
	Clock world.Clock
	// Self is the persona's sender name: the sender of every message
	// send_message writes.
	Self string
	// Logger receives internal failures; nil discards.
	Logger *slog.Logger
	// SessionTimeout closes streamable-HTTP sessions idle this long; zero
	// keeps them until the client ends them.
	SessionTimeout time.Duration
	// Ephemeral marks the database as a throwaway copy: writes skip the
	// journal file and fsync (dbtool.DB.Ephemeral).
	Ephemeral bool
}

// New checks opts and that the database has the service's tables, and
// returns the engine serving it.
func New(opts Options) (*engine.Service, error) {
	if opts.DBPath == "" {
		return nil, errors.New("messages: Options.DBPath is required")
	}
	return engine.New(Compiled(), engine.Options{DBPath: opts.DBPath, Clock: opts.Clock, Self: opts.Self,
		Logger: opts.Logger, SessionTimeout: opts.SessionTimeout, Ephemeral: opts.Ephemeral})
}
