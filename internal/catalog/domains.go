package catalog

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// The sites the generated catalog serves, by the name their pages carry in
// search_pages.
const (
	SiteDevices    = "devices"
	SiteRecipes    = "recipes"
	SiteArchive    = "archive"
	SiteNews       = "news"
	SiteStays      = "stays"
	SiteFlights    = "flights"
	SiteDictionary = "dictionary"
	SiteCourses    = "courses"
	SiteSports     = "sports"
	SiteCode       = "code"
	SiteModels     = "models"
	SiteMaps       = "maps"
	SiteSearch     = "search"
	SiteCalc       = "calc"
)

// Sites lists the fifteen sites, the shop first.
func Sites() []string {
	return []string{Site, SiteDevices, SiteRecipes, SiteArchive, SiteNews, SiteStays, SiteFlights, SiteDictionary,
		SiteCourses, SiteSports, SiteCode, SiteModels, SiteMaps, SiteSearch, SiteCalc}
}

// Sizes of the generated domains.
const (
	GenShopProducts   = 5000
	GenDeviceProducts = 300
	GenRecipes        = 2000
	GenPapers         = 3000
	GenArticles       = 2000
	GenHotels         = 1000
	GenRateNights     = 60 // nights from ScheduleStart with a price per room
	GenFlightDays     = 60 // days from ScheduleStart with flights
	GenWords          = 5000
	GenCourses        = 500
	GenRepositories   = 500
	GenModels         = 1000
	GenDatasets       = 500
	GenPlaces         = 3000
)

// ScheduleStart is the first night with hotel rates and the first day
// with flights (the worlds' month), as a day of the catalog's calendar
// (day 0 is 2026-01-01): 2026-03-01. Sports fixtures before it have
// results.
const ScheduleStart = 59

