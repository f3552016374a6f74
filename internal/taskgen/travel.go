package taskgen

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/task"
)

// travelFamilies are the task families of this file.
func travelFamilies() []Family {
	return []Family{flightCheapestDay{}, matchInvite{}, cafeNearVenue{}, staysApproval{}}
}

// flightCheapestDay: a trip note of the home plans a flight; the persona
// can leave up to two days earlier and wants the cheapest of the three
// days. The fares are on Skyway (GUI), a script over them decides the day
// and keeps the table (CLI), the seat is reserved on Skyway (GUI), the
// flight goes into the calendar (MCP) and the trip note is brought up to
// date (CLI).
type flightCheapestDay struct{}

func (flightCheapestDay) Name() string     { return "flight-cheapest-day" }
func (flightCheapestDay) Covers() []string { return []string{"flights", "calendar"} }

var (
	tripFlightRE  = regexp.MustCompile(`(?m)^- ([A-Z]{2}\d+) ([A-Z]{3}) -> ([A-Z]{3})$`)
	tripDepartsRE = regexp.MustCompile(`(?m)^- Departs (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$`)
	tripArrivesRE = regexp.MustCompile(`(?m)^- Arrives (\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})$`)
)

// tripFlight is the flight a trip note plans and the fares of its route
// on the day and the two days before.
type tripFlight struct {
	note, number, origin, dest string
	day                        time.Time
	options                    []flightOption // earliest day first
}

type flightOption struct {
	id                int64
	day, departs, arr string
	cents             int64
}

// cheapest is the cheapest option; on a tie the later day (nearer the plan).
func (t tripFlight) cheapest() flightOption {
	best := t.options[0]
	for _, o := range t.options[1:] {
		if o.cents <= best.cents {
			best = o
		}
	}
	return best
}

// tripFlights reads the trip notes whose flight is on Skyway and whose
// three candidate days are all after today.
func tripFlights(w *World) ([]tripFlight, error) {
	today, err := travelToday(w)
	if err != nil {
		return nil, err
	}
	files, err := w.HomeFiles("trips")
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var out []tripFlight
	for _, f := range files {
		if !strings.HasSuffix(f, ".md") {
			continue
		}
		b, err := w.Home(f)
		if err != nil {
			return nil, err
		}
		fm, dm := tripFlightRE.FindSubmatch(b), tripDepartsRE.FindSubmatch(b)
		if fm == nil || dm == nil || tripArrivesRE.Find(b) == nil {
			continue
		}
		day, err := time.Parse("2006-01-02", string(dm[1])[:10])
		if err != nil || !day.AddDate(0, 0, -2).After(today) {
			continue
		}
		t := tripFlight{note: f, number: string(fm[1]), origin: string(fm[2]), dest: string(fm[3]), day: day}
		rows, err := w.Catalog(`SELECT id, substr(departs_at, 1, 10), departs_at, arrives_at, price_cents FROM flights
			WHERE number = ? AND origin = ? AND dest = ? AND substr(departs_at, 1, 10) BETWEEN ? AND ? AND seats >= 1 ORDER BY departs_at`,
			t.number, t.origin, t.dest, day.AddDate(0, 0, -2).Format("2006-01-02"), day.Format("2006-01-02"))
		if err != nil {
			return nil, err
		}
		if len(rows) != 3 {
			continue
		}
		for _, r := range rows {
			t.options = append(t.options, flightOption{id: num(r[0]), day: str(r[1]), departs: str(r[2]), arr: str(r[3]), cents: num(r[4])})
		}
		out = append(out, t)
	}
	return out, nil
}

// runnerUp is the option cheapest() would take after its pick: the next
// cheapest, or on a tie with the pick the earlier day.
func (t tripFlight) runnerUp() flightOption {
	os := slices.Clone(t.options)
	slices.SortStableFunc(os, func(a, b flightOption) int {
		if c := cmp.Compare(a.cents, b.cents); c != 0 {
			return c
		}
		return strings.Compare(b.day, a.day)
	})
	return os[1]
}

func faresPath(note string) string { return strings.TrimSuffix(note, ".md") + "-fares.csv" }

func (f flightCheapestDay) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	if _, ok := w.Logins["flights"]; !ok || !hasDBs(w, "calendar") {
		return nil, nil
	}
	trips, err := tripFlights(w)
	if err != nil {
		return nil, err
	}
	var out []Sketch
	for _, t := range trips {
		c := t.cheapest()
		out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Fly %s %s-%s on the cheapest of three days for %s", t.number, t.origin, t.dest, t.note),
			Params: map[string]string{"note": t.note},
			Core:   []string{"reserve flights " + t.number + " " + c.day, "file " + faresPath(t.note), "create calendar event Flight " + t.number, "edit " + t.note}})
	}
	return out, nil
}

