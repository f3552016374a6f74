package browser_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// skipUnlessChromium skips t when Chromium is missing, saying how to
// install it (under CI, WILDAWM_CI set, it fails instead).
func skipUnlessChromium(t testing.TB) {
	t.Helper()
	if err := browser.Available(); err != nil {
		runtime.SkipOutsideCI(t, fmt.Sprintf("skipping: %v (apt-get install -y chromium, which puts it at %s)", err, browser.DefaultExecPath))
	}
}

func newBrowser(t *testing.T) *browser.Browser {
	return newBrowserWith(t, browser.Options{})
}

func newBrowserWith(t *testing.T, opts browser.Options) *browser.Browser {
	t.Helper()
	skipUnlessChromium(t)
	start := time.Now()
	b, err := browser.New(t.Context(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("chromium start: %v", time.Since(start))
	t.Cleanup(func() {
		if err := b.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return b
}

func TestShopEndToEnd(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	catDir := catalog.WriteTest(t)
	w := shop.MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
	site, err := shop.New(shop.Options{CatalogDir: catDir, WorldDir: w, Clock: world.FixedClock(time.Date(2026, 3, 4, 18, 0, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer site.Close()
	srv := httptest.NewServer(site.Handler())
	defer srv.Close()

	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	must(b.Navigate(ctx, srv.URL+"/login"))
	t.Logf("first navigation: %v", time.Since(start))
	must(b.SetValue(ctx, "#login-username", shop.TestUser))
	must(b.Type(ctx, "#login-password", shop.TestPassword))
	must(b.Click(ctx, "#login-submit"))
	if txt, err := b.Text(ctx, "#user"); err != nil || !strings.Contains(txt, shop.TestUser) {
		t.Fatalf("after login: %q, %v", txt, err)
	}

	must(b.SetValue(ctx, "#search-input", "rack surge"))
	start = time.Now()
	must(b.Click(ctx, "#search-button"))
	t.Logf("search (click + load): %v", time.Since(start))
	if u, err := b.URL(ctx); err != nil || !strings.HasSuffix(u, "/search?q=rack+surge") {
		t.Fatalf("url after search = %q, %v", u, err)
	}
	must(b.Click(ctx, `.product-card[data-sku="`+catalog.CandidateWhite+`"] a`))
	if txt, err := b.Text(ctx, "#product-title"); err != nil || txt != "RackGuard Pro 8-Outlet 1U Rack Surge Protector" {
		t.Fatalf("title = %q, %v", txt, err)
	}
	start = time.Now()
	img, err := b.ImageBytes(ctx, "#product-image")
	must(err)
	t.Logf("image bytes: %v", time.Since(start))
	want, err := os.ReadFile(filepath.Join(catDir, "home", "images", catalog.CandidateWhite+".png"))
	must(err)
	if !bytes.Equal(img, want) {
		t.Fatalf("ImageBytes: %d bytes, want the catalog's %d", len(img), len(want))
	}

	must(b.SetValue(ctx, "#qty", "2"))
	must(b.Click(ctx, "#add-to-cart"))
	if txt, err := b.Text(ctx, "#flash"); err != nil || !strings.Contains(txt, "Added 2") {
		t.Errorf("flash = %q, %v", txt, err)
	}
	html, err := b.HTML(ctx)
	must(err)
	if !strings.Contains(html, `class="cart-item" data-sku="`+catalog.CandidateWhite+`"`) {
		t.Error("cart page lacks the item")
	}
	db, err := state.OpenDB(world.DBPath(w, shop.DBName), true)
	must(err)
	defer db.Close()
	var user, sku string
	var qty int
	must(db.QueryRowContext(ctx, `SELECT username, sku, qty FROM cart_items`).Scan(&user, &sku, &qty))
	if user != shop.TestUser || sku != catalog.CandidateWhite || qty != 2 {
		t.Errorf("cart_items = (%s, %s, %d)", user, sku, qty)
	}

	png, err := b.Screenshot(ctx)
	must(err)
	if !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Error("screenshot is not a PNG")
	}
	start = time.Now()
	for range 5 {
		must(b.Navigate(ctx, srv.URL+"/p/"+catalog.CandidateBlack))
	}
	t.Logf("product page navigation (mean of 5): %v", time.Since(start)/5)

	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := b.Text(short, "#no-such-element"); err == nil || !strings.Contains(err.Error(), "#no-such-element") {
		t.Errorf("missing element: %v", err)
	}
	if err := b.Navigate(ctx, "http://127.0.0.1:1/"); err == nil || !strings.Contains(err.Error(), "127.0.0.1:1") {
		t.Errorf("unreachable url: %v", err)
	}
}

func TestCloseRemovesProfile(t *testing.T) {
	skipUnlessChromium(t)
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "wildawm-chromium-*"))
	b, err := browser.New(t.Context(), browser.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Navigate(t.Context(), "about:blank"); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := b.Navigate(t.Context(), "about:blank"); err == nil {
		t.Error("Navigate after Close succeeded")
	}
	after, _ := filepath.Glob(filepath.Join(os.TempDir(), "wildawm-chromium-*"))
	if len(after) > len(before) {
		t.Errorf("profile directories left: %v", after)
	}
}

// TestTabsAreIsolated: a tab shares the process but not the cookies, and
// closing it leaves the browser and its other tabs working.
func TestTabsAreIsolated(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	mux := http.NewServeMux()
	mux.HandleFunc("/set", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "session", Value: "tab-one", Path: "/"})
		fmt.Fprint(w, `<p id="c">set</p>`)
	})
	mux.HandleFunc("/get", func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie("session")
		v := "none"
		if err == nil {
			v = c.Value
		}
		fmt.Fprintf(w, `<p id="c">%s</p>`, v)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	one, err := b.Tab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	two, err := b.Tab(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("tab open: %v", time.Since(start))
	read := func(tab *browser.Browser, path string) string {
		t.Helper()
		if err := tab.Navigate(ctx, srv.URL+path); err != nil {
			t.Fatal(err)
		}
		s, err := tab.Text(ctx, "#c")
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	read(one, "/set")
	if got := read(one, "/get"); got != "tab-one" {
		t.Fatalf("the tab lost its own cookie: %q", got)
	}
	if got := read(two, "/get"); got != "none" {
		t.Fatalf("a second tab sees the first tab's cookie: %q", got)
	}
	if err := one.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := one.Navigate(ctx, srv.URL+"/get"); !errors.Is(err, browser.ErrGone) {
		t.Errorf("a closed tab's navigation: %v, want ErrGone", err)
	}
	if got := read(two, "/get"); got != "none" {
		t.Fatalf("after closing a tab: %q", got)
	}
	three, err := b.Tab(ctx)
	if err != nil {
		t.Fatalf("a tab after another closed: %v", err)
	}
	defer three.Close(ctx)
	if got := read(three, "/get"); got != "none" {
		t.Fatalf("a new tab inherits a closed tab's cookie: %q", got)
	}
	// The process dies under its tabs: their errors say the browser is gone.
	if err := b.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := two.Navigate(ctx, srv.URL+"/get"); !errors.Is(err, browser.ErrGone) {
		t.Errorf("a tab of a closed browser: %v, want ErrGone", err)
	}
}

// BenchmarkSessionBrowser compares the two ways a session can get a clean
// browser: a new Chromium process (what every judge and probe session did)
// and a fresh tab in a browser context of its own in a shared process.
// Each iteration opens one, loads a page and closes it.
func BenchmarkSessionBrowser(b *testing.B) {
	skipUnlessChromium(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, `<p id="c">ok</p>`) }))
	defer srv.Close()
	ctx := context.Background()
	use := func(b *testing.B, br *browser.Browser) {
		if err := br.Navigate(ctx, srv.URL); err != nil {
			b.Fatal(err)
		}
		if err := br.Close(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("new-process", func(b *testing.B) {
		for b.Loop() {
			br, err := browser.New(ctx, browser.Options{})
			if err != nil {
				b.Fatal(err)
			}
			use(b, br)
		}
	})
	b.Run("tab", func(b *testing.B) {
		parent, err := browser.New(ctx, browser.Options{})
		if err != nil {
			b.Fatal(err)
		}
		defer parent.Close(ctx)
		for b.Loop() {
			br, err := parent.Tab(ctx)
			if err != nil {
				b.Fatal(err)
			}
			use(b, br)
		}
	})
}

// TestTabsConcurrent: tabs opened at once (one takes the spare, the others
// open their own) each work, and none sees another's cookie.
func TestTabsConcurrent(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := "none"
		if c, err := r.Cookie("who"); err == nil {
			v = c.Value
		}
		if me := r.URL.Query().Get("me"); me != "" { // not /favicon.ico
			http.SetCookie(w, &http.Cookie{Name: "who", Value: me, Path: "/"})
		}
		fmt.Fprintf(w, `<p id="c">%s</p>`, v)
	}))
	defer srv.Close()
	if _, err := b.Tab(ctx); err != nil { // the first: starts the spare
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			errs <- func() error {
				tab, err := b.Tab(ctx)
				if err != nil {
					return err
				}
				defer tab.Close(context.Background())
				for n, want := range []string{"none", fmt.Sprint(i)} {
					if err := tab.Navigate(ctx, fmt.Sprintf("%s/?me=%d&n=%d", srv.URL, i, n)); err != nil {
						return err
					}
					if got, err := tab.HTML(ctx); err != nil || !strings.Contains(got, `<p id="c">`+want+`</p>`) {
						return fmt.Errorf("tab %d: %q, %v, want the cookie %q", i, got, err, want)
					}
				}
				return nil
			}()
		}()
	}
	for range 3 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}