func domains() []domain {
	return []domain{
		{name: "search", schema: []string{
			`CREATE TABLE search_pages (id INTEGER PRIMARY KEY, site TEXT NOT NULL, path TEXT NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, UNIQUE (site, path))`,
			`CREATE VIRTUAL TABLE search_fts USING fts5(title, body, content='search_pages', content_rowid='id')`,
			// What the images show, for verifiers only: never in a page.
			`CREATE TABLE image_attrs (image TEXT PRIMARY KEY, kind TEXT NOT NULL, colour TEXT NOT NULL, panel INTEGER NOT NULL, shape TEXT NOT NULL, pattern TEXT NOT NULL, count INTEGER NOT NULL)`,
			`CREATE TABLE cities (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, country TEXT NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL)`,
		}, gen: genCities},
		{name: "shop", schema: []string{
			`CREATE TABLE reviews (id INTEGER PRIMARY KEY, product_id INTEGER NOT NULL REFERENCES products(id), author TEXT NOT NULL, rating INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, posted_on TEXT NOT NULL)`,
			`CREATE INDEX reviews_product ON reviews(product_id)`,
		}, gen: genShop},
		{name: "recipes", schema: []string{
			`CREATE TABLE recipes (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL, cuisine TEXT NOT NULL, course TEXT NOT NULL, minutes INTEGER NOT NULL, servings INTEGER NOT NULL, rating_x10 INTEGER NOT NULL, ratings INTEGER NOT NULL, image TEXT NOT NULL, summary TEXT NOT NULL)`,
			`CREATE INDEX recipes_rating ON recipes(rating_x10 DESC, ratings DESC, slug)`,
			`CREATE TABLE recipe_ingredients (recipe_id INTEGER NOT NULL REFERENCES recipes(id), pos INTEGER NOT NULL, quantity TEXT NOT NULL, unit TEXT NOT NULL, ingredient TEXT NOT NULL, PRIMARY KEY (recipe_id, pos)) WITHOUT ROWID`,
			`CREATE TABLE recipe_steps (recipe_id INTEGER NOT NULL REFERENCES recipes(id), pos INTEGER NOT NULL, text TEXT NOT NULL, PRIMARY KEY (recipe_id, pos)) WITHOUT ROWID`,
		}, gen: genRecipes},
		{name: "archive", schema: []string{
			`CREATE TABLE papers (id INTEGER PRIMARY KEY, ext_id TEXT NOT NULL UNIQUE, title TEXT NOT NULL, authors TEXT NOT NULL, category TEXT NOT NULL, submitted_on TEXT NOT NULL, abstract TEXT NOT NULL)`,
			`CREATE INDEX papers_category ON papers(category, submitted_on)`,
			`CREATE INDEX papers_submitted ON papers(submitted_on DESC, ext_id)`,
		}, gen: genPapers},
		{name: "news", schema: []string{
			`CREATE TABLE articles (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, section TEXT NOT NULL, title TEXT NOT NULL, byline TEXT NOT NULL, published_at TEXT NOT NULL, summary TEXT NOT NULL, body TEXT NOT NULL)`,
			`CREATE INDEX articles_section ON articles(section, published_at)`,
			`CREATE INDEX articles_published ON articles(published_at DESC, slug)`,
		}, gen: genNews},
		{name: "stays", schema: []string{
			`CREATE TABLE hotels (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL, city_id INTEGER NOT NULL REFERENCES cities(id), stars INTEGER NOT NULL, address TEXT NOT NULL, rating_x10 INTEGER NOT NULL, image TEXT NOT NULL, summary TEXT NOT NULL, from_cents INTEGER)`,
			`CREATE INDEX hotels_city ON hotels(city_id)`,
			`CREATE INDEX hotels_rating ON hotels(rating_x10 DESC, slug)`,
			`CREATE TABLE hotel_rooms (id INTEGER PRIMARY KEY, hotel_id INTEGER NOT NULL REFERENCES hotels(id), kind TEXT NOT NULL, beds INTEGER NOT NULL, max_guests INTEGER NOT NULL)`,
			`CREATE TABLE room_rates (room_id INTEGER NOT NULL REFERENCES hotel_rooms(id), night TEXT NOT NULL, price_cents INTEGER NOT NULL, available INTEGER NOT NULL, PRIMARY KEY (room_id, night)) WITHOUT ROWID`,
		}, gen: genStays},
		{name: "flights", schema: []string{
			`CREATE TABLE airports (code TEXT PRIMARY KEY, name TEXT NOT NULL, city_id INTEGER NOT NULL REFERENCES cities(id)) WITHOUT ROWID`,
			`CREATE TABLE flights (id INTEGER PRIMARY KEY, number TEXT NOT NULL, origin TEXT NOT NULL REFERENCES airports(code), dest TEXT NOT NULL REFERENCES airports(code), departs_at TEXT NOT NULL, arrives_at TEXT NOT NULL, price_cents INTEGER NOT NULL, seats INTEGER NOT NULL)`,
			`CREATE INDEX flights_route ON flights(origin, dest, departs_at)`,
			`CREATE INDEX flights_departs ON flights(departs_at, id)`,
		}, gen: genFlights},
		{name: "dictionary", schema: []string{
			`CREATE TABLE words (id INTEGER PRIMARY KEY, headword TEXT NOT NULL UNIQUE, pos TEXT NOT NULL, pronunciation TEXT NOT NULL, definition TEXT NOT NULL, example TEXT NOT NULL)`,
		}, gen: genWords},
		{name: "courses", schema: []string{
			`CREATE TABLE courses (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL, subject TEXT NOT NULL, level TEXT NOT NULL, instructor TEXT NOT NULL, weeks INTEGER NOT NULL, summary TEXT NOT NULL)`,
			`CREATE TABLE course_modules (course_id INTEGER NOT NULL REFERENCES courses(id), pos INTEGER NOT NULL, title TEXT NOT NULL, summary TEXT NOT NULL, PRIMARY KEY (course_id, pos)) WITHOUT ROWID`,
			`CREATE TABLE course_assignments (id INTEGER PRIMARY KEY, course_id INTEGER NOT NULL REFERENCES courses(id), module_pos INTEGER NOT NULL, title TEXT NOT NULL, kind TEXT NOT NULL, due_week INTEGER NOT NULL, points INTEGER NOT NULL)`,
		}, gen: genCourses},
		{name: "sports", schema: []string{
			`CREATE TABLE teams (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, name TEXT NOT NULL, city_id INTEGER NOT NULL REFERENCES cities(id), sport TEXT NOT NULL, league TEXT NOT NULL)`,
			`CREATE TABLE fixtures (id INTEGER PRIMARY KEY, league TEXT NOT NULL, home_id INTEGER NOT NULL REFERENCES teams(id), away_id INTEGER NOT NULL REFERENCES teams(id), starts_at TEXT NOT NULL, home_score INTEGER, away_score INTEGER)`,
			`CREATE INDEX fixtures_league ON fixtures(league, starts_at)`,
		}, gen: genSports},
		{name: "code", schema: []string{
			`CREATE TABLE repositories (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, description TEXT NOT NULL, language TEXT NOT NULL, stars INTEGER NOT NULL, forks INTEGER NOT NULL, created_on TEXT NOT NULL, UNIQUE (owner, name))`,
			`CREATE TABLE repo_issues (id INTEGER PRIMARY KEY, repo_id INTEGER NOT NULL REFERENCES repositories(id), number INTEGER NOT NULL, is_pr INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL, state TEXT NOT NULL, author TEXT NOT NULL, opened_on TEXT NOT NULL, UNIQUE (repo_id, number))`,
		}, gen: genCode},
		{name: "models", schema: []string{
			`CREATE TABLE models (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, task TEXT NOT NULL, params_m INTEGER NOT NULL, license TEXT NOT NULL, downloads INTEGER NOT NULL, likes INTEGER NOT NULL, updated_on TEXT NOT NULL, card TEXT NOT NULL, UNIQUE (owner, name))`,
			`CREATE INDEX models_downloads ON models(downloads DESC, id)`,
			`CREATE TABLE datasets (id INTEGER PRIMARY KEY, owner TEXT NOT NULL, name TEXT NOT NULL, task TEXT NOT NULL, rows INTEGER NOT NULL, license TEXT NOT NULL, downloads INTEGER NOT NULL, updated_on TEXT NOT NULL, card TEXT NOT NULL, UNIQUE (owner, name))`,
		}, gen: genModels},
		{name: "maps", schema: []string{
			`CREATE TABLE places (id INTEGER PRIMARY KEY, name TEXT NOT NULL, kind TEXT NOT NULL, city_id INTEGER NOT NULL REFERENCES cities(id), address TEXT NOT NULL, lat REAL NOT NULL, lon REAL NOT NULL, rating_x10 INTEGER NOT NULL, phone TEXT NOT NULL)`,
			`CREATE INDEX places_city ON places(city_id, kind)`,
		}, gen: genPlaces},
	}
}