func (f flightCheapestDay) Author(w *World, s Sketch) (*Draft, error) {
	trips, err := tripFlights(w)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(trips, func(t tripFlight) bool { return t.note == s.Params["note"] })
	if i < 0 {
		return nil, fmt.Errorf("taskgen: %s: no trip note %q with a flight in the world", f.Name(), s.Params["note"])
	}
	t := trips[i]
	pick := t.cheapest()
	login := w.Logins["flights"]
	prior, err := w.Query("flights", `SELECT count(*), count(CASE WHEN flight_id = ? AND passengers = 1 AND cabin = 'economy' AND status = 'confirmed' THEN 1 END) FROM reservations WHERE username = ?`, pick.id, login.User)
	if err != nil {
		return nil, err
	}
	var priorAll, priorPick int64
	if len(prior) == 1 {
		priorAll, priorPick = num(prior[0][0]), num(prior[0][1])
	}
	title := fmt.Sprintf("Flight %s %s-%s", t.number, t.origin, t.dest)
	priorEv, err := w.Query("calendar", `SELECT count(*) FROM events WHERE title LIKE ? AND starts_at = ? AND ends_at = ? AND status = 'confirmed'`, "%"+t.number+"%", pick.departs, pick.arr)
	if err != nil {
		return nil, err
	}
	var priorEvents int64
	if len(priorEv) == 1 {
		priorEvents = num(priorEv[0][0])
	}
	out := faresPath(t.note)
	first, last := t.options[0].day, t.options[2].day

	var ref Steps
	ref.Shell("cat "+t.note+" "+LoginsFile, "the planned flight and the Skyway login")
	ref.Login("flights", login)
	for _, o := range t.options {
		ref.Open("flights", fmt.Sprintf("/flights?from=%s&to=%s&day=%s", t.origin, t.dest, o.day), "the route's flight on "+o.day)
		ref.Read("#results", "")
	}
	var rowsPy, roundPy []string
	cents := false
	for _, o := range t.options {
		rowsPy = append(rowsPy, fmt.Sprintf("(%s, %s, %s, %s)", pyq(o.day), pyq(o.departs), pyq(o.arr), dollars(o.cents)))
		roundPy = append(roundPy, fmt.Sprintf("(%s, %s, %s, %d)", pyq(o.day), pyq(o.departs), pyq(o.arr), (o.cents+50)/100))
		cents = cents || o.cents%100 != 0
	}
	// Read carelessly, the fares come out in whole dollars (when they
	// have cents).
	faresPy := "rows = [" + strings.Join(rowsPy, ", ") + "]"
	if f, ok := factOf("fares", task.FactRead, "fares to the cent", task.Form{Value: faresPy, Wrong: "rows = [" + strings.Join(roundPy, ", ") + "]"}); ok && cents {
		ref.Fact(f)
	}
	ref.pyScript(path.Dir(out), fmt.Sprintf(`import csv
%s
with open(%s, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['date', 'flight', 'departs', 'arrives', 'fare'])
    for day, dep, arr, fare in rows:
        w.writerow([day, %s, dep, arr, '%%.2f' %% fare])
best = min(reversed(rows), key=lambda r: r[3])
print('cheapest:', best)
`, faresPy, pyq(out), pyq(t.number)), "the table that decides the day")
	// Without the script, the guess is the day the note plans; choosing
	// carelessly, the runner-up (on a tie, the earlier day).
	instead := func(id, kind string, o flightOption) (task.Fact, bool) {
		return factOf(id, kind, "",
			task.Form{Value: fmt.Sprintf("site:flights/flights/%d", pick.id), Wrong: fmt.Sprintf("site:flights/flights/%d", o.id)},
			task.Form{Value: pick.departs[:16], Wrong: o.departs[:16]}, task.Form{Value: pick.arr[:16], Wrong: o.arr[:16]},
			task.Form{Value: pick.day, Wrong: o.day})
	}
	if f, ok := instead("cheapest-day", task.FactOutput, t.options[len(t.options)-1]); ok {
		ref.Fact(f)
	}
	save := len(ref)
	ref.KitAction("flights", "/flights", strconv.FormatInt(pick.id, 10), "reserve", map[string]string{"passengers": "1", "cabin": "economy"}, "reserve the cheapest day")
	if f, ok := instead("day", task.FactChoice, t.runnerUp()); ok {
		ref.FactAt(save, f)
	}
	ref.MCP("calendar", "create_event", map[string]any{"title": title, "starts_at": pick.departs[:16], "ends_at": pick.arr[:16], "location": t.origin + " airport"}, "the flight in the calendar")
	ref.pyScript("", fmt.Sprintf(`import re
p = %s
s = open(p).read()
s = re.sub(r'(?m)^- Departs .*$', '- Departs ' + %s, s)
s = re.sub(r'(?m)^- Arrives .*$', '- Arrives ' + %s, s)
open(p, 'w').write(s)
print(s)
`, pyq(t.note), pyq(pick.departs), pyq(pick.arr)), "the trip note names the flight taken")

	fares := map[string]float64{}
	for _, o := range t.options {
		fares[o.day] = float64(o.cents) / 100
	}
	want, _ := json.Marshal(fares)
	checkPy := fmt.Sprintf(`from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%s)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def fare(v):
    try:
        return float((v or "").replace("$", "").replace(",", "").strip())
    except ValueError:
        return None
got = {(r.get("date") or "").strip(): fare(r.get("fare")) for r in rows}
bad = sorted(d for d in want if got.get(d) is None or abs(got[d] - want[d]) > 0.005)
extra = sorted(d for d in got if d not in want)
result(not bad and not extra, f"wrong or missing fares for {bad}; days not asked for {extra}; got {got}")
`, want, pyq(out), out)

	tk := &task.Task{
		Version: task.Version, ID: fmt.Sprintf("flight-cheapest-day-%s-%s-d%d", strings.ToLower(t.number), t.day.Format("0102"), w.Manifest.Day),
		Instruction: fmt.Sprintf("My trip note ~/%s plans flight %s from %s to %s on %s. I can just as well leave one or two days earlier, so compare the Skyway fares of that flight on each day from %s to %s. "+
			"Keep the fares in ~/%s with a script (columns date, flight, departs, arrives, fare in dollars, one row per day), reserve one economy seat on the cheapest day (on a tie the later day), "+
			"put the flight in my calendar titled %q from its departure to its arrival (UTC), and change the Departs and Arrives lines of the trip note to the flight I take. Tell me which day I fly.",
			t.note, t.number, t.origin, t.dest, t.day.Format("2006-01-02"), first, last, out, title),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "plan", Title: "Read the planned flight in " + t.note, Interface: task.CLI},
			{ID: "fares", Title: "Look up the flight's fare on each of the three days on Skyway", Interface: task.GUI},
			{ID: "table", Title: "Write " + out + " with a script and find the cheapest day", Interface: task.CLI},
			{ID: "reserve", Title: "Reserve one economy seat on the cheapest day", Interface: task.GUI},
			{ID: "calendar", Title: "Add the flight to the calendar", Interface: task.MCP},
			{ID: "note", Title: "Update the trip note's departure and arrival", Interface: task.CLI},
		},
		Hint: fmt.Sprintf("Skyway's /flights list filters by from, to and day (YYYY-MM-DD) and gives the fares to the cent; the Skyway login is in ~/%s. The calendar's create_event takes starts_at and ends_at as YYYY-MM-DD HH:MM in UTC, the times Skyway shows.", LoginsFile),
		Rubric: []string{
			fmt.Sprintf("~/%s has one row per day %s to %s with that day's fare", out, first, last),
			fmt.Sprintf("exactly one new Skyway reservation: %s on the cheapest day, one passenger, economy", t.number),
			fmt.Sprintf("a calendar event %q from the reserved flight's departure to its arrival", title),
			"the trip note's Departs and Arrives lines give the reserved flight's times",
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "reserved", Kind: "sql", DB: "flights", Description: fmt.Sprintf("%s departing %s (Skyway flight %d) is reserved: one economy seat", t.number, pick.departs, pick.id),
				Query: fmt.Sprintf(`SELECT count(*) FROM reservations r JOIN catalog.flights f ON f.id = r.flight_id WHERE r.username = %s AND f.number = %s AND f.departs_at = %s AND r.passengers = 1 AND r.cabin = 'economy' AND r.status = 'confirmed'`,
					sqlText(login.User), sqlText(t.number), sqlText(pick.departs)),
				Expect: json.RawMessage(strconv.FormatInt(priorPick+1, 10))},
			{ID: "one-reservation", Kind: "sql", DB: "flights", Description: "no other reservation",
				Query:  fmt.Sprintf(`SELECT count(*) FROM reservations WHERE username = %s`, sqlText(login.User)),
				Expect: json.RawMessage(strconv.FormatInt(priorAll+1, 10))},
			{ID: "calendar", Kind: "sql", DB: "calendar", Description: "the flight is in the calendar at its times",
				Query:  fmt.Sprintf(`SELECT count(*) FROM events WHERE title LIKE %s AND starts_at = %s AND ends_at = %s AND status = 'confirmed'`, sqlText("%"+t.number+"%"), sqlText(pick.departs), sqlText(pick.arr)),
				Expect: json.RawMessage(strconv.FormatInt(priorEvents+1, 10))},
			{ID: "fares", Kind: "script", Script: "scripts/fares_table.py", Description: "the table of the three days' fares"},
			{ID: "note", Kind: "file", Path: t.note, Description: "the trip note names the flight taken",
				Contains: []string{"Departs " + pick.departs, "Arrives " + pick.arr}},
		}},
		Answer:     pick.day,
		Provenance: task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog},
		Rationale: fmt.Sprintf("the note plans %s %s-%s on %s; fares %s; the cheapest is %s at %s (flight key %d). Fares only on Skyway, the calendar only over MCP, the table and the note in the shell.",
			t.number, t.origin, t.dest, t.day.Format("2006-01-02"), fareList(t.options), pick.day, dollars(pick.cents), pick.id),
	}
	return &Draft{Task: tk, Scripts: map[string]string{"fares_table.py": checkPy}}, nil
}

func fareList(os []flightOption) string {
	var b []string
	for _, o := range os {
		b = append(b, o.day+"="+dollars(o.cents))
	}
	return strings.Join(b, ", ")
}

