package dbtool

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// httpPeer posts JSON-RPC messages to a streamable-HTTP endpoint as a raw
// client, keeping the session id the server gave.
type httpPeer struct {
	t       testing.TB
	url     string
	session string
}

func (p *httpPeer) post(body string) (status int, contentType, answer string) {
	p.t.Helper()
	req, err := http.NewRequest(http.MethodPost, p.url, strings.NewReader(body))
	if err != nil {
		p.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if p.session != "" {
		req.Header.Set("Mcp-Session-Id", p.session)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		p.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if s := res.Header.Get("Mcp-Session-Id"); s != "" {
		p.session = s
	}
	return res.StatusCode, res.Header.Get("Content-Type"), string(bytes.TrimSpace(b))
}

// Over streamable HTTP as over stdio, a message with "id": null gets a
// JSON-RPC invalid-request error of id null (HTTP 400), whatever its
// method, in a session or before one; it is not run.
func TestHTTPAnswersNullID(t *testing.T) {
	ts := httptest.NewServer(NewHTTPHandler(greetServer(t), nil, 0, 0))
	defer ts.Close()
	p := &httpPeer{t: t, url: ts.URL}

	// Before a session: an initialize of id null.
	init := `{"jsonrpc":"2.0","id":null,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`
	wantNullIDError(t, p, init)
	if p.session != "" {
		t.Fatalf("an initialize of id null opened session %s", p.session)
	}
	if st, _, body := p.post(strings.Replace(init, `"id":null`, `"id":1`, 1)); st != http.StatusOK || p.session == "" {
		t.Fatalf("initialize: %d %s", st, body)
	}
	if st, _, body := p.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`); st != http.StatusAccepted {
		t.Fatalf("initialized: %d %s", st, body)
	}
	for _, m := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bo"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9},"id":null}`,
		`[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":null,"method":"ping"}]`,
		`{"jsonrpc":"2.0","ID":null,"Method":"ping"}`, // encoding/json ignores the case of member names
	} {
		wantNullIDError(t, p, m)
	}
	// The session goes on; a notification (no id member) is accepted.
	if st, _, body := p.post(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`); st != http.StatusAccepted {
		t.Errorf("notification: %d %s", st, body)
	}
	if st, _, body := p.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); st != http.StatusOK || body != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("ping after the null ids: %d %s", st, body)
	}
}

func wantNullIDError(t *testing.T, p *httpPeer, body string) {
	t.Helper()
	st, ct, answer := p.post(body)
	var msg struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	err := json.Unmarshal([]byte(answer), &msg)
	if st != http.StatusBadRequest || !strings.HasPrefix(ct, "application/json") || err != nil ||
		msg.JSONRPC != "2.0" || string(msg.ID) != "null" || msg.Error == nil || msg.Error.Code != -32600 || !strings.Contains(msg.Error.Message, "null") {
		t.Errorf("%s:\n got %d %s %s\nwant 400 application/json with an invalid-request error (-32600) of id null", body, st, ct, answer)
	}
}
