package skill

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/site/calc"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/search"
)

// siteSkills are the events of the websites: one skill per action of a
// site's own forms (internal/site/*), each writing the rows that action
// writes, column for column, for catalog records and the persona's
// username on the site.
func siteSkills() []Skill {
	return []Skill{
		recipeSave(), recipeReview(), paperSave(), newsBookmark(), newsFollowSection(), wordSave(),
		hotelBook(), flightReserve(), courseEnroll(), courseSubmit(), teamFollow(),
		repoStar(), repoIssue(), repoCreate(), modelLike(), datasetCollect(), placeSave(),
		searchSave(), calcSave(), deviceOrder(), deviceWishlist(), deviceReturn(), shopCartAdd(),
	}
}

// Derived codes: the sites number their rows from these bases plus the
// row's id ('NS-' || (500001 + max(id)), ...), and the ledger's counter
// of each is the table's row count, so a synthesized code is the one the
// site's own form would have given.
const (
	bookingBase     = 500000 // stays: NS-500001
	reservationBase = 700000 // flights: SW700001
	deviceOrderBase = 100000 // devices: LO-100001
)

// Ledger counters of the derived codes.
const (
	seqBooking     = "stays_booking"
	seqReservation = "flights_reservation"
	seqDeviceOrder = "devices_order"
)

func bookingCode(n int) string     { return fmt.Sprintf("NS-%d", bookingBase+n) }
func reservationCode(n int) string { return fmt.Sprintf("SW%d", reservationBase+n) }
func deviceOrderNo(n int) string   { return fmt.Sprintf("LO-%d", deviceOrderBase+n) }

// Choices the sites' forms offer.
var (
	paperShelves = []string{"to read", "reading", "read", "cite"}
	placeLabels  = []string{"favourite", "home", "work", "want to go"}
	flightCabins = []string{"economy", "premium", "business"}
	repoVisibles = []string{"public", "private"}
)

// cabinFactor is the flights site's fare multiplier, in tenths.
func cabinFactor(cabin string) int64 {
	switch cabin {
	case "premium":
		return 16
	case "business":
		return 30
	}
	return 10
}

// reservationTotal is what the flights site charges: the fare times the
// passengers times the cabin's factor, in integer cents as SQLite divides.
func reservationTotal(fareCents int64, passengers int, cabin string) int64 {
	return fareCents * int64(passengers) * cabinFactor(cabin) / 10
}

// --- parameter checks

// webFirst returns the first error of errs.
func webFirst(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// webFields fails naming the first of the name, value pairs whose value
// is empty.
func webFields(pairs ...string) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if strings.TrimSpace(pairs[i+1]) == "" {
			return fmt.Errorf("field %s is required", pairs[i])
		}
	}
	return nil
}

// webAt fails unless at is a time YYYY-MM-DD HH:MM:SS.
func webAt(at string) error {
	if _, err := Time(at); err != nil {
		return fmt.Errorf("field at %q is not YYYY-MM-DD HH:MM:SS", at)
	}
	return nil
}

func webLen(field, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("field %s is %d bytes; the site takes at most %d", field, len(s), max)
	}
	return nil
}

func webRange(field string, n, lo, hi int) error {
	if n < lo || n > hi {
		return fmt.Errorf("field %s is %d; the site takes %d to %d", field, n, lo, hi)
	}
	return nil
}

func webOneOf(field, s string, opts []string) error {
	if !slices.Contains(opts, s) {
		return fmt.Errorf("field %s %q is not one of the site's choices (%s)", field, s, strings.Join(opts, ", "))
	}
	return nil
}

func webPositive(field string, n int64) error {
	if n <= 0 {
		return fmt.Errorf("field %s is required: a positive catalog id", field)
	}
	return nil
}

func webDate(field, s string) error {
	if t, err := time.Parse(time.DateOnly, s); err != nil || t.Format(time.DateOnly) != s {
		return fmt.Errorf("field %s %q is not a date YYYY-MM-DD", field, s)
	}
	return nil
}

// webNull is what a site writes for an optional text left empty.
func webNull(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// --- emitting

// webEvent checks what every site event needs: the site's database and
// the persona's account there (from earlier events), the persona's
// username on the site, and a time on the day being built.
func webEvent(b *Builder, site, user, at string) error {
	if err := b.Need(site); err != nil {
		return err
	}
	a, ok := b.Persona.Account(site)
	if !ok {
		return fmt.Errorf("persona has no account on %s: add one to the persona's accounts", site)
	}
	if !b.State.Accounts[site] {
		return fmt.Errorf("no account on %s yet: an earlier create_web_account must sign up", site)
	}
	if user != a.Username {
		return fmt.Errorf("field username %q is not the persona's username on %s, %q", user, site, a.Username)
	}
	if !strings.HasPrefix(at, Date(b.Day)+" ") {
		return fmt.Errorf("field at %q is not a time of day %d (%s)", at, b.Day, Date(b.Day))
	}
	return nil
}

// webInsert writes a new row of site's table by natural key (EmitWebRow);
// a row the ledger holds already is an error, as the site's own check
// refuses it.
func webInsert(b *Builder, site, table string, key, values map[string]any) error {
	if b.State.HasWeb(site, table, webKey(key)) {
		return fmt.Errorf("%s.%s has the row %s already", site, table, webKey(key))
	}
	if err := EmitWebRow(b, &WebRow{Site: site, Table: table, Key: key, Values: values}); err != nil {
		return err
	}
	webWritten(b, site, table, key)
	return nil
}

// webLog writes a row of a table that declares no natural key (reviews,
// submissions, issues, saved searches: a log the site appends to). Its
// natural key is then its immutable columns, key, declared by the unique
// index TABLE_nk (docs/world.md) that the event creates when it is not
// there yet; values are the columns the site may change later.
func webLog(b *Builder, site, table string, key, values map[string]any) error {
	if b.State.HasWeb(site, table, webKey(key)) {
		return fmt.Errorf("%s.%s has the row %s already", site, table, webKey(key))
	}
	b.Op(delta.Op{Op: delta.OpDBCreate, DB: site, SQL: []string{
		kit.NaturalKeyIndex(table, sortedKeys(key)...)}})
	if err := EmitWebRow(b, &WebRow{Site: site, Table: table, Key: key, Values: values}); err != nil {
		return err
	}
	webWritten(b, site, table, key)
	return nil
}

// webWritten records the day of a row of the ledger's Web.
func webWritten(b *Builder, site, table string, key map[string]any) {
	if b.State.WebDay == nil {
		b.State.WebDay = map[string]int{}
	}
	b.State.WebDay[site+"/"+table+" "+webKey(key)] = b.Day
}

// webBefore reports whether the ledger's row of site's table with the
// text key was written before day (a row without a recorded day, such as
// a site_history event's, counts as earlier).
func webBefore(st *State, site, table, key string, day int) bool {
	d, ok := st.WebDay[site+"/"+table+" "+key]
	return !ok || d < day
}

// --- drawing

// webSeen reports whether the ledger holds site's row with key.
func webSeen(d *Draw, site, table string, key map[string]any) bool {
	return d.State.HasWeb(site, table, webKey(key))
}

// ledgerRow is a row of the ledger's Web: its natural key in text form
// and that key's columns.
type ledgerRow struct {
	Key  string
	Cols map[string]string
}

// webLedger returns the ledger's rows of site's table, in the order they
// were written.
func webLedger(st *State, site, table string) []ledgerRow {
	var out []ledgerRow
	for _, k := range st.Web[site+"/"+table] {
		row := ledgerRow{Key: k, Cols: map[string]string{}}
		for _, part := range strings.Split(k, "&") {
			c, v, _ := strings.Cut(part, "=")
			row.Cols[c] = v
		}
		out = append(out, row)
	}
	return out
}

// webPick returns a row of query (cached, ordered) drawn at random among
// those ok accepts (nil: any): it scans on from a random row. ErrSkip
// when ok accepts none.
func webPick(d *Draw, query string, ok func([]any) bool) ([]any, error) {
	rows, err := d.Catalog.Rows(query)
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, ErrSkip
	}
	start := d.Rand.IntN(len(rows))
	for i := range rows {
		if r := rows[(start+i)%len(rows)]; ok == nil || ok(r) {
			return r, nil
		}
	}
	return nil, ErrSkip
}

// webPickPrefer is webPick that tries the persona's interest first: query
// has one %s, an extra condition ("AND ..."), filled with prefer and then,
// when that yields nothing, with nothing.
func webPickPrefer(d *Draw, query, prefer string, ok func([]any) bool) ([]any, error) {
	if prefer != "" {
		r, err := webPick(d, fmt.Sprintf(query, prefer), ok)
		if !errors.Is(err, ErrSkip) {
			return r, err
		}
	}
	return webPick(d, fmt.Sprintf(query, ""), ok)
}

// webInterest is the condition "AND lower(col) = lower('value')" of the
// persona's interest key, or "" when it has none.
func webInterest(d *Draw, key, col string) string {
	v := d.Persona.Interests[key]
	if v == "" {
		return ""
	}
	return fmt.Sprintf("AND lower(%s) = lower('%s')", col, strings.ReplaceAll(v, "'", "''"))
}

// webReady is the username on site, or ErrSkip without the site's
// database and account.
func webReady(d *Draw, site string) (string, error) {
	if !d.Ready(site) {
		return "", ErrSkip
	}
	return d.Username(site), nil
}

// webMaybe returns one of xs, or "" one time in three.
func webMaybe(d *Draw, xs []string) string {
	if d.Rand.IntN(3) == 0 {
		return ""
	}
	return Pick(d, xs)
}

