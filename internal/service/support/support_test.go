package support

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose support database holds TestSQL and whose
// shop database holds TestShopRows, and returns the world's directory.
func newWorld(t testing.TB) string {
	t.Helper()
	return state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{
			DBName:      TestSQL(),
			shop.DBName: append(shop.Schema(), TestShopRows()...),
		},
	})
}

func dbPath(dir string) string { return world.DBPath(dir, DBName) }

func newService(t testing.TB, dir string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: dbPath(dir), WorldDir: dir, Clock: TestClock(), Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

func ids(ts []TicketView) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Ticket)
	}
	return out
}

func statuses(es []EventView) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.StatusAfter)
	}
	return out
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			dir := newWorld(t)
			cs := tr.Connect(t, newService(t, dir))
			shopBefore := servicetest.HashDB(t, world.DBPath(dir, shop.DBName))

			list := servicetest.Call[ListTicketsOut](t, cs, "list_tickets", nil)
			if got := ids(list.Tickets); !slices.Equal(got, []string{"T-1001"}) || list.Tickets[0].Events != nil || list.Tickets[0].Status != "waiting" {
				t.Fatalf("list_tickets = %+v", list)
			}
			got := servicetest.Call[TicketOut](t, cs, "get_ticket", map[string]any{"ticket": "T-1001"}).Ticket
			if got.OrderNo != "SO-0950" || got.SKU != "LAMP-2" || got.Kind != "warranty" || len(got.Events) != 2 ||
				got.Events[1] != (EventView{Seq: 2, Author: "support", Body: "Could you send a photo of the label?", StatusAfter: "waiting", At: "2026-02-26 12:00:00"}) {
				t.Fatalf("get_ticket = %+v", got)
			}

			// open_ticket: a return inside the window.
			opened := servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{
				"order_no": "SO-1001", "sku": "MUG-01", "kind": "return", "subject": "Chipped mug", "body": "One mug arrived chipped; 50% of the set; O'Neil's order."}).Ticket
			want := TicketView{Ticket: "T-1002", OrderNo: "SO-1001", SKU: "MUG-01", Kind: "return", Subject: "Chipped mug", Status: "open",
				OpenedAt: "2026-03-01 09:00:00", UpdatedAt: "2026-03-01 09:00:00",
				Events: []EventView{{Seq: 1, Author: "customer", Body: "One mug arrived chipped; 50% of the set; O'Neil's order.", StatusAfter: "open", At: "2026-03-01 09:00:00"}}}
			if !equalTicket(opened, want) {
				t.Fatalf("open_ticket = %+v\nwant %+v", opened, want)
			}
			// Warranty and questions are fine on old orders.
			q := servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{
				"order_no": "SO-0950", "sku": "LAMP-2", "kind": "question", "subject": "Bulb type?", "body": "Which bulb does it take?"}).Ticket
			if q.Ticket != "T-1003" || q.Status != "open" {
				t.Errorf("question = %+v", q)
			}

			// add_comment reopens a waiting ticket.
			c := servicetest.Call[TicketOut](t, cs, "add_comment", map[string]any{"ticket": "T-1001", "body": "Photo attached."}).Ticket
			if c.Status != "open" || !slices.Equal(statuses(c.Events), []string{"open", "waiting", "open"}) || c.Events[2].Author != "customer" || c.UpdatedAt != "2026-03-01 09:00:00" {
				t.Errorf("add_comment = %+v", c)
			}
			// close_ticket appends a closing event.
			cl := servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": "T-1002"}).Ticket
			if cl.Status != "closed" || len(cl.Events) != 2 || cl.Events[1] != (EventView{Seq: 2, Author: "customer", Body: closeNote, StatusAfter: "closed", At: "2026-03-01 09:00:00"}) {
				t.Errorf("close_ticket = %+v", cl)
			}

			// list: newest first, filters and pages.
			all := servicetest.Call[ListTicketsOut](t, cs, "list_tickets", map[string]any{"status": "all"})
			if got := ids(all.Tickets); !slices.Equal(got, []string{"T-1003", "T-1002", "T-1001"}) {
				t.Errorf("all = %v", got)
			}
			if got := ids(servicetest.Call[ListTicketsOut](t, cs, "list_tickets", map[string]any{"status": "open"}).Tickets); !slices.Equal(got, []string{"T-1003", "T-1001"}) {
				t.Errorf("open = %v", got)
			}
			if got := ids(servicetest.Call[ListTicketsOut](t, cs, "list_tickets", map[string]any{"status": "closed"}).Tickets); !slices.Equal(got, []string{"T-1002"}) {
				t.Errorf("closed = %v", got)
			}
			var paged []string
			cursor := ""
			for range 10 {
				page := servicetest.Call[ListTicketsOut](t, cs, "list_tickets", map[string]any{"limit": 2, "cursor": cursor})
				paged = append(paged, ids(page.Tickets)...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if !slices.Equal(paged, []string{"T-1003", "T-1002", "T-1001"}) {
				t.Errorf("pages = %v", paged)
			}
			if servicetest.HashDB(t, world.DBPath(dir, shop.DBName)) != shopBefore {
				t.Error("the shop database changed")
			}
		})
	}
}

