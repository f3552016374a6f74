package calendar

import (
	"context"
	"encoding/json"
	"fmt"
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

func newService(t testing.TB, path string) *Service {
	t.Helper()
	s, err := New(Options{DBPath: path, Clock: TestClock(), Self: TestSelf})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var transports = servicetest.Transports()

// occIDs renders occurrences as "event#n@start".
func occIDs(os []Occurrence) []string {
	var ids []string
	for _, o := range os {
		ids = append(ids, fmt.Sprintf("%s#%d@%s", o.Event, o.Occurrence, o.StartsAt))
	}
	return ids
}

// defaultWeek is list_events' default window on TestClock's day.
var defaultWeek = []string{
	"evt-yoga#2@2026-03-02 07:00:00",
	"evt-standup#1@2026-03-02 09:30:00",
	"evt-lunch#1@2026-03-02 12:00:00",
	"evt-demo#1@2026-03-02 15:00:00",
	"evt-standup#2@2026-03-03 09:30:00",
	"evt-review#1@2026-03-03 14:00:00",
	"evt-standup#3@2026-03-04 09:30:00",
	"evt-standup#4@2026-03-05 09:30:00",
	"evt-standup#5@2026-03-06 09:30:00",
	"evt-yoga#3@2026-03-09 07:00:00",
}

func TestTools(t *testing.T) {
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))

			// list_events: today to +7 days, recurrences expanded, cancelled
			// events left out.
			list := servicetest.Call[ListEventsOut](t, cs, "list_events", map[string]any{})
			if got := occIDs(list.Events); !slices.Equal(got, defaultWeek) {
				t.Fatalf("events = %v\nwant %v", got, defaultWeek)
			}
			if list.From != "2026-03-02" || list.To != "2026-03-09" || list.NextCursor != "" {
				t.Errorf("window %s..%s cursor %q", list.From, list.To, list.NextCursor)
			}
			if e := list.Events[1]; e.Title != "Team standup" || e.MyResponse != ResponseAccepted || e.Recurrence != "FREQ=DAILY;COUNT=5" || e.EndsAt != "2026-03-02 09:45:00" || e.Organizer != "Maya Chen" {
				t.Errorf("standup = %+v", e)
			}
			if e := list.Events[2]; e.MyResponse != "" || e.Location != "Lucia's" {
				t.Errorf("lunch = %+v", e)
			}
			if e := list.Events[3]; e.MyResponse != ResponseDeclined {
				t.Errorf("demo = %+v", e)
			}

			// Pagination: pages neither repeat nor skip.
			var paged []Occurrence
			cursor := ""
			for range 10 {
				args := map[string]any{"limit": 3}
				if cursor != "" {
					args["cursor"] = cursor
				}
				page := servicetest.Call[ListEventsOut](t, cs, "list_events", args)
				paged = append(paged, page.Events...)
				if cursor = page.NextCursor; cursor == "" {
					break
				}
			}
			if got := occIDs(paged); !slices.Equal(got, defaultWeek) {
				t.Errorf("paged = %v", got)
			}

			// An explicit window; the last day is inclusive.
			got := occIDs(servicetest.Call[ListEventsOut](t, cs, "list_events", map[string]any{"from": "2026-02-20", "to": "2026-02-23"}).Events)
			if !slices.Equal(got, []string{"evt-yoga#1@2026-02-23 07:00:00"}) {
				t.Errorf("Feb 20-23 = %v", got)
			}
			got = occIDs(servicetest.Call[ListEventsOut](t, cs, "list_events", map[string]any{"from": "2026-03-10", "to": "2026-12-31"}).Events)
			if !slices.Equal(got, []string{"evt-yoga#4@2026-03-16 07:00:00", "evt-yoga#5@2026-03-23 07:00:00"}) {
				t.Errorf("after Mar 10 = %v", got)
			}

			// get_event: guests in order, my response; cancelled events too.
			ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-review"})
			if ev.Title != "Quarterly review" || ev.Notes != "Bring the Q1 numbers." || ev.MyResponse != ResponseNeedsAction || ev.Status != StatusConfirmed ||
				!slices.Equal(ev.Guests, []Guest{{Name: "Alex", Response: "needs-action"}, {Name: "Maya Chen", Response: "tentative", RespondedAt: "2026-02-28 09:00:00"}}) {
				t.Errorf("review = %+v", ev)
			}
			if ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-offsite"}); ev.Status != StatusCancelled {
				t.Errorf("offsite = %+v", ev)
			}

			// respond.
			r := servicetest.Call[RespondOut](t, cs, "respond", map[string]any{"event": "evt-review", "response": "Accepted"})
			if r != (RespondOut{Event: "evt-review", Title: "Quarterly review", Response: "accepted", Previous: "needs-action", RespondedAt: "2026-03-02 08:30:00"}) {
				t.Errorf("respond = %+v", r)
			}
			if ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-review"}); ev.MyResponse != "accepted" || ev.Guests[0].RespondedAt != "2026-03-02 08:30:00" {
				t.Errorf("after respond = %+v", ev)
			}

			// find_free_time: not before now, skipping declined events.
			free := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"duration_minutes": 60})
			if !free.Found || free.StartsAt != "2026-03-02 09:45:00" || free.EndsAt != "2026-03-02 10:45:00" || free.Between != DefaultBetween {
				t.Errorf("free 60 = %+v", free)
			}
			wantFree := []Interval{{"2026-03-02 09:00:00", "2026-03-02 09:30:00"}, {"2026-03-02 09:45:00", "2026-03-02 12:00:00"}, {"2026-03-02 13:00:00", "2026-03-02 17:00:00"}}
			if !slices.Equal(free.Free, wantFree) {
				t.Errorf("free intervals = %v", free.Free)
			}
			if f := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"duration_minutes": 30}); f.StartsAt != "2026-03-02 09:00:00" {
				t.Errorf("free 30 = %+v", f)
			}
			if f := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"duration_minutes": 180}); f.StartsAt != "2026-03-02 13:00:00" {
				t.Errorf("free 180 = %+v", f)
			}
			if f := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"date": "2026-03-03", "duration_minutes": 300, "between": "08:00-18:00"}); f.Found || len(f.Free) != 3 {
				t.Errorf("free 300 on Mar 3 = %+v", f)
			}
			if f := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"date": "2026-03-09", "duration_minutes": 90, "between": "06:30-24:00"}); f.StartsAt != "2026-03-09 08:00:00" || f.Free[0].EndsAt != "2026-03-09 07:00:00" {
				t.Errorf("free on Mar 9 = %+v", f)
			}

			// create_event with guests and a recurrence.
			created := servicetest.Call[EventDetail](t, cs, "create_event", map[string]any{
				"title": " Planning ", "starts_at": "2026-03-04 10:00", "ends_at": "2026-03-04T11:00:00Z", "location": "Room 2",
				"guests": []string{"Maya Chen", "Priya Nair"}, "recurrence": "freq=weekly;count=2"})
			want := EventDetail{Event: "evt-7", Title: "Planning", StartsAt: "2026-03-04 10:00:00", EndsAt: "2026-03-04 11:00:00", Location: "Room 2",
				Organizer: TestSelf, Recurrence: "FREQ=WEEKLY;COUNT=2", Status: StatusConfirmed,
				Guests: []Guest{{Name: "Maya Chen", Response: "needs-action"}, {Name: "Priya Nair", Response: "needs-action"}}}
			if !equalDetail(created, want) {
				t.Errorf("created = %+v\nwant %+v", created, want)
			}
			got = occIDs(servicetest.Call[ListEventsOut](t, cs, "list_events", map[string]any{"from": "2026-03-04", "to": "2026-03-31"}).Events)
			if !slices.Contains(got, "evt-7#1@2026-03-04 10:00:00") || !slices.Contains(got, "evt-7#2@2026-03-11 10:00:00") || slices.Contains(got, "evt-7#3@2026-03-18 10:00:00") {
				t.Errorf("after create = %v", got)
			}
			if f := servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"date": "2026-03-11", "duration_minutes": 60, "between": "10:00-12:00"}); f.StartsAt != "2026-03-11 11:00:00" {
				t.Errorf("free after create = %+v", f)
			}

			// update_event: partial, revalidated.
			upd := servicetest.Call[EventDetail](t, cs, "update_event", map[string]any{"event": "evt-7", "ends_at": "2026-03-04 11:30", "recurrence": "", "notes": "Agenda TBD"})
			if upd.EndsAt != "2026-03-04 11:30:00" || upd.Recurrence != "" || upd.Notes != "Agenda TBD" || upd.Title != "Planning" || upd.StartsAt != "2026-03-04 10:00:00" {
				t.Errorf("updated = %+v", upd)
			}
			if ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-7"}); !equalDetail(ev, upd) {
				t.Errorf("get after update = %+v", ev)
			}

			// cancel_event removes it from list_events.
			c := servicetest.Call[EventDetail](t, cs, "cancel_event", map[string]any{"event": "evt-lunch"})
			if c.Status != StatusCancelled {
				t.Errorf("cancelled = %+v", c)
			}
			got = occIDs(servicetest.Call[ListEventsOut](t, cs, "list_events", nil).Events)
			if slices.Contains(got, "evt-lunch#1@2026-03-02 12:00:00") {
				t.Errorf("cancelled event listed: %v", got)
			}
		})
	}
}

