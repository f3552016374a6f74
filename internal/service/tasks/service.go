package tasks

import (
	_ "embed"

	"github.com/wildawm/wildawm/internal/service/engine"
)

//go:embed service.yaml
var definition []byte

// DBName is the name of the service's database in a world (db/tasks.sqlite).
const DBName = "tasks"

// Formats of the time columns (UTC).
const (
	TimeFormat = "2006-01-02 15:04:05"
	DateFormat = "2006-01-02"
)

// Priorities and statuses, as stored.
const (
	PriorityLow    = "low"
	PriorityMedium = "medium"
	PriorityHigh   = "high"
	StatusOpen     = "open"
	StatusDone     = "done"
)

// Limits of the tools' arguments (service.yaml states them to the model and
// checks them; the synthesis functions check seeds against the same).
const (
	MaxTitleChars   = 200
	MaxNotesChars   = 5000
	MaxProjectChars = 100
)

// Compiled returns the service's definition, compiled (once per process;
// every instance shares it). The service has no Go hooks: SQL says it all.
var Compiled = engine.Builtin("tasks", definition, engine.Hooks{})

// Schema returns the DDL of the service's database, one statement per entry,
// in the order a delta's db.create runs them. Every table has a natural key.
func Schema() []string { return Compiled().Def.Schema() }