// matchInvite: the persona goes to the next match of the followed team
// with the best record and asks a friend along. The records are on
// Scoreline (GUI), a script ranks the teams and keeps the table (CLI), the
// match goes into the calendar and the invitation into the friend's
// direct thread (MCP).
type matchInvite struct{}

func (matchInvite) Name() string     { return "match-invite" }
func (matchInvite) Covers() []string { return []string{"sports", "calendar", "messages"} }

type teamRecord struct {
	slug, name          string
	won, drawn, lost    int64
	kickoff, home, away string // the first match after today
	homeSlug, awaySlug  string
}

func (t teamRecord) points() int64 { return 3*t.won + t.drawn }

// followedRecords are the followed teams' records, the best first
// (points, then wins, then name), the best with its first match after
// today (none when it has no match to come).
func followedRecords(w *World, user string) ([]teamRecord, error) {
	today, err := travelToday(w)
	if err != nil {
		return nil, err
	}
	rows, err := w.Query("sports", `SELECT team FROM followed_teams WHERE username = ? ORDER BY team`, user)
	if err != nil {
		return nil, err
	}
	var out []teamRecord
	for _, r := range rows {
		c, err := w.Catalog(`SELECT t.slug, t.name,
			(SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND ((f.home_id = t.id AND f.home_score > f.away_score) OR (f.away_id = t.id AND f.away_score > f.home_score))),
			(SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND f.home_score = f.away_score AND t.id IN (f.home_id, f.away_id)),
			(SELECT count(*) FROM fixtures f WHERE f.home_score IS NOT NULL AND ((f.home_id = t.id AND f.home_score < f.away_score) OR (f.away_id = t.id AND f.away_score < f.home_score)))
			FROM teams t WHERE t.slug = ?`, str(r[0]))
		if err != nil {
			return nil, err
		}
		if len(c) == 1 {
			x := c[0]
			out = append(out, teamRecord{slug: str(x[0]), name: str(x[1]), won: num(x[2]), drawn: num(x[3]), lost: num(x[4])})
		}
	}
	slices.SortStableFunc(out, func(a, b teamRecord) int {
		if a.points() != b.points() {
			return int(b.points() - a.points())
		}
		if a.won != b.won {
			return int(b.won - a.won)
		}
		return strings.Compare(a.name, b.name)
	})
	if len(out) > 0 {
		m, err := w.Catalog(`SELECT f.starts_at, h.name, a.name FROM teams t JOIN fixtures f ON t.id IN (f.home_id, f.away_id)
			JOIN teams h ON h.id = f.home_id JOIN teams a ON a.id = f.away_id
			WHERE t.slug = ? AND f.starts_at >= ? ORDER BY f.starts_at, f.id LIMIT 1`, out[0].slug, today.AddDate(0, 0, 1).Format("2006-01-02"))
		if err != nil {
			return nil, err
		}
		if len(m) == 1 {
			out[0].kickoff, out[0].home, out[0].away = str(m[0][0]), str(m[0][1]), str(m[0][2])
		}
	}
	return out, nil
}

// teamMatch is a fixture as a team's page lists it.
type teamMatch struct{ kickoff, home, away string }

func (m teamMatch) title() string { return m.home + " v " + m.away }

// teamMatches are a team's first match after today and the one its page
// lists just before it (the latest up to today: zero when there is none).
func teamMatches(w *World, slug string, today time.Time) (next, before teamMatch, err error) {
	rows, err := w.Catalog(`SELECT f.starts_at, h.name, a.name FROM teams t JOIN fixtures f ON t.id IN (f.home_id, f.away_id)
		JOIN teams h ON h.id = f.home_id JOIN teams a ON a.id = f.away_id
		WHERE t.slug = ? ORDER BY f.starts_at, f.id`, slug)
	if err != nil {
		return next, before, err
	}
	from := today.AddDate(0, 0, 1).Format("2006-01-02")
	for i, r := range rows {
		if str(r[0]) >= from {
			next = teamMatch{str(r[0]), str(r[1]), str(r[2])}
			if i > 0 {
				before = teamMatch{str(rows[i-1][0]), str(rows[i-1][1]), str(rows[i-1][2])}
			}
			break
		}
	}
	return next, before, nil
}

// directThreads are the persona's direct threads: ext_id and the other
// person's name.
func directThreads(w *World) ([][2]string, error) {
	rows, err := w.Query("messages", `SELECT t.ext_id, p.name FROM threads t JOIN participants p ON p.thread_id = t.id
		WHERE t.kind = 'dm' AND p.name <> ? AND (SELECT count(*) FROM participants q WHERE q.thread_id = t.id) = 2 ORDER BY t.ext_id`, w.Self)
	if err != nil {
		return nil, err
	}
	var out [][2]string
	for _, r := range rows {
		out = append(out, [2]string{str(r[0]), str(r[1])})
	}
	return out, nil
}

func (f matchInvite) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["sports"]
	if !ok || !hasDBs(w, "calendar", "messages") {
		return nil, nil
	}
	teams, err := followedRecords(w, login.User)
	if err != nil || len(teams) < 2 || teams[0].kickoff == "" {
		return nil, err
	}
	dms, err := directThreads(w)
	if err != nil || len(dms) == 0 {
		return nil, err
	}
	dm := dms[rng.IntN(len(dms))]
	best := teams[0]
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Invite %s to %s's next match", dm[1], best.name),
		Params: map[string]string{"thread": dm[0], "friend": dm[1]},
		Core:   []string{"create calendar event " + best.home + " v " + best.away, "send message " + dm[0], "file sports/standings.csv"}}}, nil
}

