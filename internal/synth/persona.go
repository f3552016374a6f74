package synth

// Contact is a named person in the persona's life.
type Contact struct {
	Name string `json:"name"`
	Role string `json:"role"`
}

// Account is a web account of the persona (the password is in the bible
// so the world can put it in the workspace; the world stores only a hash).
type Account struct {
	Site     string `json:"site"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// Persona is the persona bible.
type Persona struct {
	ID         string    `json:"id"`
	Name       string    `json:"name"`
	Occupation string    `json:"occupation"`
	Profile    string    `json:"profile"`
	Contacts   []Contact `json:"contacts"`
	Accounts   []Account `json:"accounts"`
	Services   []string  `json:"services"`
	Arcs       []string  `json:"arcs"`
	Signature  string    `json:"signature"`
}

// Contact returns the contact with role, or the zero Contact.
func (p *Persona) Contact(role string) Contact {
	for _, c := range p.Contacts {
		if c.Role == role {
			return c
		}
	}
	return Contact{}
}

// CaseStudyPersona is the paper's case-study persona: a freelance
// audio-visual technician fitting out a venue's equipment rack.
func CaseStudyPersona() Persona {
	return Persona{
		ID:         "alex-rivera",
		Name:       "Alex Rivera",
		Occupation: "freelance audio-visual technician",
		Profile:    "Runs small AV installs for venues; keeps inventory in CSV, drafts bills of materials in markdown, buys gear from an online shop and coordinates with clients and an install assistant over direct messages.",
		Contacts: []Contact{
			{Name: "Maya Okafor", Role: "venue manager"},
			{Name: "Priya Mehta", Role: "install assistant"},
			{Name: "Jonas Lindqvist", Role: "equipment supplier"},
		},
		Accounts: []Account{{Site: "shop", Username: "alex.rivera", Password: "rack-it-up-42"},
			{Site: "recipes", Username: "alex.rivera", Password: "slow-cooked-7"},
			{Site: "stays", Username: "alex.rivera", Password: "on-the-road-19"},
			{Site: "maps", Username: "alex.rivera", Password: "find-the-venue-3"}},
		Services: []string{"messages"},
		Arcs: []string{
			"Venue rack fit-out: draft the bill of materials, collect spec sheets, get the client's approval, order the surge protection (image-decisive: the approved unit is identified by its look).",
			"Keeping the gear inventory current between jobs.",
		},
		Signature: "av-technician|shop+messages+shell|rack fit-out approval",
	}
}
