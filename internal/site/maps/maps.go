// Package maps is the maps site (GUI, a kit spec): places with addresses
// and coordinates in forty-four cities, and the distance between any two;
// the persona saves places under a label.
//
// It imports internal/catalog, internal/site/kit and internal/site/web.
package maps

import (
	"bytes"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"strconv"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/web"
)

// Name is the site's name and world database (db/maps.sqlite).
const Name = "maps"

// Travel speeds of the distance page's estimates, in km/h.
const (
	WalkKmh  = 5
	DriveKmh = 40 // in town
)

// Spec is the site.
func Spec() *kit.Spec {
	return &kit.Spec{
		Name: Name, Title: "Waypoint Maps", Tagline: "Places, addresses and how far apart they are.",
		Schema: []string{`CREATE TABLE saved_places (id INTEGER PRIMARY KEY, username TEXT NOT NULL, place_id INTEGER NOT NULL, label TEXT NOT NULL, saved_at TEXT NOT NULL, UNIQUE (username, place_id))`},
		Lists: []kit.List{{
			Name: "places", Title: "Places", Path: "/places",
			Select:  `SELECT p.id AS key, p.name AS title, p.kind, c.name AS city, p.address, p.rating_x10 FROM places p JOIN cities c ON c.id = p.city_id`,
			Search:  []string{"title", "address", "kind"},
			Filters: []kit.Filter{{Name: "city", Label: "City", Column: "city", OptionsSQL: `SELECT name FROM cities ORDER BY name`}, {Name: "kind", Label: "Kind", Column: "kind", OptionsSQL: `SELECT DISTINCT kind FROM places ORDER BY 1`}},
			Order:   "key",
			Columns: []kit.Column{{Key: "title", Label: "Place"}, {Key: "kind", Label: "Kind"}, {Key: "city", Label: "City"}, {Key: "address", Label: "Address"}, {Key: "rating_x10", Label: "Rating", Kind: "rating10"}},
			Detail: kit.Detail{
				SQL:    `SELECT p.name AS title, p.kind, p.address, c.name AS city, p.lat, p.lon, p.rating_x10, p.phone, p.id FROM places p JOIN cities c ON c.id = p.city_id WHERE p.id = CAST(:key AS INTEGER)`,
				Fields: []kit.Column{{Key: "id", Label: "Place number"}, {Key: "kind", Label: "Kind"}, {Key: "address", Label: "Address"}, {Key: "city", Label: "City"}, {Key: "lat", Label: "Latitude"}, {Key: "lon", Label: "Longitude"}, {Key: "rating_x10", Label: "Rating", Kind: "rating10"}, {Key: "phone", Label: "Phone"}},
			},
		}},
		Actions: []kit.Action{
			{Name: "save", Label: "Save place", On: "places", Inputs: []kit.Input{{Name: "label", Label: "Label", Kind: "select", Options: []string{"favourite", "home", "work", "want to go"}, Default: "favourite"}},
				Exec: []string{`INSERT INTO saved_places (username, place_id, label, saved_at) VALUES (:user, CAST(:key AS INTEGER), :label, :now) ON CONFLICT (username, place_id) DO UPDATE SET label = excluded.label`},
				Done: "Place saved.", Then: "/saved"},
			{Name: "unsave", Label: "Remove", On: "saved", Exec: []string{`DELETE FROM saved_places WHERE username = :user AND place_id = CAST(:key AS INTEGER)`}, Done: "Place removed.", Then: "/saved"},
		},
		Histories: []kit.History{{Name: "saved", Title: "Saved places", Path: "/saved", Link: "/places/",
			SQL:     `SELECT s.place_id AS key, s.place_id AS link, p.name, s.label, p.address, s.saved_at FROM saved_places s JOIN cat.places p ON p.id = s.place_id WHERE s.username = :user ORDER BY s.id DESC`,
			Columns: []kit.Column{{Key: "name", Label: "Place"}, {Key: "label", Label: "Label"}, {Key: "address", Label: "Address"}, {Key: "saved_at", Label: "Saved"}}}},
		Routes: []kit.Route{{Pattern: "GET /distance", Handler: distance}},
	}
}

var distanceTmpl = template.Must(template.New("distance").Parse(`<h1>Distance</h1>
<form role="search" method="get" action="/distance">
<label for="from">From place number</label><input id="from" name="from" type="number" min="1" value="{{.From}}">
<label for="to">To place number</label><input id="to" name="to" type="number" min="1" value="{{.To}}">
<button id="search-button" type="submit">Measure</button>
</form>
{{if .A}}<dl class="fields" id="distance">
<dt>From</dt><dd>{{.A}}</dd><dt>To</dt><dd>{{.B}}</dd>
<dt>Straight line</dt><dd id="distance-km">{{.Km}} km</dd>
<dt>On foot</dt><dd>about {{.Walk}} minutes</dd><dt>By car</dt><dd>about {{.Drive}} minutes</dd></dl>{{end}}`))

// distance is the straight-line (great-circle) distance between two
// places, with walking and driving estimates.
func distance(s *kit.Site, q *kit.Request) error {
	v := q.R.URL.Query()
	data := struct{ From, To, A, B, Km, Walk, Drive string }{From: v.Get("from"), To: v.Get("to")}
	if data.From != "" || data.To != "" {
		db, err := s.Catalog()
		if err != nil {
			return err
		}
		type pt struct {
			name     string
			lat, lon float64
		}
		get := func(field, raw string) (pt, error) {
			id, err := strconv.ParseInt(raw, 10, 64)
			if err != nil || id < 1 {
				return pt{}, web.Errorf(http.StatusBadRequest, "%s must be a place number (the number on a place's page), got %q", field, raw)
			}
			var p pt
			var addr string
			if err := db.QueryRowContext(q.R.Context(), `SELECT name, address, lat, lon FROM places WHERE id = ?`, id).Scan(&p.name, &addr, &p.lat, &p.lon); err != nil {
				return pt{}, web.Errorf(http.StatusNotFound, "no place number %d", id)
			}
			p.name += ", " + addr
			return p, nil
		}
		a, err := get("from", data.From)
		if err != nil {
			return err
		}
		b, err := get("to", data.To)
		if err != nil {
			return err
		}
		km := catalog.HaversineKm(a.lat, a.lon, b.lat, b.lon)
		data.A, data.B = a.name, b.name
		data.Km = strconv.FormatFloat(math.Round(km*100)/100, 'f', 2, 64)
		data.Walk = fmt.Sprint(int(math.Ceil(km / WalkKmh * 60)))
		data.Drive = fmt.Sprint(int(math.Ceil(km / DriveKmh * 60)))
	}
	var b bytes.Buffer
	if err := distanceTmpl.Execute(&b, data); err != nil {
		return web.Internal(err)
	}
	return q.Render("Distance", template.HTML(b.String()))
}
