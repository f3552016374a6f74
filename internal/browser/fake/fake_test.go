package fake_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/browser/fake"
)

func newFake(t *testing.T, opts fake.Options) *fake.Browser {
	t.Helper()
	b, err := fake.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close(context.Background()) })
	return b
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// TestSnapshotGolden: the fake's snapshot of the real browser's test page
// is Chromium's (internal/browser/testdata/snapshot.txt), but for the
// element only a style sheet hides.
func TestSnapshotGolden(t *testing.T) {
	page, err := os.ReadFile("../testdata/snapshot.html")
	must(t, err)
	golden, err := os.ReadFile("../testdata/snapshot.txt")
	must(t, err)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(page) }))
	defer srv.Close()
	b := newFake(t, fake.Options{})
	ctx := t.Context()
	must(t, b.Navigate(ctx, srv.URL+"/page"))
	got, err := b.Snapshot(ctx)
	must(t, err)
	want := strings.Replace(string(golden), "after a break\n", "after a break\nstyled away\n", 1)
	if got = strings.ReplaceAll(got, srv.URL, "ORIGIN"); got != want {
		t.Errorf("snapshot:\n%s\nwant:\n%s", got, want)
	}
	if txt, err := b.Text(ctx, browser.Ref(1)); err != nil || txt != "Home page" {
		t.Errorf("Text(Ref(1)) = %q, %v", txt, err)
	}
	if txt, err := b.Text(ctx, "h1"); err != nil || txt != "Hello, world!" {
		t.Errorf("Text(h1) = %q, %v", txt, err)
	}
}

// twoSites: own is the allowed origin, other counts the requests it gets.
func twoSites(t *testing.T) (own, other *httptest.Server, hits *atomic.Int64) {
	t.Helper()
	hits = &atomic.Int64{}
	other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		fmt.Fprint(w, `<p id="where">other</p>`)
	}))
	t.Cleanup(other.Close)
	o := other.URL
	own = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, o+"/landed", http.StatusFound)
		case "/redirect-own":
			http.Redirect(w, r, "/two", http.StatusFound)
		case "/pic.png":
			w.Header().Set("Content-Type", "image/png")
			w.Write([]byte("\x89PNG fake"))
		case "/two":
			fmt.Fprint(w, `<p id="where">two</p>`)
		default:
			fmt.Fprint(w, `<p id="where">own</p><a id="same" href="/two">two</a><a id="away" href="`+o+`/x">away</a>`+
				`<img id="pic" src="/pic.png" alt="own"><img id="far" src="`+o+`/pic.png" alt="far">`+
				`<form id="f" method="post" action="`+o+`/steal"><input name="secret" value="s3"><button id="go">Send</button></form>`+
				`<meta http-equiv="refresh" content="0;url=`+o+`/meta"><script>location.href = "`+o+`/js"; fetch("`+o+`/api")</script>`)
		}
	}))
	t.Cleanup(own.Close)
	return own, other, hits
}