func equalDetail(a, b EventDetail) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

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

func TestBadInputsChangeNothing(t *testing.T) {
	huge := strings.Repeat("x", 1<<20)
	sqlish := "'); DROP TABLE events; --"
	ok := map[string]any{"title": "T", "starts_at": "2026-03-05 10:00", "ends_at": "2026-03-05 11:00"}
	with := func(kv ...any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	}
	cases := []struct {
		tool string
		args map[string]any
		want string // part of the message
	}{
		{"get_event", map[string]any{"event": "nope"}, "call list_events"},
		{"get_event", map[string]any{"event": "EVT-LUNCH"}, `did you mean event "evt-lunch"`},
		{"get_event", map[string]any{"event": "quarterly review"}, `did you mean event "evt-review"`},
		{"get_event", map[string]any{"event": ""}, "event is required"},
		{"get_event", map[string]any{"event": sqlish}, "call list_events"},
		{"get_event", map[string]any{"event": huge}, "call list_events"},
		{"get_event", map[string]any{}, "event"},
		{"get_event", map[string]any{"event": 7}, "event"},
		{"get_event", map[string]any{"event": "evt-lunch", "extra": 1}, "extra"},
		{"list_events", map[string]any{"limit": 201}, "between 1 and 200"},
		{"list_events", map[string]any{"limit": "ten"}, "limit"},
		{"list_events", map[string]any{"from": "2026-02-30"}, "not a date"},
		{"list_events", map[string]any{"from": "03/02/2026"}, "not a date"},
		{"list_events", map[string]any{"to": sqlish}, "not a date"},
		{"list_events", map[string]any{"from": "2026-03-05", "to": "2026-03-01"}, "before from"},
		{"list_events", map[string]any{"from": "2026-01-01", "to": "2027-06-01"}, "at most 366 days"},
		{"list_events", map[string]any{"cursor": "bogus"}, "pass next_cursor"},
		{"create_event", with("ends_at", "2026-03-05 09:00"), "must be after starts_at"},
		{"create_event", with("ends_at", "2026-03-05 10:00"), "must be after starts_at"},
		{"create_event", with("starts_at", "2026-13-01 10:00"), "starts_at"},
		{"create_event", with("starts_at", "tomorrow at 10"), "not a time"},
		{"create_event", with("ends_at", "2026-04-05 10:00"), "more than 14 days"},
		{"create_event", with("title", "  "), "title is empty"},
		{"create_event", with("title", huge), "at most 200"},
		{"create_event", with("notes", huge), "at most 10000"},
		{"create_event", with("location", strings.Repeat("é", MaxLocationChars+1)), "at most 200"},
		{"create_event", with("recurrence", "FREQ=MONTHLY;COUNT=3"), "FREQ=MONTHLY is not supported"},
		{"create_event", with("recurrence", "FREQ=DAILY"), "neither COUNT nor UNTIL"},
		{"create_event", with("recurrence", "FREQ=DAILY;BYDAY=MO;COUNT=2"), "BYDAY is not supported"},
		{"create_event", with("recurrence", "FREQ=WEEKLY;UNTIL=2026-03-01"), "before the first start"},
		{"create_event", with("recurrence", "FREQ=DAILY;COUNT=2", "ends_at", "2026-03-06 11:00"), "within one day"},
		{"create_event", with("recurrence", sqlish), "recurrence"},
		{"create_event", with("guests", []string{"Maya", ""}), "guests[1] is empty"},
		{"create_event", with("guests", []string{"Maya", "maya"}), "listed twice"},
		{"create_event", with("guests", []string{"alex"}), "which is you"},
		{"create_event", with("guests", []string{huge}), "guests[0] is not a name"},
		{"create_event", with("guests", "Maya"), "guests"},
		{"create_event", with("starts_at", 20260305), "starts_at"},
		{"create_event", map[string]any{"title": "T"}, "starts_at"},
		{"update_event", map[string]any{"event": "evt-lunch"}, "nothing to change"},
		{"update_event", map[string]any{"event": "evt-review", "title": "Mine"}, "organized by Bob Weller"},
		{"update_event", map[string]any{"event": "evt-lunch", "ends_at": "2026-03-02 11:00"}, "must be after starts_at"},
		{"update_event", map[string]any{"event": "evt-lunch", "title": ""}, "title is empty"},
		{"update_event", map[string]any{"event": "evt-lunch", "recurrence": "FREQ=HOURLY;COUNT=2"}, "not supported"},
		{"update_event", map[string]any{"event": "nope", "title": "x"}, "call list_events"},
		{"cancel_event", map[string]any{"event": "evt-review"}, "use respond"},
		{"cancel_event", map[string]any{"event": "evt-offsite"}, "organized by Bob Weller"},
		{"cancel_event", map[string]any{"event": "nope"}, "call list_events"},
		{"respond", map[string]any{"event": "evt-review", "response": "maybe"}, "not one of accepted, declined, tentative"},
		{"respond", map[string]any{"event": "evt-review", "response": "needs-action"}, "not one of"},
		{"respond", map[string]any{"event": "evt-lunch", "response": "accepted"}, "you organize"},
		{"respond", map[string]any{"event": "evt-offsite", "response": "declined"}, "was cancelled"},
		{"respond", map[string]any{"event": "nope", "response": "accepted"}, "call list_events"},
		{"find_free_time", map[string]any{"duration_minutes": 0}, `argument "duration_minutes" of find_free_time must be between 1 and 1440, not 0`},
		{"find_free_time", map[string]any{"duration_minutes": 1441}, `argument "duration_minutes" of find_free_time must be between 1 and 1440, not 1441`},
		{"find_free_time", map[string]any{"duration_minutes": 500}, "between 1 and 480"},
		{"find_free_time", map[string]any{"duration_minutes": 30, "date": "2026-03-01"}, "in the past"},
		{"find_free_time", map[string]any{"duration_minutes": 30, "date": "soon"}, "not a date"},
		{"find_free_time", map[string]any{"duration_minutes": 30, "between": "17:00-09:00"}, "not a range of hours"},
		{"find_free_time", map[string]any{"duration_minutes": 30, "between": "9-5"}, "not a range of hours"},
		{"find_free_time", map[string]any{"duration_minutes": 30, "between": "09:00-24:30"}, "not a range of hours"},
		{"find_free_time", map[string]any{"duration_minutes": "30"}, "duration_minutes"},
		{"find_free_time", map[string]any{}, "duration_minutes"},
	}
	for _, tr := range transports {
		t.Run(tr.Name, func(t *testing.T) {
			path := newWorld(t)
			cs := tr.Connect(t, newService(t, path))
			before := servicetest.HashDB(t, path)
			for _, c := range cases {
				msg := servicetest.CallError(t, cs, c.tool, c.args)
				if !strings.Contains(msg, c.want) {
					t.Errorf("%s(%.200v): message %q does not mention %q", c.tool, c.args, clip(msg), c.want)
				}
				if len(msg) > 2000 {
					t.Errorf("%s: message of %d bytes echoes the input", c.tool, len(msg))
				}
				if after := servicetest.HashDB(t, path); after != before {
					t.Fatalf("%s(%.200v) changed the database", c.tool, c.args)
				}
			}
			// Text that looks like SQL is stored as given.
			ev := servicetest.Call[EventDetail](t, cs, "create_event", with("title", sqlish, "notes", sqlish+" %_"))
			if got := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": ev.Event}); got.Title != sqlish || got.Notes != sqlish+" %_" {
				t.Errorf("stored %+v", got)
			}
		})
	}
}