// --- reviewing

// webCatalogHas returns a problem line unless the catalog query yields a
// row (a consistency rule of the event's parameters with the catalog).
func webCatalogHas(c *Check, what, query string, args ...any) []string {
	if c.Catalog == nil {
		return []string{what + ": no catalog to check against"}
	}
	rows, err := c.Catalog.Query(query, args...)
	if err != nil {
		return []string{fmt.Sprintf("%s: %v", what, err)}
	}
	if len(rows) == 0 {
		return []string{what + ": the catalog disagrees"}
	}
	return nil
}

// ---------------------------------------------------------------- recipes

// RecipeSave is recipe_save's parameters.
type RecipeSave struct {
	Username string `json:"username"`
	Slug     string `json:"slug"`
	Note     string `json:"note,omitempty"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *RecipeSave) Check() error {
	return webFirst(webFields("username", p.Username, "slug", p.Slug), webAt(p.At), webLen("note", p.Note, 500))
}

var recipeNotes = []string{"for the weekend", "try with less salt", "quick weeknight dinner", "for guests", "double the sauce"}

func recipeSave() Skill {
	return Make(Def[RecipeSave]{
		Doc: Doc{Name: "recipe_save", Summary: "Save a recipe on the recipe site (Larder), with an optional note; it shows on the saved-recipes page.",
			Interfaces: []string{GUI}, Sites: []string{"recipes"},
			Changes:     []string{"recipes.saved_recipes, one row (username, slug, note, saved_at)"},
			Constraints: []string{"the slug is a catalog recipe", "a recipe is saved once (the site refuses a second save)", "an empty note is NULL, as the form writes it"},
			Example:     rawJSON(RecipeSave{Username: "alex.rivera", Slug: "lentil-soup", Note: "for the weekend", At: "2026-03-03 20:15:00"})},
		Emit: func(b *Builder, p *RecipeSave) error {
			if err := webEvent(b, "recipes", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "recipes", "saved_recipes", map[string]any{"username": p.Username, "slug": p.Slug},
				map[string]any{"note": webNull(p.Note), "saved_at": p.At})
		},
		Propose: func(d *Draw) (*RecipeSave, error) {
			user, err := webReady(d, "recipes")
			if err != nil {
				return nil, err
			}
			row, err := webPickPrefer(d, `SELECT slug FROM recipes WHERE 1 %s ORDER BY id`, webInterest(d, "cuisine", "cuisine"), func(r []any) bool {
				return !webSeen(d, "recipes", "saved_recipes", map[string]any{"username": user, "slug": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &RecipeSave{Username: user, Slug: Str(row[0]), Note: webMaybe(d, recipeNotes), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *RecipeSave) []string {
			return c.Has("saved recipe "+p.Slug, "recipes", "saved_recipes", "username = ? AND slug = ? AND saved_at = ?", p.Username, p.Slug, p.At)
		},
	})
}

// RecipeReview is recipe_review's parameters.
type RecipeReview struct {
	Username string `json:"username"`
	Slug     string `json:"slug"`
	Rating   int    `json:"rating"`
	Body     string `json:"body"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *RecipeReview) Check() error {
	return webFirst(webFields("username", p.Username, "slug", p.Slug, "body", p.Body), webRange("rating", p.Rating, 1, 5),
		webLen("body", p.Body, 2000), webAt(p.At))
}

var reviewBodies = []string{
	"Cooked the %s tonight. Easy to follow and the timing was right.",
	"The %s came out well; next time I will add more spice.",
	"Made the %s for friends and nothing was left.",
	"Good %s, though it took longer than the recipe says.",
}

func recipeReview() Skill {
	return Make(Def[RecipeReview]{
		Doc: Doc{Name: "recipe_review", Summary: "Cook a recipe saved earlier and post a review of it (stars and text) on the recipe site.",
			Interfaces: []string{GUI}, Sites: []string{"recipes"},
			Changes: []string{"recipes.reviews, one row (username, slug, rating, body, posted_at)",
				"the unique index reviews_nk over those columns when the table has none yet (a delta writes rows by natural key)"},
			Constraints: []string{"the recipe is one the persona saved on an earlier day", "a recipe is reviewed once", "rating 1 to 5 and a body of at most 2000 bytes, as the form takes"},
			Continues:   []string{"recipe_save"},
			Example:     rawJSON(RecipeReview{Username: "alex.rivera", Slug: "lentil-soup", Rating: 4, Body: "Easy and good.", At: "2026-03-04 21:00:00"})},
		Emit: func(b *Builder, p *RecipeReview) error {
			if err := webEvent(b, "recipes", p.Username, p.At); err != nil {
				return err
			}
			return webLog(b, "recipes", "reviews", map[string]any{"username": p.Username, "slug": p.Slug, "rating": p.Rating, "body": p.Body, "posted_at": p.At}, nil)
		},
		Propose: func(d *Draw) (*RecipeReview, error) {
			user, err := webReady(d, "recipes")
			if err != nil {
				return nil, err
			}
			reviewed := map[string]bool{}
			for _, r := range webLedger(d.State, "recipes", "reviews") {
				reviewed[r.Cols["slug"]] = true
			}
			var slugs []string
			for _, r := range webLedger(d.State, "recipes", "saved_recipes") {
				if r.Cols["username"] == user && !reviewed[r.Cols["slug"]] && webBefore(d.State, "recipes", "saved_recipes", r.Key, d.Day) {
					slugs = append(slugs, r.Cols["slug"])
				}
			}
			if len(slugs) == 0 {
				return nil, ErrSkip
			}
			slug := Pick(d, slugs)
			rows, err := d.Catalog.Query(`SELECT title FROM recipes WHERE slug = ?`, slug)
			if err != nil {
				return nil, err
			}
			if len(rows) == 0 {
				return nil, ErrSkip
			}
			title := strings.ToLower(Str(rows[0][0]))
			return &RecipeReview{Username: user, Slug: slug, Rating: 3 + d.Rand.IntN(3), Body: fmt.Sprintf(Pick(d, reviewBodies), title), At: d.Hour(18, 20)}, nil
		},
		Review: func(c *Check, p *RecipeReview) []string {
			return c.Has("review of "+p.Slug, "recipes", "reviews", "username = ? AND slug = ? AND rating = ? AND posted_at = ?", p.Username, p.Slug, p.Rating, p.At)
		},
	})
}

// ---------------------------------------------------------------- archive

// PaperSave is paper_save's parameters.
type PaperSave struct {
	Username string `json:"username"`
	Paper    string `json:"paper"`
	Shelf    string `json:"shelf"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *PaperSave) Check() error {
	return webFirst(webFields("username", p.Username, "paper", p.Paper), webOneOf("shelf", p.Shelf, paperShelves), webAt(p.At))
}

func paperSave() Skill {
	return Make(Def[PaperSave]{
		Doc: Doc{Name: "paper_save", Summary: "Add a preprint to the reading library on the archive site (Preprint Commons), on a shelf.",
			Interfaces: []string{GUI}, Sites: []string{"archive"},
			Changes:     []string{"archive.library, one row (username, paper, shelf, added_at)"},
			Constraints: []string{"the paper is a catalog paper (its ext_id)", "the shelf is one of to read, reading, read, cite", "a paper is added once"},
			Example:     rawJSON(PaperSave{Username: "alex.rivera", Paper: "2501.00042", Shelf: "to read", At: "2026-03-03 09:30:00"})},
		Emit: func(b *Builder, p *PaperSave) error {
			if err := webEvent(b, "archive", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "archive", "library", map[string]any{"username": p.Username, "paper": p.Paper}, map[string]any{"shelf": p.Shelf, "added_at": p.At})
		},
		Propose: func(d *Draw) (*PaperSave, error) {
			user, err := webReady(d, "archive")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT ext_id FROM papers ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "archive", "library", map[string]any{"username": user, "paper": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &PaperSave{Username: user, Paper: Str(row[0]), Shelf: Pick(d, paperShelves), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *PaperSave) []string {
			return c.Has("paper "+p.Paper, "archive", "library", "username = ? AND paper = ? AND shelf = ? AND added_at = ?", p.Username, p.Paper, p.Shelf, p.At)
		},
	})
}

// ---------------------------------------------------------------- news

// NewsBookmark is news_bookmark's parameters.
type NewsBookmark struct {
	Username string `json:"username"`
	Article  string `json:"article"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *NewsBookmark) Check() error {
	return webFirst(webFields("username", p.Username, "article", p.Article), webAt(p.At))
}

