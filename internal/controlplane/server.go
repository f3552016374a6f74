package controlplane

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Defaults of Options.
const (
	DefaultMaxConns      = 256
	DefaultHeaderTimeout = 10 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	DefaultIdleTimeout   = 2 * time.Minute
	DefaultMaxBody       = 8 << 20
)

// EvictGrace is how long a connection at the cap is left to send its
// request before a newer one may close it for room (at most half the
// header timeout); when every open connection is younger, or serving, the
// newer one is closed instead.
const EvictGrace = time.Second

// HealthPath is the one path served without the token: a liveness probe
// learns nothing from it but that the server answers.
const HealthPath = "/health"

// ErrNeedsToken is the error of a bind beyond loopback without a token.
var ErrNeedsToken = errors.New("listens beyond loopback without a bearer token")

// Options configure a Server; the zero value of each field means its
// default.
type Options struct {
	// Token, when set, is the bearer token every request but
	// GET /health must carry ("Authorization: Bearer TOKEN"); others get
	// 401. Empty serves without authentication (Listen allows that on
	// loopback only).
	Token string
	// MaxConns bounds the connections open at once (default 256). At the
	// cap a new connection closes the one that has been sending its
	// request's headers or body the longest (else the one idle the
	// longest between requests), provided it has had EvictGrace to send
	// them; when none has (or every one is serving a request: long polls,
	// WebSockets), the new one is closed and its client tries again.
	MaxConns int
	// HeaderTimeout bounds reading a request's headers (default 10 s);
	// BodyTimeout reading its headers and body together (default 30 s).
	// Once the body is read (at once for a request without one) the
	// handler runs as long as it likes: a long poll, a WebSocket.
	HeaderTimeout, BodyTimeout time.Duration
	// IdleTimeout closes a keep-alive connection idle so long (default 2
	// minutes).
	IdleTimeout time.Duration
	// MaxBody bounds a request's body in bytes (default 8 MiB): a larger
	// one is answered 413. A handler may bound its own body tighter.
	MaxBody int64
}

func (o Options) withDefaults() Options {
	if o.MaxConns <= 0 {
		o.MaxConns = DefaultMaxConns
	}
	if o.HeaderTimeout <= 0 {
		o.HeaderTimeout = DefaultHeaderTimeout
	}
	if o.BodyTimeout <= 0 {
		o.BodyTimeout = DefaultBodyTimeout
	}
	if o.BodyTimeout < o.HeaderTimeout {
		o.HeaderTimeout = o.BodyTimeout
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	return o
}

// Listen listens on TCP address addr. Bound beyond loopback (an
// unspecified host such as 0.0.0.0 or ::, or an interface's address)
// without a token, it closes the listener and returns an error wrapping
// ErrNeedsToken: anyone who can reach the port could drive the server.
func Listen(addr, token string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, err
	}
	if token == "" && BeyondLoopback(ln.Addr()) {
		ln.Close()
		return nil, fmt.Errorf("%s %w", ln.Addr(), ErrNeedsToken)
	}
	return ln, nil
}

// BeyondLoopback reports whether a is reachable from other machines: its
// IP is not a loopback address.
func BeyondLoopback(a net.Addr) bool {
	t, ok := a.(*net.TCPAddr)
	return !ok || !t.IP.IsLoopback()
}

// URL is the http:// URL of the address a listener bound, as bound: the
// real port of a ":0" request, and 0.0.0.0 or [::] for an unspecified
// host (say so beside it: BeyondLoopback).
func URL(a net.Addr) string { return "http://" + a.String() }

// Server is an http.Server hardened as Options say.
type Server struct {
	opts Options
	ln   *limitListener
	hs   *http.Server
}

// New returns a server of h on ln; Serve runs it.
func New(ln net.Listener, h http.Handler, o Options) *Server {
	o = o.withDefaults()
	l := &limitListener{Listener: ln, max: o.MaxConns, grace: min(EvictGrace, o.HeaderTimeout/2), conns: map[*conn]struct{}{}}
	s := &Server{opts: o, ln: l}
	s.hs = &http.Server{
		Handler:           s.guard(h),
		ReadHeaderTimeout: o.HeaderTimeout,
		ReadTimeout:       o.BodyTimeout,
		IdleTimeout:       o.IdleTimeout,
		MaxHeaderBytes:    64 << 10,
		ConnState: func(c net.Conn, st http.ConnState) {
			tc, ok := c.(*conn)
			switch {
			case !ok:
			case st == http.StateIdle:
				tc.setState(connIdle)
			case st == http.StateActive:
				tc.startRequest()
			}
		},
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if tc, ok := c.(*conn); ok {
				return context.WithValue(ctx, connKey{}, tc)
			}
			return ctx
		},
	}
	return s
}

// HTTPServer is the underlying server, for its BaseContext and the like;
// set them before Serve.
func (s *Server) HTTPServer() *http.Server { return s.hs }

// Serve serves until Shutdown or Close; it returns http.ErrServerClosed
// then.
func (s *Server) Serve() error { return s.hs.Serve(s.ln) }

// Shutdown stops accepting, waits for the requests in flight (or ctx)
// and closes.
func (s *Server) Shutdown(ctx context.Context) error {
	if err := s.hs.Shutdown(ctx); err != nil {
		s.hs.Close()
		return err
	}
	return nil
}

