package shop

import (
	"cmp"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site/web"
	"github.com/wildawm/wildawm/internal/world"
)

//go:embed templates/*.html static/*
var files embed.FS

// Stable element ids and classes for agents and tests.
const (
	IDSearchInput   = "search-input"
	IDSearchButton  = "search-button"
	SelProductLink  = ".product-card a"
	IDProductTitle  = "product-title"
	IDProductSpecs  = "product-specs"
	IDProductImage  = "product-image"
	IDQty           = "qty"
	IDAddToCart     = "add-to-cart"
	SelCartItem     = "#cart-items .cart-item" // with data-sku
	IDLoginUsername = "login-username"
	IDLoginPassword = "login-password"
	IDLoginSubmit   = "login-submit"
	IDFlash         = "flash"
	IDCheckout      = "checkout"
	IDLogout        = "logout"
)

// Limits of the shop's requests.
const (
	MaxQueryBytes  = 200 // search query
	MaxResults     = 100 // products on one results page
	SessionCookie  = "shop_session"
	imageFileRegex = `^[A-Za-z0-9_.-]+\.png$`
)

// Options configure a Site.
type Options struct {
	// CatalogDir is the shared catalog (internal/catalog), opened read-only.
	CatalogDir string
	// WorldDir is the persona's world; the shop reads accounts.json and
	// reads and writes db/shop.sqlite.
	WorldDir string
	// Clock stamps written rows. Nil means the world manifest's clock, read
	// at each write.
	Clock world.Clock
	// Logger receives request failures. Nil discards.
	Logger *slog.Logger
}

// Site is one shop instance serving one world.
type Site struct {
	opts     Options
	log      *slog.Logger
	cat      *catalog.Catalog
	sessions *web.Sessions
	pages    map[string]*template.Template
	static   fs.FS
	imageRE  *regexp.Regexp
	handler  http.Handler
	writeMu  sync.Mutex
}

// New opens the catalog and builds the site.
func New(opts Options) (*Site, error) {
	if opts.CatalogDir == "" || opts.WorldDir == "" {
		return nil, errors.New("shop: Options.CatalogDir and Options.WorldDir are required")
	}
	cat, err := catalog.Open(opts.CatalogDir)
	if err != nil {
		return nil, fmt.Errorf("shop: %w", err)
	}
	s := &Site{
		opts:     opts,
		log:      cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		cat:      cat,
		sessions: web.NewSessions(SessionCookie),
		pages:    make(map[string]*template.Template),
		imageRE:  regexp.MustCompile(imageFileRegex),
	}
	for _, name := range []string{"home", "login", "search", "product", "cart", "orders", "error"} {
		t, err := template.New("layout").ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			cat.Close()
			return nil, fmt.Errorf("shop: template %s: %w", name, err)
		}
		s.pages[name] = t
	}
	if s.static, err = fs.Sub(files, "static"); err != nil {
		cat.Close()
		return nil, fmt.Errorf("shop: %w", err)
	}
	rt := web.NewRouter(s.errorPage, s.log)
	rt.Handle("GET /{$}", s.home)
	rt.Handle("GET /login", s.loginForm)
	rt.Handle("POST /login", s.login)
	rt.Handle("POST /logout", s.logout)
	rt.Handle("GET /search", s.search)
	rt.Handle("GET /p/{sku}", s.product)
	rt.Handle("GET /images/{file}", s.image)
	rt.Handle("GET /static/{file}", s.staticFile)
	rt.Handle("GET /cart", s.cart)
	rt.Handle("POST /cart/add", s.cartAdd)
	rt.Handle("POST /cart/remove", s.cartRemove)
	rt.Handle("POST /checkout", s.checkout)
	rt.Handle("GET /orders", s.orders)
	s.handler = rt
	return s, nil
}

// Handler returns the site's HTTP handler.
func (s *Site) Handler() http.Handler { return s.handler }

// ServeHTTP serves the site (a *Site is a site.Site of the registry).
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// Close closes the catalog.
func (s *Site) Close() error { return s.cat.Close() }

// page is the data every template gets.
type page struct {
	Title     string
	User      string
	CSRF      string
	Flash     string
	Query     string
	CartCount int64

	Categories []string
	Next       string
	// A search's pages: Matches in all, page PageNo of Pages.
	Matches, PageNo, Pages int
	PrevPage, NextPage     string
	Products               []catalog.Product
	Reviews                []catalog.Review
	Product                catalog.Product
	Items                  []cartView
	Total                  string
	Orders                 []orderView

	Status     int
	StatusText string
	Message    string
}

type cartView struct {
	SKU, Title, LineTotal string
	Qty                   int64
}

type orderView struct {
	OrderNo, PlacedAt, Total string
	Items                    []orderItemView
}

