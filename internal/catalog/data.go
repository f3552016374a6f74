package catalog

import (
	"cmp"
	"slices"
)

// The case study's two candidates. They share title, brand, category, price,
// description and specs; only their photos differ (one body is light with a
// readout on its front, the other dark without), and no text says so. The
// approved one comes second by SKU and by product id, so no text order (the
// ranking's SKU tie-break, the spec sheet, the shop's search and listing)
// puts it first: a photo-blind choice of the first tied model is wrong, and
// only the photo decides.
const (
	CandidateWhite = "RG8-1002" // the one the approval asks for
	CandidateBlack = "RG8-1001"
)

// Catalog-wide names.
const (
	Persona       = "catalog"              // manifest persona of a catalog directory
	Clock         = "2026-03-01T00:00:00Z" // manifest clock of a catalog directory
	DBName        = "catalog"              // db/catalog.sqlite
	ImagesDir     = "images"               // photos, under home/
	Site          = "shop"                 // the site every product is sold on
	CategorySurge = "surge-protectors"
)

// Ranking thresholds of the case study.
const (
	RankRackUnits  = 1
	RankMinOutlets = 8
	RankMinJoules  = 2000
)

// look is how a product's photo is drawn (product_image params). It is never
// written to any text column.
type look struct {
	body    string
	display bool
	outlets int // 0: the generator's default
}

type item struct {
	p    Product
	look look
}

func sp(kv ...any) Specs {
	s := make(Specs, 0, len(kv)/2)
	for i := 0; i < len(kv); i += 2 {
		v := kv[i+1]
		if n, ok := v.(int); ok {
			v = int64(n)
		}
		s = append(s, Spec{Key: kv[i].(string), Value: v})
	}
	return s
}

func surge(joules, outlets, ru, cord, usb int, ul bool) Specs {
	return sp("joules", joules, "outlets", outlets, "rack_units", ru, "cord_ft", cord, "usb_ports", usb, "ul_listed", ul)
}

const candidateDesc = "Eight rear outlets in a single rack space with 2700-joule surge protection, " +
	"EMI/RFI noise filtering and a resettable 15 A circuit breaker. Ships with a 10 ft power cord and rack ears. UL listed."

