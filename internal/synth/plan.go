package synth

import (
	"fmt"
	"slices"

	"github.com/wildawm/wildawm/internal/skill"
)

// BOM requirements of the venue rack (stated in the bill of materials).
const (
	MinJoules   = 2000
	MinOutlets  = 8
	RackUnits   = 1
	ApprovedQty = 2
)

// Paths in the persona's home the case study uses.
const (
	PathInventory = "inventory/stock.csv"
	PathBOM       = "projects/venue-rack/bom.md"
	PathSpecSheet = "projects/venue-rack/surge-spec-sheet.pdf"
	PathShortlist = "projects/venue-rack/shortlist.csv"
	PathRestock   = "projects/venue-rack/restock.md"
	ThreadMaya    = "dm-maya-okafor"
	ThreadPriya   = "dm-priya-mehta"
	ThreadJonas   = "dm-jonas-lindqvist"
)

// Eligible reports whether a model meets the BOM's requirements.
func Eligible(r SpecRow) bool {
	return r.RackUnits == RackUnits && r.Outlets >= MinOutlets && r.Joules >= MinJoules
}

// Rank orders rows as the task asks: joules high to low, then price low to
// high, then SKU.
func Rank(rows []SpecRow) []SpecRow {
	out := slices.Clone(rows)
	slices.SortStableFunc(out, func(a, b SpecRow) int {
		switch {
		case a.Joules != b.Joules:
			return b.Joules - a.Joules
		case a.PriceCents != b.PriceCents:
			return a.PriceCents - b.PriceCents
		case a.SKU < b.SKU:
			return -1
		case a.SKU > b.SKU:
			return 1
		}
		return 0
	})
	return out
}

// Stocked returns the eligible models the persona already stocks: the best
// eligible model other than the two look-alike candidates, so that the
// shortlist, which leaves stocked models out, needs the inventory too.
func Stocked(rows []SpecRow, candidates [2]string) []SpecRow {
	for _, r := range Rank(rows) {
		if Eligible(r) && r.SKU != candidates[0] && r.SKU != candidates[1] {
			return []SpecRow{r}
		}
	}
	return nil
}

// Shortlist is the expected shortlist: eligible, not stocked, ranked.
func Shortlist(rows []SpecRow, stocked []SpecRow) []SpecRow {
	var out []SpecRow
	for _, r := range Rank(rows) {
		if Eligible(r) && !slices.ContainsFunc(stocked, func(s SpecRow) bool { return s.SKU == r.SKU }) {
			out = append(out, r)
		}
	}
	return out
}

func clock(day int) string           { return skill.Clock(day) }
func at(day int, hhmm string) string { return skill.At(day, hhmm) }