type orderItemView struct {
	SKU, Title, Price string
	Qty               int64
}

// render fills the common fields (session, flash, cart count) and writes
// the page.
func (s *Site) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) error {
	ss := s.sessions.Ensure(w, r)
	p.User, p.CSRF = ss.User, ss.CSRF
	if p.Flash == "" {
		p.Flash = s.sessions.TakeFlash(ss.Token)
	}
	if ss.User != "" && status < 400 {
		err := s.read(r.Context(), func(db *sql.DB) error {
			return db.QueryRowContext(r.Context(), `SELECT COALESCE(SUM(qty), 0) FROM cart_items WHERE username = ?`, ss.User).Scan(&p.CartCount)
		})
		if err != nil {
			return web.AsError(err)
		}
	}
	return web.Render(w, status, s.pages[name], p)
}

func (s *Site) errorPage(w http.ResponseWriter, r *http.Request, e *web.Error) {
	p := &page{Title: http.StatusText(e.Status), Status: e.Status, StatusText: http.StatusText(e.Status), Message: e.Msg}
	if err := s.render(w, r, e.Status, "error", p); err != nil {
		s.log.Error("render error page", web.LogErr, err)
		http.Error(w, e.Msg, e.Status)
	}
}

func (s *Site) home(w http.ResponseWriter, r *http.Request) error {
	cats, err := s.cat.Categories(r.Context(), catalog.Site)
	if err != nil {
		return web.Internal(err)
	}
	return s.render(w, r, http.StatusOK, "home", &page{Title: "Home", Categories: cats})
}

func (s *Site) loginForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "login", &page{Title: "Log in", Next: web.LocalPath(r.URL.Query().Get("next"))})
}

func (s *Site) login(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.sessions.CheckCSRF(r); err != nil {
		return err
	}
	user, pass := r.PostForm.Get("username"), r.PostForm.Get("password")
	ok, err := world.CheckLogin(s.opts.WorldDir, SiteName, user, pass)
	if err != nil {
		return web.Internal(err)
	}
	if !ok {
		return web.Errorf(http.StatusUnauthorized, "wrong username or password")
	}
	s.sessions.Login(w, r, user)
	return web.Redirect(w, r, web.LocalPath(r.PostForm.Get("next")))
}

func (s *Site) logout(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.sessions.CheckCSRF(r); err != nil {
		return err
	}
	s.sessions.Logout(w, r)
	return web.Redirect(w, r, "/")
}

func (s *Site) search(w http.ResponseWriter, r *http.Request) error {
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > MaxQueryBytes {
		return web.Errorf(http.StatusBadRequest, "the search is too long: at most %d characters", MaxQueryBytes)
	}
	n := 1
	if ps := r.URL.Query().Get("page"); ps != "" {
		var err error
		if n, err = strconv.Atoi(ps); err != nil || n < 1 || n > 10000 {
			return web.Errorf(http.StatusBadRequest, "page must be a whole number from 1 to 10000, got %q", ps)
		}
	}
	ps, total, err := s.cat.SearchPage(r.Context(), catalog.Site, q, MaxResults, (n-1)*MaxResults)
	if err != nil {
		return web.Internal(err)
	}
	pages := max(1, (total+MaxResults-1)/MaxResults)
	if n > pages {
		return web.Errorf(http.StatusNotFound, "page %d does not exist: the search has %d pages", n, pages)
	}
	p := &page{Title: "Search", Query: q, Products: ps, Matches: total, PageNo: n, Pages: pages}
	link := func(k int) string { return "/search?" + url.Values{"q": {q}, "page": {strconv.Itoa(k)}}.Encode() }
	if n > 1 {
		p.PrevPage = link(n - 1)
	}
	if n < pages {
		p.NextPage = link(n + 1)
	}
	return s.render(w, r, http.StatusOK, "search", p)
}

func (s *Site) product(w http.ResponseWriter, r *http.Request) error {
	p, err := s.cat.Product(r.Context(), catalog.Site, r.PathValue("sku"))
	if errors.Is(err, catalog.ErrNotFound) {
		return web.Errorf(http.StatusNotFound, "no product with SKU %q", r.PathValue("sku"))
	}
	if err != nil {
		return web.Internal(err)
	}
	reviews, err := s.cat.Reviews(r.Context(), p.ID, 10)
	if err != nil {
		return web.Internal(err)
	}
	return s.render(w, r, http.StatusOK, "product", &page{Title: p.Title, Product: p, Reviews: reviews})
}