// items is the catalog's content in id order. Built by a function so that no
// package-level state exists.
func items() []item {
	it := func(sku, title, brand, cat string, price int64, desc string, specs Specs, l look) item {
		return item{p: Product{SKU: sku, Site: Site, Title: title, Brand: brand, Category: cat, PriceCents: price, Description: desc, Specs: specs}, look: l}
	}
	const (
		sc = CategorySurge
		cb = "cables"
		mx = "audio-mixers"
		lt = "stage-lights"
		st = "speaker-stands"
		ad = "adapters"
	)
	candidateTitle := "RackGuard Pro 8-Outlet 1U Rack Surge Protector"
	return []item{
		// The unapproved look-alike first, so it comes first in every text
		// order (product id, the spec sheet, the search, the ranking).
		it(CandidateBlack, candidateTitle, "RackGuard", sc, 14999, candidateDesc, surge(2700, 8, 1, 10, 0, true), look{"#1e1e1e", false, 8}),
		it(CandidateWhite, candidateTitle, "RackGuard", sc, 14999, candidateDesc, surge(2700, 8, 1, 10, 0, true), look{"#f4f4f4", true, 8}),
		it("PW10-2700", "PowerWall 10-Outlet 1U Rack Surge Protector", "PowerWall", sc, 16999,
			"Ten outlets in one rack space, 2700-joule protection and a 10 ft cord. UL listed.", surge(2700, 10, 1, 10, 0, true), look{"#2b2b2b", false, 10}),
		it("PW8-2700", "PowerWall 8-Outlet 1U Rack Mount Surge Protector", "PowerWall", sc, 18999,
			"Eight outlets, 2700-joule protection, 10 ft cord and a lifetime connected-equipment warranty. UL listed.", surge(2700, 8, 1, 10, 0, true), look{"#3a3f44", false, 8}),
		it("RG8-2600", "RackGuard 8-Outlet 1U Rack Surge Protector with USB", "RackGuard", sc, 15999,
			"Eight rear outlets plus two front USB charging ports, 2600-joule protection, 10 ft cord. UL listed.", surge(2600, 8, 1, 10, 2, true), look{"#2b2b2b", false, 8}),
		it("RG9-2400", "RackGuard 9-Outlet 1U Rack Power Strip", "RackGuard", sc, 12999,
			"Nine outlets (eight rear, one front), 2400-joule protection and a 15 ft cord. UL listed.", surge(2400, 9, 1, 15, 0, true), look{"#3a3f44", false, 9}),
		it("PW8-2200", "PowerWall Basic 8-Outlet 1U Rack Surge Protector", "PowerWall", sc, 7999,
			"Budget rack protector: eight outlets, 2200-joule protection, 6 ft cord.", surge(2200, 8, 1, 6, 0, false), look{"#9a9a9a", false, 8}),
		it("RG6-3000", "RackGuard Compact 6-Outlet 1U Rack Surge Protector", "RackGuard", sc, 9999,
			"Six outlets in one rack space with 3000-joule protection and a 6 ft cord. UL listed.", surge(3000, 6, 1, 6, 0, true), look{"#1e1e1e", false, 6}),
		it("VL10-1800", "VoltLine 10-Outlet 1U Rack Surge Protector", "VoltLine", sc, 8999,
			"Ten outlets, 1800-joule protection, 10 ft cord. UL listed.", surge(1800, 10, 1, 10, 0, true), look{"#2a4d8f", false, 10}),
		it("ST12-3600", "StageTrak 12-Outlet 2U Rack Surge Protector", "StageTrak", sc, 21999,
			"Twelve outlets over two rack spaces with 3600-joule protection and a 15 ft cord. UL listed.", surge(3600, 12, 2, 15, 0, true), look{"#1e1e1e", true, 12}),
		it("ST16-4500", "StageTrak 16-Outlet 2U Rack Power Conditioner", "StageTrak", sc, 34999,
			"Sixteen outlets, 4500-joule protection, voltage regulation, two USB ports and a 15 ft cord. UL listed.", surge(4500, 16, 2, 15, 2, true), look{"#2b2b2b", true, 12}),
		it("VL12-4000", "VoltLine 12-Outlet Surge Protector Strip", "VoltLine", sc, 4999,
			"Floor strip with twelve outlets, two USB ports, 4000-joule protection and an 8 ft cord. UL listed.", surge(4000, 12, 0, 8, 2, true), look{"#f4f4f4", false, 12}),
		it("VL6-1200", "VoltLine 6-Outlet Surge Protector Strip", "VoltLine", sc, 1999,
			"Six-outlet floor strip with 1200-joule protection and a 6 ft cord. UL listed.", surge(1200, 6, 0, 6, 0, true), look{"#f4f4f4", false, 6}),
		it("CT8-3000", "CableTech 8-Outlet Surge Protector Strip with USB", "CableTech", sc, 3999,
			"Eight outlets, four USB ports, 3000-joule protection and a 10 ft cord. UL listed.", surge(3000, 8, 0, 10, 4, true), look{"#9a9a9a", false, 8}),

		it("CB-XLR10", "CableTech XLR Microphone Cable 10 ft", "CableTech", cb, 1299, "Balanced XLR male to female microphone cable with metal connectors.", sp("length_ft", 10, "connector", "XLR-M to XLR-F", "gauge_awg", 24), look{body: "#1e1e1e"}),
		it("CB-XLR25", "CableTech XLR Microphone Cable 25 ft", "CableTech", cb, 1899, "Balanced XLR male to female microphone cable with metal connectors.", sp("length_ft", 25, "connector", "XLR-M to XLR-F", "gauge_awg", 24), look{body: "#1e1e1e"}),
		it("CB-XLR50", "CableTech XLR Microphone Cable 50 ft", "CableTech", cb, 2999, "Balanced XLR male to female microphone cable for long stage runs.", sp("length_ft", 50, "connector", "XLR-M to XLR-F", "gauge_awg", 22), look{body: "#2a4d8f"}),
		it("CB-TRS10", "CableTech 1/4 in TRS Instrument Cable 10 ft", "CableTech", cb, 999, "Balanced 1/4 in TRS to TRS patch and instrument cable.", sp("length_ft", 10, "connector", "TRS to TRS", "gauge_awg", 24), look{body: "#1e1e1e"}),
		it("CB-HDMI15", "LinkWorks HDMI 2.0 Cable 15 ft", "LinkWorks", cb, 1599, "High-speed HDMI cable for 4K60 projectors and displays.", sp("length_ft", 15, "connector", "HDMI to HDMI", "gauge_awg", 28), look{body: "#2b2b2b"}),
		it("CB-HDMI50", "LinkWorks Active HDMI Cable 50 ft", "LinkWorks", cb, 6999, "Active fiber HDMI cable for long projector runs.", sp("length_ft", 50, "connector", "HDMI to HDMI", "gauge_awg", 26), look{body: "#8f2a2a"}),
		it("CB-SDI25", "LinkWorks 12G-SDI BNC Cable 25 ft", "LinkWorks", cb, 3499, "75-ohm coaxial cable for 12G-SDI video.", sp("length_ft", 25, "connector", "BNC to BNC", "gauge_awg", 18), look{body: "#2a4d8f"}),
		it("CB-SPK25", "CableTech Speakon Speaker Cable 25 ft", "CableTech", cb, 3999, "Two-conductor speaker cable with NL4 connectors.", sp("length_ft", 25, "connector", "NL4 to NL4", "gauge_awg", 14), look{body: "#1e1e1e"}),
		it("CB-IEC6", "CableTech IEC Power Cable 6 ft", "CableTech", cb, 799, "Grounded IEC C13 to NEMA 5-15P power cable.", sp("length_ft", 6, "connector", "C13 to 5-15P", "gauge_awg", 18), look{body: "#1e1e1e"}),

		it("MX-4C", "AudioCore MixOne 4-Channel Compact Mixer", "AudioCore", mx, 7999, "Compact mixer with two mic preamps and a stereo line input.", sp("channels", 4, "mic_preamps", 2, "usb_audio", false, "rack_units", 0), look{body: "#3a3f44"}),
		it("MX-8C", "AudioCore MixEight 8-Channel Mixer", "AudioCore", mx, 19999, "Eight-channel analog mixer with onboard effects.", sp("channels", 8, "mic_preamps", 4, "usb_audio", true, "rack_units", 0), look{body: "#2b2b2b"}),
		it("MX-12C", "AudioCore MixTwelve 12-Channel Mixer", "AudioCore", mx, 32999, "Twelve-channel mixer with USB recording and two aux sends.", sp("channels", 12, "mic_preamps", 8, "usb_audio", true, "rack_units", 0), look{body: "#2b2b2b"}),
		it("MX-16D", "AudioCore Digital 16-Channel Rack Mixer", "AudioCore", mx, 89999, "Digital mixer with tablet control, sixteen preamps and multitrack USB.", sp("channels", 16, "mic_preamps", 16, "usb_audio", true, "rack_units", 3), look{body: "#1e1e1e", display: true}),
		it("MX-24C", "AudioCore MixPro 24-Channel Console", "AudioCore", mx, 129999, "Large-format console for live events.", sp("channels", 24, "mic_preamps", 20, "usb_audio", true, "rack_units", 0), look{body: "#3a3f44"}),
		it("MX-POD", "AudioCore PodMix USB Podcast Mixer", "AudioCore", mx, 14999, "Four-channel podcast mixer with USB audio and headphone outputs.", sp("channels", 4, "mic_preamps", 4, "usb_audio", true, "rack_units", 0), look{body: "#9a9a9a"}),

		it("LT-PAR54", "LumaStage PAR 54x3W RGB LED Light", "LumaStage", lt, 12999, "LED wash light with DMX control and sound-active modes.", sp("watts", 180, "dmx_channels", 7, "beam_deg", 25), look{body: "#1e1e1e"}),
		it("LT-BAR8", "LumaStage LED Wash Bar 8-Cell", "LumaStage", lt, 19999, "Eight-cell LED bar for uplighting and stage washes.", sp("watts", 120, "dmx_channels", 28, "beam_deg", 30), look{body: "#2b2b2b"}),
		it("LT-SPOT60", "LumaStage 60W LED Moving Head Spot", "LumaStage", lt, 29999, "Moving head spot with gobo and prism.", sp("watts", 60, "dmx_channels", 14, "beam_deg", 15), look{body: "#1e1e1e"}),
		it("LT-FRES", "LumaStage 150W LED Fresnel", "LumaStage", lt, 44999, "Tungsten-balanced LED fresnel with manual zoom.", sp("watts", 150, "dmx_channels", 4, "beam_deg", 50), look{body: "#3a3f44"}),
		it("LT-UPB", "LumaStage Battery LED Uplight", "LumaStage", lt, 17999, "Wireless DMX battery uplight for events.", sp("watts", 40, "dmx_channels", 8, "beam_deg", 25), look{body: "#9a9a9a"}),
		it("LT-DMX192", "LumaStage DMX-192 Lighting Controller", "LumaStage", lt, 8999, "192-channel DMX controller with scene memory.", sp("watts", 5, "dmx_channels", 192, "beam_deg", 0), look{body: "#1e1e1e", display: true}),
		it("LT-FOLLOW", "LumaStage 350W LED Follow Spot", "LumaStage", lt, 79999, "Follow spot with iris and color wheel for theatre.", sp("watts", 350, "dmx_channels", 0, "beam_deg", 10), look{body: "#2b2b2b"}),

		it("SS-TRI", "StandPro Tripod Speaker Stand", "StandPro", st, 4999, "Aluminum tripod stand with 35 mm pole adapter.", sp("max_height_in", 78, "load_lb", 110, "material", "aluminum"), look{body: "#1e1e1e"}),
		it("SS-TRI-HD", "StandPro Heavy-Duty Crank-Up Speaker Stand", "StandPro", st, 12999, "Crank-up steel stand for heavy line-array speakers.", sp("max_height_in", 118, "load_lb", 220, "material", "steel"), look{body: "#2b2b2b"}),
		it("SS-POLE", "StandPro Subwoofer Mounting Pole", "StandPro", st, 2999, "Adjustable 35 mm pole for subwoofer-to-top mounting.", sp("max_height_in", 56, "load_lb", 100, "material", "steel"), look{body: "#1e1e1e"}),
		it("SS-PAIR", "StandPro Tripod Speaker Stand Pair with Bag", "StandPro", st, 8999, "Two tripod stands and a padded carry bag.", sp("max_height_in", 78, "load_lb", 110, "material", "aluminum"), look{body: "#3a3f44"}),
		it("SS-MON", "StandPro Floor Monitor Tilt Stand", "StandPro", st, 3499, "Low tilt stand for stage monitors.", sp("max_height_in", 12, "load_lb", 80, "material", "steel"), look{body: "#1e1e1e"}),
		it("SS-DESK", "StandPro Desktop Studio Monitor Stands", "StandPro", st, 3999, "Isolating desktop stands for near-field monitors.", sp("max_height_in", 8, "load_lb", 40, "material", "steel"), look{body: "#9a9a9a"}),

		it("AD-XLRTRS", "LinkWorks XLR Female to 1/4 in TRS Adapter", "LinkWorks", ad, 699, "Balanced adapter for mic-to-line connections.", sp("from", "XLR-F", "to", "1/4 in TRS"), look{body: "#9a9a9a"}),
		it("AD-TRS18", "LinkWorks 1/4 in to 1/8 in Headphone Adapter", "LinkWorks", ad, 399, "Stereo headphone adapter.", sp("from", "1/4 in TRS", "to", "1/8 in TRS"), look{body: "#9a9a9a"}),
		it("AD-HDSDI", "LinkWorks HDMI to SDI Converter", "LinkWorks", ad, 8999, "Powered converter from HDMI sources to 3G-SDI.", sp("from", "HDMI", "to", "3G-SDI"), look{body: "#2a4d8f"}),
		it("AD-USBCHD", "LinkWorks USB-C to HDMI Adapter", "LinkWorks", ad, 1999, "4K60 adapter for laptops.", sp("from", "USB-C", "to", "HDMI"), look{body: "#9a9a9a"}),
		it("AD-DMX35", "LumaStage DMX 3-Pin to 5-Pin Adapter", "LumaStage", ad, 899, "Adapter between 3-pin and 5-pin DMX fixtures.", sp("from", "DMX 3-pin", "to", "DMX 5-pin"), look{body: "#1e1e1e"}),
		it("AD-RCATS", "LinkWorks RCA to 1/4 in TS Adapter Pair", "LinkWorks", ad, 599, "Two unbalanced RCA to 1/4 in TS adapters.", sp("from", "RCA", "to", "1/4 in TS"), look{body: "#8f2a2a"}),
		it("AD-NL4TS", "CableTech Speakon to 1/4 in Adapter", "CableTech", ad, 1299, "NL4 female to 1/4 in TS speaker adapter.", sp("from", "NL4", "to", "1/4 in TS"), look{body: "#1e1e1e"}),
		it("AD-PWRCON", "CableTech powerCON to Edison Adapter", "CableTech", ad, 1799, "Adapter from powerCON fixtures to NEMA 5-15 outlets.", sp("from", "powerCON", "to", "NEMA 5-15P"), look{body: "#2a4d8f"}),
		it("AD-BNCF", "LinkWorks BNC Barrel Coupler 5-Pack", "LinkWorks", ad, 999, "Female-to-female BNC couplers for SDI runs.", sp("from", "BNC-F", "to", "BNC-F"), look{body: "#9a9a9a"}),
	}
}

