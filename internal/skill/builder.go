package skill

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/world"
)

// Day0 is the date of day 0 of every world: the worlds' month, inside the
// catalog's schedule of rates, flights and fixtures (from 2026-03-01).
var Day0 = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// TimeFormat is the services' and sites' time format.
const TimeFormat = "2006-01-02 15:04:05"

// Date returns day's date, YYYY-MM-DD.
func Date(day int) string { return Day0.AddDate(0, 0, day).Format(time.DateOnly) }

// At returns the time hh:mm of day, YYYY-MM-DD HH:MM:SS.
func At(day int, hhmm string) string { return Date(day) + " " + hhmm + ":00" }

// Clock returns the frozen end of day (RFC 3339): the manifest's clock.
func Clock(day int) string { return Date(day) + "T20:00:00Z" }

// Time parses a YYYY-MM-DD HH:MM:SS time as UTC.
func Time(s string) (time.Time, error) { return time.Parse(TimeFormat, s) }

// State is the ledger: what earlier events left that later events
// continue. Emit keeps it; Propose reads it. It is plain data, encoded as
// JSON in a day's planning job.
type State struct {
	// DBs are the databases provisioned (sites and services).
	DBs map[string]bool `json:"dbs"`
	// Accounts are the sites with an account.
	Accounts map[string]bool `json:"accounts"`
	// Services are the definitions the world serves beyond the built-in
	// services, by name.
	Services map[string]world.ServiceRef `json:"services,omitempty"`
	Threads  map[string]*Thread          `json:"threads"`
	Mails    []MailRef                   `json:"mails,omitempty"`
	Events   []EventRef                  `json:"events,omitempty"`
	Orders   []OrderRef                  `json:"orders,omitempty"`
	Contacts []string                    `json:"contacts,omitempty"`
	Notes    []string                    `json:"notes,omitempty"`
	Todos    []TodoRef                   `json:"todos,omitempty"`
	Projects []string                    `json:"projects,omitempty"`
	Tickets  []TicketRef                 `json:"tickets,omitempty"`
	Money    []string                    `json:"money_accounts,omitempty"`
	Files    map[string]FileRef          `json:"files"`
	// Web holds the keys of the rows written on each site's tables
	// ("recipes/saved_recipes" -> "slug=..."), so that an event does not
	// repeat one.
	Web map[string][]string `json:"web,omitempty"`
	// Seq are counters for derived names (order numbers, mail ids):
	// Propose reads the next with Peek, Emit takes it with Next.
	Seq map[string]int `json:"seq"`
	// Used counts each skill's events so far (coverage pressure).
	Used map[string]int `json:"used"`

	// Balances are the money accounts' balances in cents, by account id
	// (transfers keep checking and savings at or above 0).
	Balances map[string]int64 `json:"balances,omitempty"`
	// Payments are the booked transactions, in booking order.
	Payments []PaymentRef `json:"payments,omitempty"`
	// NoteBodies are the notes' current bodies by note id: an update
	// passes the whole new body.
	NoteBodies map[string]string `json:"note_bodies,omitempty"`
	// Tags are the saved contacts' tags, by contact id.
	Tags map[string][]string `json:"contact_tags,omitempty"`
	// Records hold the natural keys of the rows written on the tables of
	// definition-served services ("habits/habits" -> "morning-run").
	Records map[string][]string `json:"records,omitempty"`
	// WebDay is the day a row of Web was written, by "site/table key", so
	// that a continuation (a review of a saved recipe, a submission in an
	// enrolled course) comes on a later day.
	WebDay map[string]int `json:"web_day,omitempty"`
}

// PaymentRef is a booked transaction.
type PaymentRef struct {
	ID      string `json:"id"`
	Account string `json:"account"`
	At      string `json:"at"`
	Cents   int64  `json:"cents"`
	Payee   string `json:"payee"`
	// Category is the transaction's category ("transfer" for a transfer).
	Category string `json:"category,omitempty"`
}

// HasRecord reports whether db's table has a row with key.
func (s *State) HasRecord(db, table, key string) bool {
	return slices.Contains(s.Records[db+"/"+table], key)
}

