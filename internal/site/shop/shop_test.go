package shop_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// catalogDir is written once for the whole test binary.
var catalogDir string

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "shop-catalog")
	if err != nil {
		panic(err)
	}
	catalogDir = filepath.Join(tmp, "catalog")
	if err := catalog.Write(context.Background(), catalogDir, generator.Default()); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(tmp)
	os.Exit(code)
}

var testClock = world.FixedClock(time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC))

type env struct {
	t     *testing.T
	world string
	site  *shop.Site
	srv   *httptest.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	w := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	s, err := shop.New(shop.Options{CatalogDir: catalogDir, WorldDir: w, Clock: testClock})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return &env{t: t, world: w, site: s, srv: srv}
}

func (e *env) hash() world.ID {
	e.t.Helper()
	h, err := state.Hash(context.Background(), e.world)
	if err != nil {
		e.t.Fatal(err)
	}
	return h
}

// unchanged runs fn and fails if the world's hash changed.
func (e *env) unchanged(what string, fn func()) {
	e.t.Helper()
	before := e.hash()
	snap := filepath.Join(e.t.TempDir(), "before")
	if err := state.Copy(context.Background(), e.world, snap); err != nil {
		e.t.Fatal(err)
	}
	fn()
	if after := e.hash(); after != before {
		d, _ := state.Compare(context.Background(), snap, e.world)
		e.t.Errorf("%s changed the world: %s", what, d.First())
	}
}

type client struct {
	e    *env
	c    *http.Client
	csrf string
}

func (e *env) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{e: e, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

var csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)

