package contacts

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose contacts database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func ids(cs []Contact) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Contact)
	}
	return out
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			// list_contacts: by name, tags, no notes; pagination; tag filter.
			list := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{})
			if got, want := ids(list.Contacts), []string{"bob-weller", "maya-chen", "priya-nair", "sam"}; !slices.Equal(got, want) {
				t.Fatalf("contacts = %v, want %v", got, want)
			}
			if m := list.Contacts[1]; !slices.Equal(m.Tags, []string{"friend", "work"}) || m.Notes != "" || m.Email != "maya@example.com" {
				t.Errorf("maya in list = %+v", m)
			}
			p1 := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"limit": 3})
			p2 := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"limit": 3, "cursor": p1.NextCursor})
			if len(p1.Contacts) != 3 || p1.NextCursor == "" || !slices.Equal(ids(p2.Contacts), []string{"sam"}) || p2.NextCursor != "" {
				t.Fatalf("pages = %v %q / %v %q", ids(p1.Contacts), p1.NextCursor, ids(p2.Contacts), p2.NextCursor)
			}
			friends := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"tag": "Friend"})
			if got := ids(friends.Contacts); !slices.Equal(got, []string{"maya-chen", "priya-nair"}) {
				t.Errorf("friends = %v", got)
			}

			// Walking one at a time gives the same order, crossing every boundary.
			var walked []string
			for cur, n := "", 0; n < 10; n++ {
				pg := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"limit": 1, "cursor": cur})
				walked = append(walked, ids(pg.Contacts)...)
				if cur = pg.NextCursor; cur == "" {
					break
				}
			}
			if !slices.Equal(walked, ids(list.Contacts)) {
				t.Errorf("walked %v, want %v", walked, ids(list.Contacts))
			}

			// search_contacts over name, email, company, role; % is plain.
			for q, want := range map[string][]string{
				"CHEN": {"maya-chen"}, "weller.io": {"bob-weller"}, "lumen": {"maya-chen"},
				"designer": {"sam"}, "50%": {"sam"}, "_": nil, "peanuts": nil, "a": {"bob-weller", "maya-chen", "priya-nair", "sam"},
			} {
				got := servicetest.Call[SearchContactsOut](t, cs, "search_contacts", map[string]any{"query": q})
				if !slices.Equal(ids(got.Contacts), want) {
					t.Errorf("search %q = %v, want %v", q, ids(got.Contacts), want)
				}
			}
			if got := servicetest.Call[SearchContactsOut](t, cs, "search_contacts", map[string]any{"query": "a", "limit": 2}); len(got.Contacts) != 2 || !got.More {
				t.Errorf("limited search = %v more=%v", ids(got.Contacts), got.More)
			}

			// get_contact has notes.
			priya := servicetest.Call[Contact](t, cs, "get_contact", map[string]any{"contact": "priya-nair"})
			if priya.Notes != "Allergic to peanuts. Birthday 12 May." || priya.Phone != "+44 20 7946 0958" || !slices.Equal(priya.Tags, []string{"friend"}) {
				t.Errorf("priya = %+v", priya)
			}

			// create_contact: slug id, trimmed fields, clock time; then -2.
			zoe := servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": " Zoë Park ", "email": "zoe@park.dev", "phone": "+1 212-555-0199", "company": "Park Dev", "role": "Founder", "notes": "Line one\nline two"})
			want := Contact{Contact: "zo-park", Name: "Zoë Park", Email: "zoe@park.dev", Phone: "+1 212-555-0199", Company: "Park Dev", Role: "Founder", Notes: "Line one\nline two", Tags: []string{}, UpdatedAt: "2026-03-01 09:00:00"}
			if !equalContact(zoe, want) {
				t.Errorf("created = %+v, want %+v", zoe, want)
			}
			if again := servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Zoe Park"}); again.Contact != "zoe-park" {
				t.Errorf("second id = %q", again.Contact)
			}
			if dup := servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Zoë  Park"}); dup.Contact != "zo-park-2" {
				t.Errorf("third id = %q", dup.Contact)
			}
			if got := servicetest.Call[Contact](t, cs, "get_contact", map[string]any{"contact": "zo-park"}); !equalContact(got, want) {
				t.Errorf("get new = %+v", got)
			}

			// update_contact: changed fields, clearing, no-op.
			up := servicetest.Call[UpdateContactOut](t, cs, "update_contact", map[string]any{"contact": "bob-weller", "fields": map[string]any{"phone": "555 0100", "company": "", "role": "Accountant"}})
			if !slices.Equal(up.Changed, []string{"phone", "company"}) || up.Contact.Phone != "555 0100" || up.Contact.Company != "" || up.Contact.UpdatedAt != "2026-03-01 09:00:00" {
				t.Errorf("update = %+v", up)
			}
			before := servicetest.HashDB(t, path)
			noop := servicetest.Call[UpdateContactOut](t, cs, "update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"role": "Designer"}})
			if len(noop.Changed) != 0 || noop.Contact.UpdatedAt != "2026-02-20 14:00:00" || servicetest.HashDB(t, path) != before {
				t.Errorf("no-op update = %+v", noop)
			}
			// an email may change case on its own contact.
			servicetest.Call[UpdateContactOut](t, cs, "update_contact", map[string]any{"contact": "maya-chen", "fields": map[string]any{"email": "Maya@Example.com"}})

			// tag_contact: add, repeat, remove.
			tg := servicetest.Call[TagContactOut](t, cs, "tag_contact", map[string]any{"contact": "sam", "tag": " Book-Club "})
			if tg.Tag != "book-club" || !tg.Changed || !slices.Equal(tg.Tags, []string{"book-club"}) {
				t.Errorf("tag = %+v", tg)
			}
			if tg = servicetest.Call[TagContactOut](t, cs, "tag_contact", map[string]any{"contact": "sam", "tag": "book-club"}); tg.Changed {
				t.Errorf("repeat tag = %+v", tg)
			}
			if tg = servicetest.Call[TagContactOut](t, cs, "tag_contact", map[string]any{"contact": "maya-chen", "tag": "work", "remove": true}); !tg.Changed || !slices.Equal(tg.Tags, []string{"friend"}) {
				t.Errorf("untag = %+v", tg)
			}
			work := servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"tag": "work"})
			if !slices.Equal(ids(work.Contacts), []string{"bob-weller"}) {
				t.Errorf("work after untag = %v", ids(work.Contacts))
			}

			// delete_contact removes it and its tags.
			del := servicetest.Call[DeleteContactOut](t, cs, "delete_contact", map[string]any{"contact": "maya-chen"})
			if !del.Deleted || del.Name != "Maya Chen" {
				t.Errorf("delete = %+v", del)
			}
			servicetest.CallError(t, cs, "get_contact", map[string]any{"contact": "maya-chen"})
			friends = servicetest.Call[ListContactsOut](t, cs, "list_contacts", map[string]any{"tag": "friend"})
			if !slices.Equal(ids(friends.Contacts), []string{"priya-nair"}) {
				t.Errorf("friends after delete = %v", ids(friends.Contacts))
			}
			// its email is free again.
			servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Maya C.", "email": "maya@example.com"})
		})
	}
}

