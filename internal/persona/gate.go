package persona

import (
	"fmt"
	"slices"
	"strings"
)

// Verdict is the diversity gate's judgment of a candidate.
type Verdict struct {
	OK bool `json:"ok"`
	// Reasons name the accepted persona each conflict is with.
	Reasons []string `json:"reasons,omitempty"`
	// Avoid is the feedback for a revision.
	Avoid Avoid `json:"-"`
}

// Gate is the diversity gate over accepted personas: a candidate that
// shares occupation and life domain, its core tool and site pattern, or a
// narrative arc with an accepted persona is rejected.
type Gate struct {
	accepted []*Persona
}

// Accepted returns the accepted personas, in order.
func (g *Gate) Accepted() []*Persona { return g.accepted }

// Judge judges c against the accepted personas.
func (g *Gate) Judge(c *Persona) Verdict {
	v := Verdict{OK: true, Avoid: g.avoid()}
	occ := c.Occupation + "|" + c.LifeDomain
	pat := Pattern(c)
	mine := Reserved(c)
	for _, a := range g.accepted {
		if a.ID == c.ID {
			v.Reasons = append(v.Reasons, fmt.Sprintf("id %s is an accepted persona's", c.ID))
		}
		for n := range Reserved(a) {
			if mine[n] && n != a.ID {
				v.Reasons = append(v.Reasons, fmt.Sprintf("name %q is reserved by %s", n, a.ID))
			}
		}
		if a.Occupation+"|"+a.LifeDomain == occ {
			v.Reasons = append(v.Reasons, fmt.Sprintf("occupation and life domain %q / %q are %s's", c.Occupation, c.LifeDomain, a.ID))
		}
		if Pattern(a) == pat {
			v.Reasons = append(v.Reasons, fmt.Sprintf("core tool and site pattern %s is %s's", pat, a.ID))
		}
		for _, x := range c.Arcs {
			for _, y := range a.Arcs {
				if x.Template == y.Template && x.Anchor == y.Anchor {
					v.Reasons = append(v.Reasons, fmt.Sprintf("arc %q is also %s's", x.Title, a.ID))
				}
			}
		}
	}
	v.OK = len(v.Reasons) == 0
	return v
}

// Accept adds p to the accepted personas.
func (g *Gate) Accept(p *Persona) { g.accepted = append(g.accepted, p) }

// avoid is the feedback every revision gets: what the accepted personas hold.
func (g *Gate) avoid() Avoid {
	a := Avoid{Occupations: map[string]bool{}, Patterns: map[string]bool{}, Arcs: map[string]bool{}, Names: map[string]bool{}}
	for _, p := range g.accepted {
		a.Occupations[p.Occupation+"|"+p.LifeDomain] = true
		a.Patterns[Pattern(p)] = true
		for _, x := range p.Arcs {
			a.Arcs[x.Template+"/"+x.Anchor] = true
		}
		for n := range Reserved(p) {
			a.Names[n] = true
		}
	}
	return a
}

// Reserved are the names a persona reserves: its name and id, its
// contacts' names, and its usernames.
func Reserved(p *Persona) map[string]bool {
	out := map[string]bool{p.Name: true, p.ID: true}
	for _, c := range p.Contacts {
		out[c.Name] = true
	}
	for _, a := range p.Accounts {
		if a.Username != "" {
			out[a.Username] = true
		}
	}
	return out
}

// Identities is the cross-persona identity registry: which persona
// reserves each name.
type Identities struct {
	owner map[string]string
	full  []string // the reserved full names (with a space), sorted
}

// NewIdentities returns the registry of personas' reserved names.
func NewIdentities(ps []*Persona) *Identities {
	id := &Identities{owner: map[string]string{}}
	for _, p := range ps {
		for n := range Reserved(p) {
			if _, taken := id.owner[n]; !taken {
				id.owner[n] = p.ID
				if strings.Contains(n, " ") {
					id.full = append(id.full, n)
				}
			}
		}
	}
	slices.Sort(id.full)
	return id
}

// Owner returns the persona that reserves name, or "".
func (id *Identities) Owner(name string) string { return id.owner[name] }

// Foreign returns the names in texts that another persona than self
// reserves, with their owners ("Maya Okafor (reserved by alex-rivera)"):
// a text that is a reserved name or id, or holds a reserved full name.
func (id *Identities) Foreign(self string, texts []string) []string {
	var out []string
	seen := map[string]bool{}
	flag := func(n string) {
		if o := id.owner[n]; o != "" && o != self && !seen[n] {
			seen[n] = true
			out = append(out, fmt.Sprintf("%s (reserved by %s)", n, o))
		}
	}
	for _, t := range texts {
		flag(t)
		if strings.Contains(t, " ") {
			for _, n := range id.full {
				if strings.Contains(t, n) {
					flag(n)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}