// script is a fixed sequence of calls that writes and reads.
func script(t testing.TB, cs *mcp.ClientSession) {
	servicetest.Call[ListEventsOut](t, cs, "list_events", nil)
	servicetest.Call[EventDetail](t, cs, "create_event", map[string]any{"title": "1:1 Maya", "starts_at": "2026-03-05 16:00", "ends_at": "2026-03-05 16:30", "guests": []string{"Maya Chen"}, "recurrence": "FREQ=WEEKLY;UNTIL=2026-04-30"})
	servicetest.Call[EventDetail](t, cs, "create_event", map[string]any{"title": "Dentist", "starts_at": "2026-03-06 08:00", "ends_at": "2026-03-06 09:00"})
	servicetest.Call[RespondOut](t, cs, "respond", map[string]any{"event": "evt-review", "response": "tentative"})
	servicetest.Call[EventDetail](t, cs, "update_event", map[string]any{"event": "evt-lunch", "location": "Café Nata"})
	servicetest.Call[EventDetail](t, cs, "cancel_event", map[string]any{"event": "evt-8"})
	servicetest.Call[FindFreeTimeOut](t, cs, "find_free_time", map[string]any{"duration_minutes": 45})
	servicetest.CallError(t, cs, "respond", map[string]any{"event": "missing", "response": "accepted"})
}

