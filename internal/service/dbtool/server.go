package dbtool

import (
	"log/slog"
	"net/http"
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
// still opens the session's event stream.
func NewHTTPHandler(srv *mcp.Server, log *slog.Logger, sessionTimeout time.Duration) http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Logger: log, SessionTimeout: sessionTimeout, JSONResponse: true})
}
