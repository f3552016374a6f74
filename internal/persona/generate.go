package persona

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// Grounding is what personas are drawn from: the catalog's entities and
// the registries' sites and services. The caller reads them from the
// catalog and the registries; every list must be sorted.
type Grounding struct {
	Cities     []string // catalog cities
	Cuisines   []string
	Teams      []string
	Subjects   []string // course subjects and paper categories
	Languages  []string // repository languages
	Categories []string // shop categories
	Sites      []string // every registered site
	Services   []string // every built-in service
	// Definitions are the services served from definitions in the shared
	// library (habits, budget...), which personas may add to their roadmap.
	Definitions []string
}

// Avoid is what a revision must not repeat: the diversity gate's feedback.
type Avoid struct {
	Occupations map[string]bool // occupation + "|" + life domain
	Patterns    map[string]bool
	Arcs        map[string]bool // template + "/" + anchor
	// Names are reserved by accepted personas (Identities.Reserved).
	Names map[string]bool
}

// Request is one persona stage job's input: it is the whole input, so the
// persona is a pure function of it.
type Request struct {
	Seed  uint64 `json:"seed"`
	Index int    `json:"index"`
	// Revision is 0 for the first draft and 1, 2 for revisions.
	Revision int `json:"revision"`
	Days     int `json:"days"`
	// Name, when set, is the persona's name (syn persona --name).
	Name  string `json:"name,omitempty"`
	Avoid Avoid  `json:"avoid"`
}