func TestOriginRule(t *testing.T) {
	own, other, hits := twoSites(t)
	b := newFake(t, fake.Options{AllowOrigins: []string{own.URL}})
	ctx := t.Context()
	refused := func(err error, what string) {
		t.Helper()
		if !errors.Is(err, browser.ErrRefused) || !strings.Contains(err.Error(), other.URL) || !strings.Contains(err.Error(), "allows only") {
			t.Errorf("%s: %v, want ErrRefused naming %s", what, err, other.URL)
		}
	}
	must(t, b.Navigate(ctx, own.URL+"/"))
	must(t, b.Click(ctx, "#same"))
	if s, _ := b.Text(ctx, "#where"); s != "two" {
		t.Errorf("own link: %q", s)
	}
	must(t, b.Navigate(ctx, own.URL+"/redirect-own"))
	if s, _ := b.Text(ctx, "#where"); s != "two" {
		t.Errorf("own redirect: %q", s)
	}
	refused(b.Navigate(ctx, other.URL+"/"), "navigate")
	must(t, b.Navigate(ctx, own.URL+"/"))
	refused(b.Click(ctx, "#away"), "a link")
	refused(b.Navigate(ctx, own.URL+"/redirect"), "a redirect")
	refused(b.Click(ctx, "#go"), "a form post")
	_, err := b.ImageBytes(ctx, "#far")
	refused(err, "an image")
	img, err := b.ImageBytes(ctx, "#pic")
	if err != nil || string(img) != "\x89PNG fake" {
		t.Errorf("own image: %q, %v", img, err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	free := newFake(t, fake.Options{})
	must(t, free.Navigate(ctx, other.URL+"/"))
	if hits.Load() != 1 {
		t.Error("a fake without a rule did not reach the other origin")
	}
}

// TestForms: a login with a CSRF token and a cookie, a GET search form, a
// select, checkboxes and radio buttons, Submit, Back.
func TestForms(t *testing.T) {
	var last atomic.Value
	mux := http.NewServeMux()
	mux.HandleFunc("GET /login", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "csrf", Value: "tok", Path: "/"})
		fmt.Fprint(w, `<form method="post" action="/login"><input type="hidden" name="csrf_token" value="tok">
<input id="u" name="username"><input id="p" name="password" type="password">
<select id="lang" name="lang"><option value="en">English</option><option value="fr">French</option></select>
<input type="checkbox" id="keep" name="keep" value="yes"><label for="keep">Keep me</label>
<input type="radio" name="r" value="a" checked><input type="radio" id="rb" name="r" value="b">
<textarea id="note" name="note">hi</textarea><input name="off" disabled value="x">
<button id="go" name="action" value="login">Log in</button></form>`)
	})
	mux.HandleFunc("POST /login", func(w http.ResponseWriter, r *http.Request) {
		body := make([]byte, r.ContentLength)
		r.Body.Read(body)
		last.Store(string(body))
		c, err := r.Cookie("csrf")
		if err != nil || c.Value != "tok" {
			http.Error(w, "no cookie", http.StatusForbidden)
			return
		}
		http.Redirect(w, r, "/home", http.StatusSeeOther)
	})
	mux.HandleFunc("GET /home", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `<title>Home</title><p id="who">signed in</p><form action="/search"><input id="q" name="q" type="search"><input type="submit" id="s"></form>`)
	})
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, `<p id="q">%s</p>`, r.URL.RawQuery)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := newFake(t, fake.Options{AllowOrigins: []string{srv.URL}})
	ctx := t.Context()
	if err := b.Back(ctx); err == nil || !strings.Contains(err.Error(), "no previous page") {
		t.Errorf("Back on a new fake: %v", err)
	}
	must(t, b.Navigate(ctx, srv.URL+"/login"))
	must(t, b.SetValue(ctx, "#u", "ada"))
	must(t, b.SetValue(ctx, "#p", "pw word"))
	must(t, b.Select(ctx, "#lang", "French"))
	must(t, b.Click(ctx, `label[for="keep"]`))
	must(t, b.Click(ctx, "#rb"))
	must(t, b.SetValue(ctx, "#note", "two\nlines"))
	err := b.Select(ctx, "#lang", "German")
	if err == nil || !strings.Contains(err.Error(), `"English" (value "en")`) || !strings.Contains(err.Error(), "#lang") {
		t.Errorf("Select of a missing option: %v", err)
	}
	snap, err := b.Snapshot(ctx)
	must(t, err)
	for _, want := range []string{`combobox "" selected="French"`, `checkbox "Keep me" checked`, `textbox "" password filled`, `button "Log in"`} {
		if !strings.Contains(snap, want) {
			t.Errorf("snapshot lacks %q:\n%s", want, snap)
		}
	}
	must(t, b.Click(ctx, "#go"))
	want := "csrf_token=tok&username=ada&password=pw+word&lang=fr&keep=yes&r=b&note=two%0D%0Alines&action=login"
	if got := last.Load(); got != want {
		t.Errorf("the form sent\n%s\nwant\n%s", got, want)
	}
	if u, _ := b.URL(ctx); u != srv.URL+"/home" {
		t.Errorf("after login: %s", u)
	}
	must(t, b.SetValue(ctx, "#q", "rack surge"))
	must(t, b.Click(ctx, "#s"))
	if q, _ := b.Text(ctx, "#q"); q != "q=rack+surge" {
		t.Errorf("search query %q", q)
	}
	must(t, b.Back(ctx))
	if u, _ := b.URL(ctx); u != srv.URL+"/home" {
		t.Errorf("after Back: %s", u)
	}
	must(t, b.SetValue(ctx, "#q", "x"))
	must(t, b.Submit(ctx, "#q"))
	if q, _ := b.Text(ctx, "#q"); q != "q=x" {
		t.Errorf("Submit query %q", q)
	}
	must(t, b.Scroll(ctx, 300))
	shot, err := b.Screenshot(ctx)
	must(t, err)
	if _, err := png.Decode(bytes.NewReader(shot)); err != nil {
		t.Errorf("the screenshot is no PNG: %v", err)
	}
	if err := b.Click(ctx, "#nothing"); err == nil || !strings.Contains(err.Error(), "#nothing") || !strings.Contains(err.Error(), "Snapshot") {
		t.Errorf("a missing element: %v", err)
	}
	if err := b.Click(ctx, "a:hover"); err == nil || !strings.Contains(err.Error(), "a:hover") || !strings.Contains(err.Error(), "#id") {
		t.Errorf("an unsupported selector: %v", err)
	}
	must(t, b.Close(ctx))
	if err := b.Navigate(ctx, srv.URL); !errors.Is(err, browser.ErrGone) {
		t.Errorf("after Close: %v, want ErrGone", err)
	}
}