func equalTicket(a, b TicketView) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

func TestBadInputsChangeNothing(t *testing.T) {
	huge := strings.Repeat("x", MaxBodyChars+1)
	ok := map[string]any{"order_no": "SO-1001", "sku": "MUG-01", "kind": "return", "subject": "s", "body": "b"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	cases := []struct {
		tool string
		args map[string]any
		want string
	}{
		{"list_tickets", map[string]any{"status": "pending"}, "open, waiting, resolved, closed, all"},
		{"list_tickets", map[string]any{"limit": 101}, "between 1 and 100"},
		{"list_tickets", map[string]any{"limit": "ten"}, "limit"},
		{"list_tickets", map[string]any{"limit": 1.5}, "limit"},
		{"list_tickets", map[string]any{"cursor": "garbage"}, "pass next_cursor"},
		{"list_tickets", map[string]any{"cursor": cursor{id: 0}.String()}, "pass next_cursor"},
		{"get_ticket", map[string]any{"ticket": "T-9999"}, "call list_tickets"},
		{"get_ticket", map[string]any{"ticket": "t-1001"}, `did you mean ticket "T-1001"`},
		{"get_ticket", map[string]any{"ticket": "1001"}, `did you mean ticket "T-1001"`},
		{"get_ticket", map[string]any{"ticket": ""}, "ticket is required"},
		{"get_ticket", map[string]any{"ticket": 1001}, "ticket"},
		{"get_ticket", map[string]any{"ticket": "T-1001' OR '1'='1"}, "call list_tickets"},
		{"open_ticket", with("order_no", "SO-9999"), "no order \"SO-9999\""},
		{"open_ticket", with("order_no", "so-1001"), `did you mean order "SO-1001"`},
		{"open_ticket", with("order_no", "SO-1001'; DROP TABLE tickets; --"), "no order"},
		{"open_ticket", with("order_no", nil), "order_no"},
		{"open_ticket", with("sku", "LAMP-2"), "its items are MUG-01, TEE-M"},
		{"open_ticket", with("sku", "x' OR 1=1 --"), "has no item"},
		{"open_ticket", map[string]any{"order_no": "SO-0950", "sku": "LAMP-2", "kind": "return", "subject": "s", "body": "b"}, "placed on 2026-01-10"},
		{"open_ticket", with("kind", "refund"), "return, warranty, question"},
		{"open_ticket", with("kind", 3), "kind"},
		{"open_ticket", with("subject", " "), "subject is empty"},
		{"open_ticket", with("subject", strings.Repeat("s", MaxSubjectChars+1)), "at most 200"},
		{"open_ticket", with("body", huge), "at most 5000"},
		{"open_ticket", with("body", "a\x00b"), "invalid characters"},
		{"open_ticket", with("order_no", strings.Repeat("9", 100000)), "at most 100"},
		{"open_ticket", with("extra", true), "extra"},
		{"open_ticket", map[string]any{"order_no": "SO-0950", "sku": "LAMP-2", "kind": "warranty", "subject": "s", "body": "b"}, "T-1001 is already open"},
		{"add_comment", map[string]any{"ticket": "T-1001", "body": ""}, "body is empty"},
		{"add_comment", map[string]any{"ticket": "T-1001", "body": huge}, "at most 5000"},
		{"add_comment", map[string]any{"ticket": "nope", "body": "hi"}, "call list_tickets"},
		{"add_comment", map[string]any{"ticket": []string{"T-1001"}, "body": "hi"}, "ticket"},
		{"close_ticket", map[string]any{"ticket": strings.Repeat("z", 100000)}, "call list_tickets"},
		{"close_ticket", map[string]any{}, "ticket"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			dir := newWorld(t)
			cs := tr.Connect(t, newService(t, dir))
			path := dbPath(dir)
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.200v): message %q does not mention %q", c.tool, c.args, msg, c.want)
				}
				if servicetest.HashDB(t, path) != before {
					t.Fatalf("%s(%.200v) changed the database", c.tool, c.args)
				}
			}
			if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"}); err == nil {
				t.Error("unknown tool: no error")
			}
		})
	}
}

