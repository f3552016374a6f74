package catalog

// The generator's vocabulary: invented brands and names (no real ones),
// and common words. Lists, not maps, so that every draw is in a fixed
// order.

var (
	adjectives = []string{"compact", "sturdy", "quiet", "bright", "light", "classic", "modern", "rugged", "slim", "smart",
		"portable", "premium", "everyday", "heavy-duty", "wireless", "foldable", "adjustable", "weatherproof", "soft", "fast",
		"refurbished", "eco", "deluxe", "simple", "professional", "travel", "kids'", "ergonomic", "insulated", "handmade"}
	nouns = []string{"design", "finish", "grip", "frame", "battery", "cover", "handle", "base", "lid", "strap",
		"case", "panel", "switch", "filter", "motor", "blade", "screen", "cable", "mount", "pocket"}
	sentenceForms = []string{
		"this {t} has a {a} {n} and a {b} build.",
		"a {a} {t} made for daily use.",
		"the {n} is {a}, and the whole {t} feels {b}.",
		"owners like the {a} {n} of this {t}.",
		"built around a {a} {n}, the {t} stays {b} over years of use.",
		"pairs well with other {a} gear; the {n} is easy to clean.",
		"a {b} choice when you need a {a} {t}.",
	}
	colours   = []string{"red", "blue", "green", "yellow", "black", "white", "grey", "orange", "purple", "teal"}
	colourHex = map[string]string{"red": "#c0392b", "blue": "#2a4d8f", "green": "#2e8b57", "yellow": "#e0b020", "black": "#1e1e1e",
		"white": "#f4f4f4", "grey": "#8a8f94", "orange": "#e67e22", "purple": "#7d3c98", "teal": "#138d90"}
	shapes   = []string{"round", "square", "rectangular", "pill"}
	patterns = []string{"plain", "striped", "dotted", "checked"}

	firstNames = []string{"Ada", "Bram", "Cleo", "Dario", "Elin", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kaia", "Lior",
		"Mira", "Nico", "Oona", "Pavel", "Quinn", "Rosa", "Sami", "Tove", "Umar", "Vera", "Wren", "Xavi", "Yara", "Zeno",
		"Amara", "Bodhi", "Cyra", "Dane", "Esme", "Felix", "Gia", "Hale", "Ilse", "Joss"}
	lastNames = []string{"Abernathy", "Brightwater", "Castellan", "Dunmore", "Ellery", "Fairbanks", "Galloway", "Hartigan",
		"Ivers", "Jessup", "Kestrel", "Lindqvist", "Marlowe", "Northcott", "Okonkwo", "Penhaligon", "Quartermain", "Rusk",
		"Sandoval", "Thorne", "Underhill", "Valcourt", "Westerly", "Yarrow", "Zeller", "Ashdown", "Blackwood", "Corran"}

	// cities: invented, each with a country and coordinates.
	cities = []struct {
		name, country string
		lat, lon      float64
	}{
		{"Port Avel", "Norland", 59.91, 10.75}, {"Marrow Bay", "Norland", 60.39, 5.32}, {"Kestrel Falls", "Norland", 63.43, 10.39},
		{"Lindenau", "Ostmark", 52.52, 13.40}, {"Halbrunn", "Ostmark", 48.14, 11.58}, {"Weissach", "Ostmark", 50.11, 8.68},
		{"Corvane", "Valmera", 45.46, 9.19}, {"Santerra", "Valmera", 41.90, 12.50}, {"Aurelio", "Valmera", 43.77, 11.25},
		{"Belmonte", "Castria", 40.42, -3.70}, {"Ondara", "Castria", 41.39, 2.17}, {"Sevira", "Castria", 37.39, -5.98},
		{"Lyonne", "Gallene", 45.76, 4.84}, {"Paressa", "Gallene", 48.86, 2.35}, {"Bordel", "Gallene", 44.84, -0.58},
		{"Kingsmere", "Albrion", 51.51, -0.13}, {"Norcaster", "Albrion", 53.48, -2.24}, {"Edrin", "Albrion", 55.95, -3.19},
		{"Dunlow", "Erinn", 53.35, -6.26}, {"Corkhaven", "Erinn", 51.90, -8.47}, {"Amstel", "Lowmark", 52.37, 4.90},
		{"Rotterburg", "Lowmark", 51.92, 4.48}, {"Brugeon", "Lowmark", 51.21, 3.22}, {"Vindor", "Austeria", 48.21, 16.37},
		{"Salzen", "Austeria", 47.81, 13.06}, {"Praga Nova", "Bohemar", 50.08, 14.44}, {"Krakor", "Polenna", 50.06, 19.94},
		{"Warsova", "Polenna", 52.23, 21.01}, {"Lisvera", "Lusitar", 38.72, -9.14}, {"Portela", "Lusitar", 41.15, -8.61},
		{"Athenor", "Hellara", 37.98, 23.73}, {"Thessa", "Hellara", 40.64, 22.94}, {"Stockholmen", "Svenmark", 59.33, 18.07},
		{"Gotheby", "Svenmark", 57.71, 11.97}, {"Helsara", "Finnor", 60.17, 24.94}, {"Copenhal", "Danmere", 55.68, 12.57},
		{"Zurina", "Helvar", 47.38, 8.54}, {"Genvale", "Helvar", 46.20, 6.14}, {"Budara", "Magyra", 47.50, 19.04},
		{"Rigava", "Lettia", 56.95, 24.11}, {"Tallera", "Estor", 59.44, 24.75}, {"Vilnara", "Litva", 54.69, 25.28},
		{"Ljubena", "Slovar", 46.06, 14.51}, {"Zagora", "Kroatin", 45.81, 15.98},
	}
)
