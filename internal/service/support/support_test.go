package support

import (
	"context"
	"database/sql/driver"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The tools' results as the tests read them.
type (
	event struct {
		Seq         int    `json:"seq"`
		Author      string `json:"author"`
		Body        string `json:"body"`
		StatusAfter string `json:"status_after"`
		At          string `json:"at"`
	}
	ticket struct {
		Ticket    string  `json:"ticket"`
		Status    string  `json:"status"`
		OpenedAt  string  `json:"opened_at"`
		UpdatedAt string  `json:"updated_at"`
		Events    []event `json:"events"`
	}
	ticketOut struct {
		Ticket ticket `json:"ticket"`
	}
	ticketList struct {
		Tickets []ticket `json:"tickets"`
	}
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

func newService(t testing.TB, dir string) *engine.Service {
	t.Helper()
	return newServiceAt(t, dir, TestClock())
}

func newServiceAt(t testing.TB, dir string, clock world.Clock) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{WorldDir: dir, Clock: clock, Self: "Alex"})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func ids(ts []ticket) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Ticket)
	}
	return out
}

func statuses(es []event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.StatusAfter)
	}
	return out
}

// TestReturnWindow: a return is accepted up to exactly 30 days after the
// order was placed, and refused a second later.
func TestReturnWindow(t *testing.T) {
	dir := newWorld(t)
	for _, c := range []struct {
		now time.Time
		ok  bool
	}{
		{time.Date(2026, 3, 22, 10, 30, 0, 0, time.UTC), true},  // exactly 30 days
		{time.Date(2026, 3, 22, 10, 30, 1, 0, time.UTC), false}, // one second late
	} {
		cs := servicetest.ConnectMemory(t, newServiceAt(t, dir, world.FixedClock(c.now)))
		args := map[string]any{"order_no": "SO-1001", "sku": "TEE-M", "kind": "return", "subject": "Too small", "body": "Size M is too small."}
		if c.ok {
			servicetest.Call[ticketOut](t, cs, "close_ticket", map[string]any{"ticket": servicetest.Call[ticketOut](t, cs, "open_ticket", args).Ticket.Ticket})
		} else if msg := servicetest.CallError(t, cs, "open_ticket", args); !strings.Contains(msg, "placed on 2026-02-20") || !strings.Contains(msg, "warranty") {
			t.Errorf("late return: %q", msg)
		}
	}
}

// TestNoShop: a world without the shop's database has no orders to open a
// ticket about (a tool error, not a failure), and the rest works without it.
func TestNoShop(t *testing.T) {
	dir := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, dir))
	if err := os.Remove(world.DBPath(dir, shop.DBName)); err != nil {
		t.Fatal(err)
	}
	before := servicetest.HashDB(t, world.DBPath(dir, DBName))
	open := map[string]any{"order_no": "SO-1001", "sku": "MUG-01", "kind": "question", "subject": "s", "body": "b"}
	if msg := servicetest.CallError(t, cs, "open_ticket", open); !strings.Contains(msg, "no shop orders") {
		t.Errorf("no shop: %q", msg)
	}
	if servicetest.HashDB(t, world.DBPath(dir, DBName)) != before {
		t.Error("a refused open_ticket changed the database")
	}
	if text := servicetest.ReadResource(t, cs, "support://ticket/T-1001", "text/plain"); !strings.HasPrefix(text, "Lamp flickers (ticket T-1001)") {
		t.Errorf("ticket resource without a shop: %q", text)
	}
	servicetest.Call[ticketOut](t, cs, "add_comment", map[string]any{"ticket": "T-1001", "body": "Photo attached."})
}

// TestConcurrentOpens: tickets opened at once over several sessions get
// distinct ids (each in its own write transaction).
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
			got[i] = servicetest.Call[ticketOut](t, cs, "open_ticket", map[string]any{"order_no": "SO-1001", "sku": []string{"MUG-01", "TEE-M"}[i%2],
				"kind": []string{"return", "warranty", "question"}[i/2], "subject": "q", "body": "b"}).Ticket.Ticket
		})
	}
	wg.Wait()
	slices.Sort(got)
	if len(slices.Compact(slices.Clone(got))) != n {
		t.Errorf("ids = %v, want %d distinct", got, n)
	}
}

