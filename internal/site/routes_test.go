package site_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/site/calc"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/maps"
	"github.com/wildawm/wildawm/internal/site/search"
	"github.com/wildawm/wildawm/internal/world"
)

func serveKit(t *testing.T, spec *kit.Spec, urls map[string]string) *httptest.Server {
	t.Helper()
	cat := builtCatalog(t)
	w := kit.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), spec)
	s, err := kit.New(spec, kit.Options{WorldDir: w, CatalogDir: cat, Clock: world.FixedClock(time.Date(2026, 1, 5, 9, 0, 0, 0, time.UTC)),
		SiteURL: func(name string) string { return urls[name] }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(func() { srv.Close(); s.Close() })
	return srv
}

func get(t *testing.T, u string) (int, string) {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestWebSearch: the search engine finds another site's page by its words
// and links to it on that site; FTS syntax in a query is only words.
func TestWebSearch(t *testing.T) {
	srv := serveKit(t, search.Spec(), map[string]string{"recipes": "http://recipes.example"})
	code, body := get(t, srv.URL+"/?q="+url.QueryEscape("Japanese Chickpeas"))
	if code != http.StatusOK || !strings.Contains(body, `href="http://recipes.example/r/japanese-chickpeas`) {
		t.Fatalf("search: %d\n%.1500s", code, body)
	}
	for _, q := range []string{`title:"x" OR NEAR(a b)`, `"unbalanced`, `*`, `a AND -`} {
		if code, body := get(t, srv.URL+"/?q="+url.QueryEscape(q)); code != http.StatusOK {
			t.Errorf("search %q: %d\n%.300s", q, code, body)
		}
	}
	if code, _ := get(t, srv.URL+"/?q=chickpeas&page=999"); code != http.StatusNotFound {
		t.Errorf("page 999: %d, want 404", code)
	}
	if m := search.Match(`a"b OR c*`); m != `"a" "b" "OR" "c"` {
		t.Errorf("Match = %s", m)
	}
}

// TestCalculatorPage and TestDistance: the two sites whose pages are
// computed, not listed.
func TestCalculatorPage(t *testing.T) {
	srv := serveKit(t, calc.Spec(), nil)
	code, body := get(t, srv.URL+"/?q="+url.QueryEscape("72 f in c"))
	if code != http.StatusOK || !strings.Contains(body, `<dd id="calc-answer"><strong>22.222222 °C</strong>`) {
		t.Fatalf("calc: %d\n%.1000s", code, body)
	}
	code, body = get(t, srv.URL+"/?q="+url.QueryEscape("<script>1/0"))
	if code != http.StatusOK || strings.Contains(body, "<script>") || !strings.Contains(body, `id="calc-error"`) {
		t.Errorf("a bad calculation: %d\n%.1000s", code, body)
	}
}

func TestDistance(t *testing.T) {
	srv := serveKit(t, maps.Spec(), nil)
	code, body := get(t, srv.URL+"/distance?from=1&to=45")
	if code != http.StatusOK || !strings.Contains(body, `id="distance-km"`) {
		t.Fatalf("distance: %d\n%.1000s", code, body)
	}
	code, body = get(t, srv.URL+"/distance?from=1&to=1")
	if !strings.Contains(body, ">0.00 km<") {
		t.Errorf("a place to itself: %d\n%.600s", code, body)
	}
	for _, q := range []string{"from=x&to=1", "from=1&to=999999", "from=-3&to=1"} {
		if code, _ := get(t, srv.URL+"/distance?"+q); code < 400 || code > 499 {
			t.Errorf("distance?%s: %d, want 4xx", q, code)
		}
	}
}

// TestSavedSearchLinks: a saved search links back to its results with its
// words intact (& and + in a query are escaped as a query's value).
func TestSavedSearchLinks(t *testing.T) {
	cat := builtCatalog(t)
	spec := search.Spec()
	w := kit.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), spec)
	s, err := kit.New(spec, kit.Options{WorldDir: w, CatalogDir: cat})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Do(t.Context(), "save-search", kit.TestUser, "", map[string]string{"query": "salt & pepper c++"}, "2026-03-02 10:00:00"); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(s)
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.Get(srv.URL + "/login")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	tok := regexp.MustCompile(`name="csrf_token" value="([^"]+)"`).FindStringSubmatch(string(b))[1]
	resp, err = c.PostForm(srv.URL+"/login", url.Values{"csrf_token": {tok}, "username": {kit.TestUser}, "password": {kit.TestPassword}, "next": {"/saved"}})
	if err != nil {
		t.Fatal(err)
	}
	b, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `href="/?q=salt&#43;%26&#43;pepper&#43;c%2B%2B"`; !strings.Contains(string(b), want) && !strings.Contains(string(b), `href="/?q=salt+%26+pepper+c%2B%2B"`) {
		t.Errorf("saved searches page: no link %s\n%.1500s", want, b)
	}
}