func equalContact(a, b Contact) bool {
	return reflect.DeepEqual(a, b)
}

func TestBadInputsChangeNothing(t *testing.T) {
	huge := strings.Repeat("x", 100000)
	sqlish := "'; DROP TABLE contacts; --"
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"get_contact", map[string]any{"contact": "nope"}, "call search_contacts"},
		{"get_contact", map[string]any{"contact": "MAYA-CHEN"}, `did you mean contact "maya-chen"`},
		{"get_contact", map[string]any{"contact": "sam ortiz"}, `did you mean contact "sam"`},
		{"get_contact", map[string]any{"contact": "BOB@weller.io"}, `did you mean contact "bob-weller"`},
		{"get_contact", map[string]any{"contact": ""}, "contact is required"},
		{"get_contact", map[string]any{"contact": sqlish}, "no contact"},
		{"get_contact", map[string]any{"contact": huge}, "longer than any contact id"},
		{"get_contact", map[string]any{}, "contact"},
		{"get_contact", map[string]any{"contact": 7}, "contact"},
		{"get_contact", map[string]any{"contact": "sam", "extra": 1}, "extra"},
		{"list_contacts", map[string]any{"limit": 101}, "between 1 and 100"},
		{"list_contacts", map[string]any{"limit": "ten"}, "limit"},
		{"list_contacts", map[string]any{"cursor": "garbage"}, "pass next_cursor"},
		{"list_contacts", map[string]any{"tag": "nosuch"}, "tags in use: friend, work"},
		{"list_contacts", map[string]any{"tag": sqlish}, "only letters, digits"},
		{"search_contacts", map[string]any{"query": " "}, "query is empty"},
		{"search_contacts", map[string]any{"query": huge}, "at most 200"},
		{"search_contacts", map[string]any{"query": "x", "limit": 0.5}, "limit"},
		{"create_contact", map[string]any{"name": ""}, "name is empty"},
		{"create_contact", map[string]any{"name": "  \t"}, "name is empty"},
		{"create_contact", map[string]any{"email": "a@b.co"}, "name"},
		{"create_contact", map[string]any{"name": huge}, "at most 200"},
		{"create_contact", map[string]any{"name": "A\nB"}, "line break"},
		{"create_contact", map[string]any{"name": "X", "email": "not-an-email"}, "no @"},
		{"create_contact", map[string]any{"name": "X", "email": "a@b@c.com"}, "more than one @"},
		{"create_contact", map[string]any{"name": "X", "email": "a b@c.com"}, "not a valid address"},
		{"create_contact", map[string]any{"name": "X", "email": "a@localhost"}, "needs a dot"},
		{"create_contact", map[string]any{"name": "X", "email": "a@b.c"}, "end in a name"},
		{"create_contact", map[string]any{"name": "X", "email": sqlish + "@x.com"}, "not a valid address"},
		{"create_contact", map[string]any{"name": "X", "email": huge + "@x.com"}, "at most 254"},
		{"create_contact", map[string]any{"name": "X", "email": "MAYA@example.com"}, `already belongs to contact "maya-chen" (Maya Chen)`},
		{"create_contact", map[string]any{"name": "X", "phone": "555-CALL-NOW"}, "only digits"},
		{"create_contact", map[string]any{"name": "X", "phone": "1+2"}, "only digits"},
		{"create_contact", map[string]any{"name": "X", "phone": "+1"}, "3 to 20"},
		{"create_contact", map[string]any{"name": "X", "phone": huge}, "at most 32"},
		{"create_contact", map[string]any{"name": "X", "notes": huge}, "at most 10000"},
		{"create_contact", map[string]any{"name": "X", "company": "A\x00B"}, "control character"},
		{"create_contact", map[string]any{"name": 42}, "name"},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{}}, "fields is empty"},
		{"update_contact", map[string]any{"contact": "sam"}, "fields"},
		{"update_contact", map[string]any{"contact": "nope", "fields": map[string]any{"role": "x"}}, "no contact"},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"email": "bob@WELLER.io"}}, `already belongs to contact "bob-weller"`},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"email": "bad"}}, "no @"},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"name": ""}}, "fields.name is empty"},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"role": "ok", "phone": "abc"}}, "only digits"},
		{"update_contact", map[string]any{"contact": "sam", "fields": map[string]any{"nickname": "x"}}, "nickname"},
		{"update_contact", map[string]any{"contact": "sam", "fields": "role=x"}, "fields"},
		{"tag_contact", map[string]any{"contact": "sam", "tag": ""}, "tag is empty"},
		{"tag_contact", map[string]any{"contact": "sam", "tag": "two words"}, "only letters"},
		{"tag_contact", map[string]any{"contact": "sam", "tag": huge}, "at most 40"},
		{"tag_contact", map[string]any{"contact": "nope", "tag": "x"}, "no contact"},
		{"tag_contact", map[string]any{"contact": "sam", "tag": "x", "remove": "yes"}, "remove"},
		{"delete_contact", map[string]any{"contact": "nope"}, "no contact"},
		{"delete_contact", map[string]any{"contact": sqlish}, "no contact"},
		{"delete_contact", map[string]any{}, "contact"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.80v): message %q does not mention %q", c.tool, c.args, clip(msg, 300), c.want)
				}
				if after := servicetest.HashDB(t, path); after != before {
					t.Fatalf("%s(%.80v) changed the database", c.tool, c.args)
				}
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Ada Lovelace", "email": "ada@engine.org", "role": "Mathematician"})
	servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Ada Lovelace", "phone": "+44 1234 567"})
	servicetest.Call[UpdateContactOut](t, cs, "update_contact", map[string]any{"contact": "priya-nair", "fields": map[string]any{"email": "priya@nair.in", "notes": "New notes"}})
	servicetest.Call[TagContactOut](t, cs, "tag_contact", map[string]any{"contact": "ada-lovelace", "tag": "history"})
	servicetest.Call[TagContactOut](t, cs, "tag_contact", map[string]any{"contact": "bob-weller", "tag": "work", "remove": true})
	servicetest.Call[DeleteContactOut](t, cs, "delete_contact", map[string]any{"contact": "sam"})
	servicetest.Call[Contact](t, cs, "create_contact", map[string]any{"name": "Sam Ortiz"})
	servicetest.Call[ListContactsOut](t, cs, "list_contacts", nil)
	servicetest.CallError(t, cs, "create_contact", map[string]any{"name": "Y", "email": "ada@engine.org"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	if servicetest.HashDB(t, a) != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	orig := servicetest.HashDB(t, a)
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	if ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b); ha != hb {
		t.Fatalf("same calls on equal worlds gave different databases: %s vs %s", ha, hb)
	} else if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"list_contacts":   {"limit", "cursor", "tag"},
		"search_contacts": {"query", "limit"},
		"get_contact":     {"contact"},
		"create_contact":  {"name", "email", "phone", "company", "role", "notes"},
		"update_contact":  {"contact", "fields"},
		"tag_contact":     {"contact", "tag", "remove"},
		"delete_contact":  {"contact"},
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
			continue
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for _, p := range want[tool.Name] {
			if prop, ok := schema.Properties[p]; !ok || prop.Description == "" {
				t.Errorf("%s: property %s missing or without description: %s", tool.Name, p, raw)
			}
		}
		if schema.Type != "object" || len(schema.Properties) != len(want[tool.Name]) {
			t.Errorf("%s: schema %s", tool.Name, raw)
		}
		readOnly := tool.Name == "list_contacts" || tool.Name == "search_contacts" || tool.Name == "get_contact"
		if tool.Annotations.ReadOnlyHint != readOnly {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, tool.Annotations.ReadOnlyHint)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"create_contact", "delete_contact", "get_contact", "list_contacts", "search_contacts", "tag_contact", "update_contact"}) {
		t.Errorf("tools = %v", names)
	}
}