// page adds a page of site to the web search's index.
func (g *gen) page(site, path, title, body string) error {
	return g.insert("search_pages", []string{"site", "path", "title", "body"}, site, path, title, body)
}

// image records what a generated image shows and returns its path (under
// the catalog's images): the site draws it from these attributes.
func (g *gen) image(kind, name string) (string, error) {
	path := ImagesDir + "/" + kind + "/" + name + ".png"
	err := g.insert("image_attrs", []string{"image", "kind", "colour", "panel", "shape", "pattern", "count"},
		path, kind, g.pick(colours), g.r.IntN(2), g.pick(shapes), g.pick(patterns), g.between(1, 6))
	return path, err
}

func genCities(g *gen) error {
	for i, c := range cities {
		if err := g.insert("cities", []string{"id", "name", "country", "lat", "lon"}, i+1, c.name, c.country, c.lat, c.lon); err != nil {
			return err
		}
	}
	return nil
}

// shopCategories: the generated shop's, none of the case study's.
var shopCategories = []struct{ slug, noun string }{
	{"kitchen-appliances", "blender"}, {"cookware", "frying pan"}, {"coffee", "coffee grinder"}, {"home-office", "desk lamp"},
	{"office-chairs", "office chair"}, {"backpacks", "backpack"}, {"headphones", "headphones"}, {"monitors", "monitor"},
	{"keyboards", "keyboard"}, {"garden-tools", "pruning shears"}, {"camping", "tent"}, {"cycling", "bike light"},
	{"fitness", "yoga mat"}, {"toys", "building set"}, {"board-games", "board game"}, {"bedding", "duvet"},
	{"lighting", "floor lamp"}, {"storage", "storage box"}, {"cleaning", "vacuum cleaner"}, {"pet-supplies", "pet bed"},
	{"luggage", "suitcase"}, {"watches", "watch"}, {"water-bottles", "water bottle"}, {"tools", "cordless drill"},
}

var brandParts = [2][]string{
	{"North", "Blue", "Iron", "Silver", "Oak", "Bright", "Stone", "River", "Cedar", "Nova", "Pine", "Swift", "Ember", "Harbor", "Maple", "Orbit"},
	{"field", "craft", "works", "line", "nest", "peak", "forge", "wave", "home", "gear", "lab", "mark"},
}

func genShop(g *gen) error {
	brands := make([]string, 0, 40)
	for len(brands) < 40 {
		b := g.pick(brandParts[0]) + g.pick(brandParts[1])
		if !containsString(brands, b) {
			brands = append(brands, b)
		}
	}
	var id int64
	if err := g.tx.QueryRowContext(g.ctx, "SELECT coalesce(max(id), 0) FROM products").Scan(&id); err != nil {
		return err
	}
	add := func(site, sku, title, brand, cat string, price int64, desc string, specs Specs, img string) error {
		id++
		b, err := specs.MarshalJSON()
		if err != nil {
			return err
		}
		if err := g.insert("products", []string{"id", "sku", "site", "title", "brand", "category", "price_cents", "description", "specs", "image"},
			id, sku, site, title, brand, cat, price, desc, string(b), img); err != nil {
			return err
		}
		for range g.between(0, 6) {
			if err := g.insert("reviews", []string{"product_id", "author", "rating", "title", "body", "posted_on"},
				id, g.pick(firstNames)+" "+g.pick(lastNames)[:1]+".", g.between(1, 5), g.pick(reviewTitles), g.paragraph(strings.ToLower(title), g.between(1, 3)), date(-g.between(1, 700))); err != nil {
				return err
			}
		}
		return g.page(site, "/p/"+sku, title, desc)
	}
	for i := range GenShopProducts {
		c := shopCategories[i%len(shopCategories)]
		brand := g.pick(brands)
		adj := g.pick(adjectives)
		model := fmt.Sprintf("%c%d", 'A'+rune(g.r.IntN(26)), g.between(100, 9999))
		title := fmt.Sprintf("%s %s %s %s", brand, strings.ToUpper(adj[:1])+adj[1:], titleCase(c.noun), model)
		sku := fmt.Sprintf("G%05d", i+1)
		specs := sp("weight_g", g.between(80, 12000), "warranty_years", g.between(1, 5), "rating_x10", g.between(25, 50))
		img, err := g.image("products", sku)
		if err != nil {
			return err
		}
		if err := add(Site, sku, title, brand, c.slug, int64(g.between(5, 900))*100+99, g.paragraph(c.noun, 3), specs, img); err != nil {
			return err
		}
	}
	devices := []string{"phone", "tablet", "laptop", "earbuds", "smart watch", "charger", "phone case", "stylus"}
	for i := range GenDeviceProducts {
		kind := devices[i%len(devices)]
		gen := g.between(3, 9)
		title := fmt.Sprintf("Lumen %s %d", titleCase(kind), gen)
		if g.chance(0.4) {
			title += " " + g.pick([]string{"Pro", "Mini", "Max", "Air", "Lite"})
		}
		sku := fmt.Sprintf("LD-%04d", i+1)
		specs := sp("storage_gb", []int{0, 64, 128, 256, 512}[g.r.IntN(5)], "generation", gen, "battery_mah", g.between(300, 9000))
		img, err := g.image("devices", sku)
		if err != nil {
			return err
		}
		if err := add(SiteDevices, sku, title, "Lumen", slug(kind), int64(g.between(19, 2499))*100, g.paragraph(kind, 2), specs, img); err != nil {
			return err
		}
	}
	return nil
}