func (f matchInvite) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["sports"]
	teams, err := followedRecords(w, login.User)
	if err != nil {
		return nil, err
	}
	if len(teams) < 2 || teams[0].kickoff == "" {
		return nil, fmt.Errorf("taskgen: %s: fewer than two followed teams, or the best has no match to come", f.Name())
	}
	best := teams[0]
	thread, friend := s.Params["thread"], s.Params["friend"]
	match := best.home + " v " + best.away
	kick, err := time.Parse("2006-01-02 15:04:05", best.kickoff)
	if err != nil {
		return nil, fmt.Errorf("taskgen: %s: kick-off %q: %w", f.Name(), best.kickoff, err)
	}
	end := kick.Add(2 * time.Hour).Format("2006-01-02 15:04:05")
	date := kick.Format("2006-01-02")
	const out = "sports/standings.csv"
	today, _ := travelToday(w)

	priorEv, err := w.Query("calendar", `SELECT count(*) FROM events WHERE title = ? AND starts_at = ? AND ends_at = ? AND status = 'confirmed'`, match, best.kickoff, end)
	if err != nil {
		return nil, err
	}
	priorMsg, err := w.Query("messages", `SELECT count(*) FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.ext_id = ? AND m.sender = ? AND m.body LIKE ? AND m.body LIKE ?`,
		thread, w.Self, "%"+date+"%", "%"+best.name+"%")
	if err != nil {
		return nil, err
	}
	var pe, pm int64
	if len(priorEv) == 1 {
		pe = num(priorEv[0][0])
	}
	if len(priorMsg) == 1 {
		pm = num(priorMsg[0][0])
	}

	// What a careless agent has instead of the best team and its match:
	// the team's match read off the wrong row, the guessed team's or the
	// runner-up's.
	instead := func(id, kind, cue string, t teamRecord, m teamMatch) (task.Fact, bool) {
		if m.kickoff == "" {
			return task.Fact{}, false
		}
		mk, _ := time.Parse("2006-01-02 15:04:05", m.kickoff)
		return factOf(id, kind, cue,
			task.Form{Value: match, Wrong: m.title()},
			task.Form{Value: best.kickoff[:16], Wrong: m.kickoff[:16]},
			task.Form{Value: end[:16], Wrong: mk.Add(2 * time.Hour).Format("2006-01-02 15:04")},
			task.Form{Value: date, Wrong: m.kickoff[:10]},
			task.Form{Value: "kick-off " + best.kickoff[11:16], Wrong: "kick-off " + m.kickoff[11:16]},
			task.Form{Value: best.name, Wrong: t.name})
	}
	_, before, err := teamMatches(w, best.slug, today)
	if err != nil {
		return nil, err
	}

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Scoreline login")
	ref.Login("sports", login)
	ref.Open("sports", "/following", "the followed teams")
	ref.Read("#results", "")
	var rowsPy, drawlessPy []string
	for _, t := range slices.SortedFunc(slices.Values(teams), func(a, b teamRecord) int { return strings.Compare(a.slug, b.slug) }) {
		ref.Open("sports", "/teams/"+t.slug, t.name+": won, drawn, lost and the fixtures")
		ref.Read("article", "")
		if t.slug == best.slug {
			// Read carelessly, the match is the row above the first after
			// today: the latest one played (or today's).
			if f, ok := instead("fixture", task.FactRead, "fixtures with kick-off times", best, before); ok {
				ref.Fact(f)
			}
		}
		rowsPy = append(rowsPy, fmt.Sprintf("(%s, %d, %d, %d)", pyq(t.name), t.won, t.drawn, t.lost))
		drawlessPy = append(drawlessPy, fmt.Sprintf("(%s, %d, %d, %d)", pyq(t.name), t.won, 0, t.lost))
	}
	// Read carelessly, the records are wins and losses: the draws overlooked.
	records := "teams = [" + strings.Join(rowsPy, ", ") + "]"
	if f, ok := factOf("records", task.FactRead, "gives Won, Drawn, Lost", task.Form{Value: records, Wrong: "teams = [" + strings.Join(drawlessPy, ", ") + "]"}); ok {
		ref.Fact(f)
	}
	ref.pyScript("sports", fmt.Sprintf(`import csv
%s
rows = sorted(((n, w, d, l, 3 * w + d) for n, w, d, l in teams), key=lambda r: (-r[4], -r[1], r[0]))
with open(%s, 'w', newline='') as f:
    out = csv.writer(f, lineterminator='\n')
    out.writerow(['team', 'won', 'drawn', 'lost', 'points'])
    out.writerows(rows)
print('best:', rows[0])
`, records, pyq(out)), "the table that decides the team")
	// Without the table, the guess is the team with the most wins.
	guess := slices.MaxFunc(teams, func(a, b teamRecord) int { return cmp.Compare(a.won, b.won) })
	guessed, _, err := teamMatches(w, guess.slug, today)
	if err != nil {
		return nil, err
	}
	if f, ok := instead("best-team", task.FactOutput, "", guess, guessed); ok {
		ref.Fact(f)
	}
	second, _, err := teamMatches(w, teams[1].slug, today)
	if err != nil {
		return nil, err
	}
	choose := len(ref)
	ref.MCP("calendar", "create_event", map[string]any{"title": match, "starts_at": best.kickoff[:16], "ends_at": end[:16]}, "the match in the calendar")
	ref.MCP("messages", "send_message", map[string]any{"thread": thread,
		"body": fmt.Sprintf("I'm going to see %s play: %s on %s, kick-off %s UTC. Want to come along?", best.name, match, date, best.kickoff[11:16])}, "ask "+friend)
	// Choosing carelessly, the runner-up's match.
	if f, ok := instead("team", task.FactChoice, "", teams[1], second); ok {
		ref.FactAt(choose, f)
	}

	want := map[string][4]int64{}
	for _, t := range teams {
		want[t.name] = [4]int64{t.won, t.drawn, t.lost, t.points()}
	}
	wantJSON, _ := json.Marshal(want)
	checkPy := fmt.Sprintf(`from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%s)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def ints(r):
    try:
        return [int(float((r.get(k) or "").strip())) for k in ("won", "drawn", "lost", "points")]
    except ValueError:
        return None
got = {(r.get("team") or "").strip(): ints(r) for r in rows}
bad = sorted(t for t in want if got.get(t) != want[t])
extra = sorted(t for t in got if t not in want)
result(not bad and not extra, f"wrong or missing records: {bad}; teams I do not follow: {extra}")
`, wantJSON, pyq(out), out)

	tk := &task.Task{
		Version: task.Version, ID: fmt.Sprintf("match-invite-%s-d%d", best.slug, w.Manifest.Day),
		Instruction: fmt.Sprintf("I want to go to a match of one of the teams I follow on Scoreline: the team with the best record this season (3 points a win, 1 a draw; on equal points more wins, then the name). "+
			"Make a table of my teams with a script and keep it as ~/%s (columns team, won, drawn, lost, points). Then put that team's first match after today (%s) in my calendar, titled as Scoreline names the match (\"HOME v AWAY\"), from kick-off for two hours (UTC), "+
			"and message %s in our direct chat to ask them along, giving the team and the date (YYYY-MM-DD). Which match is it?", out, today.Format("2006-01-02"), friend),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "records", Title: "Read the followed teams' won, drawn and lost on Scoreline", Interface: task.GUI},
			{ID: "table", Title: "Rank the teams with a script and save " + out, Interface: task.CLI},
			{ID: "fixture", Title: "Find the best team's first match after today on its Scoreline page", Interface: task.GUI},
			{ID: "calendar", Title: "Add the match to the calendar", Interface: task.MCP},
			{ID: "invite", Title: "Ask " + friend + " along in your direct thread", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Scoreline's /following lists the teams you follow; each team's page gives Won, Drawn, Lost and its fixtures with kick-off times (UTC). The Scoreline login is in ~/%s. send_message takes the thread id of the direct thread with %s (list_threads).", LoginsFile, friend),
		Rubric: []string{
			fmt.Sprintf("~/%s gives every followed team's won, drawn, lost and points", out),
			fmt.Sprintf("a calendar event %q at its kick-off %s UTC for two hours", match, best.kickoff[:16]),
			fmt.Sprintf("a message to %s in the direct thread naming %s and %s", friend, best.name, date),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "standings", Kind: "script", Script: "scripts/standings.py", Description: "the followed teams' records"},
			{ID: "calendar", Kind: "sql", DB: "calendar", Description: "the match is in the calendar from kick-off for two hours",
				Query:  fmt.Sprintf(`SELECT count(*) FROM events WHERE title = %s AND starts_at = %s AND ends_at = %s AND status = 'confirmed'`, sqlText(match), sqlText(best.kickoff), sqlText(end)),
				Expect: json.RawMessage(strconv.FormatInt(pe+1, 10))},
			{ID: "invite", Kind: "sql", DB: "messages", Description: "the friend is asked along, with the team and the date",
				Query: fmt.Sprintf(`SELECT count(*) FROM messages m JOIN threads t ON t.id = m.thread_id WHERE t.ext_id = %s AND m.sender = %s AND m.body LIKE %s AND m.body LIKE %s`,
					sqlText(thread), sqlText(w.Self), sqlText("%"+date+"%"), sqlText("%"+best.name+"%")),
				Expect: json.RawMessage(strconv.FormatInt(pm+1, 10))},
		}},
		Answer:     match,
		Provenance: task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog},
		Rationale: fmt.Sprintf("records %s; the best is %s (%d points), whose first match after %s is %s at %s. Records only on Scoreline, calendar and messages only over MCP, the ranking in a script.",
			recordList(teams), best.name, best.points(), today.Format("2006-01-02"), match, best.kickoff),
	}
	return &Draft{Task: tk, Scripts: map[string]string{"standings.py": checkPy}}, nil
}

