package persona

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func testGrounding() *Grounding {
	return &Grounding{
		Cities:      []string{"Lisbon", "Osaka", "Nairobi", "Lima", "Oslo", "Toronto"},
		Cuisines:    []string{"Italian", "Japanese", "Peruvian"},
		Teams:       []string{"Harbor City FC", "Lakeside Rovers"},
		Subjects:    []string{"statistics", "biology", "history"},
		Languages:   []string{"Go", "Python", "Rust"},
		Categories:  []string{"audio", "cameras", "kitchen"},
		Sites:       []string{"archive", "calc", "code", "courses", "devices", "dictionary", "flights", "maps", "models", "news", "recipes", "search", "shop", "sports", "stays"},
		Services:    []string{"calendar", "contacts", "mail", "messages", "notes", "payments", "support", "tasks"},
		Definitions: []string{"budget", "habits"},
	}
}

func TestGenerateIsValidAndDeterministic(t *testing.T) {
	g := testGrounding()
	for i := range 60 {
		r := Request{Seed: 7, Index: i, Days: 8 + i%23}
		p, err := Generate(g, r)
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Validate(true); err != nil {
			t.Errorf("persona %d: %v", i, err)
		}
		q, _ := Generate(g, r)
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("persona %d differs between two runs", i)
		}
		b, _ := json.Marshal(p)
		var back Persona
		if err := json.Unmarshal(b, &back); err != nil || !reflect.DeepEqual(*p, back) {
			t.Fatalf("persona %d does not round-trip through JSON: %v", i, err)
		}
	}
}

func TestGateRejectsAndRevisionPasses(t *testing.T) {
	g := testGrounding()
	var gate Gate
	a, _ := Generate(g, Request{Seed: 1, Index: 0, Days: 10})
	if v := gate.Judge(a); !v.OK {
		t.Fatalf("the first persona is rejected: %v", v.Reasons)
	}
	gate.Accept(a)
	// The same draw again shares everything with the accepted one.
	same, _ := Generate(g, Request{Seed: 1, Index: 0, Days: 10})
	v := gate.Judge(same)
	if v.OK || len(v.Reasons) < 3 {
		t.Fatalf("a copy of an accepted persona passed or gave few reasons: %+v", v.Reasons)
	}
	for _, want := range []string{"occupation and life domain", "core tool and site pattern", "arc"} {
		if !strings.Contains(strings.Join(v.Reasons, "; "), want) {
			t.Errorf("reasons %q lack %q", v.Reasons, want)
		}
	}
	// A revision with the gate's feedback passes, and reserves no name of
	// the accepted persona.
	rev, err := Generate(g, Request{Seed: 1, Index: 0, Revision: 1, Days: 10, Avoid: v.Avoid})
	if err != nil {
		t.Fatal(err)
	}
	if v := gate.Judge(rev); !v.OK {
		t.Fatalf("the revision is rejected: %v", v.Reasons)
	}
	for n := range Reserved(rev) {
		if Reserved(a)[n] {
			t.Errorf("the revision reuses %q of the accepted persona", n)
		}
	}
}

func TestIdentities(t *testing.T) {
	g := testGrounding()
	a, _ := Generate(g, Request{Seed: 3, Index: 1, Days: 9})
	b, _ := Generate(g, Request{Seed: 3, Index: 2, Days: 9, Avoid: Avoid{Names: Reserved(a)}})
	id := NewIdentities([]*Persona{a, b})
	if got := id.Foreign(b.ID, []string{"hello", b.Name, b.Contacts[0].Name}); len(got) != 0 {
		t.Errorf("b's own names flagged: %v", got)
	}
	got := id.Foreign(b.ID, []string{"Lunch with " + a.Contacts[1].Name + " on Friday", a.Accounts[0].Username})
	if len(got) != 2 || !strings.Contains(got[0], a.ID) {
		t.Errorf("a's names in b's world: got %v, want two reserved by %s", got, a.ID)
	}
}

func TestValidateNamesTheField(t *testing.T) {
	p, _ := Generate(testGrounding(), Request{Seed: 1, Days: 8})
	p.Contacts = p.Contacts[:2]
	p.Accounts[0].Password = "short"
	p.Roadmap = append(p.Roadmap, Roadmap{Service: "nosuch", Arc: 9})
	err := p.Validate(true)
	for _, want := range []string{"contacts: 2", "accounts[0].password", `roadmap[`, `"nosuch" is not in services`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("got %v, want it to name %q", err, want)
		}
	}
}
