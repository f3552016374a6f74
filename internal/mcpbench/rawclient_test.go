package mcpbench

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestCheckResponse(t *testing.T) {
	for _, c := range []struct {
		msg, want string // want "" for no error
	}{
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"ok"}]}}`, ""},
		{`{"result":{"content":[]},"jsonrpc":"2.0","id":7}`, ""},
		{`{"jsonrpc":"2.0","id":8,"result":{"content":[]}}`, "id 8, want 7"},
		{`{"jsonrpc":"2.0","id":"7","result":{"content":[]}}`, `id "7", want 7`},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32602,"message":"unknown tool"}}`, "JSON-RPC error -32602: unknown tool"},
		{`{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"no such thread"}],"isError":true}}`, "tool error: no such thread"},
		{`{"jsonrpc":"2.0","id":7}`, "neither result nor error"},
		{`not json`, "not JSON-RPC"},
	} {
		_, err := checkResponse([]byte(c.msg), 7)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.msg, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: error %v, want one with %q", c.msg, err, c.want)
		}
	}
}

func TestResponseIn(t *testing.T) {
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	body := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"}\n\n" +
		"event: message\r\ndata: {\"jsonrpc\":\"2.0\",\"id\":3,\"result\":{}}\r\n\r\n"
	got, err := responseIn([]byte(body), sse, 3)
	if err != nil || string(got) != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("event stream: %q, %v", got, err)
	}
	crlf := "event: message\r\ndata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":5,\"result\":{}}\r\n\r\nevent: message\r\ndata: {\"id\":6}\r\n\r\n"
	if got, err := responseIn([]byte(crlf), sse, 5); err != nil || string(got) != "{\"jsonrpc\":\"2.0\",\n\"id\":5,\"result\":{}}" {
		t.Errorf("CRLF events, data on two lines: %q, %v", got, err)
	}
	if _, err := responseIn([]byte(body), sse, 4); err == nil {
		t.Error("found a response with id 4 in a stream without one")
	}
	js := http.Header{"Content-Type": {"application/json"}}
	if got, err := responseIn([]byte(`{"id":4}`), js, 4); err != nil || string(got) != `{"id":4}` {
		t.Errorf("JSON body: %q, %v", got, err)
	}
}

// TestRawHTTP drives the hand-written HTTP client against a server that
// answers with a JSON body, an event stream (chunked), an error that
// closes the connection, a hang, and closes idle connections: every call
// gets its response, none runs twice, and a hang ends with the context.
func TestRawHTTP(t *testing.T) {
	var (
		mu    sync.Mutex
		calls = map[string]int{}
	)
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if r.Method == http.MethodDelete {
			return
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		mu.Lock()
		calls[req.Params.Name]++
		mu.Unlock()
		ok := `{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"content":[{"type":"text","text":"hi"}]}}`
		switch {
		case req.Method == "initialize":
			w.Header().Set("Mcp-Session-Id", "s1")
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(req.ID)+`,"result":{"protocolVersion":"2025-11-25"}}`)
		case req.Params.Name == "sse":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n")
			w.(http.Flusher).Flush() // chunked from here
			io.WriteString(w, "event: message\ndata: "+ok+"\n\n")
		case req.Params.Name == "fail":
			w.Header().Set("Connection", "close")
			http.Error(w, "no such thing", http.StatusNotFound)
		case req.Params.Name == "hang":
			<-release
		default:
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, ok)
		}
	}))
	srv.Config.IdleTimeout = 100 * time.Millisecond
	srv.Start()
	defer srv.Close()
	defer close(release) // before the server's Close, which waits for the hung handler

	ctx := context.Background()
	c, err := startRawHTTP(ctx, srv.URL+"/mcp")
	if err != nil {
		t.Fatal(err)
	}
	defer c.close()
	check := func(name string, id int64) {
		t.Helper()
		msg, d, err := c.call(ctx, id, name, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, err := checkResponse(msg, id); err != nil || d <= 0 {
			t.Fatalf("%s: %v, %v (%s)", name, err, d, msg)
		}
	}
	check("json", 1)
	check("sse", 2)
	if _, _, err := c.call(ctx, 3, "fail", map[string]any{}); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("an error response: %v", err)
	}
	check("json", 4) // a new connection after the server closed it
	time.Sleep(300 * time.Millisecond)
	check("json", 5) // the server closed the idle connection: dialled again
	mu.Lock()
	if calls["json"] != 3 || calls["sse"] != 1 || calls["fail"] != 1 {
		t.Errorf("calls the server ran: %v (want json 3, sse 1, fail 1: none twice)", calls)
	}
	mu.Unlock()

	hctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	if _, _, err := c.call(hctx, 6, "hang", map[string]any{}); err == nil {
		t.Fatal("a hung call returned no error")
	}
	if d := time.Since(t0); d > 2*time.Second {
		t.Fatalf("a hung call returned after %v, not with its context", d)
	}
}