// AddRecord records a row of db's table.
func (s *State) AddRecord(db, table, key string) {
	if s.Records == nil {
		s.Records = map[string][]string{}
	}
	s.Records[db+"/"+table] = append(s.Records[db+"/"+table], key)
}

// Thread is a message thread.
type Thread struct {
	Title string   `json:"title"`
	With  []string `json:"with"`
	Seq   int      `json:"seq"` // messages so far
	// Last is the sender of the latest message.
	Last string `json:"last,omitempty"`
}

// MailRef is a mail in the mailbox.
type MailRef struct {
	ID      string `json:"id"`
	Thread  string `json:"thread"`
	From    string `json:"from"`
	Subject string `json:"subject"`
	Folder  string `json:"folder"`
	Day     int    `json:"day"`
	Replied bool   `json:"replied,omitempty"`
}

// EventRef is a calendar event.
type EventRef struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Start string `json:"start"`
	End   string `json:"end"`
	Day   int    `json:"day"`
	// Moved counts the reschedules.
	Moved int `json:"moved,omitempty"`
	// Organizer is who organizes it ("" or the persona: the persona's own).
	Organizer string   `json:"organizer,omitempty"`
	Guests    []string `json:"guests,omitempty"`
	// Response is the persona's answer when a guest (accepted, declined,
	// tentative).
	Response string `json:"response,omitempty"`
}

// OrderRef is an order on a shopping site.
type OrderRef struct {
	Site   string `json:"site"`
	No     string `json:"no"`
	SKU    string `json:"sku"`
	Qty    int    `json:"qty"`
	Cents  int64  `json:"cents"`
	Status string `json:"status"`
	Day    int    `json:"day"`
}

// TodoRef is a to-do.
type TodoRef struct {
	ID      string `json:"id"`
	Done    bool   `json:"done,omitempty"`
	Project string `json:"project,omitempty"`
	Title   string `json:"title,omitempty"`
	// Day is the day it was added.
	Day int `json:"day,omitempty"`
}

// TicketRef is a support ticket.
type TicketRef struct {
	ID     string `json:"id"`
	Seq    int    `json:"seq"`
	Status string `json:"status"`
	// Order and Kind are the shop order it is about and its kind (return,
	// warranty, question).
	Order string `json:"order,omitempty"`
	Kind  string `json:"kind,omitempty"`
}

// FileRef is a file of the home directory.
type FileRef struct {
	Kind string `json:"kind"`
	Day  int    `json:"day"`
}

// NewState returns an empty ledger.
func NewState() *State {
	return &State{DBs: map[string]bool{}, Accounts: map[string]bool{}, Threads: map[string]*Thread{},
		Files: map[string]FileRef{}, Seq: map[string]int{}, Used: map[string]int{}}
}

// Clone returns a deep copy.
func (s *State) Clone() *State {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("skill: state: %v", err))
	}
	c := NewState()
	if err := json.Unmarshal(b, c); err != nil {
		panic(fmt.Sprintf("skill: state: %v", err))
	}
	return c
}

// Next returns the next value of counter name, from 1.
func (s *State) Next(name string) int {
	s.Seq[name]++
	return s.Seq[name]
}

// Peek returns the value Next would return, without taking it.
func (s *State) Peek(name string) int { return s.Seq[name] + 1 }

// HasWeb reports whether site's table already has a row with key.
func (s *State) HasWeb(site, table, key string) bool {
	return slices.Contains(s.Web[site+"/"+table], key)
}

// AddWeb records a row of site's table.
func (s *State) AddWeb(site, table, key string) {
	if s.Web == nil {
		s.Web = map[string][]string{}
	}
	s.Web[site+"/"+table] = append(s.Web[site+"/"+table], key)
}

// Builder accumulates one day's delta and keeps the ledger.
type Builder struct {
	Persona *persona.Persona
	State   *State
	Day     int
	// Definitions is the shared library of service definitions that
	// define_service and app_record compile (nil: none).
	Definitions *service.Library
	d           *delta.Delta
}

// NewBuilder returns a builder for persona with an empty ledger.
func NewBuilder(p *persona.Persona) *Builder {
	return &Builder{Persona: p, State: NewState()}
}

