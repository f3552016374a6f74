// Package stays is the hotel site (GUI, a kit spec): hotels in forty-four
// cities with rooms and a price for every night; the persona books rooms
// and cancels bookings.
//
// It imports internal/site/kit.
package stays

import "github.com/wildawm/wildawm/internal/site/kit"

// Name is the site's name and world database (db/stays.sqlite).
const Name = "stays"

// Spec is the site.
func Spec() *kit.Spec {
	// A room option reads "ID Kind (up to N guests)"; CAST takes its id.
	rooms := `SELECT r.id || ' ' || r.kind || ' (up to ' || r.max_guests || ' guests)' FROM hotel_rooms r JOIN hotels h ON h.id = r.hotel_id WHERE h.slug = :key ORDER BY r.id`
	return &kit.Spec{
		Name: Name, Title: "Nightfall Stays", Tagline: "A thousand hotels, a price for every night.",
		Schema: []string{
			`CREATE TABLE bookings (id INTEGER PRIMARY KEY, code TEXT NOT NULL UNIQUE, username TEXT NOT NULL, hotel TEXT NOT NULL, room_id INTEGER NOT NULL, check_in TEXT NOT NULL, nights INTEGER NOT NULL, guests INTEGER NOT NULL, total_cents INTEGER NOT NULL, status TEXT NOT NULL, booked_at TEXT NOT NULL)`,
		},
		Lists: []kit.List{{
			Name: "hotels", Title: "Hotels", Path: "/hotels",
			Select:  `SELECT h.slug AS key, h.name AS title, c.name AS city, h.stars, h.rating_x10, h.from_cents FROM hotels h JOIN cities c ON c.id = h.city_id`,
			Search:  []string{"title", "city"},
			Filters: []kit.Filter{{Name: "city", Label: "City", Column: "city", OptionsSQL: `SELECT name FROM cities ORDER BY name`}, {Name: "stars", Label: "At least stars", Column: "stars", Op: ">=", Number: true}},
			Order:   "rating_x10 DESC, key",
			Columns: []kit.Column{{Key: "title", Label: "Hotel"}, {Key: "city", Label: "City"}, {Key: "stars", Label: "Stars"}, {Key: "rating_x10", Label: "Guest rating", Kind: "rating10"}, {Key: "from_cents", Label: "From a night", Kind: "cents"}},
			Detail: kit.Detail{
				SQL:    `SELECT h.name AS title, c.name AS city, h.stars, h.address, h.rating_x10, h.image, h.summary FROM hotels h JOIN cities c ON c.id = h.city_id WHERE h.slug = :key`,
				Image:  "image",
				Fields: []kit.Column{{Key: "city", Label: "City"}, {Key: "address", Label: "Address"}, {Key: "stars", Label: "Stars"}, {Key: "rating_x10", Label: "Guest rating", Kind: "rating10"}, {Key: "summary", Label: "About", Kind: "long"}},
				Sections: []kit.Section{{Title: "Rooms and prices for the first week",
					SQL: `SELECT r.id || ' ' || r.kind AS room, r.beds, r.max_guests, rr.night, rr.price_cents, rr.available
					      FROM hotel_rooms r JOIN hotels h ON h.id = r.hotel_id JOIN room_rates rr ON rr.room_id = r.id
					      WHERE h.slug = :key AND rr.night < '2026-03-08' ORDER BY r.id, rr.night`,
					Columns: []kit.Column{{Key: "room", Label: "Room"}, {Key: "beds", Label: "Beds"}, {Key: "max_guests", Label: "Guests"}, {Key: "night", Label: "Night"}, {Key: "price_cents", Label: "Price", Kind: "cents"}, {Key: "available", Label: "Rooms left"}}}},
			},
		}},
		Actions: []kit.Action{
			{Name: "book", Label: "Book", On: "hotels", Inputs: []kit.Input{
				{Name: "room", Label: "Room", Kind: "select", OptionsSQL: rooms},
				{Name: "check_in", Label: "Check-in", Kind: "date", Default: "2026-03-10"},
				{Name: "nights", Label: "Nights", Kind: "int", Min: 1, Max: 14, Default: "2"},
				{Name: "guests", Label: "Guests", Kind: "int", Min: 1, Max: 6, Default: "1"}},
				Check: `SELECT CASE
				  WHEN :check_in < date(:now) THEN 'check-in ' || :check_in || ' is in the past; today is ' || date(:now)
				  WHEN EXISTS (SELECT 1 FROM bookings b WHERE b.username = :user AND b.room_id = r.id AND b.status = 'confirmed'
				                 AND b.check_in < date(:check_in, '+' || :nights || ' days') AND date(b.check_in, '+' || b.nights || ' days') > :check_in)
				    THEN 'you have booked the ' || r.kind || ' for some of those nights already'
				  WHEN :guests > r.max_guests THEN 'the ' || r.kind || ' takes at most ' || r.max_guests || ' guests'
				  WHEN (SELECT count(*) FROM cat.room_rates WHERE room_id = r.id AND night >= :check_in AND night < date(:check_in, '+' || :nights || ' days') AND available > 0) < :nights
				    THEN 'the ' || r.kind || ' is not free every night from ' || :check_in || ' for ' || :nights || ' nights; prices and rooms are listed for the nights of 2026-03-01 to 2026-04-29'
				  END FROM cat.hotel_rooms r WHERE r.id = CAST(:room AS INTEGER)`,
				Exec: []string{`INSERT INTO bookings (code, username, hotel, room_id, check_in, nights, guests, total_cents, status, booked_at)
				  SELECT 'NS-' || (500001 + coalesce((SELECT max(id) FROM bookings), 0)), :user, :key, CAST(:room AS INTEGER), :check_in, :nights, :guests,
				         (SELECT sum(price_cents) FROM cat.room_rates WHERE room_id = CAST(:room AS INTEGER) AND night >= :check_in AND night < date(:check_in, '+' || :nights || ' days')), 'confirmed', :now`},
				Done: "Booking confirmed.", Then: "/bookings"},
			{Name: "cancel", Label: "Cancel booking", On: "bookings",
				Check: `SELECT 'booking ' || :key || ' is ' || status || ' already' FROM bookings WHERE username = :user AND code = :key AND status <> 'confirmed'
				        UNION ALL SELECT 'no booking ' || :key WHERE NOT EXISTS (SELECT 1 FROM bookings WHERE username = :user AND code = :key)`,
				Exec: []string{`UPDATE bookings SET status = 'cancelled' WHERE username = :user AND code = :key`},
				Done: "Booking cancelled.", Then: "/bookings"},
		},
		Histories: []kit.History{{Name: "bookings", Title: "Bookings", Path: "/bookings", Link: "/hotels/",
			SQL: `SELECT b.code AS key, b.hotel AS link, h.name, b.code, r.kind, b.check_in, b.nights, b.guests, b.total_cents, b.status
			      FROM bookings b JOIN cat.hotels h ON h.slug = b.hotel JOIN cat.hotel_rooms r ON r.id = b.room_id WHERE b.username = :user ORDER BY b.id DESC`,
			Columns: []kit.Column{{Key: "name", Label: "Hotel"}, {Key: "code", Label: "Booking"}, {Key: "kind", Label: "Room"}, {Key: "check_in", Label: "Check-in"}, {Key: "nights", Label: "Nights"}, {Key: "guests", Label: "Guests"}, {Key: "total_cents", Label: "Total", Kind: "cents"}, {Key: "status", Label: "Status"}}}},
	}
}