func TestSelectors(t *testing.T) {
	page := `<div id="top" class="a b"><form action="/do/x"><input name="n" data-k="v1"><button>Go</button></form>
<table id="results"><tbody><tr><td><a href="/1">one</a></td></tr></tbody></table>
<div class="product-card" data-sku="S-1"><a href="/p/1">p1</a></div><div class="product-card" data-sku="S-2"><span><a href="/p/2">p2</a></span></div>
<p class="account"><strong>ada</strong></p></div>`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, page) }))
	defer srv.Close()
	b := newFake(t, fake.Options{})
	ctx := t.Context()
	must(t, b.Navigate(ctx, srv.URL))
	for sel, want := range map[string]string{
		`#results tbody a`:                  "one",
		`.product-card[data-sku="S-2"] a`:   "p2",
		`.product-card[data-sku='S-1'] > a`: "p1",
		`form[action="/do/x"] button`:       "Go",
		`.account strong`:                   "ada",
		`div.a.b > p.account > strong`:      "ada",
		`nope, .account strong`:             "ada",
		`[data-sku^="S-"] a`:                "p1",
		`TABLE a`:                           "one",
	} {
		if got, err := b.Text(ctx, sel); err != nil || got != want {
			t.Errorf("Text(%s) = %q, %v, want %q", sel, got, err, want)
		}
	}
	if _, err := b.Text(ctx, `.product-card[data-sku="S-2"] > a`); err == nil {
		t.Error("a child combinator matched a grandchild")
	}
	must(t, b.SetValue(ctx, `form[action="/do/x"] [name="n"]`, "v"))
	if err := b.SetValue(ctx, "#top", "v"); err == nil || !strings.Contains(err.Error(), "<div>") {
		t.Errorf("SetValue on a div: %v", err)
	}
}

// browserMethods is every method the fake shares with the real browser.
type browserMethods interface {
	Navigate(ctx context.Context, url string) error
	Click(ctx context.Context, selector string) error
	SetValue(ctx context.Context, selector, value string) error
	Type(ctx context.Context, selector, text string) error
	Select(ctx context.Context, selector, value string) error
	Submit(ctx context.Context, selector string) error
	Text(ctx context.Context, selector string) (string, error)
	ImageBytes(ctx context.Context, selector string) ([]byte, error)
	HTML(ctx context.Context) (string, error)
	URL(ctx context.Context) (string, error)
	Snapshot(ctx context.Context) (string, error)
	Scroll(ctx context.Context, dy int) error
	Back(ctx context.Context) error
	Screenshot(ctx context.Context) ([]byte, error)
	Close(ctx context.Context) error
}

var (
	_ browserMethods = (*fake.Browser)(nil)
	_ browserMethods = (*browser.Browser)(nil)
)
