package dbtool

import (
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DefaultMaxSessions caps the MCP sessions one service of an instance holds
// at once when Transports.MaxSessions is zero. A session costs about 40 KB
// (5,000 sessions took one instance from 172 to 365 MB), and an agent needs
// one per service.
const DefaultMaxSessions = 64

// ReapIdle is how long a session must have been idle before a new session
// at the cap closes it to make room (the one idle the longest).
const ReapIdle = time.Minute

// codeTooManySessions is the JSON-RPC error code (an implementation-defined
// server error) of a session refused at the cap.
const codeTooManySessions = -32000

// sessionCap wraps a streamable-HTTP handler of srv: a request that would
// open a session (a POST without Mcp-Session-Id) when srv has max sessions
// open first closes the one idle the longest, if it has been idle ReapIdle,
// and is otherwise refused with HTTP 503 and a JSON-RPC error of id null.
type sessionCap struct {
	srv  *mcp.Server
	max  int
	next http.Handler
	now  func() time.Time

	mu   sync.Mutex
	last map[string]time.Time // a session's last request, by id
}

func capSessions(srv *mcp.Server, max int, next http.Handler) *sessionCap {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionCap{srv: srv, max: max, next: next, now: time.Now, last: map[string]time.Time{}}
}

func (c *sessionCap) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if id != "" {
		c.mu.Lock()
		c.last[id] = c.now()
		c.mu.Unlock()
		c.next.ServeHTTP(w, r)
		return
	}
	if r.Method != http.MethodPost {
		c.next.ServeHTTP(w, r)
		return
	}
	// New sessions are admitted one at a time, so the count holds.
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.room() {
		data, err := errorOfNullID(codeTooManySessions, fmt.Sprintf("this MCP service already holds %d sessions, its limit: end one you no longer use (HTTP DELETE with its Mcp-Session-Id) or reuse it; sessions idle for %s make room", c.max, ReapIdle))
		if err != nil {
			http.Error(w, "too many MCP sessions", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Retry-After", "60")
		w.WriteHeader(http.StatusServiceUnavailable)
		w.Write(data)
		return
	}
	c.next.ServeHTTP(w, r)
	if sid := w.Header().Get("Mcp-Session-Id"); sid != "" {
		c.last[sid] = c.now()
	}
}

// room reports whether a new session may open, closing the session idle
// the longest when the cap is reached and it has been idle ReapIdle; c.mu
// is held.
func (c *sessionCap) room() bool {
	n := 0
	var oldest *mcp.ServerSession
	var oldestAt time.Time
	live := map[string]bool{}
	for ss := range c.srv.Sessions() {
		n++
		id := ss.ID()
		live[id] = true
		at, ok := c.last[id]
		if !ok {
			continue // not one of this handler's
		}
		if oldest == nil || at.Before(oldestAt) {
			oldest, oldestAt = ss, at
		}
	}
	for id := range c.last {
		if !live[id] {
			delete(c.last, id)
		}
	}
	if n < c.max {
		return true
	}
	if oldest == nil || c.now().Sub(oldestAt) < ReapIdle {
		return false
	}
	delete(c.last, oldest.ID())
	oldest.Close()
	return true
}
