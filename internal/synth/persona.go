package synth

import "github.com/wildawm/wildawm/internal/persona"

// CaseStudyPersona is the paper's case-study persona: a freelance
// audio-visual technician fitting out a venue's equipment rack.
func CaseStudyPersona() Persona {
	return Persona{
		Version:      persona.Version,
		ID:           "alex-rivera",
		Name:         "Alex Rivera",
		Occupation:   "freelance audio-visual technician",
		LifeDomain:   "work: venue installs",
		Profile:      "Runs small AV installs for venues; keeps inventory in CSV, drafts bills of materials in markdown, buys gear from an online shop and coordinates with clients and an install assistant over direct messages.",
		Demographics: persona.Demographics{Age: 34, City: "Lisbon", Country: "Portugal", Household: "lives alone"},
		Contacts: []Contact{
			{Name: "Maya Okafor", Role: "venue manager"},
			{Name: "Priya Mehta", Role: "install assistant"},
			{Name: "Jonas Lindqvist", Role: "equipment supplier"},
		},
		Tools: []string{"csv", "markdown", "pdf"},
		Sites: []string{"shop", "recipes", "stays", "maps"},
		Accounts: []Account{{Site: "shop", Username: "alex.rivera", Password: "rack-it-up-42"},
			{Site: "recipes", Username: "alex.rivera", Password: "slow-cooked-7"},
			{Site: "stays", Username: "alex.rivera", Password: "on-the-road-19"},
			{Site: "maps", Username: "alex.rivera", Password: "find-the-venue-3"}},
		Services: []string{"messages", "mail", "calendar", "contacts", "notes", "tasks", "payments", "support"},
		Arcs: []persona.Arc{
			{Template: "rack-fit-out", Anchor: "harbor-hall", Title: "Venue rack fit-out",
				Summary: "Draft the bill of materials, collect spec sheets, get the client's approval, order the surge protection (image-decisive: the approved unit is identified by its look).",
				From:    0, To: 4, ImageDecisive: true, Sites: []string{"shop"}, Services: []string{"messages"}},
			{Template: "inventory", Anchor: "gear", Title: "Keeping the gear inventory current between jobs.", From: 0, To: 4},
		},
		Days:      5,
		Signature: "av-technician|shop+messages+shell|rack fit-out approval",
	}
}