// TestDefinition: the schema is what it was when the service was Go (a
// world's hash depends on it byte for byte); the test world's shop tables
// are the shop site's; the cursor hook takes only what list_tickets makes.
func TestDefinition(t *testing.T) {
	want := []string{
		"CREATE TABLE tickets (\n  id INTEGER PRIMARY KEY,\n  ext_id TEXT NOT NULL UNIQUE,\n  order_no TEXT NOT NULL,\n  sku TEXT NOT NULL,\n" +
			"  kind TEXT NOT NULL CHECK (kind IN ('return','warranty','question')),\n  subject TEXT NOT NULL,\n" +
			"  status TEXT NOT NULL DEFAULT 'open' CHECK (status IN ('open','waiting','resolved','closed')),\n  opened_at TEXT NOT NULL,\n  updated_at TEXT NOT NULL\n)",
		"CREATE TABLE ticket_events (\n  id INTEGER PRIMARY KEY,\n  ticket_id INTEGER NOT NULL REFERENCES tickets(id),\n  seq INTEGER NOT NULL CHECK (seq >= 1),\n" +
			"  author TEXT NOT NULL CHECK (author IN ('customer','support')),\n  body TEXT NOT NULL,\n" +
			"  status_after TEXT NOT NULL CHECK (status_after IN ('open','waiting','resolved','closed')),\n  at TEXT NOT NULL,\n  UNIQUE (ticket_id, seq)\n)",
	}
	if got := Schema(); !slices.Equal(got, want) {
		t.Errorf("Schema() =\n%q\nwant\n%q", got, want)
	}
	for _, s := range Compiled().Def.Test.Other[ShopDBName] {
		if strings.HasPrefix(s, "CREATE ") && !slices.Contains(shop.Schema(), s) {
			t.Errorf("test.other.shop has %q, which is not in the shop site's Schema", s)
		}
	}
	if len(TestShopRows()) != 2 {
		t.Errorf("TestShopRows = %q, want the inserts of orders and order_items", TestShopRows())
	}
	if now := TestClock().Now().UTC().Format(time.RFC3339); now != Compiled().Def.Test.Now {
		t.Errorf("TestClock is %s, the definition's test world %s", now, Compiled().Def.Test.Now)
	}
	cursorID := Hooks.Funcs["support_cursor_id"].Fn
	for in, want := range map[string]any{
		"czEANw": int64(7), "czEAMA": nil, "czEALTE": nil, "czEAeA": nil, "YzEAeA": nil, "": nil, "!!": nil,
	} {
		if got, _ := cursorID([]driver.Value{in}); got != want {
			t.Errorf("support_cursor_id(%q) = %v, want %v", in, got, want)
		}
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
	list := servicetest.Call[ticketList](t, cs, "list_tickets", nil)
	if got := ids(list.Tickets); !slices.Equal(got, []string{"T-2002", "T-2001"}) {
		t.Fatalf("seeded = %v", got)
	}
	t1 := servicetest.Call[ticketOut](t, cs, "get_ticket", map[string]any{"ticket": "T-2001"}).Ticket
	if t1.Status != "waiting" || t1.UpdatedAt != "2026-02-21 09:00:00" || t1.OpenedAt != "2026-02-21 08:00:00" || !slices.Equal(statuses(t1.Events), []string{"open", "waiting"}) {
		t.Errorf("T-2001 = %+v", t1)
	}
	// The tools continue the seeded history.
	if c := servicetest.Call[ticketOut](t, cs, "add_comment", map[string]any{"ticket": "T-2001", "body": "Sent."}).Ticket; len(c.Events) != 3 || c.Events[2].Seq != 3 {
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
	t2 := servicetest.Call[ticketOut](t, cs2, "get_ticket", map[string]any{"ticket": "T-2002"}).Ticket
	if t2.Status != "resolved" || t2.UpdatedAt != "2026-02-22 08:00:00" || len(t2.Events) != 2 ||
		t2.Events[1] != (event{Seq: 2, Author: "support", Body: "It takes an E14 bulb.", StatusAfter: "resolved", At: "2026-02-22 08:00:00"}) {
		t.Errorf("T-2002 = %+v", t2)
	}
	if got := ids(servicetest.Call[ticketList](t, cs2, "list_tickets", map[string]any{"status": "resolved"}).Tickets); !slices.Equal(got, []string{"T-2002"}) {
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