func recordList(ts []teamRecord) string {
	var b []string
	for _, t := range ts {
		b = append(b, fmt.Sprintf("%s %d-%d-%d=%d", t.name, t.won, t.drawn, t.lost, t.points()))
	}
	return strings.Join(b, ", ")
}

// cafeNearVenue: the persona meets someone again near where they last
// met. The last meeting and its venue are in the calendar (MCP), the
// cafés of the venue's city and their coordinates on Waypoint Maps (GUI),
// a script ranks the cafés by distance and keeps the table (CLI), the
// nearest is saved on Waypoint Maps (GUI) and the meeting goes into the
// calendar with the person invited (MCP).
type cafeNearVenue struct{}

func (cafeNearVenue) Name() string     { return "cafe-near-venue" }
func (cafeNearVenue) Covers() []string { return []string{"maps", "calendar"} }

type mapPlace struct {
	id                  int64
	name, address, city string
	lat, lon, km        float64
}

// venueMeeting is a past calendar event at a catalog place with another
// person, and the cafés of its city by distance from it, nearest first.
type venueMeeting struct {
	event, title, start, person string
	venue                       mapPlace
	cafes                       []mapPlace
}

func venueMeetings(w *World) ([]venueMeeting, error) {
	now, err := worldNow(w)
	if err != nil {
		return nil, err
	}
	// Each person's last meeting before the world's clock, latest first:
	// "where we last met" is that one, never a later one still to come,
	// and a person whose last meeting was nowhere on the map is left out
	// (an earlier one would not be where they last met).
	rows, err := w.Query("calendar", `SELECT e.ext_id, e.title, e.location, e.starts_at, e.organizer,
		coalesce((SELECT i.guest FROM invitations i WHERE i.event_id = e.id AND i.guest <> ? ORDER BY i.id LIMIT 1), '')
		FROM events e WHERE e.status = 'confirmed' AND e.recurrence = '' AND e.starts_at < ? ORDER BY e.starts_at DESC, e.ext_id`, w.Self, now.Format(calendarTime))
	if err != nil {
		return nil, err
	}
	var out []venueMeeting
	seen := map[string]bool{}
	for _, r := range rows {
		person := str(r[4])
		if person == w.Self {
			person = str(r[5])
		}
		if person == "" || seen[person] || strings.Contains(person, "'") {
			continue
		}
		seen[person] = true // the last meeting with them, at a place or not
		name, addr, ok := strings.Cut(str(r[2]), ", ")
		if !ok {
			continue
		}
		v, err := w.Catalog(`SELECT p.id, p.name, p.address, c.name, p.lat, p.lon, p.city_id FROM places p JOIN cities c ON c.id = p.city_id WHERE p.name = ? AND p.address = ?`, name, addr)
		if err != nil {
			return nil, err
		}
		if len(v) != 1 {
			continue
		}
		m := venueMeeting{event: str(r[0]), title: str(r[1]), start: str(r[3]), person: person,
			venue: mapPlace{id: num(v[0][0]), name: str(v[0][1]), address: str(v[0][2]), city: str(v[0][3]), lat: num64(v[0][4]), lon: num64(v[0][5])}}
		cs, err := w.Catalog(`SELECT id, name, address, lat, lon FROM places WHERE kind = 'cafe' AND city_id = ? AND id <> ? ORDER BY id`, v[0][6], m.venue.id)
		if err != nil {
			return nil, err
		}
		for _, c := range cs {
			p := mapPlace{id: num(c[0]), name: str(c[1]), address: str(c[2]), city: m.venue.city, lat: num64(c[3]), lon: num64(c[4])}
			p.km = catalog.HaversineKm(m.venue.lat, m.venue.lon, p.lat, p.lon)
			m.cafes = append(m.cafes, p)
		}
		slices.SortStableFunc(m.cafes, func(a, b mapPlace) int { return cmp.Compare(a.km, b.km) })
		// Two cafés at least, and a clear nearest one.
		if len(m.cafes) < 2 || m.cafes[1].km-m.cafes[0].km < 0.05 {
			continue
		}
		out = append(out, m)
	}
	return out, nil
}

func cafesPath(city string) string {
	return "plans/cafes-" + strings.ReplaceAll(strings.ToLower(city), " ", "-") + ".csv"
}

func (f cafeNearVenue) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	if _, ok := w.Logins["maps"]; !ok {
		return nil, nil
	}
	ms, err := venueMeetings(w)
	if err != nil {
		return nil, err
	}
	// At most two, drawn from the meetings.
	rng.Shuffle(len(ms), func(i, j int) { ms[i], ms[j] = ms[j], ms[i] })
	var out []Sketch
	for _, m := range ms[:min(2, len(ms))] {
		out = append(out, Sketch{Family: f.Name(), Title: fmt.Sprintf("Meet %s again at the café nearest %s", m.person, m.venue.name),
			Params: map[string]string{"event": m.event},
			Core:   []string{fmt.Sprintf("save maps place %d", m.cafes[0].id), "create calendar event Coffee with " + m.person, "file " + cafesPath(m.venue.city)}})
	}
	return out, nil
}

