package dbtool

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`

// A service holds at most MaxSessions streamable-HTTP sessions: one more
// is refused with HTTP 503 and a JSON-RPC error that says what to do,
// until a session ends or one has been idle ReapIdle, which is then closed
// to make room.
func TestHTTPCapsSessions(t *testing.T) {
	h := NewHTTPHandler(greetServer(t), nil, 0, 3).(*sessionCap)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	h.now = func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }
	ts := httptest.NewServer(h)
	defer ts.Close()

	var peers []*httpPeer
	for i := range 3 {
		p := &httpPeer{t: t, url: ts.URL}
		if st, _, body := p.post(initialize); st != http.StatusOK || p.session == "" {
			t.Fatalf("session %d: %d %s", i, st, body)
		}
		peers = append(peers, p)
		advance(time.Second)
	}
	extra := &httpPeer{t: t, url: ts.URL}
	st, ct, body := extra.post(initialize)
	var msg struct {
		ID    any `json:"id"`
		Error struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if st != http.StatusServiceUnavailable || ct != "application/json" || json.Unmarshal([]byte(body), &msg) != nil ||
		msg.Error.Code != codeTooManySessions || !strings.Contains(msg.Error.Message, "3 sessions, its limit") || extra.session != "" {
		t.Fatalf("a fourth session: %d %s %s, want 503 and a JSON-RPC error naming the limit", st, ct, body)
	}
	// The sessions in use still answer.
	if st, _, body := peers[0].post(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`); st != http.StatusOK {
		t.Fatalf("a session at the cap: %d %s", st, body)
	}
	// Once the session idle the longest (peers[1]: peers[0] just spoke)
	// has been idle ReapIdle, a new session takes its place.
	advance(ReapIdle)
	if st, _, body := extra.post(initialize); st != http.StatusOK || extra.session == "" {
		t.Fatalf("after ReapIdle: %d %s", st, body)
	}
	if st, _, _ := peers[1].post(`{"jsonrpc":"2.0","id":3,"method":"tools/list"}`); st != http.StatusNotFound {
		t.Errorf("the reaped session answered %d, want 404", st)
	}
	if st, _, body := peers[0].post(`{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); st != http.StatusOK {
		t.Errorf("a session that kept talking: %d %s", st, body)
	}
}