var reviewTitles = []string{"Does the job", "Great value", "Not what I expected", "Would buy again", "Solid", "Returned it",
	"Five stars", "Good, not great", "Exactly as described", "Broke after a month", "Better than my old one", "Gift hit"}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

var (
	cuisines    = []string{"Italian", "Mexican", "Indian", "Japanese", "Thai", "Greek", "French", "Levantine", "Korean", "Ethiopian", "Nordic", "Spanish"}
	courseKinds = []string{"breakfast", "starter", "main", "side", "dessert", "snack", "drink"}
	ingredients = []string{"onion", "garlic", "olive oil", "butter", "flour", "sugar", "egg", "milk", "rice", "lentils", "chickpeas",
		"tomato", "spinach", "potato", "carrot", "lemon", "ginger", "chili", "cumin", "coriander", "basil", "parsley", "chicken thigh",
		"salmon", "tofu", "feta", "parmesan", "yogurt", "coconut milk", "soy sauce", "honey", "mushroom", "bell pepper", "zucchini",
		"kidney beans", "oats", "almonds", "cinnamon", "vanilla", "dark chocolate"}
	units   = []string{"g", "ml", "tbsp", "tsp", "cup", "pinch", "piece"}
	methods = []string{"Chop", "Slice", "Whisk", "Simmer", "Roast", "Fry", "Stir in", "Fold in", "Season", "Bake", "Blend", "Toast"}
)

func genRecipes(g *gen) error {
	seen := map[string]bool{}
	for i := range GenRecipes {
		main := g.pick(ingredients)
		other := g.pick(ingredients)
		title := fmt.Sprintf("%s %s with %s", g.pick(cuisines), titleCase(main), other)
		s := slug(title)
		for seen[s] {
			s = fmt.Sprintf("%s-%d", slug(title), i)
		}
		seen[s] = true
		img, err := g.image("recipes", s)
		if err != nil {
			return err
		}
		id := i + 1
		summary := g.paragraph(main, 2)
		if err := g.insert("recipes", []string{"id", "slug", "title", "cuisine", "course", "minutes", "servings", "rating_x10", "ratings", "image", "summary"},
			id, s, title, g.pick(cuisines), g.pick(courseKinds), g.between(2, 24)*5, g.between(1, 8), g.between(28, 50), g.between(0, 3000), img, summary); err != nil {
			return err
		}
		var used []string
		for pos := range g.between(4, 12) {
			ing := g.pick(ingredients)
			if pos == 0 {
				ing = main
			}
			used = append(used, ing)
			if err := g.insert("recipe_ingredients", []string{"recipe_id", "pos", "quantity", "unit", "ingredient"},
				id, pos+1, fmt.Sprint(g.between(1, 500)), g.pick(units), ing); err != nil {
				return err
			}
		}
		for pos := range g.between(3, 9) {
			if err := g.insert("recipe_steps", []string{"recipe_id", "pos", "text"},
				id, pos+1, fmt.Sprintf("%s the %s for %d minutes.", g.pick(methods), g.pick(used), g.between(1, 30))); err != nil {
				return err
			}
		}
		if err := g.page(SiteRecipes, "/r/"+s, title, summary+" Ingredients: "+strings.Join(used, ", ")+"."); err != nil {
			return err
		}
	}
	return nil
}

var (
	paperCategories = []string{"cs.LG", "cs.CL", "cs.CV", "cs.AI", "cs.RO", "cs.DB", "stat.ML", "math.OC", "q-bio.NC", "physics.comp-ph"}
	paperTopics     = []string{"sparse attention", "reward models", "tool use", "long-context retrieval", "diffusion policies", "graph neural networks",
		"curriculum learning", "speculative decoding", "world models", "program synthesis", "federated learning", "contrastive pretraining",
		"agent benchmarks", "mixture of experts", "causal discovery", "robust optimization", "protein folding", "quantization"}
	paperForms = []string{"Scaling %s beyond the data wall", "On the limits of %s", "%s for computer-use agents", "A simple baseline for %s",
		"Revisiting %s with synthetic data", "Efficient %s at scale", "When does %s help?", "%s: a survey"}
)

