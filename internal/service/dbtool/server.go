package dbtool

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// NewServer returns an MCP server for a service, as mcp.NewServer does,
// with its tool results encoded once (see encodeResults). Receiving
// middleware added to it later runs around encodeResults and sees a
// tools/call result as an unexported type, not *mcp.CallToolResult.
func NewServer(impl *mcp.Implementation, opts *mcp.ServerOptions) *mcp.Server {
	srv := mcp.NewServer(impl, opts)
	srv.AddReceivingMiddleware(encodeResults)
	return srv
}

// NewHTTPHandler serves srv over streamable HTTP. Sessions idle for
// sessionTimeout end (never if 0). A POST is answered with one
// application/json body rather than an event stream: the services send
// nothing but the response while they handle a request, and the stream's
// framing and flushing cost about 50 µs a call (docs/BENCHMARKS.md).
// Clients must accept either (the transport's spec, 2025-03-26 on); a GET
// still opens the session's event stream. A POST of a request of id null
// gets HTTP 400 with an invalid-request error of id null (nullid.go). At
// most maxSessions sessions (DefaultMaxSessions when 0) are open at once:
// past it the session idle the longest makes room when it has been idle
// ReapIdle, else the new session is refused with HTTP 503 and a JSON-RPC
// error (sessions.go).
func NewHTTPHandler(srv *mcp.Server, log *slog.Logger, sessionTimeout time.Duration, maxSessions int) http.Handler {
	return capSessions(srv, maxSessions, refuseNullIDs(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: log, SessionTimeout: sessionTimeout, JSONResponse: true})))
}

// Transports serves a service's MCP server over streamable HTTP and stdio.
// A service embeds it, setting Build to its Server method, and so offers
// HTTPHandler and RunStdio.
type Transports struct {
	// Build returns a new server with the service's tools and resources.
	Build func() *mcp.Server
	// Log receives the HTTP transport's failures.
	Log *slog.Logger
	// SessionTimeout closes streamable-HTTP sessions idle this long; zero
	// keeps them until the client ends them.
	SessionTimeout time.Duration
	// MaxSessions caps the streamable-HTTP sessions open at once; zero
	// means DefaultMaxSessions.
	MaxSessions int

	once sync.Once
	srv  *mcp.Server
}

// HTTPHandler serves the service over streamable HTTP (NewHTTPHandler),
// one server, built on first use, for every handler and session. The
// SDK's DNS-rebinding protection stays on: a request that arrives on a
// loopback address must name a loopback Host.
func (t *Transports) HTTPHandler() http.Handler {
	t.once.Do(func() { t.srv = t.Build() })
	return NewHTTPHandler(t.srv, t.Log, t.SessionTimeout, t.MaxSessions)
}

// RunStdio serves one session over stdin and stdout (ServeStdio) until the
// client disconnects or ctx ends.
func (t *Transports) RunStdio(ctx context.Context) error {
	return ServeStdio(ctx, t.Build())
}
