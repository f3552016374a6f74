package calendar

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/service/servicetest"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes a world whose calendar database holds TestSQL and returns
// the database's path.
func newWorld(t testing.TB) string {
	t.Helper()
	dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), state.TestWorld{
		SQL: map[string][]string{DBName: TestSQL()},
	})
	return world.DBPath(dir, DBName)
}

func newService(t testing.TB, path string) *engine.Service {
	t.Helper()
	s, err := engine.New(Compiled(), engine.Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// occIDs renders occurrences as "event#n@start".
func occIDs(os []Occurrence) []string {
	var ids []string
	for _, o := range os {
		ids = append(ids, fmt.Sprintf("%s#%d@%s", o.Event, o.Occurrence, o.StartsAt))
	}
	return ids
}

// The tools' results as the tests read them.
type (
	Occurrence struct {
		Event      string `json:"event"`
		Occurrence int    `json:"occurrence"`
		StartsAt   string `json:"starts_at"`
	}
	ListEventsOut struct {
		Events []Occurrence `json:"events"`
	}
	Guest struct {
		Name        string `json:"name"`
		Response    string `json:"response"`
		RespondedAt string `json:"responded_at"`
	}
	EventDetail struct {
		Event      string  `json:"event"`
		Status     string  `json:"status"`
		Guests     []Guest `json:"guests"`
		MyResponse string  `json:"my_response"`
	}
)

func TestParseRule(t *testing.T) {
	for in, want := range map[string]string{
		"":                                 "",
		"FREQ=DAILY;COUNT=3":               "FREQ=DAILY;COUNT=3",
		"count=3; freq=weekly":             "FREQ=WEEKLY;COUNT=3",
		"RRULE:FREQ=WEEKLY;UNTIL=20260331": "FREQ=WEEKLY;UNTIL=2026-03-31",
		"FREQ=DAILY;UNTIL=2026-03-05":      "FREQ=DAILY;UNTIL=2026-03-05",
	} {
		r, err := ParseRule(in)
		if err != nil || r.String() != want {
			t.Errorf("ParseRule(%q) = %q, %v; want %q", in, r, err, want)
		}
	}
	for _, bad := range []string{
		"FREQ=MONTHLY;COUNT=2", "FREQ=DAILY", "FREQ=DAILY;COUNT=2;UNTIL=2026-03-05", "FREQ=DAILY;INTERVAL=2;COUNT=3",
		"FREQ=DAILY;COUNT=0", "FREQ=DAILY;COUNT=1001", "FREQ=DAILY;COUNT=x", "FREQ=DAILY;UNTIL=tomorrow", "COUNT=3",
		"FREQ=DAILY;FREQ=WEEKLY;COUNT=1", "FREQ", "'; DROP TABLE events; --", strings.Repeat("FREQ=DAILY;", 20),
	} {
		if _, err := ParseRule(bad); err == nil {
			t.Errorf("ParseRule(%q) succeeded", bad)
		}
	}
}

func TestExpand(t *testing.T) {
	ts := func(s string) int64 {
		v, ok := parseTime(s)
		if !ok {
			t.Fatalf("bad time %q", s)
		}
		return v.Unix()
	}
	rule := func(s string) Rule {
		r, err := ParseRule(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	render := func(sp []span) []string {
		var out []string
		for _, s := range sp {
			out = append(out, fmt.Sprintf("%d@%s", s.Index, unixText(s.Start)))
		}
		return out
	}
	start, end := ts("2026-03-02 23:30"), ts("2026-03-03 00:30") // crosses midnight
	for _, c := range []struct {
		name, rule, from, to string
		want                 []string
	}{
		{"one-off inside", "", "2026-03-02 00:00", "2026-03-03 00:00", []string{"1@2026-03-02 23:30:00"}},
		{"one-off overlapping the window start", "", "2026-03-03 00:00", "2026-03-04 00:00", []string{"1@2026-03-02 23:30:00"}},
		{"ends exactly at the window start", "", "2026-03-03 00:30", "2026-03-04 00:00", nil},
		{"starts exactly at the window end", "", "2026-03-01 00:00", "2026-03-02 23:30", nil},
		{"count", "FREQ=DAILY;COUNT=3", "2026-03-01 00:00", "2026-04-01 00:00", []string{"1@2026-03-02 23:30:00", "2@2026-03-03 23:30:00", "3@2026-03-04 23:30:00"}},
		{"count, window in the middle", "FREQ=DAILY;COUNT=3", "2026-03-04 00:00", "2026-03-04 12:00", []string{"2@2026-03-03 23:30:00"}},
		{"count, window after the last", "FREQ=DAILY;COUNT=3", "2026-03-05 00:31", "2026-04-01 00:00", nil},
		{"until is inclusive", "FREQ=WEEKLY;UNTIL=2026-03-16", "2026-03-01 00:00", "2026-05-01 00:00", []string{"1@2026-03-02 23:30:00", "2@2026-03-09 23:30:00", "3@2026-03-16 23:30:00"}},
		{"until before the date of the next", "FREQ=WEEKLY;UNTIL=2026-03-15", "2026-03-01 00:00", "2026-05-01 00:00", []string{"1@2026-03-02 23:30:00", "2@2026-03-09 23:30:00"}},
		{"until before the start", "FREQ=DAILY;UNTIL=2026-03-01", "2026-03-01 00:00", "2026-05-01 00:00", nil},
		{"far window skips ahead", "FREQ=DAILY;UNTIL=2099-12-31", "2090-06-01 00:00", "2090-06-02 00:00", []string{"23467@2090-05-31 23:30:00", "23468@2090-06-01 23:30:00"}},
	} {
		r := rule(c.rule)
		if got := render(r.expand(start, end, ts(c.from), ts(c.to))); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSynthesisOps applies EventOps and ResponseOps to a world with
// delta.ApplyCopy and reads the result through the tools.
func TestSynthesisOps(t *testing.T) {
	ctx := context.Background()
	parent := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "parent"), state.TestWorld{})
	events := []Event{
		{ExtID: "evt-kickoff", Title: "Kickoff", StartsAt: "2026-03-03 10:00:00", EndsAt: "2026-03-03 11:00:00", Organizer: "Maya Chen",
			Guests: []Invitation{{Guest: TestSelf}, {Guest: "Sam Ortiz", Response: ResponseAccepted, RespondedAt: "2026-03-01 12:00:00"}}},
		{ExtID: "evt-gym", Title: "Gym", StartsAt: "2026-03-02 18:00:00", EndsAt: "2026-03-02 19:00:00", Organizer: TestSelf, Recurrence: "FREQ=DAILY;COUNT=2"},
	}
	ops := []delta.Op{CreateOp()}
	for _, e := range events {
		if err := e.Check(); err != nil {
			t.Fatal(err)
		}
		ops = append(ops, EventOps(e)...)
	}
	ops = append(ops, ResponseOps(Response{Event: "evt-kickoff", Guest: TestSelf, Response: ResponseTentative, RespondedAt: "2026-03-02 08:00:00"})...)
	d := &delta.Delta{Version: delta.Version, Persona: "test-persona", Day: 1, Clock: "2026-03-02T08:30:00Z", Ops: ops}
	dst := filepath.Join(t.TempDir(), "day1")
	if err := delta.ApplyCopy(ctx, parent, dst, d, nil); err != nil {
		t.Fatal(err)
	}
	path := world.DBPath(dst, DBName)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	got := occIDs(servicetest.Call[ListEventsOut](t, cs, "list_events", nil).Events)
	if want := []string{"evt-gym#1@2026-03-02 18:00:00", "evt-kickoff#1@2026-03-03 10:00:00", "evt-gym#2@2026-03-03 18:00:00"}; !slices.Equal(got, want) {
		t.Errorf("events = %v, want %v", got, want)
	}
	ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-kickoff"})
	if ev.MyResponse != ResponseTentative || ev.Status != StatusConfirmed ||
		!slices.Equal(ev.Guests, []Guest{{TestSelf, "tentative", "2026-03-02 08:00:00"}, {"Sam Ortiz", "accepted", "2026-03-01 12:00:00"}}) {
		t.Errorf("kickoff = %+v", ev)
	}
	// The same delta applied again gives the same state (replayable).
	dst2 := filepath.Join(t.TempDir(), "day1b")
	if err := delta.ApplyCopy(ctx, parent, dst2, d, nil); err != nil {
		t.Fatal(err)
	}
	if servicetest.HashDB(t, world.DBPath(dst2, DBName)) != servicetest.HashDB(t, path) {
		t.Error("applying the same ops twice gave different databases")
	}
	// A response to a missing invitation fails to apply.
	bad := *d
	bad.Ops = append(slices.Clone(ops), ResponseOps(Response{Event: "evt-gym", Guest: "Nobody", Response: ResponseAccepted, RespondedAt: "2026-03-02 08:00:00"})...)
	if err := delta.ApplyCopy(ctx, parent, filepath.Join(t.TempDir(), "bad"), &bad, nil); err == nil {
		t.Error("response to a missing invitation applied")
	}
}

func TestEventCheck(t *testing.T) {
	good := Event{ExtID: "e", Title: "T", StartsAt: "2026-03-02 10:00:00", EndsAt: "2026-03-02 11:00:00", Organizer: "A"}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	for name, mod := range map[string]func(*Event){
		"no ext_id":     func(e *Event) { e.ExtID = "" },
		"no organizer":  func(e *Event) { e.Organizer = "" },
		"bad status":    func(e *Event) { e.Status = "tentative" },
		"end first":     func(e *Event) { e.EndsAt = "2026-03-02 09:00:00" },
		"not canonical": func(e *Event) { e.StartsAt = "2026-03-02 10:00" },
		"bad rule":      func(e *Event) { e.Recurrence = "FREQ=YEARLY;COUNT=2" },
		"rule spelling": func(e *Event) { e.Recurrence = "freq=daily;count=2" },
		"bad response":  func(e *Event) { e.Guests = []Invitation{{Guest: "B", Response: "yes"}} },
		"twice":         func(e *Event) { e.Guests = []Invitation{{Guest: "B"}, {Guest: "B"}} },
		"bad responded": func(e *Event) { e.Guests = []Invitation{{Guest: "B", RespondedAt: "yesterday"}} },
		"empty guest":   func(e *Event) { e.Guests = []Invitation{{Guest: " "}} },
	} {
		e := good
		mod(&e)
		if err := e.Check(); err == nil {
			t.Errorf("%s: Check passed", name)
		}
	}
}

func TestConcurrentCreates(t *testing.T) {
	path := newWorld(t)
	s := newService(t, path)
	const n = 6
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		cs := servicetest.ConnectMemory(t, s)
		if i%2 == 1 {
			cs = servicetest.ConnectHTTP(t, s)
		}
		wg.Go(func() {
			ids[i] = servicetest.Call[EventDetail](t, cs, "create_event", map[string]any{"title": fmt.Sprint("e", i), "starts_at": "2026-03-05 10:00", "ends_at": "2026-03-05 11:00"}).Event
		})
	}
	wg.Wait()
	slices.Sort(ids)
	if want := []string{"evt-10", "evt-11", "evt-12", "evt-7", "evt-8", "evt-9"}; !slices.Equal(ids, want) {
		t.Errorf("ids = %v", ids)
	}
}

// TestUnreadableEvent: an event whose stored times or rule the service
// cannot read fails the calls that expand it (an internal error), and only
// those: a cancelled one, or one after the window, is never read.
func TestUnreadableEvent(t *testing.T) {
	path := newWorld(t)
	state.ExecTest(t, path, `INSERT INTO events (id, ext_id, title, starts_at, ends_at, organizer, recurrence, status) VALUES
  (7, 'evt-bad-later', 'Later', '2026-04-01 10:00:00', '2026-04-01 11:00:00', 'Alex', 'FREQ=HOURLY', 'confirmed'),
  (8, 'evt-bad-cancelled', 'Gone', '2026-03-02 10:00:00', 'noon', 'Alex', '', 'cancelled')`)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	if got := len(servicetest.Call[ListEventsOut](t, cs, "list_events", nil).Events); got != 10 {
		t.Errorf("list_events: %d occurrences, want the 10 of the test world", got)
	}
	if msg := servicetest.CallError(t, cs, "list_events", map[string]any{"from": "2026-03-30", "to": "2026-04-02"}); !strings.Contains(msg, "internal error") {
		t.Errorf("list_events over the unreadable event: %q, want an internal error", msg)
	}
}

func TestBetween(t *testing.T) {
	for in, want := range map[string][2]int{
		"09:00-17:00": {540, 1020}, " 10:00 - 11:00 ": {600, 660}, "00:00-24:00": {0, 1440}, "06:30-24:00": {390, 1440},
	} {
		if from, to, ok := parseBetween(in); !ok || [2]int{from, to} != want {
			t.Errorf("parseBetween(%q) = %d, %d, %v; want %v", in, from, to, ok, want)
		}
	}
	for _, bad := range []string{"", "9-5", "17:00-09:00", "09:00-09:00", "09:00-24:30", "25:00-26:00", "09:60-10:00", "0900-1000", "09:00"} {
		if _, _, ok := parseBetween(bad); ok {
			t.Errorf("parseBetween(%q) ok", bad)
		}
	}
}

func TestGuestsError(t *testing.T) {
	many := make([]string, MaxGuests+1)
	for i := range many {
		many[i] = fmt.Sprint("g", i)
	}
	for _, c := range []struct {
		guests []string
		want   string
	}{
		{nil, ""},
		{[]string{"Maya", " Priya "}, ""},
		{many, "101 guests"},
		{[]string{"Maya", " "}, "guests[1] is empty"},
		{[]string{strings.Repeat("é", MaxNameChars+1)}, "guests[0] is not a name"},
		{[]string{"a\x00b"}, "guests[0] is not a name"},
		{[]string{"ALEX"}, `guests[0] is "ALEX", which is you`},
		{[]string{"Émile", "émile"}, `guest "émile" is listed twice`},
	} {
		if got := guestsError(c.guests, TestSelf); !strings.Contains(got, c.want) || (c.want == "") != (got == "") {
			t.Errorf("guestsError(%q) = %q, want %q", c.guests, got, c.want)
		}
	}
}