// Generate draws a persona for r from g. The same request gives the same
// persona.
func Generate(g *Grounding, r Request) (*Persona, error) {
	if len(g.Cities) == 0 || len(g.Sites) == 0 || len(g.Services) < 4 {
		return nil, fmt.Errorf("persona: the grounding lacks cities, sites or services (need the catalog and the registries)")
	}
	rng := rand.New(rand.NewPCG(r.Seed^0x9e3779b97f4a7c15, uint64(r.Index)<<8|uint64(r.Revision)))
	// The occupation: the index's own first, then on a revision any not
	// avoided.
	order := rng.Perm(len(occupations))
	start := r.Index % len(occupations)
	var occ occupation
	for k := range occupations {
		o := occupations[(start+k)%len(occupations)]
		if r.Revision > 0 {
			o = occupations[order[k]]
		}
		if !r.Avoid.Occupations[o.Title+"|"+o.Domain] {
			occ = o
			break
		}
	}
	if occ.Title == "" {
		return nil, fmt.Errorf("persona: every occupation is taken by an accepted persona (%d)", len(occupations))
	}
	p := &Persona{Version: Version, Occupation: occ.Title, LifeDomain: occ.Domain, Days: r.Days}

	// Names, free of every reserved one.
	used := map[string]bool{}
	name := func() string {
		for range 10000 {
			n := firstNames[rng.IntN(len(firstNames))] + " " + lastNames[rng.IntN(len(lastNames))]
			if !r.Avoid.Names[n] && !used[n] && !r.Avoid.Names[Slug(n)] {
				used[n] = true
				return n
			}
		}
		panic("persona: no free name") // 7,000 names; far more than any run reserves
	}
	if r.Name != "" {
		p.Name = r.Name
		used[r.Name] = true
	} else {
		p.Name = name()
	}
	p.ID = Slug(p.Name)
	first := strings.Fields(p.Name)[0]
	city := g.Cities[rng.IntN(len(g.Cities))]
	p.Demographics = Demographics{Age: 19 + rng.IntN(52), City: city, Household: households[rng.IntN(len(households))]}
	for _, role := range occ.Roles {
		n := name()
		p.Contacts = append(p.Contacts, Contact{Name: n, Role: role, Email: Email(n), Thread: "dm-" + Slug(n)})
	}
	p.Tools = slices.Clone(occ.Tools)

	// Sites: the core ones, then two or three more.
	p.Sites = slices.Clone(occ.Sites)
	for _, i := range rng.Perm(len(g.Sites)) {
		if len(p.Sites) >= len(occ.Sites)+2+rng.IntN(2) {
			break
		}
		if s := g.Sites[i]; !slices.Contains(p.Sites, s) {
			p.Sites = append(p.Sites, s)
		}
	}
	// Interests ground the arcs in catalog entities.
	p.Interests = map[string]string{"city": city}
	pickInto := func(key string, xs []string) {
		if len(xs) > 0 {
			p.Interests[key] = xs[rng.IntN(len(xs))]
		}
	}
	pickInto("cuisine", g.Cuisines)
	pickInto("team", g.Teams)
	pickInto("subject", g.Subjects)
	pickInto("language", g.Languages)
	pickInto("category", g.Categories)

	// Arcs: 2 to 5 from the occupation's templates and others, anchored in
	// a catalog entity, at least one image-decisive.
	nArcs := 2 + rng.IntN(4)
	templates := slices.Clone(occ.Arcs)
	var others []string
	for id := range arcTemplates {
		if !slices.Contains(templates, id) {
			others = append(others, id)
		}
	}
	slices.Sort(others)
	rng.Shuffle(len(others), func(i, j int) { others[i], others[j] = others[j], others[i] })
	templates = append(templates, others...)
	anchorOf := func(kind string) string {
		switch kind {
		case "city":
			return g.Cities[rng.IntN(len(g.Cities))]
		case "cuisine", "team", "subject", "language", "category":
			lists := map[string][]string{"cuisine": g.Cuisines, "team": g.Teams, "subject": g.Subjects, "language": g.Languages, "category": g.Categories}
			if xs := lists[kind]; len(xs) > 0 {
				return xs[rng.IntN(len(xs))]
			}
		}
		return things[rng.IntN(len(things))]
	}
	days := max(r.Days, 2)
	for _, id := range templates {
		if len(p.Arcs) >= nArcs {
			break
		}
		t := arcTemplates[id]
		var anchor string
		for range 8 {
			anchor = anchorOf(t.AnchorKind)
			if !r.Avoid.Arcs[t.ID+"/"+Slug(anchor)] {
				break
			}
		}
		if r.Avoid.Arcs[t.ID+"/"+Slug(anchor)] {
			continue
		}
		from := rng.IntN(max(1, days/2))
		to := min(days-1, from+2+rng.IntN(max(1, days-from)))
		p.Arcs = append(p.Arcs, Arc{Template: t.ID, Anchor: Slug(anchor), Title: fmt.Sprintf(t.Title, anchor), Summary: t.Summary,
			From: from, To: to, ImageDecisive: t.Image, Sites: t.Sites, Services: t.Services, Skills: t.Skills})
	}
	if !slices.ContainsFunc(p.Arcs, func(a Arc) bool { return a.ImageDecisive }) {
		// Replace the last arc with an image-decisive one.
		for _, id := range sortedTemplateIDs() {
			t := arcTemplates[id]
			anchor := anchorOf(t.AnchorKind)
			if !t.Image || r.Avoid.Arcs[t.ID+"/"+Slug(anchor)] {
				continue
			}
			last := &p.Arcs[len(p.Arcs)-1]
			*last = Arc{Template: t.ID, Anchor: Slug(anchor), Title: fmt.Sprintf(t.Title, anchor), Summary: t.Summary,
				From: last.From, To: last.To, ImageDecisive: true, Sites: t.Sites, Services: t.Services, Skills: t.Skills}
			break
		}
	}
	for _, a := range p.Arcs {
		for _, s := range a.Sites {
			if !slices.Contains(p.Sites, s) && slices.Contains(g.Sites, s) {
				p.Sites = append(p.Sites, s)
			}
		}
	}

	// Services: the occupation's, the arcs', and every built-in one the
	// person would plausibly have (mail, contacts); 4 to 8 on the roadmap.
	add := func(s string) {
		if !slices.Contains(p.Services, s) && (slices.Contains(g.Services, s) || slices.Contains(g.Definitions, s)) {
			p.Services = append(p.Services, s)
		}
	}
	for _, s := range occ.Services {
		add(s)
	}
	for _, a := range p.Arcs {
		for _, s := range a.Services {
			add(s)
		}
	}
	for _, s := range []string{"mail", "contacts", "messages"} {
		add(s)
	}
	if len(g.Definitions) > 0 && rng.IntN(3) == 0 {
		add(g.Definitions[rng.IntN(len(g.Definitions))])
	}
	if len(p.Services) > 8 {
		p.Services = p.Services[:8]
	}
	for i, s := range p.Services {
		arc := i % len(p.Arcs)
		for k, a := range p.Arcs {
			if slices.Contains(a.Services, s) {
				arc = k
				break
			}
		}
		from := 0
		if i >= 3 {
			from = min(p.Arcs[arc].From, days-1)
		}
		p.Roadmap = append(p.Roadmap, Roadmap{Service: s, Arc: arc, FromDay: from})
	}

	// Accounts on every site, with passwords the world keeps in a notes file.
	for _, s := range p.Sites {
		user := strings.ReplaceAll(p.ID, "-", ".")
		if len(user) > 40 {
			user = user[:40]
		}
		pw := fmt.Sprintf("%s-%s-%02d", passwordWords[rng.IntN(len(passwordWords))], passwordWords[rng.IntN(len(passwordWords))], rng.IntN(100))
		p.Accounts = append(p.Accounts, Account{Site: s, Username: user, Password: pw})
	}
	p.Profile = fmt.Sprintf("%s, %d, a %s in %s who %s. Works with %s; uses %s on the web and %s as services. This month: %s.",
		p.Name, p.Demographics.Age, occ.Title, city, p.Demographics.Household, strings.Join(p.Tools, ", "),
		strings.Join(p.Sites, ", "), strings.Join(p.Services, ", "), arcTitles(p.Arcs))
	p.Signature = Signature(p)
	_ = first
	return p, nil
}

func arcTitles(arcs []Arc) string {
	var ts []string
	for _, a := range arcs {
		ts = append(ts, strings.ToLower(a.Title[:1])+a.Title[1:])
	}
	return strings.Join(ts, "; ")
}

func sortedTemplateIDs() []string {
	var ids []string
	for id := range arcTemplates {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Pattern is the persona's core tool and site pattern: its three most
// used sites and services, and its file tools.
func Pattern(p *Persona) string {
	sites := slices.Clone(p.Sites[:min(3, len(p.Sites))])
	services := slices.Clone(p.Services[:min(3, len(p.Services))])
	tools := slices.Clone(p.Tools)
	slices.Sort(sites)
	slices.Sort(services)
	slices.Sort(tools)
	return strings.Join(sites, "+") + "|" + strings.Join(services, "+") + "|" + strings.Join(tools, "+")
}

// Signature is the compact form the diversity gate compares: occupation,
// life domain, pattern and arcs.
func Signature(p *Persona) string {
	var arcs []string
	for _, a := range p.Arcs {
		arcs = append(arcs, a.Template+"/"+a.Anchor)
	}
	return Slug(p.Occupation) + "|" + Slug(p.LifeDomain) + "|" + Pattern(p) + "|" + strings.Join(arcs, ",")
}
