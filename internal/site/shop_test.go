package site_test

import (
	"image/png"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/site/shop"
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
