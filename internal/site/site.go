// Package site is the registry of the persona's websites: each site is its
// own package (internal/site/NAME) with its state in the world's
// db/NAME.sqlite; this package lists them for the runtime, which serves
// every one of them in every instance. The registry is built by a plain
// function (no init-time registration), so parallel worlds never share it.
//
// Glossary:
//   - Spec: one site: its name, the DDL of its world database, and Open.
//   - Site: what the runtime serves and manages: an http.Handler over one
//     world, ClearSessions for a reset and Close.
//
// It imports internal/world and the site packages (internal/site/*).
package site

import (
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/site/archive"
	"github.com/wildawm/wildawm/internal/site/calc"
	"github.com/wildawm/wildawm/internal/site/code"
	"github.com/wildawm/wildawm/internal/site/courses"
	"github.com/wildawm/wildawm/internal/site/devices"
	"github.com/wildawm/wildawm/internal/site/dictionary"
	"github.com/wildawm/wildawm/internal/site/flights"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/maps"
	"github.com/wildawm/wildawm/internal/site/models"
	"github.com/wildawm/wildawm/internal/site/news"
	"github.com/wildawm/wildawm/internal/site/recipes"
	"github.com/wildawm/wildawm/internal/site/search"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/site/sports"
	"github.com/wildawm/wildawm/internal/site/stays"
	"github.com/wildawm/wildawm/internal/world"
)

// Site is one website serving one world.
type Site interface {
	// ServeHTTP serves the site at the root of its own origin: pages link
	// by absolute paths (/login, /cart), so each site needs a host or port
	// of its own.
	http.Handler
	// ClearSessions logs everybody out. The runtime calls it when the
	// world under the site is reset: no login survives into the new world.
	// A site reads the world's files per request, so nothing else of it
	// outlives a reset.
	ClearSessions()
	// Close releases what Open opened.
	Close() error
}

// Options open a site over one world.
type Options struct {
	// WorldDir is the world directory; the site uses db/NAME.sqlite and
	// accounts.json.
	WorldDir string
	// CatalogDir is the shared read-only catalog (internal/catalog).
	CatalogDir string
	// Clock stamps the rows the site writes.
	Clock  world.Clock
	Logger *slog.Logger
	// SiteURL returns another site's base URL in the same instance (links
	// between sites, the web search's results); nil links by path only.
	SiteURL func(name string) string
}

// Spec describes one site.
type Spec struct {
	Name string
	// Schema is the DDL of the site's database in the world,
	// db/NAME.sqlite, in order; nil when the site keeps no state there.
	Schema func() []string
	Open   func(Options) (Site, error)
}

// All returns every site: the shop, then the kit sites (internal/site/kit)
// in the catalog's order (catalog.Sites).
func All() []Spec {
	all := []Spec{
		{Name: shop.DBName, Schema: shop.Schema, Open: func(o Options) (Site, error) {
			return shop.New(shop.Options{CatalogDir: o.CatalogDir, WorldDir: o.WorldDir, Clock: o.Clock, Logger: o.Logger})
		}},
	}
	for _, spec := range kitSpecs() {
		sp := spec()
		all = append(all, Spec{Name: sp.Name, Schema: func() []string { return spec().Schema }, Open: func(o Options) (Site, error) {
			return kit.New(spec(), kit.Options{WorldDir: o.WorldDir, CatalogDir: o.CatalogDir, Clock: o.Clock, Logger: o.Logger, SiteURL: o.SiteURL})
		}})
	}
	return all
}

func kitSpecs() []func() *kit.Spec {
	return []func() *kit.Spec{devices.Spec, recipes.Spec, archive.Spec, news.Spec, stays.Spec, flights.Spec,
		dictionary.Spec, courses.Spec, sports.Spec, code.Spec, models.Spec, maps.Spec, search.Spec, calc.Spec}
}

// Kit returns the spec of the kit site named name; false for the shop or
// an unknown name.
func Kit(name string) (*kit.Spec, bool) {
	for _, f := range kitSpecs() {
		if sp := f(); sp.Name == name {
			return sp, true
		}
	}
	return nil, false
}

// Lookup returns the site named name.
func Lookup(name string) (Spec, error) {
	all := All()
	i := slices.IndexFunc(all, func(s Spec) bool { return s.Name == name })
	if i < 0 {
		names := make([]string, len(all))
		for j, s := range all {
			names[j] = s.Name
		}
		return Spec{}, fmt.Errorf("unknown site %q; known: %s", name, strings.Join(names, ", "))
	}
	return all[i], nil
}
