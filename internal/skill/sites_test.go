package skill_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// formAction is the kit site action a site skill's event stands for, with
// the form's inputs.
type formAction struct {
	site, action, key string
	in                map[string]string
	now               string
}

// formOf maps an event of a site skill to the site's own action; catalog
// answers the form options (a room's or an assignment's option text).
func formOf(t *testing.T, cat *skill.Catalog, ev skill.Event) (formAction, bool) {
	t.Helper()
	dec := func(v any) {
		if err := json.Unmarshal(ev.Params, v); err != nil {
			t.Fatalf("%s %s: %v", ev.Skill, ev.Params, err)
		}
	}
	option := func(query string, args ...any) string {
		rows, err := cat.Query(query, args...)
		if err != nil || len(rows) != 1 {
			t.Fatalf("%s: option: %v (%d rows)", ev.Skill, err, len(rows))
		}
		return skill.Str(rows[0][0])
	}
	switch ev.Skill {
	case "recipe_save":
		var p skill.RecipeSave
		dec(&p)
		return formAction{"recipes", "save", p.Slug, map[string]string{"note": p.Note}, p.At}, true
	case "recipe_review":
		var p skill.RecipeReview
		dec(&p)
		return formAction{"recipes", "review", p.Slug, map[string]string{"rating": fmt.Sprint(p.Rating), "body": p.Body}, p.At}, true
	case "paper_save":
		var p skill.PaperSave
		dec(&p)
		return formAction{"archive", "shelve", p.Paper, map[string]string{"shelf": p.Shelf}, p.At}, true
	case "news_bookmark":
		var p skill.NewsBookmark
		dec(&p)
		return formAction{"news", "bookmark", p.Article, nil, p.At}, true
	case "news_follow_section":
		var p skill.NewsFollow
		dec(&p)
		return formAction{"news", "follow", "", map[string]string{"section": p.Section}, p.At}, true
	case "word_save":
		var p skill.WordSave
		dec(&p)
		return formAction{"dictionary", "learn", p.Headword, map[string]string{"note": p.Note}, p.At}, true
	case "hotel_book":
		var p skill.HotelBooking
		dec(&p)
		room := option(`SELECT id || ' ' || kind || ' (up to ' || max_guests || ' guests)' FROM hotel_rooms WHERE id = ?`, p.RoomID)
		return formAction{"stays", "book", p.Hotel, map[string]string{"room": room, "check_in": p.CheckIn, "nights": fmt.Sprint(p.Nights), "guests": fmt.Sprint(p.Guests)}, p.At}, true
	case "flight_reserve":
		var p skill.FlightReservation
		dec(&p)
		return formAction{"flights", "reserve", fmt.Sprint(p.FlightID), map[string]string{"passengers": fmt.Sprint(p.Passengers), "cabin": p.Cabin}, p.At}, true
	case "course_enroll":
		var p skill.CourseEnroll
		dec(&p)
		return formAction{"courses", "enroll", p.Course, nil, p.At}, true
	case "course_submit":
		var p skill.CourseSubmit
		dec(&p)
		a := option(`SELECT id || ' ' || title || ' (' || kind || ')' FROM course_assignments WHERE id = ?`, p.AssignmentID)
		return formAction{"courses", "submit", p.Course, map[string]string{"assignment": a, "answer": p.Answer}, p.At}, true
	case "team_follow":
		var p skill.TeamFollow
		dec(&p)
		return formAction{"sports", "follow", p.Team, nil, p.At}, true
	case "repo_star":
		var p skill.RepoStar
		dec(&p)
		return formAction{"code", "star", fmt.Sprint(p.RepoID), nil, p.At}, true
	case "repo_issue":
		var p skill.RepoIssue
		dec(&p)
		return formAction{"code", "open-issue", fmt.Sprint(p.RepoID), map[string]string{"title": p.Title, "body": p.Body}, p.At}, true
	case "repo_create":
		var p skill.RepoCreate
		dec(&p)
		return formAction{"code", "new-repo", "", map[string]string{"name": p.Name, "description": p.Description, "language": p.Language, "visibility": p.Visibility}, p.At}, true
	case "model_like":
		var p skill.ModelLike
		dec(&p)
		return formAction{"models", "like", fmt.Sprint(p.ModelID), nil, p.At}, true
	case "dataset_collect":
		var p skill.DatasetCollect
		dec(&p)
		return formAction{"models", "collect", fmt.Sprint(p.DatasetID), map[string]string{"note": p.Note}, p.At}, true
	case "place_save":
		var p skill.PlaceSave
		dec(&p)
		return formAction{"maps", "save", fmt.Sprint(p.PlaceID), map[string]string{"label": p.Label}, p.At}, true
	case "search_save":
		var p skill.SavedQuery
		dec(&p)
		return formAction{"search", "save-search", "", map[string]string{"query": p.Query}, p.At}, true
	case "calc_save":
		var p skill.SavedQuery
		dec(&p)
		return formAction{"calc", "keep", "", map[string]string{"query": p.Query}, p.At}, true
	case "device_order":
		var p skill.DeviceOrder
		dec(&p)
		return formAction{"devices", "buy", p.SKU, map[string]string{"qty": fmt.Sprint(p.Qty)}, p.At}, true
	case "device_wishlist":
		var p skill.DeviceWish
		dec(&p)
		return formAction{"devices", "wish", p.SKU, nil, p.At}, true
	case "device_return":
		var p skill.DeviceReturn
		dec(&p)
		return formAction{"devices", "return", p.OrderNo, nil, p.At}, true
	}
	return formAction{}, false
}