func newsBookmark() Skill {
	return Make(Def[NewsBookmark]{
		Doc: Doc{Name: "news_bookmark", Summary: "Bookmark a news article on the news site (The Daily Ledger).",
			Interfaces: []string{GUI}, Sites: []string{"news"},
			Changes:     []string{"news.bookmarks, one row (username, article, saved_at)"},
			Constraints: []string{"the article is a catalog article (its slug) published before the day", "an article is bookmarked once"},
			Example:     rawJSON(NewsBookmark{Username: "alex.rivera", Article: "corvane-startup-raises-funds", At: "2026-03-03 07:45:00"})},
		Emit: func(b *Builder, p *NewsBookmark) error {
			if err := webEvent(b, "news", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "news", "bookmarks", map[string]any{"username": p.Username, "article": p.Article}, map[string]any{"saved_at": p.At})
		},
		Propose: func(d *Draw) (*NewsBookmark, error) {
			user, err := webReady(d, "news")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT slug, published_at FROM articles ORDER BY id`, func(r []any) bool {
				return Str(r[1]) < d.Date() && !webSeen(d, "news", "bookmarks", map[string]any{"username": user, "article": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &NewsBookmark{Username: user, Article: Str(row[0]), At: d.Hour(7, 20)}, nil
		},
		Review: func(c *Check, p *NewsBookmark) []string {
			return c.Has("bookmark "+p.Article, "news", "bookmarks", "username = ? AND article = ? AND saved_at = ?", p.Username, p.Article, p.At)
		},
	})
}

// NewsFollow is news_follow_section's parameters.
type NewsFollow struct {
	Username string `json:"username"`
	Section  string `json:"section"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *NewsFollow) Check() error {
	return webFirst(webFields("username", p.Username, "section", p.Section), webAt(p.At))
}

func newsFollowSection() Skill {
	return Make(Def[NewsFollow]{
		Doc: Doc{Name: "news_follow_section", Summary: "Follow a section of the news site (world, science, sport, ...).",
			Interfaces: []string{GUI}, Sites: []string{"news"},
			Changes:     []string{"news.followed_sections, one row (username, section, since)"},
			Constraints: []string{"the section is one the catalog's articles have", "a section is followed once"},
			Example:     rawJSON(NewsFollow{Username: "alex.rivera", Section: "science", At: "2026-03-03 07:50:00"})},
		Emit: func(b *Builder, p *NewsFollow) error {
			if err := webEvent(b, "news", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "news", "followed_sections", map[string]any{"username": p.Username, "section": p.Section}, map[string]any{"since": p.At})
		},
		Propose: func(d *Draw) (*NewsFollow, error) {
			user, err := webReady(d, "news")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT DISTINCT section FROM articles ORDER BY 1`, func(r []any) bool {
				return !webSeen(d, "news", "followed_sections", map[string]any{"username": user, "section": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &NewsFollow{Username: user, Section: Str(row[0]), At: d.Hour(7, 20)}, nil
		},
		Review: func(c *Check, p *NewsFollow) []string {
			return append(c.Has("section "+p.Section, "news", "followed_sections", "username = ? AND section = ? AND since = ?", p.Username, p.Section, p.At),
				webCatalogHas(c, "section "+p.Section, `SELECT 1 FROM articles WHERE section = ? LIMIT 1`, p.Section)...)
		},
	})
}

// ---------------------------------------------------------------- dictionary

// WordSave is word_save's parameters.
type WordSave struct {
	Username string `json:"username"`
	Headword string `json:"headword"`
	Note     string `json:"note,omitempty"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *WordSave) Check() error {
	return webFirst(webFields("username", p.Username, "headword", p.Headword), webLen("note", p.Note, 300), webAt(p.At))
}

var wordNotes = []string{"came up in a meeting", "from the article this morning", "use it in the report", "look up the pronunciation again"}

func wordSave() Skill {
	return Make(Def[WordSave]{
		Doc: Doc{Name: "word_save", Summary: "Add a word to the word list on the dictionary site (Wordhoard), with an optional note.",
			Interfaces: []string{GUI}, Sites: []string{"dictionary"},
			Changes:     []string{"dictionary.word_list, one row (username, headword, note, added_at)"},
			Constraints: []string{"the headword is a catalog word", "a word is listed once", "an empty note is NULL, as the form writes it"},
			Example:     rawJSON(WordSave{Username: "alex.rivera", Headword: "kitesa", Note: "came up in a meeting", At: "2026-03-03 12:10:00"})},
		Emit: func(b *Builder, p *WordSave) error {
			if err := webEvent(b, "dictionary", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "dictionary", "word_list", map[string]any{"username": p.Username, "headword": p.Headword},
				map[string]any{"note": webNull(p.Note), "added_at": p.At})
		},
		Propose: func(d *Draw) (*WordSave, error) {
			user, err := webReady(d, "dictionary")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT headword FROM words ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "dictionary", "word_list", map[string]any{"username": user, "headword": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &WordSave{Username: user, Headword: Str(row[0]), Note: webMaybe(d, wordNotes), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *WordSave) []string {
			return c.Has("word "+p.Headword, "dictionary", "word_list", "username = ? AND headword = ? AND added_at = ?", p.Username, p.Headword, p.At)
		},
	})
}

// ---------------------------------------------------------------- stays

// HotelBooking is hotel_book's parameters: what the stays site's booking
// form writes.
type HotelBooking struct {
	Code       string `json:"code"`
	Username   string `json:"username"`
	Hotel      string `json:"hotel"`
	RoomID     int64  `json:"room_id"`
	CheckIn    string `json:"check_in"`
	Nights     int    `json:"nights"`
	Guests     int    `json:"guests"`
	TotalCents int64  `json:"total_cents"`
	At         string `json:"at"`
}

// Check implements Checker.
func (p *HotelBooking) Check() error {
	return webFirst(webFields("code", p.Code, "username", p.Username, "hotel", p.Hotel), webPositive("room_id", p.RoomID),
		webDate("check_in", p.CheckIn), webRange("nights", p.Nights, 1, 14), webRange("guests", p.Guests, 1, 6),
		webPositive("total_cents", p.TotalCents), webAt(p.At))
}

// checkOut is the day after the last night.
func (p *HotelBooking) checkOut() string {
	t, _ := time.Parse(time.DateOnly, p.CheckIn)
	return t.AddDate(0, 0, p.Nights).Format(time.DateOnly)
}

func hotelBook() Skill {
	return Make(Def[HotelBooking]{
		Doc: Doc{Name: "hotel_book", Summary: "Book a hotel room for some nights on the stays site (Nightfall Stays); the booking shows on the bookings page.",
			Interfaces: []string{GUI}, Sites: []string{"stays"},
			Changes: []string{"stays.bookings, one row (code, username, hotel, room_id, check_in, nights, guests, total_cents, status confirmed, booked_at)"},
			Constraints: []string{"the room is a room of the catalog hotel, for at most its max_guests",
				"the room has a rate with a room free for every night from check_in, inside the catalog's rates window",
				"total_cents is the sum of those nightly rates, as the site computes it",
				"check-in is after the day of booking",
				"the code is the site's own numbering, NS-500001 on (the ledger's counter)"},
			Example: rawJSON(HotelBooking{Code: "NS-500001", Username: "alex.rivera", Hotel: "station-inn-port-avel", RoomID: 12, CheckIn: "2026-03-09", Nights: 2, Guests: 1, TotalCents: 31800, At: "2026-03-04 13:40:00"})},
		Emit: func(b *Builder, p *HotelBooking) error {
			if err := webEvent(b, "stays", p.Username, p.At); err != nil {
				return err
			}
			if p.CheckIn <= Date(b.Day) {
				return fmt.Errorf("field check_in %s is not after the day of booking %s", p.CheckIn, Date(b.Day))
			}
			if want := bookingCode(b.State.Peek(seqBooking)); p.Code != want {
				return fmt.Errorf("field code %q: the site numbers this booking %s", p.Code, want)
			}
			err := webInsert(b, "stays", "bookings", map[string]any{"code": p.Code}, map[string]any{
				"username": p.Username, "hotel": p.Hotel, "room_id": p.RoomID, "check_in": p.CheckIn, "nights": p.Nights,
				"guests": p.Guests, "total_cents": p.TotalCents, "status": "confirmed", "booked_at": p.At})
			if err != nil {
				return err
			}
			b.State.Next(seqBooking)
			return nil
		},
		Propose: proposeHotel,
		Review: func(c *Check, p *HotelBooking) []string {
			out := c.Has("booking "+p.Code, "stays", "bookings", "code = ? AND username = ? AND hotel = ? AND room_id = ? AND check_in = ? AND nights = ? AND total_cents = ? AND status = 'confirmed'",
				p.Code, p.Username, p.Hotel, p.RoomID, p.CheckIn, p.Nights, p.TotalCents)
			out = append(out, webCatalogHas(c, "room "+fmt.Sprint(p.RoomID)+" of "+p.Hotel,
				`SELECT 1 FROM hotel_rooms r JOIN hotels h ON h.id = r.hotel_id WHERE r.id = ? AND h.slug = ? AND r.max_guests >= ?`, p.RoomID, p.Hotel, p.Guests)...)
			return append(out, webCatalogHas(c, fmt.Sprintf("rates of room %d from %s for %d nights summing to %d", p.RoomID, p.CheckIn, p.Nights, p.TotalCents),
				`SELECT 1 FROM (SELECT count(*) AS n, sum(price_cents) AS total, min(available) AS free FROM room_rates WHERE room_id = ? AND night >= ? AND night < ?) WHERE n = ? AND total = ? AND free > 0`,
				p.RoomID, p.CheckIn, p.checkOut(), p.Nights, p.TotalCents)...)
		},
	})
}

func proposeHotel(d *Draw) (*HotelBooking, error) {
	user, err := webReady(d, "stays")
	if err != nil {
		return nil, err
	}
	last, err := d.Catalog.Rows(`SELECT max(night) FROM room_rates`)
	if err != nil {
		return nil, err
	}
	lastNight, err := time.Parse(time.DateOnly, Str(last[0][0]))
	if err != nil {
		return nil, ErrSkip // no rates
	}
	prefer := webInterest(d, "city", "c.name")
	for try := range 12 {
		nights := 1 + d.Rand.IntN(4)
		in := Day0.AddDate(0, 0, d.Day+1+d.Rand.IntN(10))
		if latest := lastNight.AddDate(0, 0, 1-nights); in.After(latest) {
			in = latest
		}
		if in.Format(time.DateOnly) <= d.Date() {
			continue
		}
		guests := 1 + d.Rand.IntN(2)
		cond := ""
		if try < 6 {
			cond = prefer
		}
		h, err := webPickPrefer(d, `SELECT h.slug, h.id FROM hotels h JOIN cities c ON c.id = h.city_id WHERE 1 %s ORDER BY h.id`, cond, nil)
		if errors.Is(err, ErrSkip) {
			continue
		}
		if err != nil {
			return nil, err
		}
		from, to := in.Format(time.DateOnly), in.AddDate(0, 0, nights).Format(time.DateOnly)
		rooms, err := d.Catalog.Query(`SELECT r.id, sum(rr.price_cents) FROM hotel_rooms r JOIN room_rates rr ON rr.room_id = r.id
			WHERE r.hotel_id = ? AND r.max_guests >= ? AND rr.night >= ? AND rr.night < ?
			GROUP BY r.id HAVING count(*) = ? AND min(rr.available) > 0 ORDER BY r.id`, h[1], guests, from, to, nights)
		if err != nil {
			return nil, err
		}
		if len(rooms) == 0 {
			continue
		}
		r := rooms[d.Rand.IntN(len(rooms))]
		return &HotelBooking{Code: bookingCode(d.State.Peek(seqBooking)), Username: user, Hotel: Str(h[0]), RoomID: Int(r[0]),
			CheckIn: from, Nights: nights, Guests: guests, TotalCents: Int(r[1]), At: d.Hour(9, 20)}, nil
	}
	return nil, ErrSkip
}

// ---------------------------------------------------------------- flights

// FlightReservation is flight_reserve's parameters.
type FlightReservation struct {
	Code       string `json:"code"`
	Username   string `json:"username"`
	FlightID   int64  `json:"flight_id"`
	Passengers int    `json:"passengers"`
	Cabin      string `json:"cabin"`
	TotalCents int64  `json:"total_cents"`
	At         string `json:"at"`
}

// Check implements Checker.
func (p *FlightReservation) Check() error {
	return webFirst(webFields("code", p.Code, "username", p.Username), webPositive("flight_id", p.FlightID),
		webRange("passengers", p.Passengers, 1, 6), webOneOf("cabin", p.Cabin, flightCabins), webPositive("total_cents", p.TotalCents), webAt(p.At))
}

func flightReserve() Skill {
	return Make(Def[FlightReservation]{
		Doc: Doc{Name: "flight_reserve", Summary: "Reserve seats on a scheduled flight on the flights site (Skyway).",
			Interfaces: []string{GUI}, Sites: []string{"flights"},
			Changes: []string{"flights.reservations, one row (code, username, flight_id, passengers, cabin, total_cents, status confirmed, reserved_at)"},
			Constraints: []string{"the flight is a catalog flight departing after the day, with seats for the passengers",
				"total_cents is the fare times the passengers times the cabin's factor (economy 1, premium 1.6, business 3), as the site computes it",
				"the code is the site's own numbering, SW700001 on (the ledger's counter)"},
			Example: rawJSON(FlightReservation{Code: "SW700001", Username: "alex.rivera", FlightID: 42, Passengers: 1, Cabin: "economy", TotalCents: 27999, At: "2026-03-03 10:00:00"})},
		Emit: func(b *Builder, p *FlightReservation) error {
			if err := webEvent(b, "flights", p.Username, p.At); err != nil {
				return err
			}
			if want := reservationCode(b.State.Peek(seqReservation)); p.Code != want {
				return fmt.Errorf("field code %q: the site numbers this reservation %s", p.Code, want)
			}
			err := webInsert(b, "flights", "reservations", map[string]any{"code": p.Code}, map[string]any{
				"username": p.Username, "flight_id": p.FlightID, "passengers": p.Passengers, "cabin": p.Cabin,
				"total_cents": p.TotalCents, "status": "confirmed", "reserved_at": p.At})
			if err != nil {
				return err
			}
			b.State.Next(seqReservation)
			return nil
		},
		Propose: func(d *Draw) (*FlightReservation, error) {
			user, err := webReady(d, "flights")
			if err != nil {
				return nil, err
			}
			passengers := 1 + d.Rand.IntN(2)
			cabin := "economy"
			if d.Rand.IntN(4) == 0 {
				cabin = Pick(d, flightCabins[1:])
			}
			from, to := Date(d.Day+1), Date(d.Day+31)
			row, err := webPickPrefer(d, `SELECT f.id, f.departs_at, f.price_cents, f.seats FROM flights f
				JOIN airports a ON a.code = f.origin JOIN cities c ON c.id = a.city_id WHERE 1 %s ORDER BY f.id`, webInterest(d, "city", "c.name"),
				func(r []any) bool { dep := Str(r[1]); return dep >= from && dep < to && Int(r[3]) >= int64(passengers) })
			if err != nil {
				return nil, err
			}
			return &FlightReservation{Code: reservationCode(d.State.Peek(seqReservation)), Username: user, FlightID: Int(row[0]), Passengers: passengers,
				Cabin: cabin, TotalCents: reservationTotal(Int(row[2]), passengers, cabin), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *FlightReservation) []string {
			out := c.Has("reservation "+p.Code, "flights", "reservations", "code = ? AND username = ? AND flight_id = ? AND passengers = ? AND cabin = ? AND total_cents = ? AND status = 'confirmed'",
				p.Code, p.Username, p.FlightID, p.Passengers, p.Cabin, p.TotalCents)
			return append(out, webCatalogHas(c, fmt.Sprintf("flight %d departing after %s with %d seats at a total of %d", p.FlightID, p.At[:10], p.Passengers, p.TotalCents),
				`SELECT 1 FROM flights WHERE id = ? AND departs_at > ? AND seats >= ? AND price_cents * ? * ? / 10 = ?`,
				p.FlightID, p.At[:10]+" 23:59:59", p.Passengers, p.Passengers, cabinFactor(p.Cabin), p.TotalCents)...)
		},
	})
}

// ---------------------------------------------------------------- courses

// CourseEnroll is course_enroll's parameters.
type CourseEnroll struct {
	Username string `json:"username"`
	Course   string `json:"course"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *CourseEnroll) Check() error {
	return webFirst(webFields("username", p.Username, "course", p.Course), webAt(p.At))
}

func courseEnroll() Skill {
	return Make(Def[CourseEnroll]{
		Doc: Doc{Name: "course_enroll", Summary: "Enroll in an online course on the course site (Openclass).",
			Interfaces: []string{GUI}, Sites: []string{"courses"},
			Changes:     []string{"courses.enrollments, one row (username, course, status active, enrolled_at)"},
			Constraints: []string{"the course is a catalog course (its slug), of the persona's subject when there is one", "a course is enrolled in once"},
			Example:     rawJSON(CourseEnroll{Username: "alex.rivera", Course: "statistics-101", At: "2026-03-03 19:00:00"})},
		Emit: func(b *Builder, p *CourseEnroll) error {
			if err := webEvent(b, "courses", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "courses", "enrollments", map[string]any{"username": p.Username, "course": p.Course}, map[string]any{"status": "active", "enrolled_at": p.At})
		},
		Propose: func(d *Draw) (*CourseEnroll, error) {
			user, err := webReady(d, "courses")
			if err != nil {
				return nil, err
			}
			row, err := webPickPrefer(d, `SELECT slug FROM courses WHERE 1 %s ORDER BY id`, webInterest(d, "subject", "subject"), func(r []any) bool {
				return !webSeen(d, "courses", "enrollments", map[string]any{"username": user, "course": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &CourseEnroll{Username: user, Course: Str(row[0]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *CourseEnroll) []string {
			return c.Has("enrollment in "+p.Course, "courses", "enrollments", "username = ? AND course = ? AND status = 'active' AND enrolled_at = ?", p.Username, p.Course, p.At)
		},
	})
}

// CourseSubmit is course_submit's parameters.
type CourseSubmit struct {
	Username     string `json:"username"`
	Course       string `json:"course"`
	AssignmentID int64  `json:"assignment_id"`
	Answer       string `json:"answer"`
	At           string `json:"at"`
}

// Check implements Checker.
func (p *CourseSubmit) Check() error {
	return webFirst(webFields("username", p.Username, "course", p.Course, "answer", p.Answer), webPositive("assignment_id", p.AssignmentID),
		webLen("answer", p.Answer, 5000), webAt(p.At))
}

// courseAnswer is a submission's text for an assignment of kind.
func courseAnswer(d *Draw, title, kind string) string {
	switch kind {
	case "quiz":
		var parts []string
		for i := range 5 {
			parts = append(parts, fmt.Sprintf("%d %c", i+1, 'a'+rune(d.Rand.IntN(4))))
		}
		return title + " answers: " + strings.Join(parts, ", ")
	case "essay":
		return title + ": an essay of about 900 words on the module's question, with three sources cited at the end."
	case "project":
		return title + ": the project is in my repository, with a README on how to run it and what I would do next."
	case "peer review":
		return title + ": the submission I reviewed is clear and well argued; the second section needs an example."
	}
	return title + ": worked solutions to every problem, with the steps written out."
}

func courseSubmit() Skill {
	return Make(Def[CourseSubmit]{
		Doc: Doc{Name: "course_submit", Summary: "Submit an assignment of a course the persona is enrolled in, on the course site.",
			Interfaces: []string{GUI}, Sites: []string{"courses"},
			Changes: []string{"courses.submissions, one row (username, course, assignment_id, answer, submitted_at)",
				"the unique index submissions_nk over those columns when the table has none yet (a delta writes rows by natural key)"},
			Constraints: []string{"the course is one the persona enrolled in on an earlier day (the site refuses a submission without an enrollment)",
				"the assignment is one of that course's catalog assignments", "an assignment is submitted once", "the answer is at most 5000 bytes"},
			Continues: []string{"course_enroll"},
			Example:   rawJSON(CourseSubmit{Username: "alex.rivera", Course: "statistics-101", AssignmentID: 7, Answer: "Assignment 1 answers: 1 b, 2 a", At: "2026-03-05 21:00:00"})},
		Emit: func(b *Builder, p *CourseSubmit) error {
			if err := webEvent(b, "courses", p.Username, p.At); err != nil {
				return err
			}
			enrolled := webKey(map[string]any{"username": p.Username, "course": p.Course})
			if !b.State.HasWeb("courses", "enrollments", enrolled) || !webBefore(b.State, "courses", "enrollments", enrolled, b.Day) {
				return fmt.Errorf("field course %s: enroll in the course on an earlier day before you submit (course_enroll)", p.Course)
			}
			return webLog(b, "courses", "submissions", map[string]any{"username": p.Username, "course": p.Course, "assignment_id": p.AssignmentID,
				"answer": p.Answer, "submitted_at": p.At}, nil)
		},
		Propose: func(d *Draw) (*CourseSubmit, error) {
			user, err := webReady(d, "courses")
			if err != nil {
				return nil, err
			}
			done := map[string]bool{}
			for _, r := range webLedger(d.State, "courses", "submissions") {
				done[r.Cols["assignment_id"]] = true
			}
			var courses []string
			for _, r := range webLedger(d.State, "courses", "enrollments") {
				if r.Cols["username"] == user && webBefore(d.State, "courses", "enrollments", r.Key, d.Day) {
					courses = append(courses, r.Cols["course"])
				}
			}
			if len(courses) == 0 {
				return nil, ErrSkip
			}
			start := d.Rand.IntN(len(courses))
			for i := range courses {
				course := courses[(start+i)%len(courses)]
				rows, err := d.Catalog.Query(`SELECT a.id, a.title, a.kind FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE c.slug = ? ORDER BY a.id`, course)
				if err != nil {
					return nil, err
				}
				rows = slices.DeleteFunc(rows, func(r []any) bool { return done[fmt.Sprint(Int(r[0]))] })
				if len(rows) == 0 {
					continue
				}
				a := rows[0] // the first not submitted yet: assignments come in order
				return &CourseSubmit{Username: user, Course: course, AssignmentID: Int(a[0]), Answer: courseAnswer(d, Str(a[1]), Str(a[2])), At: d.Hour(17, 20)}, nil
			}
			return nil, ErrSkip
		},
		Review: func(c *Check, p *CourseSubmit) []string {
			out := c.Has("submission of assignment "+fmt.Sprint(p.AssignmentID), "courses", "submissions", "username = ? AND course = ? AND assignment_id = ? AND submitted_at = ?",
				p.Username, p.Course, p.AssignmentID, p.At)
			out = append(out, c.Has("enrollment in "+p.Course, "courses", "enrollments", "username = ? AND course = ? AND status = 'active' AND enrolled_at <= ?", p.Username, p.Course, p.At)...)
			return append(out, webCatalogHas(c, fmt.Sprintf("assignment %d of %s", p.AssignmentID, p.Course),
				`SELECT 1 FROM course_assignments a JOIN courses c ON c.id = a.course_id WHERE a.id = ? AND c.slug = ?`, p.AssignmentID, p.Course)...)
		},
	})
}

// ---------------------------------------------------------------- sports

// TeamFollow is team_follow's parameters.
type TeamFollow struct {
	Username string `json:"username"`
	Team     string `json:"team"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *TeamFollow) Check() error {
	return webFirst(webFields("username", p.Username, "team", p.Team), webAt(p.At))
}

func teamFollow() Skill {
	return Make(Def[TeamFollow]{
		Doc: Doc{Name: "team_follow", Summary: "Follow a team on the sports site (Scoreline); its next match shows on the followed-teams page.",
			Interfaces: []string{GUI}, Sites: []string{"sports"},
			Changes:     []string{"sports.followed_teams, one row (username, team, since)"},
			Constraints: []string{"the team is a catalog team (its slug), the persona's team first", "a team is followed once"},
			Example:     rawJSON(TeamFollow{Username: "alex.rivera", Team: "warsova-fc", At: "2026-03-03 21:00:00"})},
		Emit: func(b *Builder, p *TeamFollow) error {
			if err := webEvent(b, "sports", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "sports", "followed_teams", map[string]any{"username": p.Username, "team": p.Team}, map[string]any{"since": p.At})
		},
		Propose: func(d *Draw) (*TeamFollow, error) {
			user, err := webReady(d, "sports")
			if err != nil {
				return nil, err
			}
			row, err := webPickPrefer(d, `SELECT slug FROM teams WHERE 1 %s ORDER BY id`, webInterest(d, "team", "name"), func(r []any) bool {
				return !webSeen(d, "sports", "followed_teams", map[string]any{"username": user, "team": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &TeamFollow{Username: user, Team: Str(row[0]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *TeamFollow) []string {
			return c.Has("followed team "+p.Team, "sports", "followed_teams", "username = ? AND team = ? AND since = ?", p.Username, p.Team, p.At)
		},
	})
}

// ---------------------------------------------------------------- code

// RepoStar is repo_star's parameters.
type RepoStar struct {
	Username string `json:"username"`
	RepoID   int64  `json:"repo_id"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *RepoStar) Check() error {
	return webFirst(webFields("username", p.Username), webPositive("repo_id", p.RepoID), webAt(p.At))
}

func repoStar() Skill {
	return Make(Def[RepoStar]{
		Doc: Doc{Name: "repo_star", Summary: "Star a repository on the code-hosting site (Forgeyard).",
			Interfaces: []string{GUI}, Sites: []string{"code"},
			Changes:     []string{"code.stars, one row (username, repo_id, starred_at)"},
			Constraints: []string{"the repository is a catalog repository (its id), in the persona's language first", "a repository is starred once"},
			Example:     rawJSON(RepoStar{Username: "alex.rivera", RepoID: 17, At: "2026-03-03 11:20:00"})},
		Emit: func(b *Builder, p *RepoStar) error {
			if err := webEvent(b, "code", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "code", "stars", map[string]any{"username": p.Username, "repo_id": p.RepoID}, map[string]any{"starred_at": p.At})
		},
		Propose: func(d *Draw) (*RepoStar, error) {
			user, err := webReady(d, "code")
			if err != nil {
				return nil, err
			}
			row, err := webPickPrefer(d, `SELECT id FROM repositories WHERE 1 %s ORDER BY id`, webInterest(d, "language", "language"), func(r []any) bool {
				return !webSeen(d, "code", "stars", map[string]any{"username": user, "repo_id": Int(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &RepoStar{Username: user, RepoID: Int(row[0]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *RepoStar) []string {
			return c.Has("star of repository "+fmt.Sprint(p.RepoID), "code", "stars", "username = ? AND repo_id = ? AND starred_at = ?", p.Username, p.RepoID, p.At)
		},
	})
}

// RepoIssue is repo_issue's parameters.
type RepoIssue struct {
	Username string `json:"username"`
	RepoID   int64  `json:"repo_id"`
	Title    string `json:"title"`
	Body     string `json:"body"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *RepoIssue) Check() error {
	return webFirst(webFields("username", p.Username, "title", p.Title, "body", p.Body), webPositive("repo_id", p.RepoID),
		webLen("title", p.Title, 200), webLen("body", p.Body, 5000), webAt(p.At))
}

var issueTexts = [][2]string{
	{"README example does not run", "The first example in the README of %s fails on a fresh checkout; it seems to use an option that was renamed."},
	{"Crash on an empty configuration file", "Running %s with an empty config file panics instead of using the defaults."},
	{"Document the minimum %s version", "The build of %s needs a newer %s than the docs say; please state the minimum version."},
	{"Flaky test on slow machines", "One test of %s times out on my laptop about one run in five; a longer timeout fixes it."},
}

func repoIssue() Skill {
	return Make(Def[RepoIssue]{
		Doc: Doc{Name: "repo_issue", Summary: "Open an issue on a repository of the code-hosting site.",
			Interfaces: []string{GUI}, Sites: []string{"code"},
			Changes: []string{"code.issues, one row (username, repo_id, title, body, state open, opened_at)",
				"the unique index issues_nk over its columns but state when the table has none yet (a delta writes rows by natural key)"},
			Constraints: []string{"the repository is a catalog repository, one the persona starred when there is one", "title at most 200 and body at most 5000 bytes", "an issue is opened once"},
			Continues:   []string{"repo_star"},
			Example:     rawJSON(RepoIssue{Username: "alex.rivera", RepoID: 17, Title: "README example does not run", Body: "The first example fails.", At: "2026-03-03 11:30:00"})},
		Emit: func(b *Builder, p *RepoIssue) error {
			if err := webEvent(b, "code", p.Username, p.At); err != nil {
				return err
			}
			return webLog(b, "code", "issues", map[string]any{"username": p.Username, "repo_id": p.RepoID, "title": p.Title, "body": p.Body, "opened_at": p.At},
				map[string]any{"state": "open"})
		},
		Propose: func(d *Draw) (*RepoIssue, error) {
			user, err := webReady(d, "code")
			if err != nil {
				return nil, err
			}
			opened := map[string]bool{}
			for _, r := range webLedger(d.State, "code", "issues") {
				opened[r.Cols["repo_id"]] = true
			}
			var starred []string
			for _, r := range webLedger(d.State, "code", "stars") {
				if r.Cols["username"] == user && !opened[r.Cols["repo_id"]] {
					starred = append(starred, r.Cols["repo_id"])
				}
			}
			cond := webInterest(d, "language", "language")
			if len(starred) > 0 {
				cond = "AND id = " + Pick(d, starred) // ids from the ledger are the integers Emit wrote
			}
			row, err := webPickPrefer(d, `SELECT id, owner || '/' || name, language FROM repositories WHERE 1 %s ORDER BY id`, cond, func(r []any) bool {
				return !opened[fmt.Sprint(Int(r[0]))]
			})
			if err != nil {
				return nil, err
			}
			t := Pick(d, issueTexts)
			title, body := t[0], fmt.Sprintf(t[1], Str(row[1]))
			if strings.Contains(title, "%s") {
				title, body = fmt.Sprintf(t[0], Str(row[2])), fmt.Sprintf(t[1], Str(row[1]), Str(row[2]))
			}
			return &RepoIssue{Username: user, RepoID: Int(row[0]), Title: title, Body: body, At: d.Hour(9, 20)}, nil
		},
		Review: func(c *Check, p *RepoIssue) []string {
			return c.Has("issue "+p.Title, "code", "issues", "username = ? AND repo_id = ? AND title = ? AND opened_at = ?", p.Username, p.RepoID, p.Title, p.At)
		},
	})
}

// RepoCreate is repo_create's parameters.
type RepoCreate struct {
	Username    string `json:"username"`
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	Language    string `json:"language"`
	Visibility  string `json:"visibility"`
	At          string `json:"at"`
}

var repoNameRE = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// Check implements Checker.
func (p *RepoCreate) Check() error {
	if err := webFields("username", p.Username, "name", p.Name, "language", p.Language); err != nil {
		return err
	}
	if !repoNameRE.MatchString(p.Name) {
		return fmt.Errorf("field name %q: a repository name has only letters, digits, - and _", p.Name)
	}
	return webFirst(webLen("name", p.Name, 100), webLen("description", p.Description, 300), webOneOf("visibility", p.Visibility, repoVisibles), webAt(p.At))
}

var repoIdeas = [][2]string{
	{"dotfiles", "Shell and editor configuration."},
	{"notes", "Plain-text notes, versioned."},
	{"scripts", "Small scripts that automate chores."},
	{"budget", "Monthly spending, tracked."},
	{"website", "Source of my personal site."},
	{"experiments", "Throwaway experiments."},
	{"reading-list", "Papers and books to read."},
	{"toolbox", "Command-line helpers."},
}

func repoCreate() Skill {
	return Make(Def[RepoCreate]{
		Doc: Doc{Name: "repo_create", Summary: "Create a repository of the persona's own on the code-hosting site.",
			Interfaces: []string{GUI}, Sites: []string{"code"},
			Changes:     []string{"code.repositories, one row (username, name, description, language, visibility, created_at)"},
			Constraints: []string{"the name has only letters, digits, - and _ and is new for the persona", "the language is one the catalog's repositories use", "visibility public or private"},
			Example:     rawJSON(RepoCreate{Username: "alex.rivera", Name: "dotfiles", Description: "Shell and editor configuration.", Language: "Go", Visibility: "private", At: "2026-03-03 22:00:00"})},
		Emit: func(b *Builder, p *RepoCreate) error {
			if err := webEvent(b, "code", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "code", "repositories", map[string]any{"username": p.Username, "name": p.Name}, map[string]any{
				"description": webNull(p.Description), "language": p.Language, "visibility": p.Visibility, "created_at": p.At})
		},
		Propose: func(d *Draw) (*RepoCreate, error) {
			user, err := webReady(d, "code")
			if err != nil {
				return nil, err
			}
			langs, err := d.Catalog.Rows(`SELECT DISTINCT language FROM repositories ORDER BY 1`)
			if err != nil {
				return nil, err
			}
			if len(langs) == 0 {
				return nil, ErrSkip
			}
			lang := Str(Pick(d, langs)[0])
			for _, l := range langs {
				if strings.EqualFold(Str(l[0]), d.Persona.Interests["language"]) {
					lang = Str(l[0])
				}
			}
			ideas := slices.Clone(repoIdeas)
			if occ := slug(d.Persona.Occupation); occ != "" {
				ideas = append(ideas, [2]string{occ + "-tools", "Tools for my work as " + d.Persona.Occupation + "."})
			}
			start := d.Rand.IntN(len(ideas))
			for round := 1; ; round++ {
				for i := range ideas {
					idea := ideas[(start+i)%len(ideas)]
					name := idea[0]
					if round > 1 {
						name = fmt.Sprintf("%s-%d", name, round)
					}
					if webSeen(d, "code", "repositories", map[string]any{"username": user, "name": name}) {
						continue
					}
					return &RepoCreate{Username: user, Name: name, Description: idea[1], Language: lang, Visibility: Pick(d, repoVisibles), At: d.Hour(8, 20)}, nil
				}
			}
		},
		Review: func(c *Check, p *RepoCreate) []string {
			out := c.Has("repository "+p.Name, "code", "repositories", "username = ? AND name = ? AND language = ? AND visibility = ? AND created_at = ?", p.Username, p.Name, p.Language, p.Visibility, p.At)
			return append(out, webCatalogHas(c, "language "+p.Language, `SELECT 1 FROM repositories WHERE language = ? LIMIT 1`, p.Language)...)
		},
	})
}

// ---------------------------------------------------------------- models

// ModelLike is model_like's parameters.
type ModelLike struct {
	Username string `json:"username"`
	ModelID  int64  `json:"model_id"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *ModelLike) Check() error {
	return webFirst(webFields("username", p.Username), webPositive("model_id", p.ModelID), webAt(p.At))
}

func modelLike() Skill {
	return Make(Def[ModelLike]{
		Doc: Doc{Name: "model_like", Summary: "Like a model on the model hub (Modelhaus).",
			Interfaces: []string{GUI}, Sites: []string{"models"},
			Changes:     []string{"models.likes, one row (username, model_id, liked_at)"},
			Constraints: []string{"the model is a catalog model (its id)", "a model is liked once"},
			Example:     rawJSON(ModelLike{Username: "alex.rivera", ModelID: 3, At: "2026-03-03 15:00:00"})},
		Emit: func(b *Builder, p *ModelLike) error {
			if err := webEvent(b, "models", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "models", "likes", map[string]any{"username": p.Username, "model_id": p.ModelID}, map[string]any{"liked_at": p.At})
		},
		Propose: func(d *Draw) (*ModelLike, error) {
			user, err := webReady(d, "models")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT id FROM models ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "models", "likes", map[string]any{"username": user, "model_id": Int(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &ModelLike{Username: user, ModelID: Int(row[0]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *ModelLike) []string {
			return c.Has("like of model "+fmt.Sprint(p.ModelID), "models", "likes", "username = ? AND model_id = ? AND liked_at = ?", p.Username, p.ModelID, p.At)
		},
	})
}

// DatasetCollect is dataset_collect's parameters.
type DatasetCollect struct {
	Username  string `json:"username"`
	DatasetID int64  `json:"dataset_id"`
	Note      string `json:"note,omitempty"`
	At        string `json:"at"`
}

// Check implements Checker.
func (p *DatasetCollect) Check() error {
	return webFirst(webFields("username", p.Username), webPositive("dataset_id", p.DatasetID), webLen("note", p.Note, 300), webAt(p.At))
}

var datasetNotes = []string{"baseline for the next experiment", "check the license first", "small enough for the laptop", "compare with last year's numbers"}

func datasetCollect() Skill {
	return Make(Def[DatasetCollect]{
		Doc: Doc{Name: "dataset_collect", Summary: "Add a dataset to the collection on the model hub, with an optional note.",
			Interfaces: []string{GUI}, Sites: []string{"models"},
			Changes:     []string{"models.collection, one row (username, dataset_id, note, added_at)"},
			Constraints: []string{"the dataset is a catalog dataset (its id)", "a dataset is collected once", "an empty note is NULL, as the form writes it"},
			Example:     rawJSON(DatasetCollect{Username: "alex.rivera", DatasetID: 5, Note: "check the license first", At: "2026-03-03 15:10:00"})},
		Emit: func(b *Builder, p *DatasetCollect) error {
			if err := webEvent(b, "models", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "models", "collection", map[string]any{"username": p.Username, "dataset_id": p.DatasetID},
				map[string]any{"note": webNull(p.Note), "added_at": p.At})
		},
		Propose: func(d *Draw) (*DatasetCollect, error) {
			user, err := webReady(d, "models")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT id FROM datasets ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "models", "collection", map[string]any{"username": user, "dataset_id": Int(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &DatasetCollect{Username: user, DatasetID: Int(row[0]), Note: webMaybe(d, datasetNotes), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *DatasetCollect) []string {
			return c.Has("dataset "+fmt.Sprint(p.DatasetID), "models", "collection", "username = ? AND dataset_id = ? AND added_at = ?", p.Username, p.DatasetID, p.At)
		},
	})
}

// ---------------------------------------------------------------- maps

// PlaceSave is place_save's parameters.
type PlaceSave struct {
	Username string `json:"username"`
	PlaceID  int64  `json:"place_id"`
	Label    string `json:"label"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *PlaceSave) Check() error {
	return webFirst(webFields("username", p.Username), webPositive("place_id", p.PlaceID), webOneOf("label", p.Label, placeLabels), webAt(p.At))
}

func placeSave() Skill {
	return Make(Def[PlaceSave]{
		Doc: Doc{Name: "place_save", Summary: "Save a place on the maps site (Waypoint Maps) under a label.",
			Interfaces: []string{GUI}, Sites: []string{"maps"},
			Changes:     []string{"maps.saved_places, one row (username, place_id, label, saved_at)"},
			Constraints: []string{"the place is a catalog place (its number), in the persona's city first", "the label is one of favourite, home, work, want to go", "a place is saved once"},
			Example:     rawJSON(PlaceSave{Username: "alex.rivera", PlaceID: 812, Label: "work", At: "2026-03-05 08:05:00"})},
		Emit: func(b *Builder, p *PlaceSave) error {
			if err := webEvent(b, "maps", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "maps", "saved_places", map[string]any{"username": p.Username, "place_id": p.PlaceID}, map[string]any{"label": p.Label, "saved_at": p.At})
		},
		Propose: func(d *Draw) (*PlaceSave, error) {
			user, err := webReady(d, "maps")
			if err != nil {
				return nil, err
			}
			row, err := webPickPrefer(d, `SELECT p.id FROM places p JOIN cities c ON c.id = p.city_id WHERE 1 %s ORDER BY p.id`, webInterest(d, "city", "c.name"), func(r []any) bool {
				return !webSeen(d, "maps", "saved_places", map[string]any{"username": user, "place_id": Int(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &PlaceSave{Username: user, PlaceID: Int(row[0]), Label: Pick(d, placeLabels), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *PlaceSave) []string {
			return c.Has("saved place "+fmt.Sprint(p.PlaceID), "maps", "saved_places", "username = ? AND place_id = ? AND label = ? AND saved_at = ?", p.Username, p.PlaceID, p.Label, p.At)
		},
	})
}

// ---------------------------------------------------------------- search

// SavedQuery is the parameters of search_save and calc_save: a query kept
// on the site.
type SavedQuery struct {
	Username string `json:"username"`
	Query    string `json:"query"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *SavedQuery) Check() error {
	return webFirst(webFields("username", p.Username, "query", p.Query), webLen("query", p.Query, 200), webAt(p.At))
}

// searchWords is a search typed from a page title: its first words,
// lowercased.
func searchWords(title string) string {
	words := strings.FieldsFunc(strings.ToLower(title), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	return strings.Join(words[:min(len(words), 4)], " ")
}

// savedQueries is the set of queries site's table holds in the ledger.
func savedQueries(st *State, site, table string) map[string]bool {
	out := map[string]bool{}
	for _, r := range webLedger(st, site, table) {
		out[r.Cols["query"]] = true
	}
	return out
}

func searchSave() Skill {
	return Make(Def[SavedQuery]{
		Doc: Doc{Name: "search_save", Summary: "Save a web search on the search engine (Seekr) to run again later.",
			Interfaces: []string{GUI}, Sites: []string{"search"},
			Changes: []string{"search.saved_searches, one row (username, query, saved_at)",
				"the unique index saved_searches_nk over those columns when the table has none yet (a delta writes rows by natural key)"},
			Constraints: []string{"the query is words of a real page of the other sites, so the search finds it", "at most 200 bytes", "a query is saved once"},
			Example:     rawJSON(SavedQuery{Username: "alex.rivera", Query: "korean onion with carrot", At: "2026-03-03 16:00:00"})},
		Emit: func(b *Builder, p *SavedQuery) error {
			if err := webEvent(b, "search", p.Username, p.At); err != nil {
				return err
			}
			return webLog(b, "search", "saved_searches", map[string]any{"username": p.Username, "query": p.Query, "saved_at": p.At}, nil)
		},
		Propose: func(d *Draw) (*SavedQuery, error) {
			user, err := webReady(d, "search")
			if err != nil {
				return nil, err
			}
			saved := savedQueries(d.State, "search", "saved_searches")
			row, err := webPick(d, `SELECT title FROM search_pages WHERE site IN ('recipes', 'archive', 'news', 'stays', 'courses', 'code', 'maps', 'devices') ORDER BY id`, func(r []any) bool {
				q := searchWords(Str(r[0]))
				return q != "" && !saved[q]
			})
			if err != nil {
				return nil, err
			}
			return &SavedQuery{Username: user, Query: searchWords(Str(row[0])), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *SavedQuery) []string {
			out := c.Has("saved search "+p.Query, "search", "saved_searches", "username = ? AND query = ? AND saved_at = ?", p.Username, p.Query, p.At)
			return append(out, webCatalogHas(c, "search results for "+p.Query, `SELECT 1 FROM search_fts WHERE search_fts MATCH ? LIMIT 1`, search.Match(p.Query))...)
		},
	})
}

// ---------------------------------------------------------------- calc

// calcQuery is a calculation drawn from catalog numbers: a device's price
// times a quantity, a recipe's minutes in hours, the days to a fixture,
// the weekday of a flight.
func calcQuery(d *Draw) (string, error) {
	switch d.Rand.IntN(4) {
	case 0:
		r, err := webPick(d, `SELECT price_cents FROM products WHERE site = 'devices' ORDER BY id`, nil)
		if err != nil {
			return "", err
		}
		c := Int(r[0])
		return fmt.Sprintf("%d.%02d * %d", c/100, c%100, 2+d.Rand.IntN(4)), nil
	case 1:
		r, err := webPick(d, `SELECT minutes FROM recipes ORDER BY id`, nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("%d min in h", Int(r[0])), nil
	case 2:
		r, err := webPick(d, `SELECT substr(starts_at, 1, 10) FROM fixtures ORDER BY id`, func(r []any) bool { return Str(r[0]) > d.Date() })
		if err != nil {
			return "", err
		}
		return fmt.Sprintf("days between %s and %s", d.Date(), Str(r[0])), nil
	}
	r, err := webPick(d, `SELECT substr(departs_at, 1, 10) FROM flights ORDER BY id`, func(r []any) bool { return Str(r[0]) > d.Date() })
	if err != nil {
		return "", err
	}
	return "weekday of " + Str(r[0]), nil
}

func calcSave() Skill {
	return Make(Def[SavedQuery]{
		Doc: Doc{Name: "calc_save", Summary: "Keep a calculation on the computational engine (Reckoner): arithmetic, a unit conversion or date arithmetic.",
			Interfaces: []string{GUI}, Sites: []string{"calc"},
			Changes: []string{"calc.saved, one row (username, query, saved_at)",
				"the unique index saved_nk over those columns when the table has none yet (a delta writes rows by natural key)"},
			Constraints: []string{"the engine answers the calculation", "its numbers come from catalog records (prices, recipe times, fixture and flight dates)", "at most 200 bytes"},
			Example:     rawJSON(SavedQuery{Username: "alex.rivera", Query: "45 min in h", At: "2026-03-03 16:30:00"})},
		Emit: func(b *Builder, p *SavedQuery) error {
			if err := webEvent(b, "calc", p.Username, p.At); err != nil {
				return err
			}
			if _, err := calc.Eval(p.Query); err != nil {
				return fmt.Errorf("field query %q: the engine cannot answer it: %w", p.Query, err)
			}
			return webLog(b, "calc", "saved", map[string]any{"username": p.Username, "query": p.Query, "saved_at": p.At}, nil)
		},
		Propose: func(d *Draw) (*SavedQuery, error) {
			user, err := webReady(d, "calc")
			if err != nil {
				return nil, err
			}
			saved := savedQueries(d.State, "calc", "saved")
			for range 8 {
				q, err := calcQuery(d)
				if errors.Is(err, ErrSkip) {
					continue
				}
				if err != nil {
					return nil, err
				}
				if _, err := calc.Eval(q); err == nil && !saved[q] {
					return &SavedQuery{Username: user, Query: q, At: d.Hour(8, 20)}, nil
				}
			}
			return nil, ErrSkip
		},
		Review: func(c *Check, p *SavedQuery) []string {
			return c.Has("kept calculation "+p.Query, "calc", "saved", "username = ? AND query = ? AND saved_at = ?", p.Username, p.Query, p.At)
		},
	})
}

// ---------------------------------------------------------------- devices

// DeviceOrder is device_order's parameters.
type DeviceOrder struct {
	OrderNo    string `json:"order_no"`
	Username   string `json:"username"`
	SKU        string `json:"sku"`
	Qty        int    `json:"qty"`
	PriceCents int64  `json:"price_cents"`
	At         string `json:"at"`
}

// Check implements Checker.
func (p *DeviceOrder) Check() error {
	return webFirst(webFields("order_no", p.OrderNo, "username", p.Username, "sku", p.SKU), webRange("qty", p.Qty, 1, 5),
		webPositive("price_cents", p.PriceCents), webAt(p.At))
}

func deviceOrder() Skill {
	return Make(Def[DeviceOrder]{
		Doc: Doc{Name: "device_order", Summary: "Buy a device on the device maker's store (Lumen Store); the order shows as placed on the orders page.",
			Interfaces: []string{GUI}, Sites: []string{"devices"},
			Changes:     []string{"devices.orders, one row (order_no, username, sku, qty, price_cents, status placed, placed_at)"},
			Constraints: []string{"the SKU is a catalog product of the devices site at its catalog price", "qty 1 to 5, as the form takes", "the order number is the site's own numbering, LO-100001 on (the ledger's counter)"},
			Example:     rawJSON(DeviceOrder{OrderNo: "LO-100001", Username: "alex.rivera", SKU: "LM-PH-001", Qty: 1, PriceCents: 79900, At: "2026-03-03 10:00:00"})},
		Emit: func(b *Builder, p *DeviceOrder) error {
			if err := webEvent(b, "devices", p.Username, p.At); err != nil {
				return err
			}
			if want := deviceOrderNo(b.State.Peek(seqDeviceOrder)); p.OrderNo != want {
				return fmt.Errorf("field order_no %q: the site numbers this order %s", p.OrderNo, want)
			}
			err := webInsert(b, "devices", "orders", map[string]any{"order_no": p.OrderNo}, map[string]any{
				"username": p.Username, "sku": p.SKU, "qty": p.Qty, "price_cents": p.PriceCents, "status": "placed", "placed_at": p.At})
			if err != nil {
				return err
			}
			b.State.Next(seqDeviceOrder)
			b.State.Orders = append(b.State.Orders, OrderRef{Site: "devices", No: p.OrderNo, SKU: p.SKU, Qty: p.Qty, Cents: int64(p.Qty) * p.PriceCents, Status: "placed", Day: b.Day})
			return nil
		},
		Propose: func(d *Draw) (*DeviceOrder, error) {
			user, err := webReady(d, "devices")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT sku, price_cents FROM products WHERE site = 'devices' ORDER BY id`, nil)
			if err != nil {
				return nil, err
			}
			return &DeviceOrder{OrderNo: deviceOrderNo(d.State.Peek(seqDeviceOrder)), Username: user, SKU: Str(row[0]), Qty: 1 + d.Rand.IntN(2),
				PriceCents: Int(row[1]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *DeviceOrder) []string {
			out := c.Has("order "+p.OrderNo, "devices", "orders", "order_no = ? AND username = ? AND sku = ? AND qty = ? AND price_cents = ? AND placed_at = ?",
				p.OrderNo, p.Username, p.SKU, p.Qty, p.PriceCents, p.At)
			return append(out, webCatalogHas(c, fmt.Sprintf("%s at %d cents", p.SKU, p.PriceCents), `SELECT 1 FROM products WHERE site = 'devices' AND sku = ? AND price_cents = ?`, p.SKU, p.PriceCents)...)
		},
	})
}

// DeviceWish is device_wishlist's parameters.
type DeviceWish struct {
	Username string `json:"username"`
	SKU      string `json:"sku"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *DeviceWish) Check() error {
	return webFirst(webFields("username", p.Username, "sku", p.SKU), webAt(p.At))
}

func deviceWishlist() Skill {
	return Make(Def[DeviceWish]{
		Doc: Doc{Name: "device_wishlist", Summary: "Put a device on the wish list of the device maker's store.",
			Interfaces: []string{GUI}, Sites: []string{"devices"},
			Changes:     []string{"devices.wishlist, one row (username, sku, added_at)"},
			Constraints: []string{"the SKU is a catalog product of the devices site", "a product is on the list once"},
			Example:     rawJSON(DeviceWish{Username: "alex.rivera", SKU: "LM-PH-001", At: "2026-03-03 21:10:00"})},
		Emit: func(b *Builder, p *DeviceWish) error {
			if err := webEvent(b, "devices", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "devices", "wishlist", map[string]any{"username": p.Username, "sku": p.SKU}, map[string]any{"added_at": p.At})
		},
		Propose: func(d *Draw) (*DeviceWish, error) {
			user, err := webReady(d, "devices")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT sku FROM products WHERE site = 'devices' ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "devices", "wishlist", map[string]any{"username": user, "sku": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &DeviceWish{Username: user, SKU: Str(row[0]), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *DeviceWish) []string {
			return c.Has("wish "+p.SKU, "devices", "wishlist", "username = ? AND sku = ? AND added_at = ?", p.Username, p.SKU, p.At)
		},
	})
}

// DeviceReturn is device_return's parameters.
type DeviceReturn struct {
	Username string `json:"username"`
	OrderNo  string `json:"order_no"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *DeviceReturn) Check() error {
	return webFirst(webFields("username", p.Username, "order_no", p.OrderNo), webAt(p.At))
}

func deviceReturn() Skill {
	return Make(Def[DeviceReturn]{
		Doc: Doc{Name: "device_return", Summary: "Return a device ordered on an earlier day from the device maker's store.",
			Interfaces: []string{GUI}, Sites: []string{"devices"},
			Changes:     []string{"devices.orders: the order's status becomes returned and returned_at is set, as the site's return action does"},
			Constraints: []string{"the order was placed on an earlier day and is placed or delivered, not returned (the site refuses a second return)", "returned_at is after placed_at"},
			Continues:   []string{"device_order"},
			Example:     rawJSON(DeviceReturn{Username: "alex.rivera", OrderNo: "LO-100001", At: "2026-03-06 12:00:00"})},
		Emit: func(b *Builder, p *DeviceReturn) error {
			if err := webEvent(b, "devices", p.Username, p.At); err != nil {
				return err
			}
			i := slices.IndexFunc(b.State.Orders, func(o OrderRef) bool { return o.Site == "devices" && o.No == p.OrderNo })
			if i < 0 {
				return fmt.Errorf("field order_no: no order %s on devices in the ledger (an earlier device_order)", p.OrderNo)
			}
			o := &b.State.Orders[i]
			switch {
			case o.Status != "placed" && o.Status != "delivered":
				return fmt.Errorf("field order_no: order %s is %s already", p.OrderNo, o.Status)
			case o.Day >= b.Day:
				return fmt.Errorf("field order_no: order %s was placed on day %d; a return comes on a later day", p.OrderNo, o.Day)
			}
			b.Op(delta.Op{Op: delta.OpDBUpdate, DB: "devices", Table: "orders", Key: map[string]delta.Value{"order_no": lit(p.OrderNo)},
				Set: map[string]delta.Value{"status": lit("returned"), "returned_at": lit(p.At)}})
			b.ProducesRow("devices", "orders", map[string]any{"order_no": p.OrderNo})
			o.Status = "returned"
			return nil
		},
		Propose: func(d *Draw) (*DeviceReturn, error) {
			user, err := webReady(d, "devices")
			if err != nil {
				return nil, err
			}
			var open []string
			for _, o := range d.State.Orders {
				if o.Site == "devices" && (o.Status == "placed" || o.Status == "delivered") && o.Day < d.Day {
					open = append(open, o.No)
				}
			}
			if len(open) == 0 {
				return nil, ErrSkip
			}
			return &DeviceReturn{Username: user, OrderNo: Pick(d, open), At: d.Hour(9, 20)}, nil
		},
		Review: func(c *Check, p *DeviceReturn) []string {
			return c.Has("return of "+p.OrderNo, "devices", "orders", "order_no = ? AND username = ? AND status = 'returned' AND returned_at = ? AND placed_at < ?", p.OrderNo, p.Username, p.At, p.At)
		},
	})
}

// ---------------------------------------------------------------- shop

// CartAdd is shop_cart_add's parameters.
type CartAdd struct {
	Username string `json:"username"`
	SKU      string `json:"sku"`
	Qty      int    `json:"qty"`
	At       string `json:"at"`
}

// Check implements Checker.
func (p *CartAdd) Check() error {
	return webFirst(webFields("username", p.Username, "sku", p.SKU), webRange("qty", p.Qty, 1, 99), webAt(p.At))
}

func shopCartAdd() Skill {
	return Make(Def[CartAdd]{
		Doc: Doc{Name: "shop_cart_add", Summary: "Put a product in the shop's cart without checking out yet; it shows on the cart page.",
			Interfaces: []string{GUI}, Sites: []string{"shop"},
			Changes:     []string{"shop.cart_items, one row (username, sku, qty, added_at)"},
			Constraints: []string{"the SKU is a catalog product of the shop", "qty 1 to 99, as the shop takes a line", "a product not in the cart yet (the shop would add to its line)"},
			Example:     rawJSON(CartAdd{Username: "alex.rivera", SKU: "XLR-25", Qty: 2, At: "2026-03-03 18:00:00"})},
		Emit: func(b *Builder, p *CartAdd) error {
			if err := webEvent(b, "shop", p.Username, p.At); err != nil {
				return err
			}
			return webInsert(b, "shop", "cart_items", map[string]any{"username": p.Username, "sku": p.SKU}, map[string]any{"qty": p.Qty, "added_at": p.At})
		},
		Propose: func(d *Draw) (*CartAdd, error) {
			user, err := webReady(d, "shop")
			if err != nil {
				return nil, err
			}
			row, err := webPick(d, `SELECT sku FROM products WHERE site = 'shop' ORDER BY id`, func(r []any) bool {
				return !webSeen(d, "shop", "cart_items", map[string]any{"username": user, "sku": Str(r[0])})
			})
			if err != nil {
				return nil, err
			}
			return &CartAdd{Username: user, SKU: Str(row[0]), Qty: 1 + d.Rand.IntN(3), At: d.Hour(8, 20)}, nil
		},
		Review: func(c *Check, p *CartAdd) []string {
			out := c.Has("cart line "+p.SKU, "shop", "cart_items", "username = ? AND sku = ? AND qty = ? AND added_at = ?", p.Username, p.SKU, p.Qty, p.At)
			return append(out, webCatalogHas(c, "shop product "+p.SKU, `SELECT 1 FROM products WHERE site = 'shop' AND sku = ?`, p.SKU)...)
		},
	})
}
