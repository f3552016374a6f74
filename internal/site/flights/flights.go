// Package flights is the flight site (GUI, a kit spec): a daily schedule
// over sixty days between forty-four airports; the persona reserves seats
// and cancels reservations.
//
// It imports internal/site/kit.
package flights

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/flights.sqlite).
const Name = "flights"

// Spec is the site.
func Spec() *kit.Spec {
	airports := `SELECT code FROM airports ORDER BY code`
	return &kit.Spec{
		Name: Name, Title: "Skyway", Tagline: "Every flight between forty-four airports, for the next sixty days.",
		Schema: []string{
			`CREATE TABLE reservations (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, username TEXT NOT NULL, flight_id INTEGER NOT NULL, passengers INTEGER NOT NULL, cabin TEXT NOT NULL, total_cents INTEGER NOT NULL, status TEXT NOT NULL, reserved_at TEXT NOT NULL)`,
		},
		Lists: []kit.List{{
			Name: "flights", Title: "Flights", Path: "/flights",
			Select: `SELECT f.id AS key, f.number AS title, f.origin, f.dest, substr(f.departs_at, 1, 10) AS day, f.departs_at, f.arrives_at, f.price_cents, f.seats
			         FROM flights f`,
			Search:  []string{"title"},
			Filters: []kit.Filter{{Name: "from", Label: "From", Column: "origin", OptionsSQL: airports}, {Name: "to", Label: "To", Column: "dest", OptionsSQL: airports}, {Name: "day", Label: "Date (YYYY-MM-DD)", Column: "day"}},
			Order:   "departs_at, key",
			Columns: []kit.Column{{Key: "title", Label: "Flight"}, {Key: "origin", Label: "From"}, {Key: "dest", Label: "To"}, {Key: "departs_at", Label: "Departs"}, {Key: "arrives_at", Label: "Arrives"}, {Key: "price_cents", Label: "Fare", Kind: "cents"}, {Key: "seats", Label: "Seats left"}},
			Detail: kit.Detail{
				SQL: `SELECT f.number AS title, o.name AS origin, d.name AS dest, f.departs_at, f.arrives_at, f.price_cents, f.seats
				      FROM flights f JOIN airports o ON o.code = f.origin JOIN airports d ON d.code = f.dest WHERE f.id = CAST(:key AS INTEGER)`,
				Fields: []kit.Column{{Key: "origin", Label: "From"}, {Key: "dest", Label: "To"}, {Key: "departs_at", Label: "Departs (UTC)"}, {Key: "arrives_at", Label: "Arrives (UTC)"}, {Key: "price_cents", Label: "Economy fare", Kind: "cents"}, {Key: "seats", Label: "Seats left"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "reserve", Label: "Reserve", On: "flights", Inputs: []kit.Input{
				{Name: "passengers", Label: "Passengers", Kind: "int", Min: 1, Max: 6, Default: "1"},
				{Name: "cabin", Label: "Cabin", Kind: "select", Options: []string{"economy", "premium", "business"}, Default: "economy"}},
				Check: `SELECT CASE WHEN seats < :passengers THEN 'only ' || seats || ' seats are left on ' || number END FROM cat.flights WHERE id = CAST(:key AS INTEGER)`,
				Exec: []string{`INSERT INTO reservations (code, username, flight_id, passengers, cabin, total_cents, status, reserved_at)
				  SELECT 'SW' || (700001 + coalesce((SELECT max(id) FROM reservations), 0)), :user, id, :passengers, :cabin,
				         price_cents * :passengers * CASE :cabin WHEN 'premium' THEN 16 WHEN 'business' THEN 30 ELSE 10 END / 10, 'confirmed', :now
				  FROM cat.flights WHERE id = CAST(:key AS INTEGER)`},
				Done: "Seats reserved.", Then: "/reservations"},
			{Name: "cancel", Label: "Cancel reservation", On: "reservations",
				Check: `SELECT 'reservation ' || :key || ' is ' || status || ' already' FROM reservations WHERE username = :user AND code = :key AND status <> 'confirmed'
				        UNION ALL SELECT 'no reservation ' || :key WHERE NOT EXISTS (SELECT 1 FROM reservations WHERE username = :user AND code = :key)`,
				Exec: []string{`UPDATE reservations SET status = 'cancelled' WHERE username = :user AND code = :key`},
				Done: "Reservation cancelled.", Then: "/reservations"},
		},
		Histories: []kit.History{{Name: "reservations", Title: "Reservations", Path: "/reservations", Link: "/flights/",
			SQL: `SELECT r.code AS key, r.flight_id AS link, f.number, r.code, f.origin, f.dest, f.departs_at, r.passengers, r.cabin, r.total_cents, r.status
			      FROM reservations r JOIN cat.flights f ON f.id = r.flight_id WHERE r.username = :user ORDER BY r.id DESC`,
			Columns: []kit.Column{{Key: "number", Label: "Flight"}, {Key: "code", Label: "Reservation"}, {Key: "origin", Label: "From"}, {Key: "dest", Label: "To"}, {Key: "departs_at", Label: "Departs"}, {Key: "passengers", Label: "Passengers"}, {Key: "cabin", Label: "Cabin"}, {Key: "total_cents", Label: "Total", Kind: "cents"}, {Key: "status", Label: "Status"}}}},
	}
}
