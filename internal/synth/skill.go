package synth

import (
	"encoding/json"
	"fmt"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/world"
)

// Skill is a reusable event recipe. Emit appends the event's operations
// and produces entries to the day being built; it must be a pure function of
// the builder's state and the parameters.
type Skill struct {
	Name        string   `json:"name"`
	Interfaces  []string `json:"interfaces"`
	Description string   `json:"description"`
	// Constraints are the consistency rules the event keeps, in words (the
	// text form model-driven stages read).
	Constraints []string                         `json:"constraints"`
	Emit        func(b *Builder, p Params) error `json:"-"`
}

// Params are an event's parameters.
type Params map[string]any

func (p Params) str(k string) string {
	s, _ := p[k].(string)
	return s
}

// Event is one skill use on a day.
type Event struct {
	Skill  string
	Params Params
}

// Day is one day of the plan.
type Day struct {
	Day    int
	Clock  string // RFC 3339 end of day
	Events []Event
}

// Builder accumulates one day's delta and the world facts later events
// need (message counts per thread), so that every emitted operation is
// deterministic.
type Builder struct {
	Persona  Persona
	d        *delta.Delta
	msgCount map[string]int // thread ext_id -> messages so far
	threads  map[string]bool
}

// NewBuilder returns a builder for persona.
func NewBuilder(p Persona) *Builder {
	return &Builder{Persona: p, msgCount: map[string]int{}, threads: map[string]bool{}}
}

// Begin starts the delta of a day.
func (b *Builder) Begin(day int, clock string) {
	b.d = &delta.Delta{Version: delta.Version, Persona: b.Persona.ID, Day: day, Clock: clock}
}

// Delta returns the day's delta.
func (b *Builder) Delta() *delta.Delta { return b.d }

func (b *Builder) op(o delta.Op)         { b.d.Ops = append(b.d.Ops, o) }
func (b *Builder) producesFile(p string) { b.d.Produces.Files = append(b.d.Produces.Files, p) }
func (b *Builder) producesRow(db, table string, key map[string]any) {
	b.d.Produces.Rows = append(b.d.Produces.Rows, world.RowRef{DB: db, Table: table, Key: key})
}

func lit(v any) delta.Value { return delta.Lit(v) }

func strp(s string) *string { return &s }

func rawJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("synth: marshal params: %v", err))
	}
	return b
}

// Skills returns the case study's skill library, by name.
func Skills() map[string]Skill {
	list := []Skill{
		skillProvision(), skillAccount(), skillConversation(), skillPurchase(),
		skillInventory(), skillBOM(), skillSpecSheet(), skillNote(), skillServiceEvent(), skillSiteHistory(),
	}
	m := make(map[string]Skill, len(list))
	for _, s := range list {
		m[s.Name] = s
	}
	return m
}

func accountRef(site, username string) world.AccountRef {
	return world.AccountRef{Site: site, Username: username}
}