// Close closes the listener and every connection at once.
func (s *Server) Close() error { return s.hs.Close() }

// Addr is the listener's address.
func (s *Server) Addr() net.Addr { return s.ln.Addr() }

// Conns is the number of connections open, hijacked ones (WebSockets)
// included.
func (s *Server) Conns() int {
	s.ln.mu.Lock()
	defer s.ln.mu.Unlock()
	return len(s.ln.conns)
}

type connKey struct{}

// guard checks the token and the body's size, and marks the connection
// serving from the end of its body until the handler returns.
func (s *Server) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.opts.Token != "" && r.URL.Path != HealthPath && !s.authorized(r) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="wildawm"`)
			writeError(w, http.StatusUnauthorized, "missing or wrong bearer token: send the header \"Authorization: Bearer TOKEN\" with the token of the server's --token-file")
			return
		}
		if r.ContentLength > s.opts.MaxBody {
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body of %d bytes: this server takes at most %d", r.ContentLength, s.opts.MaxBody))
			return
		}
		tc, _ := r.Context().Value(connKey{}).(*conn)
		// Once the body is in, net/http lifts the read deadline (its
		// background read) and the handler's time is its own: a long poll,
		// a WebSocket after the upgrade. The connection is serving then.
		served := func() { tc.setState(connServing) }
		if r.Body == nil || r.Body == http.NoBody {
			served()
		} else {
			r.Body = &bodyEnd{ReadCloser: http.MaxBytesReader(w, r.Body, s.opts.MaxBody), end: served}
		}
		defer tc.setState(connReading)
		h.ServeHTTP(w, r)
	})
}

// authorized compares the bearer token in constant time; the scheme's
// case does not matter (RFC 9110 section 11.1), the token's does.
func (s *Server) authorized(r *http.Request) bool {
	scheme, got, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	return ok && strings.EqualFold(scheme, "Bearer") && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(got)), []byte(s.opts.Token)) == 1
}

// writeError answers {"error": msg}, the error form of both servers.
func writeError(w http.ResponseWriter, code int, msg string) {
	b, _ := json.Marshal(map[string]string{"error": msg})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	w.Write(append(b, '\n'))
}

// TooLarge reports whether err is a body over its cap; a handler answers
// it 413 with BodyTooLarge's message.
func TooLarge(err error) bool {
	var mb *http.MaxBytesError
	return errors.As(err, &mb)
}

// BodyTooLarge is the message of a body over its cap.
func BodyTooLarge(err error) string {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return fmt.Sprintf("request body over %d bytes: send a smaller one", mb.Limit)
	}
	return err.Error()
}

// bodyEnd calls end once, when the body is read to its end. A body that
// fails (its deadline passed, it is over its cap) keeps its deadline: the
// server then closes the connection rather than wait for the rest.
type bodyEnd struct {
	io.ReadCloser
	end  func()
	once sync.Once
}

func (b *bodyEnd) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(b.end)
	}
	return n, err
}

// limitListener holds at most max connections open.
type limitListener struct {
	net.Listener
	max   int
	grace time.Duration
	mu    sync.Mutex
	seq   uint64
	conns map[*conn]struct{}
}

// conn is a connection the listener counts until it is closed.
type conn struct {
	net.Conn
	l     *limitListener
	seq   uint64
	since time.Time // when its current request (or the connection) began
	state connState // guarded by l.mu
	once  sync.Once
}

// connState is what a connection is doing, for the choice of the one to
// close at the cap.
type connState int

const (
	// connReading: sending a request's headers or body (a client that
	// trickles them stays here until the body timeout).
	connReading connState = iota
	// connIdle: between requests of a keep-alive connection.
	connIdle
	// connServing: its request is read and its handler runs (a long
	// poll, a WebSocket); never closed for room.
	connServing
)

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		l.mu.Lock()
		var victim *conn
		now := time.Now()
		if len(l.conns) >= l.max {
			// The connection reading its request the longest, else the
			// one idle the longest; one younger than the grace is left
			// its chance to send its headers.
			for o := range l.conns {
				if o.state != connServing && now.Sub(o.since) >= l.grace && (victim == nil || o.state < victim.state || o.state == victim.state && o.seq < victim.seq) {
					victim = o
				}
			}
			if victim == nil {
				// Every slot serves a request: refuse this one.
				l.mu.Unlock()
				c.Close()
				continue
			}
			delete(l.conns, victim)
		}
		l.seq++
		tc := &conn{Conn: c, l: l, seq: l.seq, since: now}
		l.conns[tc] = struct{}{}
		l.mu.Unlock()
		if victim != nil {
			victim.Close()
		}
		return tc, nil
	}
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() {
		c.l.mu.Lock()
		delete(c.l.conns, c)
		c.l.mu.Unlock()
	})
	return err
}

// startRequest marks a connection reading a new request: it counts as
// young again, so that a keep-alive client's next request is not the
// first closed for room.
func (c *conn) startRequest() {
	c.l.mu.Lock()
	c.l.seq++
	c.seq, c.state, c.since = c.l.seq, connReading, time.Now()
	c.l.mu.Unlock()
}

func (c *conn) setState(st connState) {
	if c == nil {
		return
	}
	c.l.mu.Lock()
	c.state = st
	c.l.mu.Unlock()
}
