package site_test

import (
	"html"
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// TestShopDrawsGeneratedPhotos: over the generated catalog the shop sells
// the generated products too (5,051 over 51 pages of 100), and draws their
// photos, which are no files.
func TestShopDrawsGeneratedPhotos(t *testing.T) {
	cat := builtCatalog(t)
	w := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	s, err := shop.New(shop.Options{CatalogDir: cat, WorldDir: w, Clock: world.FixedClock(time.Date(2026, 3, 4, 9, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// The start page lists every category, the generated ones too.
	home := httptest.NewRecorder()
	s.ServeHTTP(home, httptest.NewRequest(http.MethodGet, "/", nil))
	if n := strings.Count(home.Body.String(), `href="/search?q=`); n < 26 {
		t.Errorf("the start page lists %d categories, want the case study's 6 and the generated 24", n)
	}
	// A product with reviews shows them.
	db, err := state.OpenDB(world.DBPath(cat, "catalog"), true)
	if err != nil {
		t.Fatal(err)
	}
	var sku, title string
	err = db.QueryRow(`SELECT p.sku, r.title FROM reviews r JOIN products p ON p.id = r.product_id ORDER BY r.posted_on DESC, r.id LIMIT 1`).Scan(&sku, &title)
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	rec := httptest.NewRecorder()
	s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/p/"+sku, nil))
	if body := rec.Body.String(); rec.Code != http.StatusOK || !strings.Contains(body, `<section id="reviews">`) || !strings.Contains(body, html.EscapeString(title)) {
		t.Errorf("GET /p/%s: %d, no review %q", sku, rec.Code, title)
	}
	for path, want := range map[string]int{"/search?q=&page=2": http.StatusOK, "/search?q=&page=51": http.StatusOK, "/search?q=&page=52": http.StatusNotFound,
		"/search?q=&page=0": http.StatusBadRequest, "/p/G00017": http.StatusOK, "/images/G00017.png": http.StatusOK, "/images/G99999.png": http.StatusNotFound} {
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != want {
			t.Fatalf("GET %s: %d, want %d", path, rec.Code, want)
		}
		if want == http.StatusOK && path[1] == 'i' {
			if _, err := png.Decode(rec.Body); err != nil {
				t.Errorf("GET %s: %v", path, err)
			}
		}
	}
}