// CaseStudyPlan is the case study's days 0..4. rows are the catalog's
// surge protectors (the spec sheet's content); candidates are the two
// look-alike models, the approved one first.
func CaseStudyPlan(p Persona, rows []SpecRow, candidates [2]string, filler OrderItem) []Day {
	maya, priya, jonas := p.Contact("venue manager"), p.Contact("install assistant"), p.Contact("equipment supplier")
	inv := [][]any{
		{"XLR-25", "XLR cable 25 ft", 14, "van bin A"},
		{"DI-2CH", "2-channel DI box", 3, "van bin B"},
		{"LED-PAR7", "LED PAR light", 8, "storage"},
	}
	for _, s := range Stocked(rows, candidates) {
		inv = append(inv, []any{s.SKU, s.Title, 1, "storage (spare for another venue)"})
	}
	days := []Day{
		{Day: 0, Clock: clock(0), Events: []Event{
			e("provision_service", skill.Provision{DB: "shop"}),
			e("provision_service", skill.Provision{DB: "messages"}),
			e("provision_service", skill.Provision{DB: "mail"}),
			e("provision_service", skill.Provision{DB: "calendar"}),
			e("provision_service", skill.Provision{DB: "contacts"}),
			e("provision_service", skill.Provision{DB: "notes"}),
			e("provision_service", skill.Provision{DB: "tasks"}),
			e("provision_service", skill.Provision{DB: "payments"}),
			e("provision_service", skill.Provision{DB: "support"}),
			e("create_web_account", skill.WebAccount{Site: "shop"}),
			e("update_inventory", skill.Inventory{Path: PathInventory, Rows: inv}),
			e("shop_purchase", skill.Purchase{OrderNo: "SO-10412", Username: p.Accounts[0].Username, At: at(0, "10:12"), Items: []OrderItem{filler}}),
			e("dm_conversation", skill.Conversation{Thread: ThreadPriya, Title: priya.Name, With: []string{priya.Name}, Messages: []Msg{
				{From: priya.Name, Body: "Hi Alex, I'm free to help with the venue rack install next week.", At: at(0, "09:05"), Read: true},
				{From: p.Name, Body: "Great, thanks Priya. I'll send you the parts list once it's settled.", At: at(0, "09:20")},
			}}),
		}},
		{Day: 1, Clock: clock(1), Events: []Event{
			e("dm_conversation", skill.Conversation{Thread: ThreadMaya, Title: maya.Name, With: []string{maya.Name}, Messages: []Msg{
				{From: maya.Name, Body: "Can you put together what the new equipment rack needs? Power protection is the priority.", At: at(1, "11:00"), Read: true},
				{From: p.Name, Body: "Will do. I'll draft a bill of materials and get you options for sign-off.", At: at(1, "11:30")},
			}}),
			e("draft_bom", skill.Document{Path: PathBOM, Title: "Venue rack: bill of materials", Sections: []skill.Section{
				{Heading: "Power protection", Paragraphs: []string{"One model of rack-mount surge protector for the main rack, quantity to be confirmed by Maya."},
					Bullets: []string{
						fmt.Sprintf("Form factor: %dU rack mount", RackUnits),
						fmt.Sprintf("Outlets: at least %d", MinOutlets),
						fmt.Sprintf("Surge rating: at least %d joules", MinJoules),
						"Prefer the highest joule rating; among equals the lower price.",
					}},
				{Heading: "Cabling", Bullets: []string{"XLR cables: in stock", "DI boxes: in stock"}},
			}}),
		}},
		{Day: 2, Clock: clock(2), Events: []Event{
			e("dm_conversation", skill.Conversation{Thread: ThreadJonas, Title: jonas.Name, With: []string{jonas.Name}, Messages: []Msg{
				{From: jonas.Name, Body: "Here's our current surge protector line-up as a PDF spec sheet, prices as of this week.", At: at(2, "08:40"), Read: true},
				{From: p.Name, Body: "Thanks Jonas, saved it with the rack project.", At: at(2, "09:02")},
			}}),
			e("save_spec_sheet", skill.SpecSheet{Path: PathSpecSheet, Title: "Surge protection line-up", Author: jonas.Name, Date: clock(2),
				Intro: "Rack-mount and strip surge protectors. All prices in USD, per unit.", Rows: rows}),
			e("update_inventory", skill.Inventory{Path: PathInventory, Append: true, Rows: [][]any{{"SPK-STD", "speaker stand", 4, "storage"}}}),
		}},
		{Day: 3, Clock: clock(3), Events: []Event{
			e("dm_conversation", skill.Conversation{Thread: ThreadMaya, Messages: []Msg{
				{From: p.Name, Body: "Sent over the rack protector options from the spec sheet. Two top models have identical specs and price.", At: at(3, "10:00")},
				{From: maya.Name, Body: fmt.Sprintf("Approved: order %d of the 1U rack protector that has the white body and the digital display panel, it has to match the white front of the new rack. Either of the top two is fine spec-wise, but it must be the white one with the display.", ApprovedQty), At: at(3, "16:45")},
			}}),
		}},
		{Day: 4, Clock: clock(4), Events: []Event{
			e("dm_conversation", skill.Conversation{Thread: ThreadPriya, Messages: []Msg{
				{From: priya.Name, Body: "Any news on the rack surge protectors? Send me the SKU once they're ordered so I can prep the mounting hardware.", At: at(4, "09:30")},
			}}),
			e("write_note", skill.Note{Path: "notes/todo.md", Title: "To do", Body: "Order the venue rack surge protection (see Maya's approval), note the restock, tell Priya the SKU."}),
		}},
	}
	for day, evs := range caseStudyServiceEvents(p, filler) {
		days[day].Events = append(days[day].Events, evs...)
	}
	return days
}