func genPapers(g *gen) error {
	for i := range GenPapers {
		topic := g.pick(paperTopics)
		title := fmt.Sprintf(g.pick(paperForms), topic)
		title = strings.ToUpper(title[:1]) + title[1:]
		day := -g.between(0, 720)
		d := date(day)
		ext := fmt.Sprintf("%s%s.%05d", d[2:4], d[5:7], i+1)
		authors := make([]string, g.between(1, 8))
		for j := range authors {
			authors[j] = g.pick(firstNames) + " " + g.pick(lastNames)
		}
		a, _ := json.Marshal(authors)
		abstract := fmt.Sprintf("We study %s. ", topic) + g.paragraph(topic, 4) + fmt.Sprintf(" Our method improves over prior work by %d.%d points.", g.between(1, 15), g.r.IntN(10))
		if err := g.insert("papers", []string{"ext_id", "title", "authors", "category", "submitted_on", "abstract"},
			ext, title, string(a), g.pick(paperCategories), d, abstract); err != nil {
			return err
		}
		if err := g.page(SiteArchive, "/abs/"+ext, title, abstract); err != nil {
			return err
		}
	}
	return nil
}

var (
	sections  = []string{"world", "business", "technology", "science", "sport", "culture", "travel", "health"}
	headlines = []string{"%s council approves new %s plan", "Record %s season expected in %s", "%s startup raises funds for %s",
		"Why %s residents are rethinking %s", "Scientists in %s report progress on %s", "%s hosts first %s festival"}
	newsTopics = []string{"tram", "housing", "solar", "harbor", "library", "cycling", "museum", "water", "school", "market", "battery", "rail"}
)

func genNews(g *gen) error {
	for i := range GenArticles {
		city := cities[g.r.IntN(len(cities))].name
		topic := g.pick(newsTopics)
		title := fmt.Sprintf(g.pick(headlines), city, topic)
		s := fmt.Sprintf("%s-%d", slug(title), i+1)
		at := fmt.Sprintf("%s %02d:%02d:00", date(-g.between(0, 365)), g.between(5, 22), g.r.IntN(60))
		summary := g.sentence(topic)
		body := g.paragraph(topic, g.between(6, 14))
		if err := g.insert("articles", []string{"slug", "section", "title", "byline", "published_at", "summary", "body"},
			s, g.pick(sections), title, g.pick(firstNames)+" "+g.pick(lastNames), at, summary, body); err != nil {
			return err
		}
		if err := g.page(SiteNews, "/a/"+s, title, summary+" "+body); err != nil {
			return err
		}
	}
	return nil
}

var (
	hotelWords = []string{"Grand", "Harbor", "Garden", "Central", "Old Town", "Riverside", "Park", "Station", "Royal", "Lighthouse", "Alpine", "Courtyard"}
	hotelKinds = []string{"Hotel", "Inn", "Suites", "Lodge", "Residence", "Guesthouse"}
	roomKinds  = []struct {
		kind       string
		beds, max  int
		multiplier float64
	}{{"Single room", 1, 1, 0.8}, {"Double room", 1, 2, 1}, {"Twin room", 2, 2, 1.05}, {"Family room", 3, 4, 1.5}, {"Suite", 1, 3, 2.2}}
	streets = []string{"Harbor Street", "Mill Lane", "Market Square", "Station Road", "Linden Allee", "Canal Walk", "Castle Hill", "Bridge Street", "Elm Row", "Quay Road"}
)

func genStays(g *gen) error {
	roomID := 0
	for i := range GenHotels {
		city := 1 + i%len(cities)
		name := fmt.Sprintf("%s %s %s", g.pick(hotelWords), g.pick(hotelKinds), cities[city-1].name)
		s := fmt.Sprintf("%s-%d", slug(name), i+1)
		img, err := g.image("hotels", s)
		if err != nil {
			return err
		}
		stars := g.between(1, 5)
		summary := g.paragraph("stay", 2)
		if err := g.insert("hotels", []string{"id", "slug", "name", "city_id", "stars", "address", "rating_x10", "image", "summary"},
			i+1, s, name, city, stars, fmt.Sprintf("%d %s", g.between(1, 240), g.pick(streets)), g.between(55, 98), img, summary); err != nil {
			return err
		}
		base := float64(40+stars*25+g.between(0, 60)) * 100
		for range 3 {
			rk := roomKinds[g.r.IntN(len(roomKinds))]
			roomID++
			if err := g.insert("hotel_rooms", []string{"id", "hotel_id", "kind", "beds", "max_guests"}, roomID, i+1, rk.kind, rk.beds, rk.max); err != nil {
				return err
			}
			for n := range GenRateNights {
				weekend := (ScheduleStart+n+3)%7 >= 5 // day 0, 2026-01-01, is a Thursday
				p := base * rk.multiplier
				if weekend {
					p *= 1.25
				}
				p *= 0.9 + 0.2*g.r.Float64()
				if err := g.insert("room_rates", []string{"room_id", "night", "price_cents", "available"},
					roomID, date(ScheduleStart+n), int64(math.Round(p/100))*100, g.between(0, 6)); err != nil {
					return err
				}
			}
		}
		// The lowest nightly price of the hotel, which its list shows.
		if _, err := g.tx.ExecContext(g.ctx, `UPDATE hotels SET from_cents = (SELECT min(rr.price_cents) FROM hotel_rooms r JOIN room_rates rr ON rr.room_id = r.id WHERE r.hotel_id = ?) WHERE id = ?`, i+1, i+1); err != nil {
			return err
		}
		if err := g.page(SiteStays, "/h/"+s, name, summary); err != nil {
			return err
		}
	}
	return nil
}