func TestDeterminism(t *testing.T) {
	a, b := newWorld(t), newWorld(t)
	if servicetest.HashDB(t, a) != servicetest.HashDB(t, b) {
		t.Fatal("fresh worlds differ")
	}
	orig := servicetest.HashDB(t, a)
	script(t, servicetest.ConnectMemory(t, newService(t, a)))
	script(t, servicetest.ConnectHTTP(t, newService(t, b)))
	ha, hb := servicetest.HashDB(t, a), servicetest.HashDB(t, b)
	if ha != hb {
		d, err := state.Compare(context.Background(), filepath.Dir(filepath.Dir(a)), filepath.Dir(filepath.Dir(b)))
		if err == nil {
			t.Logf("first difference: %s", d.First())
		}
		t.Fatalf("same calls on equal worlds gave different databases: %s vs %s", ha, hb)
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
	want := map[string][]string{ // tool -> its input properties
		"list_events":    {"from", "to", "limit", "cursor"},
		"get_event":      {"event"},
		"create_event":   {"title", "starts_at", "ends_at", "location", "notes", "guests", "recurrence"},
		"update_event":   {"event", "title", "starts_at", "ends_at", "location", "notes", "recurrence"},
		"cancel_event":   {"event"},
		"respond":        {"event", "response"},
		"find_free_time": {"date", "duration_minutes", "between"},
	}
	readOnly := []string{"list_events", "get_event", "find_free_time"}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
		if tool.Description == "" || tool.OutputSchema == nil || tool.Annotations == nil {
			t.Fatalf("%s: description, output schema or annotations missing", tool.Name)
		}
		raw, _ := json.Marshal(tool.InputSchema)
		var schema struct {
			Type       string
			Properties map[string]struct{ Description string }
			Required   []string
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
		if tool.Name == "create_event" && !slices.Equal(schema.Required, []string{"title", "starts_at", "ends_at"}) {
			t.Errorf("create_event required = %v", schema.Required)
		}
		if ro := tool.Annotations.ReadOnlyHint; ro != slices.Contains(readOnly, tool.Name) {
			t.Errorf("%s: readOnlyHint = %v", tool.Name, ro)
		}
	}
	slices.Sort(names)
	if !slices.Equal(names, []string{"cancel_event", "create_event", "find_free_time", "get_event", "list_events", "respond", "update_event"}) {
		t.Errorf("tools = %v", names)
	}
}

func TestDayResource(t *testing.T) {
	path := newWorld(t)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	ctx := context.Background()
	tmpl, err := cs.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(tmpl.ResourceTemplates) != 1 || tmpl.ResourceTemplates[0].URITemplate != "calendar://day/{date}" {
		t.Fatalf("templates = %+v", tmpl.ResourceTemplates)
	}
	before := servicetest.HashDB(t, path)
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: DayURI(time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Contents[0].Text
	for _, want := range []string{
		"2026-03-02 (Monday)",
		"07:00-08:00 Yoga @ Studio (event evt-yoga, occurrence 2, organizer Alex)",
		"09:30-09:45 Team standup @ Room 4 (event evt-standup, occurrence 1, organizer Maya Chen, you: accepted)",
		"12:00-13:00 Lunch with Priya @ Lucia's (event evt-lunch, organizer Alex)",
		"15:00-16:00 Vendor demo (event evt-demo, organizer Sam Ortiz, you: declined)",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("resource text lacks %q:\n%s", want, text)
		}
	}
	empty, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "calendar://day/2026-03-08"})
	if err != nil || !strings.Contains(empty.Contents[0].Text, "No events.") {
		t.Errorf("empty day: %v %+v", err, empty)
	}
	for _, bad := range []string{"calendar://day/2026-3-2", "calendar://day/tomorrow", "calendar://day/"} {
		if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: bad}); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
	if servicetest.HashDB(t, path) != before {
		t.Error("reading a resource changed the database")
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

// TestReplacedDatabase: an instance reset replaces the file between calls;
// the next call sees the new file.
func TestReplacedDatabase(t *testing.T) {
	path := newWorld(t)
	pristine := filepath.Join(t.TempDir(), "pristine.sqlite")
	MakeTestDB(t, pristine)
	cs := servicetest.ConnectMemory(t, newService(t, path))
	servicetest.Call[EventDetail](t, cs, "cancel_event", map[string]any{"event": "evt-lunch"})
	data, err := os.ReadFile(pristine)
	if err != nil {
		t.Fatal(err)
	}
	if err := world.WriteFileAtomic(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	if ev := servicetest.Call[EventDetail](t, cs, "get_event", map[string]any{"event": "evt-lunch"}); ev.Status != StatusConfirmed {
		t.Errorf("after reset: %+v", ev)
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
	if msg := servicetest.CallError(t, cs, "create_event", map[string]any{"title": "T", "starts_at": "2026-03-05 10:00", "ends_at": "2026-03-05 11:00"}); !strings.Contains(msg, "internal error") {
		t.Errorf("message = %q", msg)
	}
	servicetest.CallError(t, cs, "list_events", nil)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("database recreated: %v", err)
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

func TestNew(t *testing.T) {
	path := newWorld(t)
	partial := filepath.Join(t.TempDir(), "partial.sqlite")
	state.ExecTest(t, partial, "CREATE TABLE events (id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE)")
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{Clock: TestClock(), Self: "A"}, "DBPath is required"},
		{Options{DBPath: path, Self: "A"}, "Clock is required"},
		{Options{DBPath: path, Clock: TestClock()}, "Self is required"},
		{Options{DBPath: filepath.Join(t.TempDir(), "none.sqlite"), Clock: TestClock(), Self: "A"}, "no such file"},
		{Options{DBPath: partial, Clock: TestClock(), Self: "A"}, "no column title"},
	} {
		if _, err := New(tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v) = %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// TestSchemaNaturalKeys: every table of Schema has a natural key.
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
	want := map[string][]string{"events": {"ext_id"}, "invitations": {"event_id", "guest"}}
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
	c := cursor{startsAt: "2026-03-02 09:00:00", event: "evt-1", index: 3}
	if back, ok := parseCursor(c.String()); !ok || back != c {
		t.Errorf("round trip: %+v %v", back, ok)
	}
	for _, bad := range []string{"", "!!", "YWJj", cursor{startsAt: "x", event: "e", index: 0}.String()} {
		if _, ok := parseCursor(bad); ok {
			t.Errorf("parseCursor(%q) ok", bad)
		}
	}
}