func (c *client) do(req *http.Request) (int, string) {
	c.e.t.Helper()
	resp, err := c.c.Do(req)
	if err != nil {
		c.e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := csrfRE.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	if csp := resp.Header.Get("Content-Security-Policy"); csp != "default-src 'self'; img-src 'self'" {
		c.e.t.Errorf("%s %s: CSP %q", req.Method, req.URL, csp)
	}
	return resp.StatusCode, string(b)
}

func (c *client) get(path string) (int, string) {
	c.e.t.Helper()
	req, _ := http.NewRequest("GET", c.e.srv.URL+path, nil)
	return c.do(req)
}

// post sends form with the client's current CSRF token unless form sets one.
func (c *client) post(path string, form url.Values) (int, string) {
	c.e.t.Helper()
	if _, ok := form["csrf_token"]; !ok {
		form.Set("csrf_token", c.csrf)
	}
	req, _ := http.NewRequest("POST", c.e.srv.URL+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(req)
}

func (c *client) login() {
	c.e.t.Helper()
	c.get("/login")
	if st, body := c.post("/login", url.Values{"username": {shop.TestUser}, "password": {shop.TestPassword}}); st != http.StatusSeeOther {
		c.e.t.Fatalf("login: %d %s", st, body)
	}
}

func (e *env) cartRows() string {
	e.t.Helper()
	db, err := state.OpenDB(world.DBPath(e.world, "shop"), true)
	if err != nil {
		e.t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT id, username, sku, qty, added_at FROM cart_items ORDER BY id`)
	if err != nil {
		e.t.Fatal(err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id, qty int
		var u, sku, at string
		rows.Scan(&id, &u, &sku, &qty, &at)
		out = append(out, fmt.Sprintf("%d %s %s %d %s", id, u, sku, qty, at))
	}
	return strings.Join(out, "; ")
}

func TestLogin(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	if st, body := c.get("/login"); st != 200 || !strings.Contains(body, `id="login-username"`) || !strings.Contains(body, `id="login-submit"`) {
		t.Fatalf("GET /login: %d", st)
	}
	e.unchanged("bad login", func() {
		for _, pw := range []string{"wrong", "", shop.TestPassword + " "} {
			st, body := c.post("/login", url.Values{"username": {shop.TestUser}, "password": {pw}})
			if st != http.StatusUnauthorized || !strings.Contains(body, "wrong username or password") {
				t.Errorf("bad password %q: %d", pw, st)
			}
		}
		if st, _ := c.post("/login", url.Values{"username": {"nobody"}, "password": {shop.TestPassword}}); st != 401 {
			t.Errorf("unknown user: %d", st)
		}
	})
	if _, body := c.get("/"); strings.Contains(body, "Signed in") {
		t.Error("signed in after bad logins")
	}
	c.login()
	if _, body := c.get("/"); !strings.Contains(body, "Signed in as alex") {
		t.Error("not signed in after login")
	}
	c.post("/logout", url.Values{})
	if st, _ := c.get("/cart"); st != http.StatusSeeOther {
		t.Errorf("GET /cart after logout: %d, want redirect to login", st)
	}
}

func TestSearchAndProduct(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	st, body := c.get("/search?q=rack+surge")
	if st != 200 {
		t.Fatalf("search: %d", st)
	}
	for _, sku := range []string{catalog.CandidateWhite, catalog.CandidateBlack} {
		if !strings.Contains(body, `class="product-card" data-sku="`+sku+`"`) || !strings.Contains(body, `<a href="/p/`+sku+`"><img class="thumb" src="/images/`+sku+`.png"`) {
			t.Errorf("search results lack %s", sku)
		}
	}
	if strings.Contains(body, "CB-XLR10") {
		t.Error("search rack surge lists a cable")
	}
	visual := regexp.MustCompile(`(?i)\b(white|black|colou?r|gr[ae]y|display|screen|readout|lcd)\b`)
	for _, sku := range []string{catalog.CandidateWhite, catalog.CandidateBlack} {
		st, body := c.get("/p/" + sku)
		if st != 200 {
			t.Fatalf("product %s: %d", sku, st)
		}
		for _, want := range []string{`id="product-title">RackGuard Pro 8-Outlet 1U Rack Surge Protector<`, `id="product-specs"`, `<td>2700 J</td>`, `<td>1U</td>`, `$149.99`,
			`<img id="product-image" src="/images/` + sku + `.png" alt="Product photo"`, `id="qty"`, `id="add-to-cart"`} {
			if !strings.Contains(body, want) {
				t.Errorf("product %s lacks %s", sku, want)
			}
		}
		if m := visual.FindString(body); m != "" {
			t.Errorf("product %s page says %q", sku, m)
		}
	}
	st, img := c.get("/images/" + catalog.CandidateWhite + ".png")
	want, _ := os.ReadFile(filepath.Join(catalogDir, "home", "images", catalog.CandidateWhite+".png"))
	if st != 200 || img != string(want) {
		t.Errorf("image: %d, %d bytes, want %d", st, len(img), len(want))
	}
	if st, _ := c.get("/p/NOPE-1"); st != 404 {
		t.Errorf("unknown product: %d", st)
	}
}

func TestCart(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.get("/p/" + catalog.CandidateWhite)
	e.unchanged("add without login", func() {
		if st, body := c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"1"}}); st != 401 {
			t.Errorf("add without login: %d %s", st, body)
		}
	})
	c.login()
	c.get("/p/" + catalog.CandidateWhite)
	if st, _ := c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"2"}}); st != http.StatusSeeOther {
		t.Fatalf("add: %d", st)
	}
	if got, want := e.cartRows(), "1 alex "+catalog.CandidateWhite+" 2 2026-03-04 18:00:00"; got != want {
		t.Errorf("cart = %q, want %q", got, want)
	}
	_, body := c.get("/cart")
	if !strings.Contains(body, `<tr class="cart-item" data-sku="`+catalog.CandidateWhite+`">`) || !strings.Contains(body, `id="flash"`) || !strings.Contains(body, "Added 2") {
		t.Errorf("cart page: %s", body)
	}
	c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"3"}})
	c.post("/cart/add", url.Values{"sku": {catalog.CandidateBlack}, "qty": {"1"}})
	if got, want := e.cartRows(), "1 alex "+catalog.CandidateWhite+" 5 2026-03-04 18:00:00; 2 alex "+catalog.CandidateBlack+" 1 2026-03-04 18:00:00"; got != want {
		t.Errorf("cart = %q, want %q", got, want)
	}
	e.unchanged("bad adds", func() {
		for _, q := range []string{"0", "100", "-1", "abc", "", "1.5", "95"} {
			st, body := c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {q}})
			if st != 400 || !strings.Contains(body, "id=\"error-message\"") {
				t.Errorf("qty %q: %d", q, st)
			}
		}
		if st, _ := c.post("/cart/add", url.Values{"sku": {"NOPE-1"}, "qty": {"1"}}); st != 404 {
			t.Errorf("unknown sku: %d", st)
		}
		if st, _ := c.post("/cart/remove", url.Values{"sku": {"CB-XLR10"}}); st != 404 {
			t.Errorf("remove missing: %d", st)
		}
	})
	if st, _ := c.post("/cart/remove", url.Values{"sku": {catalog.CandidateBlack}}); st != http.StatusSeeOther {
		t.Errorf("remove: %d", st)
	}
	if got, want := e.cartRows(), "1 alex "+catalog.CandidateWhite+" 5 2026-03-04 18:00:00"; got != want {
		t.Errorf("cart = %q, want %q", got, want)
	}
	if st, _ := c.post("/checkout", url.Values{}); st != http.StatusSeeOther {
		t.Fatalf("checkout: %d", st)
	}
	if got := e.cartRows(); got != "" {
		t.Errorf("cart after checkout = %q", got)
	}
	_, body = c.get("/orders")
	if !strings.Contains(body, `data-order-no="SO-100001"`) || !strings.Contains(body, "$749.95") {
		t.Errorf("orders page: %s", body)
	}
	e.unchanged("empty checkout", func() {
		if st, _ := c.post("/checkout", url.Values{}); st != 400 {
			t.Errorf("empty checkout: %d", st)
		}
	})
}

func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	c.get("/")
	good := c.csrf
	e.unchanged("bad requests", func() {
		if st, _ := c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"1"}, "csrf_token": {""}}); st != 403 {
			t.Errorf("missing csrf: %d", st)
		}
		if st, _ := c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"1"}, "csrf_token": {good + "x"}}); st != 403 {
			t.Errorf("wrong csrf: %d", st)
		}
		for _, mp := range [][2]string{{"DELETE", "/cart"}, {"PUT", "/cart/add"}, {"GET", "/cart/add"}, {"POST", "/p/RG8-1001"}, {"POST", "/"}} {
			req, _ := http.NewRequest(mp[0], e.srv.URL+mp[1], nil)
			if st, body := c.do(req); st != 405 || !strings.Contains(body, `id="error-message"`) {
				t.Errorf("%s %s: %d", mp[0], mp[1], st)
			}
		}
		if st, _ := c.get("/nope"); st != 404 {
			t.Errorf("unknown path: %d", st)
		}
		big := url.Values{"sku": {catalog.CandidateWhite}, "qty": {"1"}, "pad": {strings.Repeat("x", 2<<20)}}
		if st, _ := c.post("/cart/add", big); st != 413 {
			t.Errorf("big body: %d", st)
		}
		// A chunked body (no Content-Length) over the limit.
		req, _ := http.NewRequest("POST", e.srv.URL+"/cart/add", io.MultiReader(strings.NewReader("csrf_token="+good+"&sku=RG8-1001&qty=1&pad="), strings.NewReader(strings.Repeat("y", 2<<20))))
		req.ContentLength = -1
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if st, _ := c.do(req); st != 413 {
			t.Errorf("big chunked body: %d", st)
		}
		for _, p := range []string{"/images/../db/shop.sqlite", "/images/%2e%2e/db/shop.sqlite", "/images/%2e%2e%2fmanifest.json", "/images/..%2f..%2fmanifest.json",
			"/images/x.txt", "/images/.png", "/images/RG8-1001.png/", "/images/%2fetc%2fpasswd.png", "/images/NOPE.png", "/static/../images/x.png"} {
			rec := httptest.NewRecorder()
			e.site.Handler().ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
			if rec.Code != 404 && rec.Code != 400 {
				t.Errorf("GET %s: %d", p, rec.Code)
			}
		}
	})
	if got := e.cartRows(); got != "" {
		t.Errorf("cart = %q after bad requests", got)
	}
}

func TestTwoSites(t *testing.T) {
	a, b := newEnv(t), newEnv(t)
	ca := a.client()
	ca.login()
	ca.get("/")
	ca.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"2"}})
	// Replay A's cookie against B.
	u, _ := url.Parse(a.srv.URL)
	var cookie *http.Cookie
	for _, ck := range ca.c.Jar.Cookies(u) {
		if ck.Name == shop.SessionCookie {
			cookie = ck
		}
	}
	if cookie == nil {
		t.Fatal("no session cookie")
	}
	req, _ := http.NewRequest("GET", b.srv.URL+"/cart", nil)
	req.AddCookie(cookie)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther {
		t.Errorf("B accepted A's session: %d", resp.StatusCode)
	}
	if got := b.cartRows(); got != "" {
		t.Errorf("B's cart = %q", got)
	}
	if got := a.cartRows(); got != "1 alex "+catalog.CandidateWhite+" 2 2026-03-04 18:00:00" {
		t.Errorf("A's cart = %q", got)
	}
	cb := b.client()
	cb.login()
	if _, body := cb.get("/cart"); !strings.Contains(body, `id="cart-empty"`) {
		t.Error("B's cart is not empty")
	}
}

func TestWorldResetUnderneath(t *testing.T) {
	e := newEnv(t)
	c := e.client()
	c.login()
	c.get("/")
	c.post("/cart/add", url.Values{"sku": {catalog.CandidateWhite}, "qty": {"2"}})
	// Replace the world's database with a fresh one, as a reset does.
	fresh := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "fresh"))
	if err := os.Rename(world.DBPath(fresh, "shop"), world.DBPath(e.world, "shop")); err != nil {
		t.Fatal(err)
	}
	if _, body := c.get("/cart"); !strings.Contains(body, `id="cart-empty"`) {
		t.Error("cart still shows rows of the replaced database")
	}
	c.post("/cart/add", url.Values{"sku": {catalog.CandidateBlack}, "qty": {"1"}})
	if got := e.cartRows(); got != "1 alex "+catalog.CandidateBlack+" 1 2026-03-04 18:00:00" {
		t.Errorf("cart = %q", got)
	}
}