// Products returns the catalog's products in id order, as Write stores them.
func Products() []Product {
	its := items()
	ps := make([]Product, len(its))
	for i, it := range its {
		ps[i] = it.p
		ps[i].ID = int64(i + 1)
		ps[i].Image = ImagesDir + "/" + it.p.ImageFile()
	}
	return ps
}

// Rank returns the surge protectors that fit the case study's rack (exactly
// RankRackUnits high, at least RankMinOutlets outlets and RankMinJoules
// joules), best first: joules descending, then price ascending, then SKU.
// With the catalog's products the first two are CandidateBlack and
// CandidateWhite, tied on every key but the SKU.
func Rank(ps []Product) []Product {
	type ranked struct {
		p Product
		s SurgeSpecs
	}
	var rs []ranked
	for _, p := range ps {
		s, err := p.Surge()
		if err != nil || s.RackUnits != RankRackUnits || s.Outlets < RankMinOutlets || s.Joules < RankMinJoules {
			continue
		}
		rs = append(rs, ranked{p, s})
	}
	slices.SortStableFunc(rs, func(a, b ranked) int {
		if c := cmp.Compare(b.s.Joules, a.s.Joules); c != 0 {
			return c
		}
		if c := cmp.Compare(a.p.PriceCents, b.p.PriceCents); c != 0 {
			return c
		}
		return cmp.Compare(a.p.SKU, b.p.SKU)
	})
	out := make([]Product, len(rs))
	for i, r := range rs {
		out[i] = r.p
	}
	return out
}
