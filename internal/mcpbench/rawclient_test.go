package mcpbench

import (
	"net/http"
	"strings"
	"testing"
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
