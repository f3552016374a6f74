package benchworld

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/wildawm/wildawm/internal/delta"
)

// kind of generated column value.
type kind int

const (
	kText  kind = iota // a few words
	kLong              // a paragraph
	kName              // a person
	kMoney             // a REAL amount
	kCount             // a small INTEGER
	kStamp             // a frozen timestamp
	kState             // a status word
)

type column struct {
	name string
	kind kind
}

// table is one table of the persona's state: every table has an integer id,
// a natural key "ext" and created_at; rows is the day-0 row count.
type table struct {
	db, name string
	cols     []column
	rows     int
}

var (
	sites    = []string{"shop", "devicestore", "recipes", "preprints", "news", "hotels", "dictionary", "courses", "sports", "codehost", "search", "flights", "maps", "modelhub", "knowledge"}
	services = []string{"messages", "mail", "calendar", "contacts", "notes", "tasks", "payments", "support"}
)

func cols(spec string) []column {
	kinds := map[string]kind{"text": kText, "long": kLong, "name": kName, "money": kMoney, "count": kCount, "stamp": kStamp, "state": kState}
	var out []column
	for _, f := range strings.Fields(spec) {
		n, k, _ := strings.Cut(f, ":")
		out = append(out, column{n, kinds[k]})
	}
	return out
}

// tables is the persona state's schema with day-0 sizes (> 10K rows).
var tables = []table{
	{"shop", "orders", cols("status:state total:money placed_at:stamp"), 220},
	{"shop", "order_items", cols("title:text qty:count price:money"), 480},
	{"shop", "cart_items", cols("title:text qty:count"), 12},
	{"shop", "reviews", cols("title:text body:long stars:count"), 60},
	{"shop", "browse_history", cols("title:text visited_at:stamp"), 900},
	{"devicestore", "orders", cols("status:state total:money placed_at:stamp"), 20},
	{"devicestore", "registrations", cols("device:text serial:text"), 8},
	{"recipes", "saved", cols("title:text notes:long"), 90},
	{"preprints", "library", cols("title:text authors:name abstract:long"), 140},
	{"news", "saved_articles", cols("headline:text summary:long"), 160},
	{"hotels", "bookings", cols("hotel:text nights:count total:money status:state"), 18},
	{"dictionary", "lookups", cols("word:text looked_at:stamp"), 420},
	{"courses", "enrollments", cols("course:text progress:count"), 9},
	{"courses", "submissions", cols("assignment:text grade:count body:long"), 45},
	{"sports", "follows", cols("team:text"), 14},
	{"codehost", "repos", cols("name:text description:long stars:count"), 30},
	{"codehost", "issues", cols("title:text body:long status:state"), 110},
	{"search", "queries", cols("query:text searched_at:stamp"), 950},
	{"flights", "bookings", cols("route:text seat:text total:money status:state"), 16},
	{"flights", "searches", cols("route:text searched_at:stamp"), 120},
	{"maps", "saved_places", cols("name:text address:text"), 70},
	{"maps", "directions", cols("route:text asked_at:stamp"), 260},
	{"modelhub", "likes", cols("model:text"), 50},
	{"knowledge", "queries", cols("query:text answer:long"), 180},
	{"messages", "threads", cols("title:text with_who:name"), 120},
	{"messages", "messages", cols("sender:name body:long sent_at:stamp"), 2200},
	{"mail", "folders", cols("name:text"), 8},
	{"mail", "mails", cols("sender:name subject:text body:long received_at:stamp"), 1300},
	{"mail", "attachments", cols("filename:text size:count"), 160},
	{"calendar", "events", cols("title:text location:text starts_at:stamp ends_at:stamp"), 380},
	{"calendar", "invitations", cols("guest:name response:state"), 210},
	{"contacts", "contacts", cols("name:name email:text phone:text notes:long"), 160},
	{"notes", "notes", cols("title:text body:long"), 190},
	{"tasks", "projects", cols("name:text"), 14},
	{"tasks", "todos", cols("title:text due_at:stamp status:state"), 320},
	{"payments", "accounts", cols("name:text balance:money"), 5},
	{"payments", "transactions", cols("payee:name memo:text amount:money booked_at:stamp"), 1400},
	{"payments", "statements", cols("period:text closing:money"), 12},
	{"support", "tickets", cols("subject:text status:state opened_at:stamp"), 40},
	{"support", "ticket_events", cols("event:text body:long at:stamp"), 150},
}

// extraTables gives every other database its minimal two tables so every
// database has state: sessions and preferences.
func allTables() []table {
	out := append([]table(nil), tables...)
	for _, db := range append(append([]string{}, sites...), services...) {
		out = append(out,
			table{db, "sessions", cols("agent:text started_at:stamp"), 6},
			table{db, "preferences", cols("value:text"), 4})
	}
	return out
}

func (t table) ddl() []string {
	var b strings.Builder
	fmt.Fprintf(&b, "CREATE TABLE %s (id INTEGER PRIMARY KEY, ext TEXT NOT NULL, created_at TEXT NOT NULL", t.name)
	for _, c := range t.cols {
		typ := "TEXT"
		switch c.kind {
		case kMoney:
			typ = "REAL"
		case kCount:
			typ = "INTEGER"
		}
		fmt.Fprintf(&b, ", %s %s", c.name, typ)
	}
	b.WriteString(")")
	return []string{b.String(), fmt.Sprintf("CREATE UNIQUE INDEX %s_nk ON %s(ext)", t.name, t.name)}
}

func (t table) ext(n int) string { return fmt.Sprintf("%s-%s-%06d", t.db, t.name, n) }

func value(r *rand.Rand, k kind, day int) any {
	switch k {
	case kText:
		return sentence(r, 2+r.IntN(4))
	case kLong:
		return sentence(r, 20+r.IntN(40))
	case kName:
		return person(r)
	case kMoney:
		return float64(r.IntN(100000)) / 100
	case kCount:
		return r.IntN(10)
	case kStamp:
		return stamp(day, r.IntN(24*60))
	case kState:
		return pick(r, []string{"open", "pending", "shipped", "delivered", "resolved", "cancelled"})
	}
	return nil
}

// insert returns the op inserting row n of t on day.
func (t table) insert(r *rand.Rand, n, day int) delta.Op {
	vals := map[string]delta.Value{"created_at": delta.Lit(stamp(day, r.IntN(24*60)))}
	for _, c := range t.cols {
		vals[c.name] = delta.Lit(value(r, c.kind, day))
	}
	return delta.Op{Op: delta.OpDBInsert, DB: t.db, Table: t.name, Key: map[string]delta.Value{"ext": delta.Lit(t.ext(n))}, Values: vals}
}
