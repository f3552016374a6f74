package site_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/maps"
	"github.com/wildawm/wildawm/internal/site/recipes"
	"github.com/wildawm/wildawm/internal/site/stays"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/world"
)

// TestSynthesizedHistoryIsWhatTheFormsWrite: the rows the world
// synthesizer writes for the case study persona (synth.AddWebHistory, as
// delta ops) are the rows the sites' own actions write for the same
// choices at the same times (kit.Site.Do), column for column.
func TestSynthesizedHistoryIsWhatTheFormsWrite(t *testing.T) {
	ctx := context.Background()
	cat := builtCatalog(t)
	persona := synth.CaseStudyPersona()
	user := persona.Accounts[0].Username
	specs := map[string]*kit.Spec{recipes.Name: recipes.Spec(), stays.Name: stays.Spec(), maps.Name: maps.Spec()}
	w := kit.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), specs[recipes.Name], specs[stays.Name], specs[maps.Name])
	sites := map[string]*kit.Site{}
	for name, sp := range specs {
		s, err := kit.New(sp, kit.Options{WorldDir: w, CatalogDir: cat})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sites[name] = s
	}
	db, err := sites[stays.Name].Catalog()
	if err != nil {
		t.Fatal(err)
	}
	picks := synth.WebPicks{CheckIn: "2026-03-09", Nights: 2}
	var roomOption string
	if err := db.QueryRow(`SELECT slug FROM recipes WHERE cuisine = 'Italian' ORDER BY rating_x10 DESC, id LIMIT 1`).Scan(&picks.RecipeSlug); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT h.slug, r.id, r.id || ' ' || r.kind || ' (up to ' || r.max_guests || ' guests)', sum(rr.price_cents) FROM hotels h JOIN hotel_rooms r ON r.hotel_id = h.id
		JOIN room_rates rr ON rr.room_id = r.id AND rr.night >= '2026-03-09' AND rr.night < '2026-03-11'
		GROUP BY r.id HAVING count(*) = 2 AND min(rr.available) > 0 ORDER BY h.rating_x10 DESC, r.id LIMIT 1`).Scan(&picks.HotelSlug, &picks.RoomID, &roomOption, &picks.TotalCents); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT id FROM places WHERE kind = 'cinema' ORDER BY id LIMIT 1`).Scan(&picks.PlaceID); err != nil {
		t.Fatal(err)
	}
	days := make([]synth.Day, 4)
	days, err = synth.AddWebHistory(days, persona, picks)
	if err != nil {
		t.Fatal(err)
	}
	// The same choices through the sites' actions, at the events' times.
	type act struct {
		site, action, key string
		in                map[string]string
	}
	acts := map[string]act{
		"saved_recipes": {recipes.Name, "save", picks.RecipeSlug, map[string]string{"note": "for the crew dinner after the install"}},
		"bookings":      {stays.Name, "book", picks.HotelSlug, map[string]string{"room": roomOption, "check_in": picks.CheckIn, "nights": fmt.Sprint(picks.Nights), "guests": "1"}},
		"saved_places":  {maps.Name, "save", fmt.Sprint(picks.PlaceID), map[string]string{"label": "work"}},
	}
	checked := 0
	for _, d := range days {
		for _, e := range d.Events {
			if e.Skill != "site_history" {
				continue
			}
			var row skill.WebRow
			if err := json.Unmarshal(e.Params, &row); err != nil {
				t.Fatal(err)
			}
			table := row.Table
			a, ok := acts[table]
			if !ok {
				t.Fatalf("an event writes %s, which the test does not know", table)
			}
			cols := map[string]any{}
			for _, m := range []map[string]any{row.Key, row.Values} {
				for k, v := range m {
					cols[k] = v
				}
			}
			now, _ := cols[map[string]string{"saved_recipes": "saved_at", "bookings": "booked_at", "saved_places": "saved_at"}[table]].(string)
			if err := sites[a.site].Do(ctx, a.action, user, a.key, a.in, now); err != nil {
				t.Fatalf("%s %s: %v", a.site, a.action, err)
			}
			wdb, err := state.OpenDB(world.DBPath(w, a.site), true)
			if err != nil {
				t.Fatal(err)
			}
			for col, want := range cols {
				var got any
				if err := wdb.QueryRow(fmt.Sprintf(`SELECT %s FROM %s WHERE username = ?`, col, table), user).Scan(&got); err != nil && err != sql.ErrNoRows {
					t.Fatal(err)
				}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s.%s: the form writes %v, the synthesizer %v", table, col, got, want)
				}
			}
			wdb.Close()
			checked++
		}
	}
	if checked != 3 {
		t.Errorf("%d site_history events, want 3", checked)
	}
}
