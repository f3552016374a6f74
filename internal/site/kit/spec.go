// Package kit serves a website from a declarative Spec: lists of catalog
// records with search, filters and pagination, detail pages with images
// and sections, login with the persona's credentials, state-changing
// actions (POSTs with CSRF protection) on the world's db/NAME.sqlite, and
// history pages of what the persona did. Fourteen of the fifteen sites are
// kit specs (internal/site/*); the shop is hand-written.
//
// Glossary:
//   - Spec: one site: its lists, actions, histories and extra routes.
//   - List: a browsable kind of catalog record (GET /PATH, GET /PATH/{key}).
//   - Action: a state change of the persona (POST /do/NAME): checked
//     inputs, a check statement, statements run in one transaction.
//   - History: a page of the persona's own rows (GET /PATH, logged in).
//
// SQL in a spec runs on the world database with the catalog attached as
// "cat" (unqualified catalog tables resolve there), or, for lists and
// details, on the catalog alone. Every value a visitor sends is a bound
// parameter (:name); nothing a visitor sends is ever SQL text.
//
// It imports internal/world, internal/state, internal/catalog,
// internal/generator and internal/site/web.
package kit

import (
	"fmt"
	"slices"
	"strings"
)

// Spec is one website.
type Spec struct {
	// Name is the site's name: its world database db/NAME.sqlite, its
	// accounts in accounts.json and its pages in the catalog's search
	// index.
	Name    string
	Title   string // shown in every page's header, e.g. "Larder"
	Tagline string // one line under it on the home page
	// Schema is the DDL of db/NAME.sqlite (the persona's state), in order:
	// the whole schema synthesis gives the site, natural keys included (a
	// table synthesis writes rows to by natural key declares it with a
	// UNIQUE constraint or NaturalKeyIndex), so that the site and its
	// Suite meet the constraints a synthesized world has.
	Schema    []string
	Lists     []List
	Actions   []Action
	Histories []History
	// Routes are handlers of their own (a calculator, the web search).
	Routes []Route
}

// List is a browsable kind of catalog record.
type List struct {
	Name  string // "recipes"
	Title string // "Recipes"
	Path  string // "/recipes": the list; "/recipes/{key}" a record
	// Select yields one row per record: a column key (the record's key in
	// its URL), and the columns the table shows and search and filters
	// use. It reads the catalog.
	Select string
	// Search names the columns a query matches (every word, anywhere in
	// one of them, case-insensitive).
	Search  []string
	Filters []Filter
	Order   string // ORDER BY of the list, over Select's columns
	Columns []Column
	Detail  Detail
}

// Filter narrows a list: column Op :value.
type Filter struct {
	Name   string // the query parameter
	Label  string
	Column string // a column of the list's Select
	Op     string // "=" (the default), "<=", ">="
	// Options are the values a visitor may choose; OptionsSQL reads them
	// from the catalog (one column). With neither, any value (a number for
	// <= and >=) up to 100 bytes.
	Options    []string
	OptionsSQL string
	Number     bool // the value is an integer
}

// Detail is a record's page.
type Detail struct {
	// SQL reads the record :key (one row) from the catalog; its columns
	// are the Fields'. Column title is the page's heading.
	SQL    string
	Fields []Column
	// Image is the column holding the record's generated image path
	// (catalog images/KIND/NAME.png); its alt text is "Picture of TITLE".
	Image    string
	Sections []Section
}

// Section is a table on a detail page: rows the catalog holds for :key.
type Section struct {
	Title   string
	SQL     string
	Columns []Column
	Link    string // when set, each row links to Link + its key column
}

// Column is how a value is shown.
type Column struct {
	Key   string // the SQL column
	Label string
	// Kind: "" text, "cents" (money), "rating10" (x10 to "4.3 / 5"),
	// "list" (a JSON array), "bool", "specs" (a JSON object of specs),
	// "long" (a paragraph), "link" (the list's detail link around it).
	Kind string
}

// Action is one state change of the logged-in persona.
type Action struct {
	Name  string // POST /do/NAME
	Label string // the button
	// On is the list on whose detail pages the form is shown (:key is the
	// record's key), or a history whose rows get it (:key is the row's
	// key column), or "" for the home page.
	On     string
	Inputs []Input
	// Check returns one row with one column: an error message for the
	// visitor, or NULL when the action may go ahead. It runs in the
	// action's transaction, before Exec.
	Check string
	// Exec are the statements of the action, in one transaction with
	// :user, :now (the world's clock, YYYY-MM-DD HH:MM:SS), :key and the
	// inputs bound.
	Exec []string
	// Done is the flash message; Then the page it redirects to.
	Done string
	Then string
}

// Input is one form field of an action, checked before any SQL runs.
type Input struct {
	Name  string
	Label string
	// Kind: "int" (Min..Max), "text" (at most MaxLen bytes, required
	// unless Optional), "date" (YYYY-MM-DD), "select" (one of Options or
	// of OptionsSQL's first column, which may use :key).
	Kind       string
	Min, Max   int
	MaxLen     int
	Optional   bool
	Options    []string
	OptionsSQL string
	Default    string
}

// History is a page of the persona's own rows.
type History struct {
	Name  string
	Title string
	Path  string
	// SQL reads the rows for :user from the world database (catalog
	// attached); a column key is what the history's actions get as :key.
	SQL     string
	Columns []Column
	// Link, when set, links each row's first cell to Link + its column
	// link (a detail page).
	Link string
}

// Route is a handler of a site's own.
type Route struct {
	Pattern string // "GET /distance"
	Handler func(s *Site, r *Request) error
}

// NaturalKeyIndex is the DDL of table's natural key over cols: the unique
// index TABLE_nk (docs/world.md) that a delta writes rows by, its columns
// sorted. A spec's Schema declares it for a table without a UNIQUE
// constraint, and synthesis creates the same (IF NOT EXISTS) before it
// writes such a row.
func NaturalKeyIndex(table string, cols ...string) string {
	cols = slices.Sorted(slices.Values(cols))
	return fmt.Sprintf("CREATE UNIQUE INDEX IF NOT EXISTS %s_nk ON %s (%s)", table, table, strings.Join(cols, ", "))
}
