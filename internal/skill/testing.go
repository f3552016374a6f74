package skill

import (
	"encoding/json"

	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
)

// TestPersona is a persona with an account on every site and every
// built-in service, for the skills' shared suite.
func TestPersona() *persona.Persona {
	p := &persona.Persona{Version: persona.Version, ID: "sam-test", Name: "Sam Tester", Occupation: "tester", LifeDomain: "testing",
		Profile: "Tests every skill.", Days: 3, Signature: "tester|all|all",
		Contacts: []persona.Contact{
			{Name: "Ada Quill", Role: "colleague", Email: persona.Email("Ada Quill"), Thread: "dm-ada-quill"},
			{Name: "Ben Ortiz", Role: "friend", Email: persona.Email("Ben Ortiz"), Thread: "dm-ben-ortiz"},
			{Name: "Cleo Park", Role: "sister", Email: persona.Email("Cleo Park"), Thread: "dm-cleo-park"},
		},
		Tools:     []string{"csv", "markdown", "pdf", "python"},
		Interests: map[string]string{"cuisine": "Italian", "city": "Lisbon", "subject": "statistics", "team": "", "language": "Go"},
	}
	for _, s := range site.All() {
		p.Sites = append(p.Sites, s.Name)
		p.Accounts = append(p.Accounts, persona.Account{Site: s.Name, Username: "sam.tester", Password: "pw-" + s.Name + "-2026"})
	}
	for _, s := range service.All() {
		p.Services = append(p.Services, s.Name)
	}
	return p
}

// Event is one skill use with its parameters.
type Event struct {
	Skill  string          `json:"skill"`
	Params json.RawMessage `json:"params"`
}

// E builds an event from typed parameters.
func E(skill string, params any) Event { return Event{Skill: skill, Params: rawJSON(params)} }

// Bootstrap is the events of a persona's day 0 before anything else:
// every site and service database it uses, and its accounts.
func Bootstrap(p *persona.Persona) []Event {
	var out []Event
	for _, s := range p.Sites {
		out = append(out, E("provision_service", Provision{DB: s}))
	}
	for _, s := range p.Services {
		if _, err := service.Lookup(s); err == nil {
			out = append(out, E("provision_service", Provision{DB: s}))
		}
	}
	for _, a := range p.Accounts {
		out = append(out, E("create_web_account", WebAccount{Site: a.Site}))
	}
	return out
}
