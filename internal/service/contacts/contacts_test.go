package contacts

import (
	"context"
	"database/sql/driver"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
)

// The tools' results as the tests read them.
type (
	contact struct {
		Contact   string   `json:"contact"`
		Role      string   `json:"role"`
		Tags      []string `json:"tags"`
		Notes     string   `json:"notes"`
		UpdatedAt string   `json:"updated_at"`
	}
	contactList struct {
		Contacts []contact `json:"contacts"`
	}
)

// TestSynthesis applies god-mode operations to a world without a contacts
// database and reads the result through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ops, err := InsertOps(
		Seed{Name: " Maya Chen ", Email: "maya@example.com", Company: "Lumen Labs", Tags: []string{"Work", "friend"}, UpdatedAt: at},
		Seed{ExtID: "c-2", Name: "Bob Weller", Phone: "+1 555 0100", Notes: "Accountant.", UpdatedAt: at},
	)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := TagOp("c-2", "work")
	if err != nil {
		t.Fatal(err)
	}
	role := " CFO "
	up, err := UpdateOp("c-2", Fields{Role: &role}, at.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T18:00:00Z",
		Ops: append(append([]delta.Op{CreateOp()}, ops...), tag, up)}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	s, err := engine.New(Compiled(), engine.Options{WorldDir: dst, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, s)
	list := servicetest.Call[contactList](t, cs, "list_contacts", nil)
	var ids []string
	for _, c := range list.Contacts {
		ids = append(ids, c.Contact)
	}
	if !slices.Equal(ids, []string{"c-2", "maya-chen"}) {
		t.Fatalf("contacts = %v", ids)
	}
	bob := servicetest.Call[contact](t, cs, "get_contact", map[string]any{"contact": "c-2"})
	if bob.Role != "CFO" || bob.Notes != "Accountant." || bob.UpdatedAt != "2026-03-02 09:00:00" || !slices.Equal(bob.Tags, []string{"work"}) {
		t.Errorf("bob = %+v", bob)
	}
	maya := servicetest.Call[contact](t, cs, "get_contact", map[string]any{"contact": "maya-chen"})
	if !slices.Equal(maya.Tags, []string{"friend", "work"}) || maya.UpdatedAt != "2026-03-02 08:00:00" {
		t.Errorf("maya = %+v", maya)
	}
	// The tools keep the seeds' invariants.
	if msg := servicetest.CallError(t, cs, "create_contact", map[string]any{"name": "M", "email": "maya@example.com"}); !strings.Contains(msg, "maya-chen") {
		t.Errorf("duplicate email message = %q", msg)
	}

	// Invalid seeds are refused.
	for _, bad := range [][]Seed{
		{{Name: "", UpdatedAt: at}},
		{{Name: "X", Email: "nope", UpdatedAt: at}},
		{{Name: "X", Phone: "555-CALL-NOW", UpdatedAt: at}},
		{{Name: "X", Role: "a\nb", UpdatedAt: at}},
		{{Name: "X"}},
		{{Name: "X", Tags: []string{"a b"}, UpdatedAt: at}},
		{{Name: "X", Email: "a@b.co", UpdatedAt: at}, {Name: "Y", Email: "A@b.co", UpdatedAt: at}},
		{{Name: "X", UpdatedAt: at}, {Name: "x", UpdatedAt: at}},
	} {
		if _, err := InsertOps(bad...); err == nil {
			t.Errorf("InsertOps(%+v): no error", bad)
		}
	}
	if _, err := UpdateOp("x", Fields{}, at); err == nil {
		t.Error("UpdateOp without fields: no error")
	}
	bad := "bad"
	if _, err := UpdateOp("x", Fields{Email: &bad}, at); err == nil {
		t.Error("UpdateOp with a bad email: no error")
	}
}