func (f cafeNearVenue) Author(w *World, s Sketch) (*Draft, error) {
	ms, err := venueMeetings(w)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(ms, func(m venueMeeting) bool { return m.event == s.Params["event"] })
	if i < 0 {
		return nil, fmt.Errorf("taskgen: %s: no meeting %q at a known place", f.Name(), s.Params["event"])
	}
	m := ms[i]
	near := m.cafes[0]
	login := w.Logins["maps"]
	today, err := travelToday(w)
	if err != nil {
		return nil, err
	}
	day := today.AddDate(0, 0, 3).Format("2006-01-02")
	// An hour the calendar has free that day: never over a meeting.
	hour, err := freeHour(w, day, 10, 11, 14, 15, 16)
	if err != nil {
		return nil, err
	}
	from, to := fmt.Sprintf("%02d:00", hour), fmt.Sprintf("%02d:00", hour+1)
	title := "Coffee with " + m.person
	location := near.name + ", " + near.address
	out := cafesPath(m.venue.city)

	var ref Steps
	ref.MCP("calendar", "list_events", map[string]any{"from": m.start[:10], "to": m.start[:10]}, "the last meeting with "+m.person+" and its venue")
	ref.Shell("cat "+LoginsFile, "the Waypoint Maps login")
	ref.Login("maps", login)
	ref.Open("maps", "/places?q="+url.QueryEscape(m.venue.name)+"&city="+url.QueryEscape(m.venue.city), "find the venue")
	ref.Read("#results", "")
	ref.Open("maps", fmt.Sprintf("/places/%d", m.venue.id), "the venue's coordinates")
	ref.Read("article", "")
	// Read carelessly, the coordinates come out rounded.
	venueAt, roughly := fmt.Sprintf("venue = (%v, %v)", m.venue.lat, m.venue.lon), fmt.Sprintf("venue = (%.1f, %.1f)", m.venue.lat, m.venue.lon)
	if venueAt != roughly {
		ref.Fact(task.Fact{ID: "venue-coordinates", Kind: task.FactRead, Value: venueAt, Wrong: roughly, Cue: "gives its latitude and longitude"})
	}
	ref.Open("maps", "/places?city="+url.QueryEscape(m.venue.city)+"&kind=cafe", "the cafés of "+m.venue.city)
	ref.Read("#results", "")
	var rowsPy []string
	for _, c := range slices.SortedFunc(slices.Values(m.cafes), func(a, b mapPlace) int { return cmp.Compare(a.id, b.id) }) {
		ref.Open("maps", fmt.Sprintf("/places/%d", c.id), c.name+"'s coordinates")
		ref.Read("article", "")
		rowsPy = append(rowsPy, fmt.Sprintf("(%s, %s, %v, %v)", pyq(c.name), pyq(c.address), c.lat, c.lon))
	}
	ref.pyScript("plans", fmt.Sprintf(`import csv, math
venue = (%v, %v)
cafes = [%s]
def km(a, b):
    r = math.pi / 180
    h = math.sin((b[0] - a[0]) * r / 2) ** 2 + math.cos(a[0] * r) * math.cos(b[0] * r) * math.sin((b[1] - a[1]) * r / 2) ** 2
    return 2 * 6371 * math.asin(math.sqrt(h))
rows = sorted(((n, a, km(venue, (la, lo))) for n, a, la, lo in cafes), key=lambda r: r[2])
with open(%s, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['place', 'address', 'km'])
    for n, a, d in rows:
        w.writerow([n, a, '%%.2f' %% d])
print('nearest:', rows[0])
`, m.venue.lat, m.venue.lon, strings.Join(rowsPy, ", "), pyq(out)), "the table that decides the café")
	// Without the script, the guess is the first café of the city's list;
	// choosing carelessly, the runner-up.
	instead := func(id, kind string, c mapPlace) task.Fact {
		return task.Fact{ID: id, Kind: kind, Value: fmt.Sprintf("site:maps/places/%d", near.id), Wrong: fmt.Sprintf("site:maps/places/%d", c.id),
			Forms: []task.Form{{Value: location, Wrong: c.name + ", " + c.address}, {Value: near.name, Wrong: c.name}}}
	}
	ref.Fact(instead("nearest-cafe", task.FactOutput, slices.MinFunc(m.cafes, func(a, b mapPlace) int { return cmp.Compare(a.id, b.id) })))
	save := len(ref)
	ref.KitAction("maps", "/places", strconv.FormatInt(near.id, 10), "save", map[string]string{"label": "want to go"}, "save the nearest café")
	ref.FactAt(save, instead("cafe", task.FactChoice, m.cafes[1]))
	ref.MCP("calendar", "create_event", map[string]any{"title": title, "starts_at": day + " " + from, "ends_at": day + " " + to, "location": location, "guests": []string{m.person}}, "the meeting, with "+m.person+" invited")

	want := map[string]float64{}
	for _, c := range m.cafes {
		want[c.name+", "+c.address] = c.km
	}
	wantJSON, _ := json.Marshal(want)
	checkPy := fmt.Sprintf(`from _verify_sdk import read_csv, result
want = %s
nearest = %s
try:
    rows = read_csv(%s)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def km(v):
    try:
        return float((v or "").lower().replace("km", "").strip())
    except ValueError:
        return None
got = [((r.get("place") or "").strip() + ", " + (r.get("address") or "").strip(), km(r.get("km"))) for r in rows]
keys = [k for k, _ in got]
bad = sorted(k for k in want if k not in keys or dict(got)[k] is None or abs(dict(got)[k] - want[k]) > 0.05)
extra = sorted(k for k in keys if k not in want)
first = keys[0] if keys else None
result(not bad and not extra and first == nearest, f"wrong or missing distances: {bad}; not cafés of the city: {extra}; first row {first!r}, nearest {nearest!r}")
`, wantJSON, pyq(location), pyq(out), out)

	tk := &task.Task{
		Version: task.Version, ID: fmt.Sprintf("cafe-near-venue-%d-d%d", near.id, w.Manifest.Day),
		Instruction: fmt.Sprintf("I'd like to meet %s again, for a coffee near where we last met (%q on %s in my calendar). "+
			"Using Waypoint Maps, rank the cafés of that city by straight-line distance from that venue with a script (not counting the venue itself) and keep the table as ~/%s (columns place, address, km; nearest first). "+
			"Save the nearest café on Waypoint Maps with the label \"want to go\", and add a calendar event %q there (location: the café's name and address) on %s from %s to %s UTC, inviting %s. Which café is it?",
			m.person, m.title, m.start[:10], out, title, day, from, to, m.person),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "venue", Title: "Find the last meeting with " + m.person + " and its venue in the calendar", Interface: task.MCP},
			{ID: "places", Title: "Look up the venue and the cafés of " + m.venue.city + " with their coordinates on Waypoint Maps", Interface: task.GUI},
			{ID: "table", Title: "Rank the cafés by distance with a script and save " + out, Interface: task.CLI},
			{ID: "save", Title: "Save the nearest café on Waypoint Maps as \"want to go\"", Interface: task.GUI},
			{ID: "meeting", Title: "Create the coffee event there and invite " + m.person, Interface: task.MCP},
		},
		Hint: fmt.Sprintf("list_events with from and to %s shows the venue; Waypoint Maps' /places filters by city and kind (cafe) and a place's page gives its latitude and longitude (or use /distance?from=N&to=M with place numbers). The login is in ~/%s.", m.start[:10], LoginsFile),
		Rubric: []string{
			fmt.Sprintf("~/%s lists every café of %s with its distance from %s, nearest first", out, m.venue.city, m.venue.name),
			fmt.Sprintf("%s is saved on Waypoint Maps as \"want to go\"", near.name),
			fmt.Sprintf("a calendar event %q at %s on %s %s-%s with %s invited", title, near.name, day, from, to, m.person),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "table", Kind: "script", Script: "scripts/cafes_table.py", Description: "the cafés by distance, nearest first"},
			{ID: "saved", Kind: "sql", DB: "maps", Description: fmt.Sprintf("%s (place number %d) is saved as want to go", near.name, near.id),
				Query: fmt.Sprintf(`SELECT s.label FROM saved_places s JOIN catalog.places p ON p.id = s.place_id WHERE s.username = %s AND p.name = %s AND p.address = %s`,
					sqlText(login.User), sqlText(near.name), sqlText(near.address)),
				Expect: json.RawMessage(`"want to go"`)},
			{ID: "meeting", Kind: "sql", DB: "calendar", Description: "the coffee at the nearest café, the person invited",
				Query: fmt.Sprintf(`SELECT count(*) FROM events e WHERE e.title = %s AND e.starts_at = %s AND e.ends_at = %s AND e.status = 'confirmed' AND e.location LIKE %s
					AND EXISTS (SELECT 1 FROM invitations i WHERE i.event_id = e.id AND i.guest = %s)`,
					sqlText(title), sqlText(day+" "+from+":00"), sqlText(day+" "+to+":00"), sqlText(near.name+"%"), sqlText(m.person)),
				Expect: json.RawMessage("1")},
		}},
		Answer:     near.name,
		Provenance: task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog},
		Rationale: fmt.Sprintf("last met %s at %s (place %d, %s) on %s; cafés by km: %s. The venue only in the calendar, coordinates only on Waypoint Maps, the ranking in a script.",
			m.person, m.venue.name, m.venue.id, m.venue.city, m.start, cafeList(m.cafes)),
	}
	return &Draft{Task: tk, Scripts: map[string]string{"cafes_table.py": checkPy}}, nil
}

