package kit

import (
	"bytes"
	"context"
	"html"
	"image/png"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// The accounts a suite world holds on every site.
const (
	TestUser      = "alex"
	TestPassword  = "correct horse battery"
	OtherUser     = "blake"
	OtherPassword = "another long password"
	// marker is what the suite types into text inputs: it must come back
	// escaped.
	marker = `<b class="x">note & "quote"</b>`
)

// MakeTestWorld writes a world into dir holding db/NAME.sqlite of every
// spec and the test accounts on each.
func MakeTestWorld(tb testing.TB, dir string, specs ...*Spec) string {
	tb.Helper()
	tw := state.TestWorld{Persona: "avtech", SQL: map[string][]string{}}
	var accts []world.Account
	for _, sp := range specs {
		tw.SQL[sp.Name] = sp.Schema
		accts = append(accts,
			world.Account{Site: sp.Name, Username: TestUser, PasswordHash: world.HashPassword(sp.Name, TestUser, "test", TestPassword)},
			world.Account{Site: sp.Name, Username: OtherUser, PasswordHash: world.HashPassword(sp.Name, OtherUser, "test", OtherPassword)})
	}
	state.MakeTestWorld(tb, dir, tw)
	if err := world.WriteAccounts(dir, accts); err != nil {
		tb.Fatal(err)
	}
	return dir
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Log(strings.TrimSpace(string(b)))
	return len(b), nil
}

// client is a browser without JavaScript: cookies, no redirects followed.
type client struct {
	t    *testing.T
	base string
	c    *http.Client
}

func newClient(t *testing.T, base string) *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: t, base: base, c: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

func (c *client) get(path string) (int, string, http.Header) {
	c.t.Helper()
	resp, err := c.c.Get(c.base + path)
	if err != nil {
		c.t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (c *client) post(path string, form url.Values) (int, string) {
	c.t.Helper()
	resp, err := c.c.PostForm(c.base+path, form)
	if err != nil {
		c.t.Fatalf("POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

var (
	csrfRE = regexp.MustCompile(`name="csrf_token" value="([^"]+)"`)
	hrefRE = regexp.MustCompile(`href="([^"]+)"`)
)

// csrf reads the session's CSRF token from a page.
func (c *client) csrf(path string) string {
	c.t.Helper()
	code, body, _ := c.get(path)
	m := csrfRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		c.t.Fatalf("GET %s: %d, no CSRF token", path, code)
	}
	return m[1]
}

func (c *client) login(user, pass string) {
	c.t.Helper()
	tok := c.csrf("/login")
	if code, body := c.post("/login", url.Values{"csrf_token": {tok}, "username": {user}, "password": {pass}}); code != http.StatusSeeOther {
		c.t.Fatalf("login as %s: %d\n%.400s", user, code, body)
	}
}

// formKeys returns the key of every form of action name on the page.
func formKeys(body, name string) []string {
	var keys []string
	for _, block := range strings.Split(body, `action="/do/`+name+`"`)[1:] {
		block, _, _ = strings.Cut(block, "</form>")
		key := ""
		if m := regexp.MustCompile(`name="key" value="([^"]*)"`).FindStringSubmatch(block); m != nil {
			key = html.UnescapeString(m[1])
		}
		keys = append(keys, key)
	}
	return keys
}

// validForm is a form of a that passes the inputs' checks.
func (s *Site) validForm(ctx context.Context, a *Action, key string) url.Values {
	f := url.Values{"key": {key}}
	for _, in := range a.Inputs {
		v := in.Default
		switch in.Kind {
		case "int":
			if v == "" {
				v = strconv.Itoa(in.Min)
			}
		case "select":
			if v == "" {
				opts := in.Options
				if in.OptionsSQL != "" {
					opts, _ = s.inputOptions(ctx, in, key)
				}
				if len(opts) > 0 {
					v = opts[0]
				}
			}
		case "date":
		default:
			if v == "" {
				v = marker
				if in.Name == "name" {
					v = "my-project" // a repository name
				}
			}
		}
		f.Set(in.Name, v)
	}
	return f
}

// twice posts an action's form a second time, as a double click or a
// retry does: it is done again (a redirect) or refused with a 4xx that
// changes nothing, never a 5xx (the same row under a natural key of the
// schema, a UNIQUE constraint).
func twice(t *testing.T, c *client, hash func() world.ID, action string, form url.Values) {
	t.Helper()
	before := hash()
	code, body := c.post("/do/"+action, form)
	switch {
	case code >= 500:
		t.Errorf("%s twice: %d, want a redirect or a 4xx that says why\n%.400s", action, code, body)
	case code >= 400 && hash() != before:
		t.Errorf("%s twice: refused with %d, yet the world changed", action, code)
	}
}

// Suite checks one kit site end to end over its catalog (a Build catalog
// at catDir): every list, page, filter, detail, image, login, action and
// history; bad input gets a 4xx and changes nothing (the world's hash);
// an action done twice is done again or refused with a 4xx, never a 5xx;
// one persona never sees another's rows. The world has the spec's Schema,
// natural keys included: the schema synthesis gives the site.
func Suite(t *testing.T, spec *Spec, catDir string) {
	dir := MakeTestWorld(t, filepath.Join(t.TempDir(), "world"), spec)
	s, err := New(spec, Options{WorldDir: dir, CatalogDir: catDir, Logger: slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelError})), Clock: world.FixedClock(time.Date(2026, 1, 5, 9, 30, 0, 0, time.UTC))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx := context.Background()
	hash := func() world.ID {
		t.Helper()
		h, err := state.Hash(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	c := newClient(t, srv.URL)
	if code, body, hdr := c.get("/"); code != http.StatusOK || !strings.Contains(body, spec.Title) || len(hdr.Values("Set-Cookie")) != 1 {
		t.Fatalf("GET /: %d, %d cookies set, want 200 and one\n%.400s", code, len(hdr.Values("Set-Cookie")), body)
	}

	details := map[string]string{} // list -> one record's path
	for i := range spec.Lists {
		l := &spec.Lists[i]
		code, body, _ := c.get(l.Path)
		if code != http.StatusOK || !strings.Contains(body, `id="results"`) {
			t.Fatalf("GET %s: %d\n%.600s", l.Path, code, body)
		}
		var rec string
		for _, m := range hrefRE.FindAllStringSubmatch(body, -1) {
			if strings.HasPrefix(m[1], l.Path+"/") {
				rec = html.UnescapeString(m[1])
				break
			}
		}
		if rec == "" {
			t.Fatalf("GET %s: no record links", l.Path)
		}
		details[l.Name] = rec
		if strings.Contains(body, `id="next-page"`) {
			if code, _, _ := c.get(l.Path + "?page=2"); code != http.StatusOK {
				t.Errorf("GET %s?page=2: %d", l.Path, code)
			}
		}
		for _, bad := range []string{"page=0", "page=x", "page=99999", "q=" + strings.Repeat("a", MaxQueryBytes+1)} {
			if code, _, _ := c.get(l.Path + "?" + bad); code < 400 || code > 499 {
				t.Errorf("GET %s?%s: %d, want 4xx", l.Path, bad, code)
			}
		}
		// A word of the first record's page finds it.
		_, page, _ := c.get(rec)
		m := regexp.MustCompile(`<h1 id="record-title">([^<]+)</h1>`).FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("GET %s: no record title\n%.600s", rec, page)
		}
		title := html.UnescapeString(m[1])
		word := strings.FieldsFunc(title, func(r rune) bool { return r == ' ' || r == '/' || r == ':' })[0]
		if code, body, _ := c.get(l.Path + "?q=" + url.QueryEscape(word)); code != http.StatusOK || !strings.Contains(body, html.EscapeString(title)) {
			t.Errorf("search %s for %q: %d, %q not found", l.Path, word, code, title)
		}
		for _, f := range l.Filters {
			opts, err := s.filterOptions(ctx, f)
			if err != nil {
				t.Fatal(err)
			}
			if len(opts) > 0 {
				if code, _, _ := c.get(l.Path + "?" + f.Name + "=" + url.QueryEscape(opts[0])); code != http.StatusOK {
					t.Errorf("filter %s=%s: %d", f.Name, opts[0], code)
				}
				if code, _, _ := c.get(l.Path + "?" + f.Name + "=bogus%27%20OR%201=1"); code != http.StatusBadRequest {
					t.Errorf("filter %s=bogus: %d, want 400", f.Name, code)
				}
			} else if code, _, _ := c.get(l.Path + "?" + f.Name + "=" + url.QueryEscape("7")); code != http.StatusOK {
				t.Errorf("filter %s=7: %d", f.Name, code)
			}
		}
		if l.Detail.Image != "" {
			im := regexp.MustCompile(`<img id="record-image" src="([^"]+)" alt="([^"]+)"`).FindStringSubmatch(page)
			if im == nil {
				t.Fatalf("%s: no image on %s", l.Name, rec)
			}
			code, b, hdr := c.get(im[1])
			if code != http.StatusOK || hdr.Get("Content-Type") != "image/png" {
				t.Fatalf("GET %s: %d %s", im[1], code, hdr.Get("Content-Type"))
			}
			img, err := png.Decode(bytes.NewReader([]byte(b)))
			if err != nil {
				t.Fatalf("GET %s: %v", im[1], err)
			}
			colours := map[uint32]bool{}
			bd := img.Bounds()
			for y := bd.Min.Y; y < bd.Max.Y; y += 7 {
				for x := bd.Min.X; x < bd.Max.X; x += 7 {
					r, g, b, _ := img.At(x, y).RGBA()
					colours[r>>12<<8|g>>12<<4|b>>12] = true
				}
			}
			if len(colours) < 2 {
				t.Errorf("GET %s: a blank image", im[1])
			}
		}
		for _, bad := range []string{"/no-such-record-x9", "/" + url.PathEscape("x' OR '1'='1"), "/" + url.PathEscape("<script>")} {
			if code, body, _ := c.get(l.Path + bad); code != http.StatusNotFound || strings.Contains(body, "<script>") {
				t.Errorf("GET %s%s: %d, want 404 (and escaped)", l.Path, bad, code)
			}
		}
	}

	// Login.
	tok := c.csrf("/login")
	if code, _ := c.post("/login", url.Values{"csrf_token": {tok}, "username": {TestUser}, "password": {"wrong"}}); code != http.StatusUnauthorized {
		t.Errorf("login with a wrong password: %d, want 401", code)
	}
	if code, _ := c.post("/login", url.Values{"csrf_token": {"forged"}, "username": {TestUser}, "password": {TestPassword}}); code != http.StatusForbidden {
		t.Errorf("login with a forged CSRF token: %d, want 403", code)
	}
	for _, h := range spec.Histories {
		if code, _, hdr := c.get(h.Path); code != http.StatusSeeOther || !strings.HasPrefix(hdr.Get("Location"), "/login") {
			t.Errorf("GET %s logged out: %d, want a redirect to /login", h.Path, code)
		}
	}
	for _, a := range spec.Actions {
		before := hash()
		if code, _ := c.post("/do/"+a.Name, url.Values{"csrf_token": {tok}, "key": {"x"}}); code != http.StatusUnauthorized && code != http.StatusForbidden {
			t.Errorf("%s logged out: %d, want 401", a.Name, code)
		}
		if hash() != before {
			t.Errorf("%s logged out changed the world", a.Name)
		}
	}
	c.login(TestUser, TestPassword)

	// Actions on records and on the home page, then their histories.
	acted := 0
	for i := range spec.Actions {
		a := &spec.Actions[i]
		path := "/"
		if _, ok := s.lists[a.On]; ok {
			path = details[a.On]
		} else if a.On != "" {
			continue // on a history's rows: below
		}
		code, body, _ := c.get(path)
		keys := formKeys(body, a.Name)
		if code != http.StatusOK || len(keys) == 0 {
			t.Fatalf("%s: no form on %s (%d)", a.Name, path, code)
		}
		tok := csrfRE.FindStringSubmatch(body)[1]
		form := s.validForm(ctx, a, keys[0])
		before := hash()
		forged := url.Values{}
		for k, v := range form {
			forged[k] = v
		}
		forged.Set("csrf_token", "forged")
		if code, _ := c.post("/do/"+a.Name, forged); code != http.StatusForbidden {
			t.Errorf("%s with a forged CSRF token: %d, want 403", a.Name, code)
		}
		for _, in := range a.Inputs {
			bad := url.Values{}
			for k, v := range form {
				bad[k] = v
			}
			bad.Set("csrf_token", tok)
			switch in.Kind {
			case "int":
				bad.Set(in.Name, strconv.Itoa(in.Max+1))
			case "select":
				bad.Set(in.Name, "bogus' OR 1=1 --")
			case "date":
				bad.Set(in.Name, "2026-02-30")
			default:
				bad.Set(in.Name, strings.Repeat("x", cmpInt(in.MaxLen, 2000)+1))
			}
			if code, _ := c.post("/do/"+a.Name, bad); code != http.StatusBadRequest {
				t.Errorf("%s with a bad %s: %d, want 400", a.Name, in.Name, code)
			}
		}
		if a.On != "" {
			bad := url.Values{"csrf_token": {tok}}
			for k, v := range form {
				if k != "key" {
					bad[k] = v
				}
			}
			bad.Set("key", "no-such-record-x9")
			if code, _ := c.post("/do/"+a.Name, bad); code != http.StatusNotFound {
				t.Errorf("%s on an unknown record: %d, want 404", a.Name, code)
			}
		}
		if hash() != before {
			t.Fatalf("%s: refused requests changed the world", a.Name)
		}
		form.Set("csrf_token", tok)
		code, body = c.post("/do/"+a.Name, form)
		if code != http.StatusSeeOther {
			t.Fatalf("%s %v: %d\n%.800s", a.Name, form, code, body)
		}
		if hash() == before {
			t.Errorf("%s: the world did not change", a.Name)
		}
		twice(t, c, hash, a.Name, form)
		acted++
	}
	if len(spec.Actions) > 0 && acted == 0 {
		t.Error("no action was tried")
	}
	o := newClient(t, srv.URL)
	o.login(OtherUser, OtherPassword)
	for _, h := range spec.Histories {
		code, body, _ := c.get(h.Path)
		if code != http.StatusOK {
			t.Fatalf("GET %s: %d\n%.400s", h.Path, code, body)
		}
		if strings.Contains(body, marker) {
			t.Errorf("GET %s: a typed text comes back unescaped", h.Path)
		}
		// Actions on the history's rows.
		for i := range spec.Actions {
			a := &spec.Actions[i]
			if a.On != h.Name {
				continue
			}
			keys := formKeys(body, a.Name)
			if len(keys) == 0 {
				t.Errorf("%s: no row of %s to act on", a.Name, h.Path)
				continue
			}
			before := hash()
			// Another persona cannot act on this persona's row.
			_, obody, _ := o.get(h.Path)
			oform := s.validForm(ctx, a, keys[0])
			oform.Set("csrf_token", csrfRE.FindStringSubmatch(obody)[1])
			if code, _ := o.post("/do/"+a.Name, oform); code != http.StatusNotFound {
				t.Errorf("%s by %s on %s's row %s: %d, want 404", a.Name, OtherUser, TestUser, keys[0], code)
			}
			if hash() != before {
				t.Fatalf("%s by %s on %s's row changed the world", a.Name, OtherUser, TestUser)
			}
			tok := csrfRE.FindStringSubmatch(body)[1]
			form := s.validForm(ctx, a, keys[0])
			form.Set("csrf_token", tok)
			if code, b := c.post("/do/"+a.Name, form); code != http.StatusSeeOther {
				t.Errorf("%s on %s: %d\n%.400s", a.Name, keys[0], code, b)
			} else if hash() == before {
				t.Errorf("%s on %s: the world did not change", a.Name, keys[0])
			}
			twice(t, c, hash, a.Name, form)
		}
	}

	t.Logf("%d lists, %d of %d actions on records or the home page, %d histories", len(spec.Lists), acted, len(spec.Actions), len(spec.Histories))

	// Another persona sees none of it.
	for _, h := range spec.Histories {
		_, mine, _ := c.get(h.Path)
		code, theirs, _ := o.get(h.Path)
		if code != http.StatusOK {
			t.Errorf("GET %s as %s: %d", h.Path, OtherUser, code)
		}
		if strings.Contains(mine, "<tbody><tr>") && strings.Contains(theirs, "<tbody><tr>") {
			t.Errorf("GET %s: %s sees rows of %s", h.Path, OtherUser, TestUser)
		}
	}
}