func TestValidators(t *testing.T) {
	for _, ok := range []string{"a@b.co", "first.last+tag@sub.example.com", "x_y-z@mail-server.io"} {
		if _, err := checkEmail(ok); err != nil {
			t.Errorf("checkEmail(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"a", "@b.co", "a@", "a@.co", "a@b..co", ".a@b.co", "a@-b.co", "a@b.c0m1", "é@b.co", "a@b_c.com"} {
		if _, err := checkEmail(bad); err == nil {
			t.Errorf("checkEmail(%q) ok", bad)
		}
	}
	for _, ok := range []string{"+1 415-555-0100", "020 7946 0958", "911"} {
		if _, err := checkPhone(ok); err != nil {
			t.Errorf("checkPhone(%q) = %v", ok, err)
		}
	}
	for _, bad := range []string{"(415) 555", "12", "++1 555", "555.0100", "ext 5"} {
		if _, err := checkPhone(bad); err == nil {
			t.Errorf("checkPhone(%q) ok", bad)
		}
	}
	for in, want := range map[string]string{" Book-Club ": "book-club", "CAFÉ_2": "café_2"} {
		if got, err := normTag(in); err != nil || got != want {
			t.Errorf("normTag(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

// TestFields: update_contact's fields decode as encoding/json decodes them
// into Fields, which the hooks replicate in SQL.
func TestFields(t *testing.T) {
	field := Hooks.Funcs["contacts_field"].Fn
	for _, c := range []struct {
		json, name string
		want       any
	}{
		{`{"role": "CTO"}`, "role", "CTO"},
		{`{"Role": "CTO"}`, "role", "CTO"},
		{`{"role": "A", "ROLE": "B"}`, "role", "B"},
		{`{"role": null}`, "role", nil},
		{`{"phone": ""}`, "phone", ""},
		{`{"phone": ""}`, "email", nil},
	} {
		if got, err := field([]driver.Value{c.json, c.name}); err != nil || got != c.want {
			t.Errorf("contacts_field(%s, %s) = %v, %v; want %v", c.json, c.name, got, err, c.want)
		}
	}
	fieldsErr := Hooks.Funcs["contacts_fields_error"].Fn
	for in, want := range map[string]any{
		`{"role": "x"}`:     nil,
		`{"nickname": "x"}`: `the arguments of update_contact are not valid: json: unknown field "nickname"`,
		`{"name": 5}`:       `argument "fields.name" of update_contact must be string, not number`,
	} {
		if got, _ := fieldsErr([]driver.Value{in}); got != want {
			t.Errorf("contacts_fields_error(%s) = %v, want %v", in, got, want)
		}
	}
	invalid := Hooks.Funcs["contacts_invalid"].Fn
	for _, c := range []struct {
		field string
		v     any
		want  string
	}{
		{"email", nil, ""},
		{"email", "", ""},
		{"fields.name", "", "fields.name is empty"},
		{"company", []byte("A\x00B"), "company has a line break or control character"},
		{"tag", "two words", `tag "two words" may contain only letters`},
	} {
		got, _ := invalid([]driver.Value{c.field, c.v})
		if s, _ := got.(string); !strings.HasPrefix(s, c.want) || (c.want == "") != (got == nil) {
			t.Errorf("contacts_invalid(%s, %q) = %v, want %q...", c.field, c.v, got, c.want)
		}
	}
}

// TestDefinition: the schema is what it was when the service was Go (a
// world's hash depends on it byte for byte), and TestClock and TestSelf are
// the definition's test world's.
func TestDefinition(t *testing.T) {
	want := []string{
		"CREATE TABLE contacts (\n  id INTEGER PRIMARY KEY,\n  ext_id TEXT NOT NULL UNIQUE,\n  name TEXT NOT NULL,\n  email TEXT NOT NULL DEFAULT '',\n" +
			"  phone TEXT NOT NULL DEFAULT '',\n  company TEXT NOT NULL DEFAULT '',\n  role TEXT NOT NULL DEFAULT '',\n  notes TEXT NOT NULL DEFAULT '',\n  updated_at TEXT NOT NULL\n)",
		"CREATE TABLE contact_tags (\n  id INTEGER PRIMARY KEY,\n  contact_id INTEGER NOT NULL REFERENCES contacts(id),\n  tag TEXT NOT NULL,\n  UNIQUE(contact_id, tag)\n)",
	}
	if got := Schema(); !slices.Equal(got, want) {
		t.Errorf("Schema() =\n%q\nwant\n%q", got, want)
	}
	if now := TestClock().Now().UTC().Format(time.RFC3339); now != Compiled().Def.Test.Now {
		t.Errorf("TestClock is %s, the definition's test world %s", now, Compiled().Def.Test.Now)
	}
	if TestSelf != Compiled().Def.Test.Self {
		t.Errorf("TestSelf is %s, the definition's test world's %s", TestSelf, Compiled().Def.Test.Self)
	}
}
