package web

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// MaxBody is the largest request body a site reads.
const MaxBody = 1 << 20

// CSP is the Content-Security-Policy of every response.
const CSP = "default-src 'self'; img-src 'self'"

// Log attribute keys.
const (
	LogMethod = "method"
	LogPath   = "path"
	LogStatus = "status"
	LogErr    = "err"
)

// Error is an HTTP error: Status and Msg are for the user, Err is the
// internal cause (logged, never shown).
type Error struct {
	Status int
	Msg    string
	Err    error
}

func (e *Error) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%d %s: %v", e.Status, e.Msg, e.Err)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Msg)
}

func (e *Error) Unwrap() error { return e.Err }

// Errorf returns an *Error with a formatted user message.
func Errorf(status int, format string, args ...any) *Error {
	return &Error{Status: status, Msg: fmt.Sprintf(format, args...)}
}

// Internal wraps an unexpected failure as a 500 whose cause is not shown.
func Internal(err error) *Error {
	return &Error{Status: http.StatusInternalServerError, Msg: "something went wrong on our side", Err: err}
}

// AsError turns any error into an *Error: *Error as is, a body over the
// limit as 413, anything else as Internal.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return &Error{Status: http.StatusRequestEntityTooLarge, Msg: fmt.Sprintf("the request body is larger than %d bytes", MaxBody), Err: err}
	}
	return Internal(err)
}

// HandlerFunc handles a request or returns an error for the router to render.
// It must not write to w before it knows it succeeds.
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// ErrorPage writes the page of a failed request.
type ErrorPage func(w http.ResponseWriter, r *http.Request, e *Error)

// Router routes requests to HandlerFuncs and sends every failure, including
// 404, 405 and 413, to one ErrorPage.
type Router struct {
	mux     *http.ServeMux
	errPage ErrorPage
	log     *slog.Logger
}

// NewRouter returns a router that renders failures with errPage. A nil log
// discards.
func NewRouter(errPage ErrorPage, log *slog.Logger) *Router {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Router{mux: http.NewServeMux(), errPage: errPage, log: log}
}

// Handle registers h for a method-qualified ServeMux pattern ("GET /p/{sku}").
func (rt *Router) Handle(pattern string, h HandlerFunc) {
	rt.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			rt.fail(w, r, AsError(err))
		}
	})
}

func (rt *Router) fail(w http.ResponseWriter, r *http.Request, e *Error) {
	if e.Status >= 500 {
		rt.log.Error("request failed", LogMethod, r.Method, LogPath, r.URL.Path, LogStatus, e.Status, LogErr, e.Err)
	} else {
		rt.log.Info("request rejected", LogMethod, r.Method, LogPath, r.URL.Path, LogStatus, e.Status, LogErr, e.Msg)
	}
	rt.errPage(w, r, e)
}

// ServeHTTP sets the security headers, rejects unclean paths, unknown routes,
// wrong methods and oversized bodies, and serves the rest.
func (rt *Router) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
	p := r.URL.Path
	if p == "" || p[0] != '/' || path.Clean(p) != p {
		rt.fail(w, r, Errorf(http.StatusNotFound, "page not found"))
		return
	}
	if _, pattern := rt.mux.Handler(r); pattern == "" {
		var allow []string
		for _, m := range []string{http.MethodGet, http.MethodPost} {
			r2 := r.Clone(r.Context())
			r2.Method = m
			if _, p := rt.mux.Handler(r2); p != "" {
				allow = append(allow, m)
			}
		}
		if len(allow) == 0 {
			rt.fail(w, r, Errorf(http.StatusNotFound, "page not found"))
			return
		}
		for _, m := range allow {
			h.Add("Allow", m)
		}
		rt.fail(w, r, Errorf(http.StatusMethodNotAllowed, "method %s is not allowed here", r.Method))
		return
	}
	if r.ContentLength > MaxBody {
		rt.fail(w, r, AsError(&http.MaxBytesError{Limit: MaxBody}))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, MaxBody)
	rt.mux.ServeHTTP(w, r)
}

// Render executes the template t into a buffer and writes it with status, so
// that a template error becomes an error, not half a page.
func Render(w http.ResponseWriter, status int, t *template.Template, data any) error {
	var b bytes.Buffer
	if err := t.Execute(&b, data); err != nil {
		return Internal(fmt.Errorf("render %s: %w", t.Name(), err))
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	_, err := w.Write(b.Bytes())
	return err
}

// Redirect sends a 303 See Other to a local path.
func Redirect(w http.ResponseWriter, r *http.Request, to string) error {
	http.Redirect(w, r, to, http.StatusSeeOther)
	return nil
}

// LocalPath returns p if it is a path on this site ("/cart"), else "/".
func LocalPath(p string) string {
	// A backslash anywhere is refused: http.Redirect cleans the path, and
	// "/./\host" would become "/\host", which browsers read as "//host".
	if len(p) == 0 || p[0] != '/' || len(p) > 1 && p[1] == '/' || strings.ContainsRune(p, '\\') {
		return "/"
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "/"
		}
	}
	return p
}