func TestContactResource(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "contacts://contact/{contact}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ContactURI("maya-chen")})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	for _, want := range []string{"Maya Chen (contact maya-chen)", "Email: maya@example.com", "Tags: friend, work", "Notes:\nMet at the 2025 offsite."} {
		if !strings.Contains(text, want) {
			t.Errorf("resource text lacks %q:\n%s", want, text)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: ContactURI("nope")}); err == nil {
		t.Error("unknown contact resource: no error")
	}
}

func TestNew(t *testing.T) {
	path := newWorld(t)
	partial := filepath.Join(t.TempDir(), "partial.sqlite")
	state.ExecTest(t, partial, "CREATE TABLE contacts (id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock(), Self: "A"}, "DBPath is required"},
		{Options{DBPath: path, Self: "A"}, "Clock is required"},
		{Options{DBPath: path, Clock: TestClock()}, "Self is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock(), Self: "A"}, "no such file"},
		{Options{DBPath: partial, Clock: TestClock(), Self: "A"}, "no column name"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.sqlite")
	state.ExecTest(t, path, Schema()...)
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	tables, err := state.Tables(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"contacts": {"ext_id"}, "contact_tags": {"contact_id", "tag"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

// TestSynthesis applies god-mode operations to a world without a contacts
// database and reads the result through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	at := time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC)
	ops, err := InsertOps(
		Seed{Name: "Maya Chen", Email: "maya@example.com", Company: "Lumen Labs", Tags: []string{"Work", "friend"}, UpdatedAt: at},
		Seed{ExtID: "c-2", Name: "Bob Weller", Phone: "+1 555 0100", Notes: "Accountant.", UpdatedAt: at},
	)
	if err != nil {
		t.Fatal(err)
	}
	tag, err := TagOp("c-2", "work")
	if err != nil {
		t.Fatal(err)
	}
	role := "CFO"
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
	cs := servicetest.ConnectMemory(t, newService(t, world.DBPath(dst, DBName)))
	list := servicetest.Call[ListContactsOut](t, cs, "list_contacts", nil)
	if got := ids(list.Contacts); !slices.Equal(got, []string{"c-2", "maya-chen"}) {
		t.Fatalf("contacts = %v", got)
	}
	bob := servicetest.Call[Contact](t, cs, "get_contact", map[string]any{"contact": "c-2"})
	if bob.Role != "CFO" || bob.Notes != "Accountant." || bob.UpdatedAt != "2026-03-02 09:00:00" || !slices.Equal(bob.Tags, []string{"work"}) {
		t.Errorf("bob = %+v", bob)
	}
	maya := servicetest.Call[Contact](t, cs, "get_contact", map[string]any{"contact": "maya-chen"})
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
	c := cursor{name: "maya chen", contact: "maya-chen"}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
}

// TestMissingDatabase: a vanished file is an internal tool error, and the
// service does not create an empty database in its place.
func TestMissingDatabase(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "create_contact", map[string]any{"name": "Zed"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_contacts", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}
