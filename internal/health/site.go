package health

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/site/kit"
	"github.com/wildawm/wildawm/internal/site/shop"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// Limits of the site checks.
const (
	httpTimeout  = 30 * time.Second
	maxPageBytes = 4 << 20
)

var (
	tagRE  = regexp.MustCompile(`<[a-zA-Z][^>]*>`)
	attrRE = regexp.MustCompile(`([a-zA-Z_:][-a-zA-Z0-9_:.]*)\s*=\s*"([^"]*)"`)
	userRE = regexp.MustCompile(`<span id="user">([^<]*)</span>`)
)

// element is an HTML start tag's attributes.
type element map[string]string

func (e element) hasClass(c string) bool { return slices.Contains(strings.Fields(e["class"]), c) }

// elements returns the start tags of page, each as its attributes.
func elements(page string) []element {
	var out []element
	for _, tag := range tagRE.FindAllString(page, -1) {
		e := element{}
		for _, m := range attrRE.FindAllStringSubmatch(tag, -1) {
			e[strings.ToLower(m[1])] = html.UnescapeString(m[2])
		}
		out = append(out, e)
	}
	return out
}

// fetched is one page after redirects.
type fetched struct {
	status int
	path   string // the final URL's path
	body   string
}

// browser is a cookie-keeping HTTP client on one site.
type browser struct {
	base   string
	client *http.Client
}

func newBrowser(base string) *browser {
	jar, _ := cookiejar.New(nil) // nil options: cannot fail
	return &browser{base: base, client: &http.Client{Jar: jar, Timeout: httpTimeout}}
}

func (b *browser) do(ctx context.Context, method, path string, form url.Values) (*fetched, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, b.base+path, body)
	if err != nil {
		return nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	page, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes))
	if err != nil {
		return nil, err
	}
	return &fetched{status: resp.StatusCode, path: resp.Request.URL.Path, body: string(page)}, nil
}

// problemFunc returns a func that records a problem of ra and returns
// nil, or returns ctx's error once ctx has ended.
func (c *checker) problemFunc(ctx context.Context, ra *Account) func(err error, format string, args ...any) error {
	return func(err error, format string, args ...any) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			args = append(args, err)
			format += ": %v"
		}
		c.accountProblem(ra, format, args...)
		return nil
	}
}

// login posts the login form of the site b browses (named name in
// problems) and returns the page it leads to; nil after fail recorded why
// not, with fail's error.
func login(ctx context.Context, b *browser, name, user, pass string, ra *Account, fail func(error, string, ...any) error) (*fetched, error) {
	form, err := b.do(ctx, http.MethodGet, "/login", nil)
	if err != nil || form.status != http.StatusOK {
		return nil, fail(err, "GET /login on %s failed%s", name, statusNote(form))
	}
	csrf := ""
	for _, e := range elements(form.body) {
		if e["name"] == "csrf_token" {
			csrf = e["value"]
			break
		}
	}
	if csrf == "" {
		return nil, fail(nil, "the login form of %s has no csrf_token; fix its login template", name)
	}
	home, err := b.do(ctx, http.MethodPost, "/login", url.Values{"username": {user}, "password": {pass}, "csrf_token": {csrf}})
	if err != nil || home.status != http.StatusOK {
		return nil, fail(err, "%s refused the login with the password from %s%s; fix the account in accounts.json or the note", name, ra.CredentialsFoundIn, statusNote(home))
	}
	return home, nil
}