func TestClosedTicket(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": "T-1001"})
	before := servicetest.HashDB(t, dbPath(dir))
	if msg := servicetest.CallError(t, cs, "close_ticket", map[string]any{"ticket": "T-1001"}); !strings.Contains(msg, "already closed") {
		t.Errorf("close twice: %q", msg)
	}
	if msg := servicetest.CallError(t, cs, "add_comment", map[string]any{"ticket": "T-1001", "body": "hi"}); !strings.Contains(msg, "open_ticket a new one") {
		t.Errorf("comment on closed: %q", msg)
	}
	if servicetest.HashDB(t, dbPath(dir)) != before {
		t.Fatal("a refused call changed the database")
	}
	// With T-1001 closed, a new warranty ticket for the lamp is accepted.
	if got := servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{"order_no": "SO-0950", "sku": "LAMP-2", "kind": "warranty", "subject": "Again", "body": "Still flickers."}).Ticket; got.Ticket != "T-1002" {
		t.Errorf("reopened as %+v", got)
	}
}

func TestReturnWindow(t *testing.T) {
	dir := newWorld(t)
	for _, c := range []struct {
		now time.Time
		ok  bool
	}{
		{time.Date(2026, 3, 22, 10, 30, 0, 0, time.UTC), true},  // exactly 30 days
		{time.Date(2026, 3, 22, 10, 30, 1, 0, time.UTC), false}, // one second late
	} {
		s, err := New(Options{DBPath: dbPath(dir), WorldDir: dir, Clock: world.FixedClock(c.now)})
		if err != nil {
			t.Fatal(err)
		}
		cs := servicetest.ConnectMemory(t, s)
		args := map[string]any{"order_no": "SO-1001", "sku": "TEE-M", "kind": "return", "subject": "Too small", "body": "Size M is too small."}
		if c.ok {
			servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": servicetest.Call[TicketOut](t, cs, "open_ticket", args).Ticket.Ticket})
		} else if msg := servicetest.CallError(t, cs, "open_ticket", args); !strings.Contains(msg, "placed on 2026-02-20") || !strings.Contains(msg, "warranty") {
			t.Errorf("late return: %q", msg)
		}
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{"order_no": "SO-1001", "sku": "TEE-M", "kind": "return", "subject": "Too small", "body": "Size M is too small."})
	servicetest.Call[TicketOut](t, cs, "add_comment", map[string]any{"ticket": "T-1001", "body": "Photo attached."})
	servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{"order_no": "SO-0950", "sku": "LAMP-2", "kind": "question", "subject": "Bulb", "body": "Which bulb?"})
	servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": "T-1002"})
	servicetest.Call[TicketOut](t, cs, "get_ticket", map[string]any{"ticket": "T-1001"})
	servicetest.Call[ListTicketsOut](t, cs, "list_tickets", nil)
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	orig := servicetest.HashDB(t, dbPath(a))
	if orig != servicetest.HashDB(t, dbPath(b)) {
		t.Fatal("fresh worlds differ")
	}
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	ha, hb := servicetest.HashDB(t, dbPath(a)), servicetest.HashDB(t, dbPath(b))
	if ha != hb {
		if d, err := state.Compare(context.Background(), a, b); err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases")
	}
	if ha == orig {
		t.Fatal("the script changed nothing")
	}
}

func TestToolsList(t *testing.T) {
	cs := servicetest.ConnectMemory(t, newService(t, newWorld(t)))
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Errorf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Properties map[string]struct{ Description string }
		}
		if err := json.Unmarshal(raw, &schema); err != nil {
			t.Fatal(err)
		}
		for p, prop := range schema.Properties {
			if prop.Description == "" {
				t.Errorf("%s: property %s has no description", tool.Name, p)
			}
		}
		if ro := tool.Annotations.ReadOnlyHint; ro != (strings.HasPrefix(tool.Name, "list_") || strings.HasPrefix(tool.Name, "get_")) {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
	}
	slices.Sort(names)
	if want := []string{"add_comment", "close_ticket", "get_ticket", "list_tickets", "open_ticket"}; !slices.Equal(names, want) {
		t.Errorf("tools = %v", names)
	}
}