func cafeList(cs []mapPlace) string {
	var b []string
	for _, c := range cs {
		b = append(b, fmt.Sprintf("%s (%d) %.2f", c.name, c.id, c.km))
	}
	return strings.Join(b, ", ")
}

// staysApproval: the persona's travel policy covers hotels up to a price
// a night; the bookings over it need approval. The bookings and their
// totals are on Nightfall Stays (GUI), a script works out the price a
// night and which are over (CLI), the approver's address is in the
// contacts and the request goes out by mail with the table attached
// (MCP).
type staysApproval struct{}

func (staysApproval) Name() string     { return "stays-approval" }
func (staysApproval) Covers() []string { return []string{"stays", "contacts", "mail"} }

type stayBooking struct {
	code, hotel, name, checkIn string
	nights, guests, cents      int64
}

func (b stayBooking) perNight() float64 { return float64(b.cents) / float64(b.nights) / 100 }

// upcomingStays are the confirmed bookings from today on, by code.
func upcomingStays(w *World, user string) ([]stayBooking, error) {
	today, err := travelToday(w)
	if err != nil {
		return nil, err
	}
	rows, err := w.Query("stays", `SELECT code, hotel, check_in, nights, guests, total_cents FROM bookings
		WHERE username = ? AND status = 'confirmed' AND check_in >= ? AND nights > 0 ORDER BY code`, user, today.Format("2006-01-02"))
	if err != nil {
		return nil, err
	}
	var out []stayBooking
	for _, r := range rows {
		h, err := w.Catalog(`SELECT name FROM hotels WHERE slug = ?`, str(r[1]))
		if err != nil {
			return nil, err
		}
		if len(h) != 1 {
			continue
		}
		out = append(out, stayBooking{code: str(r[0]), hotel: str(r[1]), name: str(h[0][0]), checkIn: str(r[2]), nights: num(r[3]), guests: num(r[4]), cents: num(r[5])})
	}
	return out, nil
}