// Begin starts the delta of day, whose frozen end is clock (RFC 3339).
func (b *Builder) Begin(day int, clock string) {
	b.Day = day
	b.d = &delta.Delta{Version: delta.Version, Persona: b.Persona.ID, Day: day, Clock: clock, Ops: []delta.Op{}}
}

// Delta returns the day's delta.
func (b *Builder) Delta() *delta.Delta { return b.d }

// Op appends operations.
func (b *Builder) Op(ops ...delta.Op) { b.d.Ops = append(b.d.Ops, ops...) }

// ProducesFile declares a file the day writes.
func (b *Builder) ProducesFile(path string) {
	if !slices.Contains(b.d.Produces.Files, path) {
		b.d.Produces.Files = append(b.d.Produces.Files, path)
	}
}

// ProducesRow declares a row the day writes, by natural key.
func (b *Builder) ProducesRow(db, table string, key map[string]any) {
	b.d.Produces.Rows = append(b.d.Produces.Rows, world.RowRef{DB: db, Table: table, Key: key})
}

// ProducesAccount declares an account the day creates.
func (b *Builder) ProducesAccount(site, username string) {
	b.d.Produces.Accounts = append(b.d.Produces.Accounts, world.AccountRef{Site: site, Username: username})
}

// ServeDefinition makes the world serve the definition ref from this day on.
func (b *Builder) ServeDefinition(ref world.ServiceRef) {
	b.d.Services = append(b.d.Services, ref)
	slices.SortFunc(b.d.Services, func(x, y world.ServiceRef) int { return strings.Compare(x.Name, y.Name) })
	if b.State.Services == nil {
		b.State.Services = map[string]world.ServiceRef{}
	}
	b.State.Services[ref.Name] = ref
}

// SetCatalog makes the day reference the catalog id.
func (b *Builder) SetCatalog(id world.ID) { b.d.Catalog = id }

// Need fails unless db was provisioned on an earlier event.
func (b *Builder) Need(db string) error {
	if !b.State.DBs[db] {
		return fmt.Errorf("%s is not provisioned yet: an earlier event must provision_service %q", db, db)
	}
	return nil
}

// FileWritten records a file in the ledger and declares it produced.
func (b *Builder) FileWritten(path, kind string) {
	b.State.Files[path] = FileRef{Kind: kind, Day: b.Day}
	b.ProducesFile(path)
}

// Draw is what Propose sees.
type Draw struct {
	Persona *persona.Persona
	Day     int
	Rand    *rand.Rand
	Catalog *Catalog
	// State is the ledger after the day's earlier events. Propose must not
	// change it; Emit does.
	State *State
	// Definitions are the service definitions the planner may serve, by
	// name (the shared library's and the shipped ones).
	Definitions map[string]Definition
}

// Definition is a service definition file the define_service skill can
// publish.
type Definition struct {
	Ref world.ServiceRef `json:"ref"`
	// Path is the file in the shared library (where the run lives, not
	// part of a job's identity).
	Path string `json:"-"`
}

// Date is the day's date, YYYY-MM-DD.
func (d *Draw) Date() string { return Date(d.Day) }

// At is hh:mm of the day.
func (d *Draw) At(hhmm string) string { return At(d.Day, hhmm) }

// Hour returns a time of the day between from and to o'clock, on a
// quarter hour.
func (d *Draw) Hour(from, to int) string {
	h := from + d.Rand.IntN(max(1, to-from))
	return At(d.Day, fmt.Sprintf("%02d:%02d", h, 15*d.Rand.IntN(4)))
}

// Contact returns one of the persona's contacts.
func (d *Draw) Contact() persona.Contact {
	return d.Persona.Contacts[d.Rand.IntN(len(d.Persona.Contacts))]
}

// Pick returns one of xs.
func Pick[T any](d *Draw, xs []T) T { return xs[d.Rand.IntN(len(xs))] }

// Username returns the persona's username on site, or "" with no account.
func (d *Draw) Username(site string) string {
	a, _ := d.Persona.Account(site)
	return a.Username
}

// Ready reports whether the persona has site's database and an account
// there (what a site event needs).
func (d *Draw) Ready(site string) bool {
	return d.State.DBs[site] && d.State.Accounts[site] && d.Username(site) != ""
}

// sortedKeys returns m's keys, sorted.
func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }
