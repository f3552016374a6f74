package persona

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// Version is the persona bible format's version.
const Version = 1

// Contact is a named person in the persona's life.
type Contact struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	Email string `json:"email,omitempty"`
	// Thread is the direct-message thread with the contact (dm-first-last).
	Thread string `json:"thread,omitempty"`
}

// Account is a web account. The bible keeps the password so the world can
// put it in the workspace; the world stores only its fixed-salt hash.
type Account struct {
	Site     string `json:"site"`
	Username string `json:"username"`
	Password string `json:"password"`
}

// Arc is a multi-day story of the persona's life.
type Arc struct {
	// Template and Anchor identify the arc for the diversity gate:
	// "trip" to "lisbon" is one narrative, "trip" to "osaka" another.
	Template string `json:"template"`
	Anchor   string `json:"anchor"`
	Title    string `json:"title"`
	Summary  string `json:"summary"`
	// From and To are the days the arc runs over (inclusive).
	From int `json:"from"`
	To   int `json:"to"`
	// ImageDecisive is set when the arc's decisive fact is in an image.
	ImageDecisive bool     `json:"image_decisive,omitempty"`
	Sites         []string `json:"sites,omitempty"`
	Services      []string `json:"services,omitempty"`
	// Skills are the event skills the arc draws on.
	Skills []string `json:"skills,omitempty"`
}

// Roadmap is when the persona starts using a service, and for which arc.
type Roadmap struct {
	Service string `json:"service"`
	Arc     int    `json:"arc"`
	FromDay int    `json:"from_day"`
}

// Demographics are the persona's facts of life.
type Demographics struct {
	Age       int    `json:"age"`
	City      string `json:"city"`
	Country   string `json:"country"`
	Household string `json:"household"`
}

// Persona is the persona bible.
type Persona struct {
	Version      int          `json:"version"`
	ID           string       `json:"id"`
	Name         string       `json:"name"`
	Occupation   string       `json:"occupation"`
	LifeDomain   string       `json:"life_domain"`
	Profile      string       `json:"profile"`
	Demographics Demographics `json:"demographics"`
	Contacts     []Contact    `json:"contacts"`
	// Tools are what the persona works with in the shell (file kinds and
	// programs: csv, markdown, pdf, python).
	Tools    []string  `json:"tools"`
	Sites    []string  `json:"sites"`
	Services []string  `json:"services"`
	Roadmap  []Roadmap `json:"roadmap"`
	Arcs     []Arc     `json:"arcs"`
	Accounts []Account `json:"accounts"`
	// Interests ground the persona in catalog entities: a cuisine, a
	// team, a subject, a travel city.
	Interests map[string]string `json:"interests,omitempty"`
	// Days is how many days the persona's world runs (day 0 to Days-1).
	Days      int    `json:"days,omitempty"`
	Signature string `json:"signature"`
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

// Account returns the persona's account on site.
func (p *Persona) Account(site string) (Account, bool) {
	for _, a := range p.Accounts {
		if a.Site == site {
			return a, true
		}
	}
	return Account{}, false
}

var (
	idRE       = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
	usernameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,39}$`)
)

// Validate checks the bible against the paper's requirements; the error
// names the field and the fix. full asks for the generated persona's
// requirements too (>= 3 contacts, 4-8 roadmap services, 2-5 arcs with one
// image-decisive); the hand-written case study is checked without it.
func (p *Persona) Validate(full bool) error {
	var errs []string
	add := func(format string, args ...any) { errs = append(errs, fmt.Sprintf(format, args...)) }
	if p.Version != Version {
		add("version is %d; this build reads version %d", p.Version, Version)
	}
	if !idRE.MatchString(p.ID) {
		add("id %q must be lower-case letters, digits and dashes, e.g. alex-rivera", p.ID)
	}
	if strings.TrimSpace(p.Name) == "" {
		add("name is empty: give the persona's full name")
	}
	if p.Occupation == "" {
		add("occupation is empty")
	}
	names := map[string]bool{p.Name: true}
	for i, c := range p.Contacts {
		if strings.TrimSpace(c.Name) == "" || c.Role == "" {
			add("contacts[%d]: name and role are required", i)
		}
		if names[c.Name] {
			add("contacts[%d]: name %q is used twice (or is the persona's own)", i, c.Name)
		}
		names[c.Name] = true
	}
	sites := map[string]bool{}
	for i, a := range p.Accounts {
		if !usernameRE.MatchString(a.Username) {
			add("accounts[%d].username %q must be 1-40 lower-case letters, digits, dots, dashes or underscores", i, a.Username)
		}
		if len(a.Password) < 8 {
			add("accounts[%d].password must have at least 8 characters", i)
		}
		if sites[a.Site] {
			add("accounts[%d]: a second account on %q", i, a.Site)
		}
		sites[a.Site] = true
	}
	for i, a := range p.Arcs {
		if a.Template == "" || a.Title == "" {
			add("arcs[%d]: template and title are required", i)
		}
		if a.From > a.To {
			add("arcs[%d]: from day %d is after to day %d", i, a.From, a.To)
		}
	}
	for i, r := range p.Roadmap {
		if !slices.Contains(p.Services, r.Service) {
			add("roadmap[%d]: service %q is not in services", i, r.Service)
		}
		if r.Arc < 0 || r.Arc >= len(p.Arcs) {
			add("roadmap[%d]: arc %d is not an index of arcs (0 to %d)", i, r.Arc, len(p.Arcs)-1)
		}
	}
	if p.Signature == "" {
		add("signature is empty")
	}
	if full {
		if len(p.Contacts) < 3 {
			add("contacts: %d, need at least 3 named contacts", len(p.Contacts))
		}
		if n := len(p.Roadmap); n < 4 || n > 8 {
			add("roadmap: %d services, need 4 to 8 bound to arcs", n)
		}
		if n := len(p.Arcs); n < 2 || n > 5 {
			add("arcs: %d, need 2 to 5", n)
		}
		if !slices.ContainsFunc(p.Arcs, func(a Arc) bool { return a.ImageDecisive }) {
			add("arcs: none is image-decisive; mark one whose decisive fact is in an image")
		}
		if p.Days < 1 {
			add("days is %d; give the number of days the world runs", p.Days)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("persona %s: %s", p.ID, strings.Join(errs, "; "))
	}
	return nil
}

// Slug is the id form of a name: "Maya Okafor" is "maya-okafor".
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9':
			b.WriteRune(r)
			dash = false
		case b.Len() > 0 && !dash:
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// Email is a name's address in the worlds' mail: "maya.okafor@mail.example".
func Email(name string) string {
	return strings.ReplaceAll(Slug(name), "-", ".") + "@mail.example"
}
