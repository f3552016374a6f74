package synth

import (
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/skill"
)

// The case study's types are the skill library's.
type (
	Persona   = persona.Persona
	Contact   = persona.Contact
	Account   = persona.Account
	Event     = skill.Event
	Msg       = skill.Msg
	OrderItem = skill.OrderItem
	SpecRow   = skill.SpecRow
)

// Day is one day of a plan.
type Day struct {
	Day    int           `json:"day"`
	Clock  string        `json:"clock"` // RFC 3339 end of day
	Events []skill.Event `json:"events"`
}

// Skills returns the skill library.
func Skills() *skill.Library { return skill.All() }

// e builds an event from typed parameters.
func e(name string, params any) skill.Event { return skill.E(name, params) }