// TestSynthesis seeds a world with the god-mode API through a delta and reads
// it back through the tools.
func TestSynthesis(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{
		SQL: map[string][]string{shop.DBName: append(shop.Schema(), TestShopRows()...)},
	})
	at := time.Date(2026, 2, 21, 8, 0, 0, 0, time.UTC)
	ops := []delta.Op{CreateOp()}
	for _, tk := range []Ticket{
		{ID: "T-2001", OrderNo: "SO-1001", SKU: "MUG-01", Kind: KindReturn, Subject: "Chipped", OpenedAt: at,
			Events: []Event{
				{Author: AuthorCustomer, Body: "Chipped mug.", StatusAfter: StatusOpen, At: at},
				{Author: AuthorSupport, Body: "Send it back, label attached.", StatusAfter: StatusWaiting, At: at.Add(time.Hour)},
			}},
		{ID: "T-2002", OrderNo: "SO-0950", SKU: "LAMP-2", Kind: KindQuestion, Subject: "Bulb", OpenedAt: at.Add(2 * time.Hour),
			Events: []Event{{Author: AuthorCustomer, Body: "Which bulb?", StatusAfter: StatusOpen, At: at.Add(2 * time.Hour)}}},
	} {
		tops, err := TicketOps(tk)
		if err != nil {
			t.Fatal(err)
		}
		ops = append(ops, tops...)
	}
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-01T09:00:00Z", Ops: ops}
	dst := filepath.Join(t.TempDir(), "child")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	cs := servicetest.ConnectMemory(t, newService(t, dst))
	list := servicetest.Call[ListTicketsOut](t, cs, "list_tickets", nil)
	if got := ids(list.Tickets); !slices.Equal(got, []string{"T-2002", "T-2001"}) {
		t.Fatalf("seeded = %v", got)
	}
	t1 := servicetest.Call[TicketOut](t, cs, "get_ticket", map[string]any{"ticket": "T-2001"}).Ticket
	if t1.Status != "waiting" || t1.UpdatedAt != "2026-02-21 09:00:00" || t1.OpenedAt != "2026-02-21 08:00:00" || !slices.Equal(statuses(t1.Events), []string{"open", "waiting"}) {
		t.Errorf("T-2001 = %+v", t1)
	}
	// The tools continue the seeded history.
	if c := servicetest.Call[TicketOut](t, cs, "add_comment", map[string]any{"ticket": "T-2001", "body": "Sent."}).Ticket; len(c.Events) != 3 || c.Events[2].Seq != 3 {
		t.Errorf("comment on seeded = %+v", c)
	}

	// A second day: support resolves T-2002.
	sops, err := StatusOps("T-2002", 2, StatusResolved, at.Add(24*time.Hour), "It takes an E14 bulb.")
	if err != nil {
		t.Fatal(err)
	}
	d2 := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 2, Clock: "2026-03-02T09:00:00Z", Ops: sops}
	dst2 := filepath.Join(t.TempDir(), "child2")
	if err := delta.ApplyCopy(ctx, dst, dst2, d2, nil); err != nil {
		t.Fatal(err)
	}
	cs2 := servicetest.ConnectMemory(t, newService(t, dst2))
	t2 := servicetest.Call[TicketOut](t, cs2, "get_ticket", map[string]any{"ticket": "T-2002"}).Ticket
	if t2.Status != "resolved" || t2.UpdatedAt != "2026-02-22 08:00:00" || len(t2.Events) != 2 ||
		t2.Events[1] != (EventView{Seq: 2, Author: "support", Body: "It takes an E14 bulb.", StatusAfter: "resolved", At: "2026-02-22 08:00:00"}) {
		t.Errorf("T-2002 = %+v", t2)
	}
	if got := ids(servicetest.Call[ListTicketsOut](t, cs2, "list_tickets", map[string]any{"status": "resolved"}).Tickets); !slices.Equal(got, []string{"T-2002"}) {
		t.Errorf("resolved = %v", got)
	}

	ev := []Event{{Author: AuthorCustomer, Body: "b", StatusAfter: StatusOpen, At: at}}
	for _, bad := range []Ticket{
		{OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at},
		{ID: "x", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: "refund", Subject: "s", OpenedAt: at},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, OpenedAt: at},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s"},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at, Status: "done"},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at, Status: StatusClosed, Events: ev},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at, Events: []Event{{Author: "bot", Body: "b", StatusAfter: StatusOpen, At: at}}},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at, Events: []Event{{Author: AuthorCustomer, StatusAfter: StatusOpen, At: at}}},
		{ID: "x", OrderNo: "O", SKU: "S", Kind: KindQuestion, Subject: "s", OpenedAt: at, Events: []Event{{Author: AuthorCustomer, Body: "b", StatusAfter: StatusOpen}}},
	} {
		if _, err := TicketOps(bad); err == nil {
			t.Errorf("TicketOps(%+v): no error", bad)
		}
	}
	for _, bad := range []func() ([]delta.Op, error){
		func() ([]delta.Op, error) { return StatusOps("", 2, StatusOpen, at, "n") },
		func() ([]delta.Op, error) { return StatusOps("T-1", 0, StatusOpen, at, "n") },
		func() ([]delta.Op, error) { return StatusOps("T-1", 2, "done", at, "n") },
		func() ([]delta.Op, error) { return StatusOps("T-1", 2, StatusOpen, time.Time{}, "n") },
		func() ([]delta.Op, error) { return StatusOps("T-1", 2, StatusOpen, at, "") },
	} {
		if _, err := bad(); err == nil {
			t.Error("StatusOps: no error")
		}
	}
}