func genFlights(g *gen) error {
	var codes []string
	for i, c := range cities {
		code := strings.ToUpper(string([]rune(strings.ReplaceAll(c.name, " ", ""))[:2])) + string(rune('A'+i%26))
		codes = append(codes, code)
		if err := g.insert("airports", []string{"code", "name", "city_id"}, code, c.name+" "+g.pick([]string{"International", "Airport", "Central Airport", "Field"}), i+1); err != nil {
			return err
		}
	}
	n := 0
	for o := range codes {
		for k := 1; k <= 6; k++ {
			d := (o + k*7) % len(codes)
			if d == o {
				continue
			}
			dist := HaversineKm(cities[o].lat, cities[o].lon, cities[d].lat, cities[d].lon)
			minutes := int(dist/780*60) + 35
			base := 3900 + int(dist*9)
			dep := g.between(6, 20)*60 + 5*g.r.IntN(12)
			number := fmt.Sprintf("%s%d", []string{"NA", "VX", "BL", "OR"}[o%4], 100+n%900)
			for day := range GenFlightDays {
				at := dep + g.between(-20, 20)
				departs := fmt.Sprintf("%s %02d:%02d:00", date(ScheduleStart+day), at/60%24, at%60)
				end := at + minutes
				arrives := fmt.Sprintf("%s %02d:%02d:00", date(ScheduleStart+day+end/(24*60)), end/60%24, end%60)
				if err := g.insert("flights", []string{"number", "origin", "dest", "departs_at", "arrives_at", "price_cents", "seats"},
					number, codes[o], codes[d], departs, arrives, int64(base+g.between(0, base/2))/100*100+99, g.between(0, 180)); err != nil {
					return err
				}
			}
			n++
		}
	}
	return nil
}

// HaversineKm is the great-circle distance in km between two points
// given in degrees (the maps site's distances).
func HaversineKm(lat1, lon1, lat2, lon2 float64) float64 {
	const r = 6371
	rad := math.Pi / 180
	dlat, dlon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dlat/2)*math.Sin(dlat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dlon/2)*math.Sin(dlon/2)
	return 2 * r * math.Asin(math.Sqrt(a))
}

var (
	syllables = []string{"ba", "ce", "di", "fo", "gu", "ha", "je", "ki", "lo", "mu", "na", "pe", "qui", "ro", "sa", "te", "vi", "wo", "xa", "ze",
		"bra", "cle", "dro", "fli", "gra", "pla", "stri", "tro", "an", "el", "or", "um", "is", "et"}
	partsOfSpeech = []string{"noun", "verb", "adjective", "adverb"}
	glosses       = map[string][]string{
		"noun":      {"a small %s used for %s", "the act of %s a %s", "a person who keeps a %s in %s", "a place where %s is stored for %s"},
		"verb":      {"to %s a %s carefully", "to move a %s toward %s", "to make a %s ready for %s"},
		"adjective": {"like a %s in %s", "having the %s of %s", "easily %s by %s"},
		"adverb":    {"in the manner of a %s at %s", "with %s, as in %s"},
	}
)

func genWords(g *gen) error {
	seen := map[string]bool{}
	for len(seen) < GenWords {
		w := ""
		for range g.between(2, 4) {
			w += g.pick(syllables)
		}
		if seen[w] {
			continue
		}
		seen[w] = true
		pos := g.pick(partsOfSpeech)
		def := fmt.Sprintf(g.pick(glosses[pos]), g.pick(nouns), g.pick(nouns))
		pron := "/" + strings.Join(splitSyllables(w), "·") + "/"
		example := fmt.Sprintf("She used the word %q when describing the %s.", w, g.pick(nouns))
		if err := g.insert("words", []string{"headword", "pos", "pronunciation", "definition", "example"}, w, pos, pron, def, example); err != nil {
			return err
		}
		if err := g.page(SiteDictionary, "/w/"+w, w, pos+": "+def); err != nil {
			return err
		}
	}
	return nil
}

// splitSyllables cuts a word before each consonant that follows a vowel.
func splitSyllables(w string) []string {
	var out []string
	start := 0
	for i := 1; i < len(w); i++ {
		if strings.IndexByte("aeiou", w[i-1]) >= 0 && strings.IndexByte("aeiou", w[i]) < 0 {
			out = append(out, w[start:i])
			start = i
		}
	}
	return append(out, w[start:])
}

var (
	subjects   = []string{"Data Science", "Machine Learning", "Web Development", "Statistics", "Photography", "Spanish", "Music Theory", "Accounting", "Design", "Biology", "History", "Writing"}
	levels     = []string{"beginner", "intermediate", "advanced"}
	assignKind = []string{"quiz", "essay", "project", "problem set", "peer review"}
)