func (s *Site) image(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("file")
	if !s.imageRE.MatchString(name) || strings.HasPrefix(name, ".") {
		return web.Errorf(http.StatusNotFound, "no such image")
	}
	f, err := os.OpenInRoot(s.cat.ImagesDir(), name)
	if errors.Is(err, fs.ErrNotExist) {
		return s.drawnImage(w, r, name)
	}
	if err != nil {
		return web.Internal(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return web.Errorf(http.StatusNotFound, "no such image")
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=300")
	http.ServeContent(w, r, "", time.Time{}, f)
	return nil
}

// drawnImage serves the photo of a generated product, which is no file:
// it is drawn from the catalog's image_attrs (docs/catalog.md).
func (s *Site) drawnImage(w http.ResponseWriter, r *http.Request, name string) error {
	a, err := s.cat.ImageAttrs(r.Context(), catalog.ImagesDir+"/products/"+name)
	if errors.Is(err, catalog.ErrNotFound) {
		return web.Errorf(http.StatusNotFound, "no such image")
	}
	if err != nil {
		return web.Internal(err)
	}
	b, err := generator.PNG().Generate(a.PNGParams())
	if err != nil {
		return web.Internal(err)
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=300")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err = w.Write(b)
	return err
}

func (s *Site) staticFile(w http.ResponseWriter, r *http.Request) error {
	b, err := fs.ReadFile(s.static, r.PathValue("file"))
	if err != nil {
		return web.Errorf(http.StatusNotFound, "page not found")
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, err = w.Write(b)
	return err
}

// requireUser returns the logged-in user, or a 401.
func (s *Site) requireUser(ss web.Session, what string) error {
	if ss.User == "" {
		return web.Errorf(http.StatusUnauthorized, "log in to %s", what)
	}
	return nil
}

func (s *Site) cart(w http.ResponseWriter, r *http.Request) error {
	ss, ok := s.sessions.Get(r)
	if !ok || ss.User == "" {
		return web.Redirect(w, r, "/login?next=/cart")
	}
	var lines []cartLine
	if err := s.read(r.Context(), func(db *sql.DB) (err error) {
		lines, err = cartLines(r.Context(), db, ss.User)
		return err
	}); err != nil {
		return web.AsError(err)
	}
	p := &page{Title: "Cart"}
	var total int64
	for _, l := range lines {
		title, price := l.SKU, int64(0)
		if prod, err := s.cat.Product(r.Context(), catalog.Site, l.SKU); err == nil {
			title, price = prod.Title, prod.PriceCents
		}
		total += price * l.Qty
		p.Items = append(p.Items, cartView{SKU: l.SKU, Title: title, Qty: l.Qty, LineTotal: catalog.FormatCents(price * l.Qty)})
	}
	p.Total = catalog.FormatCents(total)
	return s.render(w, r, http.StatusOK, "cart", p)
}

// parseQty accepts a whole number 1..MaxQty.
func parseQty(v string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 || n > MaxQty {
		return 0, web.Errorf(http.StatusBadRequest, "quantity must be a whole number from 1 to %d, got %q", MaxQty, v)
	}
	return n, nil
}

func (s *Site) cartAdd(w http.ResponseWriter, r *http.Request) error {
	ss, err := s.sessions.CheckCSRF(r)
	if err != nil {
		return err
	}
	if err := s.requireUser(ss, "add items to your cart"); err != nil {
		return err
	}
	qty, err := parseQty(r.PostForm.Get("qty"))
	if err != nil {
		return err
	}
	sku := r.PostForm.Get("sku")
	p, err := s.cat.Product(r.Context(), catalog.Site, sku)
	if errors.Is(err, catalog.ErrNotFound) {
		return web.Errorf(http.StatusNotFound, "no product with SKU %q", sku)
	}
	if err != nil {
		return web.Internal(err)
	}
	var total int64
	err = s.write(r.Context(), func(c *sql.Conn, now string) error {
		var old int64
		err := c.QueryRowContext(r.Context(), `SELECT qty FROM cart_items WHERE username = ? AND sku = ?`, ss.User, sku).Scan(&old)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			id, err := nextID(r.Context(), c, "cart_items")
			if err != nil {
				return web.Internal(err)
			}
			total = qty
			_, err = c.ExecContext(r.Context(), `INSERT INTO cart_items (id, username, sku, qty, added_at) VALUES (?, ?, ?, ?, ?)`, id, ss.User, sku, qty, now)
			return wrapInternal(err)
		case err != nil:
			return web.Internal(err)
		}
		total = old + qty
		if total > MaxQty {
			return web.Errorf(http.StatusBadRequest, "your cart already holds %d of %s; a line may hold at most %d", old, sku, MaxQty)
		}
		_, err = c.ExecContext(r.Context(), `UPDATE cart_items SET qty = ? WHERE username = ? AND sku = ?`, total, ss.User, sku)
		return wrapInternal(err)
	})
	if err != nil {
		return err
	}
	s.sessions.SetFlash(ss.Token, fmt.Sprintf("Added %d × %s to your cart (now %d).", qty, p.Title, total))
	return web.Redirect(w, r, "/cart")
}

func (s *Site) cartRemove(w http.ResponseWriter, r *http.Request) error {
	ss, err := s.sessions.CheckCSRF(r)
	if err != nil {
		return err
	}
	if err := s.requireUser(ss, "change your cart"); err != nil {
		return err
	}
	sku := r.PostForm.Get("sku")
	err = s.write(r.Context(), func(c *sql.Conn, now string) error {
		res, err := c.ExecContext(r.Context(), `DELETE FROM cart_items WHERE username = ? AND sku = ?`, ss.User, sku)
		if err != nil {
			return web.Internal(err)
		}
		if n, _ := res.RowsAffected(); n == 0 {
			return web.Errorf(http.StatusNotFound, "%q is not in your cart", sku)
		}
		return nil
	})
	if err != nil {
		return err
	}
	s.sessions.SetFlash(ss.Token, fmt.Sprintf("Removed %s from your cart.", sku))
	return web.Redirect(w, r, "/cart")
}

// checkout turns the cart into an order "SO-<id+100000>" at catalog prices.
func (s *Site) checkout(w http.ResponseWriter, r *http.Request) error {
	ss, err := s.sessions.CheckCSRF(r)
	if err != nil {
		return err
	}
	if err := s.requireUser(ss, "place an order"); err != nil {
		return err
	}
	var orderNo string
	err = s.write(r.Context(), func(c *sql.Conn, now string) error {
		ctx := r.Context()
		lines, err := cartLines(ctx, c, ss.User)
		if err != nil {
			return web.Internal(err)
		}
		if len(lines) == 0 {
			return web.Errorf(http.StatusBadRequest, "your cart is empty")
		}
		oid, err := nextID(ctx, c, "orders")
		if err != nil {
			return web.Internal(err)
		}
		iid, err := nextID(ctx, c, "order_items")
		if err != nil {
			return web.Internal(err)
		}
		orderNo = fmt.Sprintf("SO-%d", 100000+oid)
		var total int64
		for i, l := range lines {
			p, err := s.cat.Product(ctx, catalog.Site, l.SKU)
			if err != nil {
				return web.Errorf(http.StatusConflict, "%s is no longer sold: remove it from your cart", l.SKU)
			}
			total += p.PriceCents * l.Qty
			if _, err := c.ExecContext(ctx, `INSERT INTO order_items (id, order_no, sku, qty, price_cents) VALUES (?, ?, ?, ?, ?)`, iid+int64(i), orderNo, l.SKU, l.Qty, p.PriceCents); err != nil {
				return web.Internal(err)
			}
		}
		if _, err := c.ExecContext(ctx, `INSERT INTO orders (id, order_no, username, placed_at, total_cents) VALUES (?, ?, ?, ?, ?)`, oid, orderNo, ss.User, now, total); err != nil {
			return web.Internal(err)
		}
		_, err = c.ExecContext(ctx, `DELETE FROM cart_items WHERE username = ?`, ss.User)
		return wrapInternal(err)
	})
	if err != nil {
		return err
	}
	s.sessions.SetFlash(ss.Token, fmt.Sprintf("Order %s placed.", orderNo))
	return web.Redirect(w, r, "/orders")
}

func (s *Site) orders(w http.ResponseWriter, r *http.Request) error {
	ss, ok := s.sessions.Get(r)
	if !ok || ss.User == "" {
		return web.Redirect(w, r, "/login?next=/orders")
	}
	var os []orderRow
	if err := s.read(r.Context(), func(db *sql.DB) (err error) {
		os, err = orders(r.Context(), db, ss.User)
		return err
	}); err != nil {
		return web.AsError(err)
	}
	p := &page{Title: "Orders"}
	for _, o := range os {
		v := orderView{OrderNo: o.OrderNo, PlacedAt: o.PlacedAt, Total: catalog.FormatCents(o.TotalCents)}
		for _, it := range o.Items {
			title := it.SKU
			if prod, err := s.cat.Product(r.Context(), catalog.Site, it.SKU); err == nil {
				title = prod.Title
			}
			v.Items = append(v.Items, orderItemView{SKU: it.SKU, Title: title, Qty: it.Qty, Price: catalog.FormatCents(it.PriceCents)})
		}
		p.Orders = append(p.Orders, v)
	}
	return s.render(w, r, http.StatusOK, "orders", p)
}

func wrapInternal(err error) error {
	if err != nil {
		return web.Internal(err)
	}
	return nil
}

// ClearSessions logs everybody out; the runtime calls it when the world
// under the site is reset.
func (s *Site) ClearSessions() { s.sessions.Clear() }