// TestSiteSkillsWriteWhatTheFormsWrite: two days of every kit site skill,
// synthesized as deltas, leave the sites' tables holding exactly the rows
// the sites' own actions (kit.Site.Do) write for the same choices at the
// same times, column for column (ids aside), derived codes included.
func TestSiteSkillsWriteWhatTheFormsWrite(t *testing.T) {
	ctx := context.Background()
	catDir, cat := testCatalog(t)
	lib := skill.All()
	p := skill.TestPersona()
	opts := &delta.Options{Generators: generator.Default()}
	root := t.TempDir()

	// The synthesized world: day 0 bootstrap, then two days of the skills
	// in an order where continuations follow what they continue.
	names := []string{"recipe_save", "recipe_review", "paper_save", "news_bookmark", "news_follow_section", "word_save",
		"hotel_book", "flight_reserve", "course_enroll", "course_submit", "team_follow", "repo_star", "repo_issue", "repo_create",
		"model_like", "dataset_collect", "place_save", "search_save", "calc_save", "device_order", "device_wishlist", "device_return"}
	b := skill.NewBuilder(p)
	b.Begin(0, skill.Clock(0))
	for _, ev := range skill.Bootstrap(p) {
		sk, err := lib.Lookup(ev.Skill)
		if err != nil {
			t.Fatal(err)
		}
		if err := sk.Emit(b, ev.Params); err != nil {
			t.Fatalf("bootstrap %s: %v", ev.Skill, err)
		}
	}
	parent := filepath.Join(root, "day-00")
	if err := delta.ApplyCopy(ctx, "", parent, b.Delta(), opts); err != nil {
		t.Fatal(err)
	}
	var events []skill.Event
	for day := 1; day <= 2; day++ {
		b.Begin(day, skill.Clock(day))
		for i, name := range names {
			sk, err := lib.Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			d := &skill.Draw{Persona: p, Day: day, Rand: rand.New(rand.NewPCG(uint64(i), uint64(day))), Catalog: cat, State: b.State}
			params, err := sk.Propose(d)
			if errors.Is(err, skill.ErrSkip) {
				if day == 1 && slices.Contains([]string{"recipe_review", "course_submit", "device_return"}, name) {
					continue // nothing of an earlier day to continue yet
				}
				t.Fatalf("day %d: %s proposes nothing", day, name)
			}
			if err != nil {
				t.Fatal(err)
			}
			if err := sk.Emit(b, params); err != nil {
				t.Fatalf("day %d: %s %s: %v", day, name, params, err)
			}
			events = append(events, skill.Event{Skill: name, Params: params})
		}
		dst := filepath.Join(root, fmt.Sprintf("day-%02d", day))
		if err := delta.Lint(ctx, parent, b.Delta(), opts); err != nil {
			t.Fatalf("day %d: lint: %v", day, err)
		}
		if err := delta.ApplyCopy(ctx, parent, dst, b.Delta(), opts); err != nil {
			t.Fatalf("day %d: apply: %v", day, err)
		}
		parent = dst
	}

	// The same choices through the sites' own actions, over a world with
	// the sites' schemas.
	var specs []*kit.Spec
	for _, s := range site.All() {
		if sp, ok := site.Kit(s.Name); ok {
			specs = append(specs, sp)
		}
	}
	formWorld := kit.MakeTestWorld(t, filepath.Join(root, "forms"), specs...)
	sites := map[string]*kit.Site{}
	for _, sp := range specs {
		s, err := kit.New(sp, kit.Options{WorldDir: formWorld, CatalogDir: catDir})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sites[sp.Name] = s
	}
	user := "sam.tester"
	tables := map[string]bool{}
	for _, ev := range events {
		a, ok := formOf(t, cat, ev)
		if !ok {
			t.Fatalf("no form for %s", ev.Skill)
		}
		if err := sites[a.site].Do(ctx, a.action, user, a.key, a.in, a.now); err != nil {
			t.Fatalf("%s: %s %s: %v", ev.Skill, a.site, a.action, err)
		}
		tables[a.site] = true
	}

	// Every table of those sites, row for row.
	compared := 0
	for _, sp := range specs {
		if !tables[sp.Name] {
			continue
		}
		synth := dump(t, world.DBPath(parent, sp.Name))
		forms := dump(t, world.DBPath(formWorld, sp.Name))
		for _, table := range slices.Sorted(maps.Keys(forms)) {
			if len(forms[table]) == 0 {
				continue
			}
			compared++
			if got, want := strings.Join(synth[table], "\n"), strings.Join(forms[table], "\n"); got != want {
				t.Errorf("%s.%s:\nthe skills write\n%s\nthe forms write\n%s", sp.Name, table, got, want)
			}
		}
	}
	if compared < 20 {
		t.Errorf("compared %d tables with rows, want at least 20", compared)
	}

	// And the same schema, indexes included: a natural key synthesis adds
	// that the site's Schema lacks would let the kit suite pass over a
	// world the site then answers 500 on (the calc site's saved_nk).
	for _, sp := range specs {
		if !tables[sp.Name] {
			continue
		}
		if got, want := schemaOf(t, world.DBPath(parent, sp.Name)), schemaOf(t, world.DBPath(formWorld, sp.Name)); got != want {
			t.Errorf("%s: synthesis gives the schema\n%s\nthe site's Schema is\n%s\ndeclare the natural key in the spec's Schema (kit.NaturalKeyIndex)", sp.Name, got, want)
		}
	}
}