// TestReplacedDatabase: an instance reset replaces the file between calls.
func TestReplacedDatabase(t *testing.T) {
	dir := newWorld(t)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	MakeTestDB(t, pristine)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": "T-1001"})
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.WriteFileAtomic(dbPath(dir), data, 0o644); err != nil {
		t.Fatal(err)
	}
	servicetest.Call[TicketOut](t, cs, "close_ticket", map[string]any{"ticket": "T-1001"})
}

func TestMissingDatabases(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	open := map[string]any{"order_no": "SO-1001", "sku": "MUG-01", "kind": "question", "subject": "s", "body": "b"}
	if err := os.Remove(world.DBPath(dir, shop.DBName)); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "open_ticket", open); !strings.Contains(msg, "no shop orders") {
		t.Errorf("no shop: %q", msg)
	}
	if err := os.Remove(dbPath(dir)); err != nil {
		t.Fatal(err)
	}
	if msg := servicetest.CallError(t, cs, "close_ticket", map[string]any{"ticket": "T-1001"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_tickets", nil)
	if _, err := os.Stat(dbPath(dir)); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
	}
}

func TestConcurrentOpens(t *testing.T) {
	dir := newWorld(t)
	s := newService(t, dir)
	const n = 6
	var wg sync.WaitGroup
	got := make([]string, n)
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			// Six distinct items and kinds, so that none is a duplicate.
			got[i] = servicetest.Call[TicketOut](t, cs, "open_ticket", map[string]any{"order_no": "SO-1001", "sku": []string{"MUG-01", "TEE-M"}[i%2],
				"kind": []string{"return", "warranty", "question"}[i/2], "subject": "q", "body": "b"}).Ticket.Ticket
		})
	}
	wg.Wait()
	slices.Sort(got)
	if len(slices.Compact(slices.Clone(got))) != n {
		t.Errorf("ids = %v, want %d distinct", got, n)
	}
}

func TestNew(t *testing.T) {
	dir := newWorld(t)
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	state.ExecTest(t, empty, "CREATE TABLE tickets (id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{WorldDir: dir, Clock: TestClock()}, "DBPath is required"},
		{Options{DBPath: dbPath(dir), Clock: TestClock()}, "WorldDir is required"},
		{Options{DBPath: dbPath(dir), WorldDir: dir}, "Clock is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), WorldDir: dir, Clock: TestClock()}, "no such file"},
		{Options{DBPath: empty, WorldDir: dir, Clock: TestClock()}, "no column order_no"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

func TestSchemaNaturalKeys(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.sqlite")
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
	want := map[string][]string{"tickets": {"ext_id"}, "ticket_events": {"ticket_id", "seq"}}
	for _, tb := range tables {
		if !slices.Equal(tb.NaturalKey, want[tb.Name]) {
			t.Errorf("%s: natural key %v, want %v", tb.Name, tb.NaturalKey, want[tb.Name])
		}
	}
	if len(tables) != len(want) {
		t.Errorf("%d tables", len(tables))
	}
}

func TestCursor(t *testing.T) {
	c := cursor{id: 7}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("cursor round trip: %+v %v", back, ok)
	}
	for _, bad := range []string{"", "!!", "YWJj"} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) ok", bad)
		}
	}
}