// checkShop logs in on the instance's shop as user and renders the order
// history and the cart. Failures are problems of ra; the error is only
// ctx's.
func (c *checker) checkShop(ctx context.Context, inst *runtime.Instance, user, pass string, ra *Account) error {
	b := newBrowser(inst.SiteURL(shop.SiteName))
	fail := c.problemFunc(ctx, ra)
	home, err := login(ctx, b, "the shop", user, pass, ra, fail)
	if home == nil {
		return err
	}
	m := userRE.FindStringSubmatch(home.body)
	if m == nil || html.UnescapeString(m[1]) != "Signed in as "+user {
		return fail(nil, "after logging in the shop does not show #user signed in as %s", user)
	}
	ra.LoggedIn = true

	db, err := state.OpenDB(world.DBPath(inst.Dir(), shop.DBName), true)
	if err != nil {
		return fail(err, "cannot read db/%s%s", shop.DBName, world.DBExt)
	}
	defer db.Close()
	var want []string
	rows, err := db.QueryContext(ctx, `SELECT order_no FROM orders WHERE username = ? ORDER BY order_no`, user)
	if err != nil {
		return fail(err, "cannot read the orders of %s in db/%s%s", user, shop.DBName, world.DBExt)
	}
	for rows.Next() {
		var no string
		if err := rows.Scan(&no); err != nil {
			rows.Close()
			return fail(err, "cannot read the orders of %s", user)
		}
		want = append(want, no)
	}
	if err := rows.Close(); err != nil {
		return fail(err, "cannot read the orders of %s", user)
	}
	var inCart int
	if err := db.QueryRowContext(ctx, `SELECT COUNT(*) FROM cart_items WHERE username = ?`, user).Scan(&inCart); err != nil {
		return fail(err, "cannot read the cart of %s in db/%s%s", user, shop.DBName, world.DBExt)
	}

	historyOK := true
	orders, err := b.do(ctx, http.MethodGet, "/orders", nil)
	switch {
	case err != nil || orders.status != http.StatusOK:
		historyOK = false
		if err := fail(err, "GET /orders failed%s; fix the orders of %s in db/%s%s", statusNote(orders), user, shop.DBName, world.DBExt); err != nil {
			return err
		}
	case orders.path != "/orders":
		historyOK = false
		c.accountProblem(ra, "GET /orders went to %s: the session was lost", orders.path)
	default:
		var got []string
		for _, e := range elements(orders.body) {
			if e.hasClass("order") {
				got = append(got, e["data-order-no"])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			historyOK = false
			c.accountProblem(ra, "/orders lists %d orders %v but db/%s%s holds %d for %s %v; fix the orders and order_items rows", len(got), got, shop.DBName, world.DBExt, len(want), user, want)
		}
	}
	cart, err := b.do(ctx, http.MethodGet, "/cart", nil)
	switch {
	case err != nil || cart.status != http.StatusOK:
		historyOK = false
		if err := fail(err, "GET /cart failed%s; fix the cart_items of %s in db/%s%s", statusNote(cart), user, shop.DBName, world.DBExt); err != nil {
			return err
		}
	case cart.path != "/cart":
		historyOK = false
		c.accountProblem(ra, "GET /cart went to %s: the session was lost", cart.path)
	default:
		n := 0
		for _, e := range elements(cart.body) {
			if e.hasClass("cart-item") {
				n++
			}
		}
		if n != inCart {
			historyOK = false
			c.accountProblem(ra, "/cart lists %d items but db/%s%s holds %d for %s; fix the cart_items rows", n, shop.DBName, world.DBExt, inCart, user)
		}
	}
	ra.HistoryOK = historyOK
	return nil
}

// statusNote describes an unexpected status, if there was a response.
func statusNote(f *fetched) string {
	if f == nil {
		return ""
	}
	return fmt.Sprintf(" (status %d)", f.status)
}

var (
	kitUserRE = regexp.MustCompile(`Signed in as <strong>([^<]*)</strong>`)
	kitRowRE  = regexp.MustCompile(`(?s)<tbody>(.*?)</tbody>`)
)

// checkKit logs in on a kit site of the instance as user and renders each
// of its history pages, which must list as many rows as the world's
// database holds for the user. Failures are problems of ra; the error is
// only ctx's.
func (c *checker) checkKit(ctx context.Context, inst *runtime.Instance, spec *kit.Spec, user, pass string, ra *Account) error {
	b := newBrowser(inst.SiteURL(spec.Name))
	fail := c.problemFunc(ctx, ra)
	home, err := login(ctx, b, spec.Name, user, pass, ra, fail)
	if home == nil {
		return err
	}
	if u := kitUserRE.FindStringSubmatch(home.body); u == nil || html.UnescapeString(u[1]) != user {
		return fail(nil, "after logging in %s does not show %s signed in", spec.Name, user)
	}
	ra.LoggedIn = true
	historyOK := true
	for _, h := range spec.Histories {
		want, err := kit.HistoryRows(ctx, spec, inst.Dir(), c.env.CatalogDir, h.Name, user)
		if err != nil {
			historyOK = false
			if err := fail(err, "cannot read the %s history of %s in db/%s%s", h.Name, user, spec.Name, world.DBExt); err != nil {
				return err
			}
			continue
		}
		page, err := b.do(ctx, http.MethodGet, h.Path, nil)
		if err != nil || page.status != http.StatusOK || page.path != h.Path {
			historyOK = false
			if err := fail(err, "GET %s on %s failed%s", h.Path, spec.Name, statusNote(page)); err != nil {
				return err
			}
			continue
		}
		got := 0
		if tb := kitRowRE.FindStringSubmatch(page.body); tb != nil {
			got = strings.Count(tb[1], "<tr>")
		}
		if got != want {
			historyOK = false
			c.accountProblem(ra, "GET %s on %s lists %d rows; db/%s%s holds %d for %s", h.Path, spec.Name, got, spec.Name, world.DBExt, want, user)
		}
	}
	ra.HistoryOK = historyOK
	return nil
}