// schemaOf lists the tables and indexes of the database at path, with
// their SQL.
func schemaOf(t *testing.T, path string) string {
	t.Helper()
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rs, err := db.Query(`SELECT type, name, coalesce(sql, '') FROM sqlite_schema WHERE type IN ('table', 'index') ORDER BY type, name`)
	if err != nil {
		t.Fatal(err)
	}
	defer rs.Close()
	var b strings.Builder
	for rs.Next() {
		var typ, name, sql string
		if err := rs.Scan(&typ, &name, &sql); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s %s: %s\n", typ, name, sql)
	}
	return b.String()
}

// dump returns every table of the database at path: its rows in id
// order, each as text without the id.
func dump(t *testing.T, path string) map[string][]string {
	t.Helper()
	db, err := state.OpenDB(path, true)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	tabs, err := state.Tables(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, tb := range tabs {
		rs, err := db.QueryContext(ctx, fmt.Sprintf("SELECT * FROM %q ORDER BY id", tb.Name))
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		for rs.Next() {
			vals := make([]any, len(cols))
			ptrs := make([]any, len(cols))
			for i := range vals {
				ptrs[i] = &vals[i]
			}
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			var cells []string
			for i, c := range cols {
				if c == "id" {
					continue
				}
				v := vals[i]
				if b, ok := v.([]byte); ok {
					v = string(b)
				}
				cells = append(cells, fmt.Sprintf("%s=%v", c, v))
			}
			out[tb.Name] = append(out[tb.Name], strings.Join(cells, " "))
		}
		if err := rs.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}
