package site_test

import (
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// label is what a site's name must be: the runtime's Manager serves site
// NAME of an instance on Host NAME.TOKEN.localhost, so the name is a DNS
// label, and it names db/NAME.sqlite.
var label = regexp.MustCompile(`^[a-z][a-z0-9-]{0,30}[a-z0-9]$`)

// TestRegistry opens every site over a world holding its schema and asks
// for its home page.
func TestRegistry(t *testing.T) {
	all := site.All()
	if len(all) == 0 {
		t.Fatal("site.All is empty")
	}
	cat := builtCatalog(t)
	seen := map[string]bool{}
	for _, spec := range all {
		if !label.MatchString(spec.Name) {
			t.Errorf("site name %q: want a lowercase DNS label (%s)", spec.Name, label)
		}
		if seen[spec.Name] {
			t.Errorf("site name %q twice", spec.Name)
		}
		seen[spec.Name] = true
		if spec.Open == nil {
			t.Errorf("site %s: Spec.Open is nil", spec.Name)
			continue
		}
		t.Run(spec.Name, func(t *testing.T) {
			tw := state.TestWorld{}
			if spec.Schema != nil {
				tw.SQL = map[string][]string{spec.Name: spec.Schema()}
			}
			dir := state.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), tw)
			s, err := spec.Open(site.Options{WorldDir: dir, CatalogDir: cat, Clock: world.FixedClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))})
			if err != nil {
				t.Fatalf("open: %v", err)
			}
			get := func() {
				t.Helper()
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/", nil))
				if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "text/html") {
					t.Fatalf("GET /: %d %s\n%.500s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
				}
			}
			get()
			s.ClearSessions() // what a reset does; the site serves on
			get()
			if err := s.Close(); err != nil {
				t.Errorf("close: %v", err)
			}
		})
	}
}

func TestLookup(t *testing.T) {
	for _, spec := range site.All() {
		got, err := site.Lookup(spec.Name)
		if err != nil || got.Name != spec.Name {
			t.Errorf("Lookup(%q) = %q, %v", spec.Name, got.Name, err)
		}
	}
	_, err := site.Lookup("nope")
	if err == nil || !strings.Contains(err.Error(), `"nope"`) || !strings.Contains(err.Error(), site.All()[0].Name) {
		t.Errorf("Lookup(nope): %v; want an error naming it and the known sites", err)
	}
}