func genCourses(g *gen) error {
	aid := 0
	for i := range GenCourses {
		subj := g.pick(subjects)
		title := fmt.Sprintf("%s %s: %s", g.pick([]string{"Introduction to", "Practical", "Applied", "Foundations of", "Advanced"}), subj, titleCase(g.pick(nouns))+"s and "+g.pick(nouns)+"s")
		s := fmt.Sprintf("%s-%d", slug(title), i+1)
		weeks := g.between(4, 12)
		summary := g.paragraph(strings.ToLower(subj), 3)
		if err := g.insert("courses", []string{"id", "slug", "title", "subject", "level", "instructor", "weeks", "summary"},
			i+1, s, title, subj, g.pick(levels), "Dr. "+g.pick(firstNames)+" "+g.pick(lastNames), weeks, summary); err != nil {
			return err
		}
		modules := g.between(3, 8)
		for m := range modules {
			if err := g.insert("course_modules", []string{"course_id", "pos", "title", "summary"},
				i+1, m+1, fmt.Sprintf("Module %d: %s", m+1, titleCase(g.words(nouns, 2))), g.sentence(strings.ToLower(subj))); err != nil {
				return err
			}
		}
		for k := range g.between(2, 5) {
			aid++
			m := 1 + g.r.IntN(modules)
			if err := g.insert("course_assignments", []string{"id", "course_id", "module_pos", "title", "kind", "due_week", "points"},
				aid, i+1, m, fmt.Sprintf("Assignment %d", k+1), g.pick(assignKind), min(weeks, m+g.r.IntN(2)), []int{10, 20, 25, 50, 100}[g.r.IntN(5)]); err != nil {
				return err
			}
		}
		if err := g.page(SiteCourses, "/c/"+s, title, summary); err != nil {
			return err
		}
	}
	return nil
}

var leagues = []struct{ name, sport, suffix string }{
	{"Continental Football League", "football", "FC"}, {"North Basketball Association", "basketball", "Hoops"}, {"Union Hockey League", "ice hockey", "Ice"},
}

