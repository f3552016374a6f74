package kit

import (
	"cmp"
	"context"
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
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/site/web"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

//go:embed templates/*.html static/*
var files embed.FS

// Stable element ids, the same on every kit site, for agents and tests.
const (
	IDSearchInput   = "search-input"
	IDSearchButton  = "search-button"
	IDLoginUsername = "login-username"
	IDLoginPassword = "login-password"
	IDLoginSubmit   = "login-submit"
	IDLogout        = "logout"
	IDFlash         = "flash"
	IDResults       = "results"      // the table of a list or history
	IDRecordTitle   = "record-title" // a detail page's heading
	IDRecordImage   = "record-image"
	IDNextPage      = "next-page"
)

// Limits of a kit site's requests.
const (
	PageSize      = 20
	MaxQueryBytes = 200
	MaxPage       = 10000
	imageCache    = 128 // rendered images kept per site
	TimeFormat    = "2006-01-02 15:04:05"
)

// Options open a kit site over one world.
type Options struct {
	WorldDir   string
	CatalogDir string
	Clock      world.Clock // nil: the world manifest's clock
	Logger     *slog.Logger
	// SiteURL returns another site's base URL (for links between sites,
	// the web search's results); nil or "" links by path only.
	SiteURL func(name string) string
}

// Site is one kit site serving one world.
type Site struct {
	spec     *Spec
	opts     Options
	log      *slog.Logger
	sessions *web.Sessions
	pages    map[string]*template.Template
	static   fs.FS
	handler  http.Handler
	lists    map[string]*List
	histOf   map[string]*History
	writeMu  sync.Mutex

	catOnce   sync.Once
	closeOnce sync.Once
	cat       *sql.DB // set once by catOnce, released (not cleared) by Close
	catErr    error

	imgMu  sync.Mutex
	images map[string][]byte
	order  []string
}

var keyRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]{0,199}$`)

// New builds the site. The catalog is opened on the first request that
// needs it, so a world whose catalog lacks the site's tables still opens
// (its pages then answer 500, saying so).
func New(spec *Spec, opts Options) (*Site, error) {
	if opts.WorldDir == "" || opts.CatalogDir == "" {
		return nil, fmt.Errorf("%s: Options.WorldDir and Options.CatalogDir are required", spec.Name)
	}
	s := &Site{spec: spec, opts: opts, log: cmp.Or(opts.Logger, slog.New(slog.DiscardHandler)),
		sessions: web.NewSessions(spec.Name + "_session"),
		lists:    map[string]*List{}, histOf: map[string]*History{}, images: map[string][]byte{}}
	pages, err := parsedPages()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", spec.Name, err)
	}
	s.pages = pages
	if s.static, err = fs.Sub(files, "static"); err != nil {
		return nil, err
	}
	rt := web.NewRouter(s.errorPage, s.log)
	ownHome := false
	for _, ro := range spec.Routes {
		ownHome = ownHome || ro.Pattern == "GET /{$}"
	}
	if !ownHome {
		rt.Handle("GET /{$}", s.home)
	}
	rt.Handle("GET /login", s.loginForm)
	rt.Handle("POST /login", s.login)
	rt.Handle("POST /logout", s.logout)
	rt.Handle("GET /static/{file}", s.staticFile)
	rt.Handle("GET /images/{kind}/{file}", s.image)
	for i := range spec.Lists {
		l := &spec.Lists[i]
		s.lists[l.Name] = l
		rt.Handle("GET "+l.Path, func(w http.ResponseWriter, r *http.Request) error { return s.list(w, r, l) })
		rt.Handle("GET "+l.Path+"/{key}", func(w http.ResponseWriter, r *http.Request) error { return s.detail(w, r, l) })
	}
	for i := range spec.Histories {
		h := &spec.Histories[i]
		s.histOf[h.Name] = h
		rt.Handle("GET "+h.Path, func(w http.ResponseWriter, r *http.Request) error { return s.history(w, r, h) })
	}
	for i := range spec.Actions {
		a := &spec.Actions[i]
		rt.Handle("POST /do/"+a.Name, func(w http.ResponseWriter, r *http.Request) error { return s.act(w, r, a) })
	}
	for _, ro := range spec.Routes {
		h := ro.Handler
		rt.Handle(ro.Pattern, func(w http.ResponseWriter, r *http.Request) error { return h(s, &Request{W: w, R: r, s: s}) })
	}
	s.handler = rt
	return s, nil
}

// parsedPages are the templates every kit site renders with, parsed once
// per process (they are read-only and safe for concurrent use; parsing
// them per site cost most of a world's heap).
var parsedPages = sync.OnceValues(func() (map[string]*template.Template, error) {
	funcs := template.FuncMap{"lower": strings.ToLower, "formOf": func(p *page, f formView) any {
		return struct {
			formView
			CSRF string
		}{f, p.CSRF}
	}}
	pages := map[string]*template.Template{}
	for _, name := range []string{"home", "login", "list", "detail", "history", "custom", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
})

// Spec returns the site's spec.
func (s *Site) Spec() *Spec { return s.spec }

// ServeHTTP serves the site.
func (s *Site) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.handler.ServeHTTP(w, r) }

// ClearSessions logs everybody out (a reset of the world).
func (s *Site) ClearSessions() { s.sessions.Clear() }

// Close closes the catalog.
func (s *Site) Close() error {
	var err error
	s.closeOnce.Do(func() {
		s.catOnce.Do(func() { s.catErr = errors.New("the site is closed") }) // a later request opens nothing
		if s.cat != nil {
			err = catalogs.release(world.DBPath(s.opts.CatalogDir, catalog.DBName))
		}
	})
	return err
}

// Catalog returns the catalog database, read-only.
func (s *Site) Catalog() (*sql.DB, error) {
	s.catOnce.Do(func() {
		s.cat, s.catErr = catalogs.open(world.DBPath(s.opts.CatalogDir, catalog.DBName))
	})
	if s.catErr != nil {
		return nil, web.Internal(s.catErr)
	}
	return s.cat, nil
}

// catalogs shares one read-only handle per catalog file among every site
// of every world in the process: the catalog is read-only and the same
// for all of them, and a handle per site and world cost 6.6 MiB of heap
// per world (bench sites). It holds no world's state.
var catalogs = &catalogPool{m: map[string]*pooled{}}

type catalogPool struct {
	mu sync.Mutex
	m  map[string]*pooled
}

type pooled struct {
	db   *sql.DB
	refs int
}

func (p *catalogPool) open(path string) (*sql.DB, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c, ok := p.m[path]; ok {
		c.refs++
		return c.db, nil
	}
	db, err := state.OpenDB(path, true)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(max(2, 2*runtime.GOMAXPROCS(0)))
	db.SetMaxIdleConns(max(2, 2*runtime.GOMAXPROCS(0)))
	p.m[path] = &pooled{db: db, refs: 1}
	return db, nil
}

func (p *catalogPool) release(path string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	c, ok := p.m[path]
	if !ok {
		return nil
	}
	if c.refs--; c.refs > 0 {
		return nil
	}
	delete(p.m, path)
	return c.db.Close()
}

// SiteURL is another site's base URL, or "".
func (s *Site) SiteURL(name string) string {
	if s.opts.SiteURL == nil {
		return ""
	}
	return s.opts.SiteURL(name)
}

// Request is one request to a Route of a spec.
type Request struct {
	W http.ResponseWriter
	R *http.Request
	s *Site
}

// Render writes the custom page: Title, and Body (trusted HTML the route
// built with html/template's escaping) inside the site's layout.
func (q *Request) Render(title string, body template.HTML) error {
	p := &page{Title: title, Body: body}
	if ss, ok := q.s.sessions.Get(q.R); ok && ss.User != "" {
		for i := range q.s.spec.Actions {
			if a := &q.s.spec.Actions[i]; a.On == "" {
				f, err := q.s.form(q.R.Context(), a, "")
				if err != nil {
					return err
				}
				p.Forms = append(p.Forms, f)
			}
		}
	}
	return q.s.render(q.W, q.R, http.StatusOK, "custom", p)
}

// page is the data of every template.
type page struct {
	Site    *Spec
	Nav     []navLink
	Title   string
	User    string
	CSRF    string
	Flash   string
	Query   string
	List    *listView
	Detail  *detailView
	History *historyView
	Forms   []formView // the home page's actions
	Next    string
	Body    template.HTML

	Status  int
	Message string
}

type navLink struct{ Label, Href string }

func (s *Site) nav() []navLink {
	var out []navLink
	for _, l := range s.spec.Lists {
		out = append(out, navLink{l.Title, l.Path})
	}
	for _, ro := range s.spec.Routes {
		if m, p, _ := strings.Cut(ro.Pattern, " "); m == "GET" && !strings.Contains(p, "{") && p != "/{$}" {
			out = append(out, navLink{titleOfPath(p), p})
		}
	}
	return out
}

func titleOfPath(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return "Home"
	}
	return strings.ToUpper(p[:1]) + strings.ReplaceAll(p[1:], "-", " ")
}

func (s *Site) render(w http.ResponseWriter, r *http.Request, status int, name string, p *page) error {
	ss := s.sessions.Ensure(w, r)
	p.Site, p.Nav, p.User, p.CSRF = s.spec, s.nav(), ss.User, ss.CSRF
	if p.Flash == "" {
		p.Flash = s.sessions.TakeFlash(ss.Token)
	}
	return web.Render(w, status, s.pages[name], p)
}

func (s *Site) errorPage(w http.ResponseWriter, r *http.Request, e *web.Error) {
	p := &page{Title: http.StatusText(e.Status), Status: e.Status, Message: e.Msg}
	if err := s.render(w, r, e.Status, "error", p); err != nil {
		s.log.Error("render error page", web.LogErr, err)
		http.Error(w, e.Msg, e.Status)
	}
}

func (s *Site) staticFile(w http.ResponseWriter, r *http.Request) error {
	b, err := fs.ReadFile(s.static, r.PathValue("file"))
	if err != nil {
		return web.Errorf(http.StatusNotFound, "page not found")
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	w.Header().Set("Cache-Control", "max-age=3600")
	_, err = w.Write(b)
	return err
}

func (s *Site) loginForm(w http.ResponseWriter, r *http.Request) error {
	return s.render(w, r, http.StatusOK, "login", &page{Title: "Log in", Next: web.LocalPath(r.URL.Query().Get("next"))})
}

func (s *Site) login(w http.ResponseWriter, r *http.Request) error {
	if _, err := s.sessions.CheckCSRF(r); err != nil {
		return err
	}
	user, pass := r.PostForm.Get("username"), r.PostForm.Get("password")
	ok, err := world.CheckLogin(s.opts.WorldDir, s.spec.Name, user, pass)
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

func (s *Site) home(w http.ResponseWriter, r *http.Request) error {
	p := &page{Title: s.spec.Title}
	if len(s.spec.Lists) > 0 {
		l := &s.spec.Lists[0]
		v, err := s.listRows(r.Context(), l, "", nil, 1)
		if err != nil {
			return err
		}
		p.List = v
	}
	ss, _ := s.sessions.Get(r) // render starts a visitor's session
	for i := range s.spec.Actions {
		if a := &s.spec.Actions[i]; a.On == "" && ss.User != "" {
			f, err := s.form(r.Context(), a, "")
			if err != nil {
				return err
			}
			p.Forms = append(p.Forms, f)
		}
	}
	return s.render(w, r, http.StatusOK, "home", p)
}

// image serves a generated catalog image, drawn from its attributes.
func (s *Site) image(w http.ResponseWriter, r *http.Request) error {
	kind, file := r.PathValue("kind"), r.PathValue("file")
	if !keyRE.MatchString(kind) || !keyRE.MatchString(file) || !strings.HasSuffix(file, ".png") {
		return web.Errorf(http.StatusNotFound, "no such image")
	}
	path := catalog.ImagesDir + "/" + kind + "/" + file
	s.imgMu.Lock()
	b, ok := s.images[path]
	s.imgMu.Unlock()
	if !ok {
		db, err := s.Catalog()
		if err != nil {
			return err
		}
		c := catalog.FromDB(db)
		a, err := c.ImageAttrs(r.Context(), path)
		if errors.Is(err, catalog.ErrNotFound) {
			return web.Errorf(http.StatusNotFound, "no such image")
		}
		if err != nil {
			return web.Internal(err)
		}
		if b, err = generator.PNG().Generate(a.PNGParams()); err != nil {
			return web.Internal(err)
		}
		s.imgMu.Lock()
		if len(s.order) >= imageCache {
			delete(s.images, s.order[0])
			s.order = s.order[1:]
		}
		s.images[path] = b
		s.order = append(s.order, path)
		s.imgMu.Unlock()
	}
	w.Header().Set("Content-Type", "image/png")
	w.Header().Set("Cache-Control", "private, max-age=3600")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err := w.Write(b)
	return err
}

// now is the world's time, as TimeFormat.
func (s *Site) now() (string, error) {
	t, err := world.ClockOr(s.opts.Clock, s.opts.WorldDir)
	if err != nil {
		return "", web.Internal(err)
	}
	return t.UTC().Format(TimeFormat), nil
}

// openWorld opens db/NAME.sqlite for this request with the catalog
// attached as cat. It never creates the database.
func (s *Site) openWorld(ctx context.Context, readOnly bool) (*sql.DB, *sql.Conn, error) {
	path := world.DBPath(s.opts.WorldDir, s.spec.Name)
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &web.Error{Status: http.StatusInternalServerError, Msg: "the " + s.spec.Name + " site has no database in this world", Err: err}
	} else if err != nil {
		return nil, nil, web.Internal(err)
	}
	db, err := state.OpenDB(path, readOnly)
	if err != nil {
		return nil, nil, web.Internal(err)
	}
	c, err := db.Conn(ctx)
	if err == nil {
		_, err = c.ExecContext(ctx, "ATTACH DATABASE ? AS cat", "file:"+(&url.URL{Path: world.DBPath(s.opts.CatalogDir, catalog.DBName)}).EscapedPath()+"?mode=ro")
	}
	if err != nil {
		if c != nil {
			c.Close()
		}
		db.Close()
		return nil, nil, web.Internal(err)
	}
	return db, c, nil
}

// DBName is the world database of a spec's site: db/NAME.sqlite.
func (sp *Spec) DBName() string { return sp.Name }