// stayLimits are whole-dollar limits a night that split the bookings into
// some over and some within, each at least a dollar from every price; a
// single booking gets a round limit under its price (it needs approval).
func stayLimits(bs []stayBooking) []int64 {
	var prices []float64
	for _, b := range bs {
		prices = append(prices, b.perNight())
	}
	slices.Sort(prices)
	var out []int64
	if len(prices) == 1 && prices[0] >= 21 {
		return []int64{int64(prices[0]-1) / 10 * 10}
	}
	for i := 1; i < len(prices); i++ {
		lo, hi := prices[i-1], prices[i]
		l := int64((lo + hi) / 2)
		if float64(l)-lo >= 1 && hi-float64(l) >= 1 && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// approvers are the contacts with an address, by ext_id.
func approvers(w *World) ([][3]string, error) {
	rows, err := w.Query("contacts", `SELECT ext_id, name, email, role FROM contacts WHERE email <> '' AND name NOT LIKE '%''%' ORDER BY ext_id`)
	if err != nil {
		return nil, err
	}
	var out [][3]string
	for _, r := range rows {
		out = append(out, [3]string{str(r[1]), str(r[2]), str(r[3])})
	}
	return out, nil
}

const staysTable = "reports/stays-per-night.csv"

func (f staysApproval) Sketch(w *World, rng *rand.Rand) ([]Sketch, error) {
	login, ok := w.Logins["stays"]
	if !ok || !hasDBs(w, "contacts", "mail") {
		return nil, nil
	}
	bs, err := upcomingStays(w, login.User)
	if err != nil {
		return nil, err
	}
	limits := stayLimits(bs)
	if len(limits) == 0 {
		return nil, nil
	}
	people, err := approvers(w)
	if err != nil || len(people) == 0 {
		return nil, err
	}
	// A manager or an accountant approves when there is one.
	var pick [3]string
	for _, p := range people {
		if p[2] == "manager" || p[2] == "accountant" {
			pick = p
			break
		}
	}
	if pick[0] == "" {
		pick = people[rng.IntN(len(people))]
	}
	limit := limits[rng.IntN(len(limits))]
	var over []string
	for _, b := range bs {
		if b.perNight() > float64(limit) {
			over = append(over, b.code)
		}
	}
	return []Sketch{{Family: f.Name(), Title: fmt.Sprintf("Ask %s to approve the stays over $%d a night", pick[0], limit),
		Params: map[string]string{"limit": strconv.FormatInt(limit, 10), "approver": pick[0], "email": pick[1]},
		Core:   []string{"send mail Stay approval to " + pick[1], "file " + staysTable, "flag stays " + strings.Join(over, " ")}}}, nil
}

func (f staysApproval) Author(w *World, s Sketch) (*Draft, error) {
	login := w.Logins["stays"]
	bs, err := upcomingStays(w, login.User)
	if err != nil {
		return nil, err
	}
	limit, err := strconv.ParseInt(s.Params["limit"], 10, 64)
	if err != nil || !slices.Contains(stayLimits(bs), limit) {
		return nil, fmt.Errorf("taskgen: %s: the limit %q does not split the bookings", f.Name(), s.Params["limit"])
	}
	name, email := s.Params["approver"], s.Params["email"]
	today, _ := travelToday(w)
	over, within := []string{}, []string{} // JSON lists, never null
	for _, b := range bs {
		if b.perNight() > float64(limit) {
			over = append(over, b.code)
		} else {
			within = append(within, b.code)
		}
	}
	prior, err := w.Query("mail", `SELECT count(*) FROM mails m JOIN folders f ON f.id = m.folder_id WHERE f.name = 'sent' AND m.to_addrs LIKE ? AND m.subject LIKE '%approval%'`, "%"+email+"%")
	if err != nil {
		return nil, err
	}
	var pm int64
	if len(prior) == 1 {
		pm = num(prior[0][0])
	}

	var ref Steps
	ref.Shell("cat "+LoginsFile, "the Nightfall Stays login")
	ref.Login("stays", login)
	ref.Open("stays", "/bookings", "the bookings with their nights and totals")
	ref.Read("#results", "")
	// Read carelessly, the Guests column is taken for the Nights beside
	// it; without the script, the guess compares each total with the
	// limit.
	var rowsPy, guestsPy, overGuests, overTotal []string
	for _, b := range bs {
		rowsPy = append(rowsPy, fmt.Sprintf("(%s, %s, %s, %d, %s)", pyq(b.code), pyq(b.name), pyq(b.checkIn), b.nights, dollars(b.cents)))
		guestsPy = append(guestsPy, fmt.Sprintf("(%s, %s, %s, %d, %s)", pyq(b.code), pyq(b.name), pyq(b.checkIn), b.guests, dollars(b.cents)))
		if b.guests > 0 && float64(b.cents)/float64(b.guests)/100 > float64(limit) {
			overGuests = append(overGuests, b.code)
		}
		if float64(b.cents)/100 > float64(limit) {
			overTotal = append(overTotal, b.code)
		}
	}
	bookingsPy := "bookings = [" + strings.Join(rowsPy, ", ") + "]"
	if f, ok := factOf("bookings", task.FactRead, "check-in, nights, total and status",
		task.Form{Value: bookingsPy, Wrong: "bookings = [" + strings.Join(guestsPy, ", ") + "]"},
		task.Form{Value: strings.Join(over, ", "), Wrong: strings.Join(overGuests, ", ")}); ok && f.Value == bookingsPy {
		ref.Fact(f)
	}
	ref.pyScript("reports", fmt.Sprintf(`import csv
limit = %d
%s
with open(%s, 'w', newline='') as f:
    w = csv.writer(f, lineterminator='\n')
    w.writerow(['booking', 'hotel', 'check_in', 'nights', 'total', 'per_night', 'over'])
    for code, hotel, day, nights, total in bookings:
        per = total / nights
        w.writerow([code, hotel, day, nights, '%%.2f' %% total, '%%.2f' %% per, 'yes' if per > limit else 'no'])
print(open(%s).read(), end='')
`, limit, bookingsPy, pyq(staysTable), pyq(staysTable)), "the table that decides which bookings need approval")
	if f, ok := factOf("over", task.FactOutput, "divided by its nights", task.Form{Value: strings.Join(over, ", "), Wrong: strings.Join(overTotal, ", ")}); ok {
		ref.Fact(f)
	}
	ref.MCP("contacts", "search_contacts", map[string]any{"query": name}, name+"'s address")
	ref.MCP("mail", "send_mail", map[string]any{"to": []string{email}, "subject": "Stay approval",
		"body":        fmt.Sprintf("Hi %s,\n\nthese hotel bookings of mine cost more than $%d a night, the limit of the travel policy: %s. Could you approve them? The table of all my upcoming bookings is attached.\n\nThanks,\n%s", strings.Fields(name)[0], limit, strings.Join(over, ", "), w.Self),
		"attachments": []string{staysTable}}, "ask for approval")

	type row struct {
		PerNight float64 `json:"per_night"`
		Over     string  `json:"over"`
	}
	want := map[string]row{}
	for _, b := range bs {
		o := "no"
		if b.perNight() > float64(limit) {
			o = "yes"
		}
		want[b.code] = row{b.perNight(), o}
	}
	wantJSON, _ := json.Marshal(want)
	tablePy := fmt.Sprintf(`from _verify_sdk import read_csv, result
want = %s
try:
    rows = read_csv(%s)
except FileNotFoundError:
    result(False, "no %s")
    raise SystemExit
def money(v):
    try:
        return float((v or "").replace("$", "").replace(",", "").strip())
    except ValueError:
        return None
got = {(r.get("booking") or "").strip(): (money(r.get("per_night")), (r.get("over") or "").strip().lower()) for r in rows}
bad = sorted(c for c, w in want.items() if c not in got or got[c][0] is None or abs(got[c][0] - w["per_night"]) > 0.01 or got[c][1] != w["over"])
extra = sorted(c for c in got if c not in want)
result(not bad and not extra, f"wrong or missing bookings: {bad}; not upcoming confirmed bookings: {extra}")
`, wantJSON, pyq(staysTable), staysTable)
	overJSON, _ := json.Marshal(over)
	withinJSON, _ := json.Marshal(within)
	mailPy := fmt.Sprintf(`from _verify_sdk import query, result
over = %s
within = %s
rows = query("mail", "SELECT m.id, m.body FROM mails m JOIN folders f ON f.id = m.folder_id WHERE f.name = 'sent' AND lower(m.to_addrs) LIKE ? AND lower(m.subject) LIKE '%%approval%%' ORDER BY m.id", ("%%" + %s + "%%",))
if len(rows) != %d:
    result(False, f"{len(rows)} approval mails to the approver, want one new")
    raise SystemExit
body = rows[-1]["body"].upper()
missing = [c for c in over if c.upper() not in body]
wrong = [c for c in within if c.upper() in body]
att = query("mail", "SELECT home_path FROM attachments WHERE mail_id = ?", (rows[-1]["id"],))
paths = [a["home_path"] for a in att]
result(not missing and not wrong and %s in paths, f"over the limit but not named: {missing}; within it but named: {wrong}; attachments {paths}")
`, overJSON, withinJSON, pyq(strings.ToLower(email)), pm+1, pyq(staysTable))

	tk := &task.Task{
		Version: task.Version, ID: fmt.Sprintf("stays-approval-%d-d%d", limit, w.Manifest.Day),
		Instruction: fmt.Sprintf("My travel policy pays for hotels up to $%d a night; above that %s has to approve. For each of my confirmed Nightfall Stays bookings from today (%s) on, work out the price a night with a script "+
			"and keep the table as ~/%s (columns booking, hotel, check_in, nights, total, per_night, over with yes or no). Then mail %s (the address is in my contacts) with the subject \"Stay approval\", "+
			"the table attached, naming the booking codes over the limit, and only those, for approval. Which bookings need approval?", limit, name, today.Format("2006-01-02"), staysTable, name),
		Interfaces: []string{task.GUI, task.MCP, task.CLI},
		Subtasks: []task.Subtask{
			{ID: "bookings", Title: "Read the upcoming confirmed bookings with their nights and totals on Nightfall Stays", Interface: task.GUI},
			{ID: "table", Title: "Compute the price a night with a script and save " + staysTable, Interface: task.CLI},
			{ID: "address", Title: "Look up " + name + "'s address in the contacts", Interface: task.MCP},
			{ID: "mail", Title: "Mail the approval request with the table attached", Interface: task.MCP},
		},
		Hint: fmt.Sprintf("Nightfall Stays' /bookings lists every booking with its check-in, nights, total and status; the login is in ~/%s. The limit is a price a night: a booking's total counts divided by its nights. search_contacts finds %s; send_mail takes attachments as home-relative paths.", LoginsFile, name),
		Rubric: []string{
			fmt.Sprintf("~/%s has every upcoming confirmed booking with its price a night and the right over flag", staysTable),
			fmt.Sprintf("one mail to %s with subject Stay approval and the table attached", email),
			fmt.Sprintf("the mail names the bookings over $%d a night (%s) and no other", limit, strings.Join(over, ", ")),
		},
		Reference: ref,
		Verifier: task.Verifier{Criteria: []task.Criterion{
			{ID: "table", Kind: "script", Script: "scripts/stays_table.py", Description: "the bookings' prices a night and which are over"},
			{ID: "mail-sent", Kind: "sql", DB: "mail", Description: "one approval mail to the approver with the table attached",
				Query: fmt.Sprintf(`SELECT count(*) FROM mails m JOIN folders f ON f.id = m.folder_id WHERE f.name = 'sent' AND m.to_addrs LIKE %s AND m.subject LIKE '%%approval%%'
					AND EXISTS (SELECT 1 FROM attachments a WHERE a.mail_id = m.id AND a.home_path = %s)`, sqlText("%"+email+"%"), sqlText(staysTable)),
				Expect: json.RawMessage(strconv.FormatInt(pm+1, 10))},
			{ID: "mail-names", Kind: "script", Script: "scripts/approval_mail.py", Description: "the mail names exactly the bookings over the limit"},
		}},
		Answer:     strings.Join(over, ", "),
		Provenance: task.Provenance{Persona: w.Manifest.Persona, Day: w.Manifest.Day, Snapshot: w.Snapshot, Catalog: w.Manifest.Catalog},
		Rationale: fmt.Sprintf("limit $%d a night; bookings %s; over: %v. Totals and nights only on Nightfall Stays, the address only in contacts, mail only over MCP, the split in a script.",
			limit, stayList(bs), over),
	}
	return &Draft{Task: tk, Scripts: map[string]string{"stays_table.py": tablePy, "approval_mail.py": mailPy}}, nil
}

func stayList(bs []stayBooking) string {
	var b []string
	for _, x := range bs {
		b = append(b, fmt.Sprintf("%s %s %d nights %s (%.2f a night)", x.code, x.checkIn, x.nights, dollars(x.cents), x.perNight()))
	}
	return strings.Join(b, ", ")
}
