package synth

import (
	"fmt"

	"github.com/wildawm/wildawm/internal/skill"
)

// WebPicks are the catalog records of the case study persona's web
// history, chosen from the built catalog (Run.CaseStudy).
type WebPicks struct {
	RecipeSlug string // saved on day 1
	HotelSlug  string // a room booked on day 2 for the install nights
	RoomID     int64
	CheckIn    string // YYYY-MM-DD, within the catalog's rates
	Nights     int
	TotalCents int64 // the rates of those nights, summed
	PlaceID    int64 // saved on day 3: the venue
}

// AddWebHistory adds the persona's use of three more sites to the plan:
// day 0 provisions recipes, stays and maps and creates the accounts; day
// 1 saves a recipe, day 2 books a hotel room for the install, day 3 saves
// the venue on the map. The rows are what the sites' own forms write.
func AddWebHistory(days []Day, p Persona, w WebPicks) ([]Day, error) {
	if len(days) < 4 {
		return nil, fmt.Errorf("synth: AddWebHistory needs days 0 to 3, the plan has %d days", len(days))
	}
	user := ""
	for _, a := range p.Accounts {
		if a.Site == "stays" {
			user = a.Username
		}
	}
	if user == "" {
		return nil, fmt.Errorf("synth: persona %s has no stays account", p.ID)
	}
	for _, s := range []string{"recipes", "stays", "maps"} {
		days[0].Events = append(days[0].Events, e("provision_service", skill.Provision{DB: s}), e("create_web_account", skill.WebAccount{Site: s}))
	}
	days[1].Events = append(days[1].Events, e("site_history", skill.WebRow{Site: "recipes", Table: "saved_recipes",
		Key:    map[string]any{"username": user, "slug": w.RecipeSlug},
		Values: map[string]any{"note": "for the crew dinner after the install", "saved_at": at(1, "20:15")}}))
	days[2].Events = append(days[2].Events, e("site_history", skill.WebRow{Site: "stays", Table: "bookings",
		Key: map[string]any{"code": "NS-500001"},
		Values: map[string]any{"username": user, "hotel": w.HotelSlug, "room_id": w.RoomID, "check_in": w.CheckIn, "nights": w.Nights,
			"guests": 1, "total_cents": w.TotalCents, "status": "confirmed", "booked_at": at(2, "13:40")}}))
	days[3].Events = append(days[3].Events, e("site_history", skill.WebRow{Site: "maps", Table: "saved_places",
		Key:    map[string]any{"username": user, "place_id": w.PlaceID},
		Values: map[string]any{"label": "work", "saved_at": at(3, "08:05")}}))
	return days, nil
}