func genSports(g *gen) error {
	id := 0
	for _, l := range leagues {
		first := id + 1
		for t := range 16 {
			id++
			c := cities[(t*3+len(l.name))%len(cities)]
			name := fmt.Sprintf("%s %s", c.name, l.suffix)
			if err := g.insert("teams", []string{"id", "slug", "name", "city_id", "sport", "league"},
				id, slug(name), name, 1+(t*3+len(l.name))%len(cities), l.sport, l.name); err != nil {
				return err
			}
			if err := g.page(SiteSports, "/t/"+slug(name), name, fmt.Sprintf("%s, %s team in the %s.", name, l.sport, l.name)); err != nil {
				return err
			}
		}
		// A double round robin: rounds a week apart, the first 20 played.
		n := 16
		for round := range 2 * (n - 1) {
			for k := range n / 2 {
				a, b := roundRobin(n, round%(n-1), k)
				if round >= n-1 {
					a, b = b, a
				}
				day := ScheduleStart - 140 + round*7
				var hs, as any
				if day < ScheduleStart {
					hs, as = g.between(0, 5), g.between(0, 4)
				}
				if err := g.insert("fixtures", []string{"league", "home_id", "away_id", "starts_at", "home_score", "away_score"},
					l.name, first+a, first+b, fmt.Sprintf("%s %02d:00:00", date(day+k%3), 14+k%6), hs, as); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// roundRobin is pairing k of round r in the circle method over n teams.
func roundRobin(n, r, k int) (int, int) {
	if k == 0 {
		return 0, 1 + (r+n-2)%(n-1)
	}
	a := 1 + (r+k-1)%(n-1)
	b := 1 + (r+n-2-k)%(n-1)
	return a, b
}

var (
	languages  = []string{"Go", "Python", "Rust", "TypeScript", "C++", "Java", "Kotlin", "Ruby", "Elixir", "Zig"}
	repoWords  = []string{"fast", "tiny", "open", "async", "pocket", "cloud", "edge", "micro", "hyper", "quiet"}
	repoNouns  = []string{"router", "cache", "queue", "parser", "scheduler", "notebook", "crawler", "renderer", "tracker", "vault", "index", "cli"}
	issueForms = []string{"Crash when %s is empty", "Support %s in the config", "Docs: explain %s", "Speed up %s", "Flaky test around %s", "Add %s option"}
)

func genCode(g *gen) error {
	owners := make([]string, 60)
	for i := range owners {
		owners[i] = strings.ToLower(g.pick(firstNames) + g.pick(lastNames)[:3])
	}
	seen := map[string]bool{}
	iid := 0
	for i := 0; i < GenRepositories; {
		owner, name := g.pick(owners), g.pick(repoWords)+"-"+g.pick(repoNouns)
		if seen[owner+"/"+name] {
			continue
		}
		seen[owner+"/"+name] = true
		i++
		desc := fmt.Sprintf("A %s %s written in %s.", g.pick(adjectives), strings.TrimPrefix(name[strings.Index(name, "-")+1:], "-"), g.pick(languages))
		if err := g.insert("repositories", []string{"id", "owner", "name", "description", "language", "stars", "forks", "created_on"},
			i, owner, name, desc, g.pick(languages), int(math.Pow(10, 4*g.r.Float64())), g.between(0, 400), date(-g.between(30, 2000))); err != nil {
			return err
		}
		for num := 1; num <= g.between(2, 22); num++ {
			iid++
			pr := g.chance(0.3)
			title := fmt.Sprintf(g.pick(issueForms), g.pick(nouns))
			state := g.pick([]string{"open", "open", "closed"})
			if pr && state == "closed" && g.chance(0.7) {
				state = "merged"
			}
			if err := g.insert("repo_issues", []string{"id", "repo_id", "number", "is_pr", "title", "body", "state", "author", "opened_on"},
				iid, i, num, pr, title, g.paragraph(g.pick(nouns), 2), state, g.pick(owners), date(-g.between(0, 400))); err != nil {
				return err
			}
		}
		if err := g.page(SiteCode, "/"+owner+"/"+name, owner+"/"+name, desc); err != nil {
			return err
		}
	}
	return nil
}

var (
	modelTasks = []string{"text-generation", "text-classification", "image-classification", "object-detection", "speech-recognition", "translation", "embedding", "summarization"}
	licenses   = []string{"apache-2.0", "mit", "cc-by-4.0", "openrail", "custom"}
	modelNames = []string{"falcon", "heron", "otter", "lynx", "marten", "kite", "wren", "ibis", "puffin", "stoat"}
)

func genModels(g *gen) error {
	orgs := []string{"northlab", "quietai", "openfield", "cedar-research", "pinecone-ml", "oakworks", "emberlabs", "harbor-nlp"}
	seen := map[string]bool{}
	for i := 0; i < GenModels; {
		owner := g.pick(orgs)
		params := []int{60, 125, 350, 1300, 3000, 7000, 13000, 34000, 70000}[g.r.IntN(9)]
		name := fmt.Sprintf("%s-%s-%s", g.pick(modelNames), humanParams(params), g.pick([]string{"base", "instruct", "chat", "v2", "v3", "mini"}))
		if seen[owner+"/"+name] {
			continue
		}
		seen[owner+"/"+name] = true
		i++
		task := g.pick(modelTasks)
		card := fmt.Sprintf("%s is a %s model with %s parameters for %s. ", name, g.pick(adjectives), humanParams(params), task) + g.paragraph("model", 2)
		if err := g.insert("models", []string{"owner", "name", "task", "params_m", "license", "downloads", "likes", "updated_on", "card"},
			owner, name, task, params, g.pick(licenses), int(math.Pow(10, 6*g.r.Float64())), g.between(0, 5000), date(-g.between(0, 500)), card); err != nil {
			return err
		}
		if err := g.page(SiteModels, "/"+owner+"/"+name, owner+"/"+name, card); err != nil {
			return err
		}
	}
	for i := 0; i < GenDatasets; {
		owner := g.pick(orgs)
		name := fmt.Sprintf("%s-%s-%d", g.pick(repoWords), g.pick(nouns), g.between(1, 99))
		if seen["d:"+owner+"/"+name] {
			continue
		}
		seen["d:"+owner+"/"+name] = true
		i++
		task := g.pick(modelTasks)
		card := fmt.Sprintf("A dataset of %s examples for %s. ", g.pick(nouns), task) + g.paragraph("dataset", 2)
		if err := g.insert("datasets", []string{"owner", "name", "task", "rows", "license", "downloads", "updated_on", "card"},
			owner, name, task, int(math.Pow(10, 2+5*g.r.Float64())), g.pick(licenses), int(math.Pow(10, 5*g.r.Float64())), date(-g.between(0, 500)), card); err != nil {
			return err
		}
		if err := g.page(SiteModels, "/datasets/"+owner+"/"+name, owner+"/"+name, card); err != nil {
			return err
		}
	}
	return nil
}

func humanParams(m int) string {
	if m >= 1000 {
		return fmt.Sprintf("%gb", float64(m)/1000)
	}
	return fmt.Sprintf("%dm", m)
}

var placeKinds = []string{"cafe", "restaurant", "pharmacy", "museum", "park", "bakery", "bookshop", "gym", "supermarket", "cinema", "library", "hardware store"}

func genPlaces(g *gen) error {
	for i := range GenPlaces {
		ci := i % len(cities)
		c := cities[ci]
		kind := placeKinds[(i/len(cities))%len(placeKinds)]
		name := fmt.Sprintf("%s %s", g.pick(append(append([]string{}, hotelWords...), lastNames...)), titleCase(kind))
		lat := c.lat + (g.r.Float64()-0.5)*0.08
		lon := c.lon + (g.r.Float64()-0.5)*0.12
		addr := fmt.Sprintf("%d %s, %s", g.between(1, 300), g.pick(streets), c.name)
		if err := g.insert("places", []string{"id", "name", "kind", "city_id", "address", "lat", "lon", "rating_x10", "phone"},
			i+1, name, kind, ci+1, addr, math.Round(lat*1e5)/1e5, math.Round(lon*1e5)/1e5, g.between(20, 50), fmt.Sprintf("+%d %03d %04d", 30+ci, g.between(100, 999), g.between(0, 9999))); err != nil {
			return err
		}
		if err := g.page(SiteMaps, fmt.Sprintf("/place/%d", i+1), name, fmt.Sprintf("%s in %s: %s.", titleCase(kind), c.name, addr)); err != nil {
			return err
		}
	}
	return nil
}

// titleCase upper-cases the first letter of every word.
func titleCase(s string) string {
	b := []byte(s)
	for i := range b {
		if (i == 0 || b[i-1] == ' ' || b[i-1] == '-') && b[i] >= 'a' && b[i] <= 'z' {
			b[i] -= 'a' - 'A'
		}
	}
	return string(b)
}
