package dbtool

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// stdioPeer is the client end of a session served over a pair of pipes.
type stdioPeer struct {
	t    *testing.T
	w    *os.File
	out  *os.File // the server's end of its output
	in   *os.File // the client's end of the server's output
	r    *bufio.Reader
	done chan error
}

// serveOverPipes serves srv over tr(in, out) on pipes and returns the
// client's end.
func serveOverPipes(t *testing.T, ctx context.Context, srv *mcp.Server, tr func(in *os.File, out *os.File) mcp.Transport) *stdioPeer {
	t.Helper()
	inR, inW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { inW.Close(); outR.Close(); outW.Close() })
	p := &stdioPeer{t: t, w: inW, out: outW, in: outR, r: bufio.NewReader(outR), done: make(chan error, 1)}
	go func() { p.done <- srv.Run(ctx, tr(inR, outW)) }()
	return p
}

func (p *stdioPeer) send(line string) {
	p.t.Helper()
	if _, err := p.w.WriteString(line + "\n"); err != nil {
		p.t.Fatal(err)
	}
}

// recv reads the server's next line, failing the test if none comes
// within 10 s.
func (p *stdioPeer) recv() string {
	p.t.Helper()
	p.in.SetReadDeadline(time.Now().Add(10 * time.Second))
	line, err := p.r.ReadString('\n')
	if err != nil {
		p.t.Fatalf("reading the server's output: %v", err)
	}
	return strings.TrimSuffix(line, "\n")
}

func (p *stdioPeer) initialize() {
	p.t.Helper()
	p.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	if got := p.recv(); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		p.t.Fatalf("initialize: %s", got)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

func greetServer(t testing.TB) *mcp.Server {
	return greetServerOf(t, NewServer)
}

// greetServerOf makes a server with one tool, greet, with newServer.
func greetServerOf(t testing.TB, newServer func(*mcp.Implementation, *mcp.ServerOptions) *mcp.Server) *mcp.Server {
	srv := newServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	addGreet(t, srv)
	return srv
}

func TestStdioTransport(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := serveOverPipes(t, ctx, greetServer(t), func(in, out *os.File) mcp.Transport { return &StdioTransport{In: in, Out: out} })
	p.initialize()

	// A result is written as the SDK encoded it, with the id as sent.
	p.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bo"}}}`)
	want := `{"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"text\":\"hi bo\\nbye\"}"}],"structuredContent":{"text":"hi bo\nbye"}}}`
	if got := p.recv(); got != want {
		t.Errorf("tools/call:\n got %s\nwant %s", got, want)
	}
	p.send(`{"jsonrpc":"2.0","id":"a\"b","method":"ping"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":"a\"b","result":{}}` {
		t.Errorf("ping with a string id: %s", got)
	}
	// Errors go through the SDK's encoding.
	p.send(`{"jsonrpc":"2.0","id":3,"method":"no/such"}`)
	if got := p.recv(); !strings.Contains(got, `"id":3,"error":{"code":-32601`) {
		t.Errorf("unknown method: %s", got)
	}
	// A line that is not JSON-RPC, and a batch, get an error and the
	// session goes on.
	for _, bad := range []string{
		`{"jsonrpc":"2.0","id":4,"method":`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}{"jsonrpc":"2.0","id":5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"} trailing`,
	} {
		p.send(bad)
		if got := p.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"a line that is not one JSON value`) {
			t.Errorf("%s: %s", bad, got)
		}
	}
	p.send(`{"jsonrpc":"1.0","id":4,"method":"ping"}`)
	if got := p.recv(); !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"not a JSON-RPC message`) {
		t.Errorf("JSON that is not JSON-RPC: %s", got)
	}
	p.send(`[{"jsonrpc":"2.0","id":5,"method":"ping"}]`)
	if got := p.recv(); !strings.Contains(got, `"id":null,"error":{"code":-32600,"message":"JSON-RPC batches are not supported`) {
		t.Errorf("batch: %s", got)
	}
	p.send("")
	p.send(`{"jsonrpc":"2.0","id":6,"method":"ping"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":6,"result":{}}` {
		t.Errorf("ping after bad lines: %s", got)
	}

	// Ending the context ends the session although the client says nothing.
	cancel()
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended: Close did not interrupt Read")
	}
}

// TestStdioTransportAnswersAsTheSDK sends the same calls to a server of
// NewServer over StdioTransport and to a plain SDK server over the SDK's
// transport, and compares the decoded answers: the result encoding and the
// transport write what the SDK writes, for requests of the session's
// protocol and of the per-request protocol of 2026-07-28 (whose results
// carry the server's identity in _meta, set after the middleware).
func TestStdioTransportAnswersAsTheSDK(t *testing.T) {
	calls := []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"greet","arguments":{"name":"<b>&"}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"greet","arguments":{"nme":"x"}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope"}}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"greet","arguments":{"name":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"greet","arguments":{"nme":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	}
	answers := map[string][]any{}
	for name, c := range map[string]struct {
		newServer func(*mcp.Implementation, *mcp.ServerOptions) *mcp.Server
		transport func(in, out *os.File) mcp.Transport
	}{
		"ours": {NewServer, func(in, out *os.File) mcp.Transport { return &StdioTransport{In: in, Out: out} }},
		"sdk":  {mcp.NewServer, func(in, out *os.File) mcp.Transport { return &mcp.IOTransport{Reader: in, Writer: out} }},
	} {
		p := serveOverPipes(t, context.Background(), greetServerOf(t, c.newServer), c.transport)
		p.initialize()
		for _, c := range calls {
			p.send(c)
			var v any
			if err := json.Unmarshal([]byte(p.recv()), &v); err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			answers[name] = append(answers[name], v)
			if strings.Contains(c, `"id":5`) && !strings.Contains(fmt.Sprint(v), "io.modelcontextprotocol/serverInfo") {
				t.Errorf("%s: a 2026-07-28 result without the server's identity in _meta: %v", name, v)
			}
		}
		p.w.Close()
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: Run did not return when its input closed", name)
		}
	}
	for i := range calls {
		if !reflect.DeepEqual(answers["ours"][i], answers["sdk"][i]) {
			t.Errorf("%s:\n ours %v\n  sdk %v", calls[i], answers["ours"][i], answers["sdk"][i])
		}
	}
}

// A regular file cannot interrupt a Read, so Connect falls back to the
// SDK's transport, which reads on a goroutine of its own.
func TestStdioTransportFallsBackForFiles(t *testing.T) {
	path := filepath.Join(t.TempDir(), "in")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	conn, err := (&StdioTransport{In: f, Out: os.Stderr}).Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, ok := conn.(*stdioConn); ok {
		t.Error("Connect used its own connection on a regular file")
	}
}

// At the end of the input, the server answers what it has read before it
// ends the session, but it does not wait for a subscription's listen call,
// which is answered only when the session ends.
func TestStdioTransportEndOfInput(t *testing.T) {
	p := serveOverPipes(t, context.Background(), greetServer(t), func(in, out *os.File) mcp.Transport { return &StdioTransport{In: in, Out: out} })
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true}}}`)
	p.send(`{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bo"}}}`)
	p.w.Close()
	select {
	case <-p.done:
	case <-time.After(drainQuiet / 2):
		t.Fatal("Run did not return after the end of its input: it waited for the listen call")
	}
	p.out.Close() // Run has returned: nothing more is written
	answered := false
	for {
		line, err := p.r.ReadString('\n')
		if err != nil {
			break
		}
		answered = answered || strings.HasPrefix(line, `{"jsonrpc":"2.0","id":8,"result":`)
	}
	if !answered {
		t.Error("the call read before the end of the input was not answered")
	}
}

// A request whose id is null is not a notification (JSON-RPC 2.0 calls a
// request without an id member one), and MCP forbids null ids: it gets an
// invalid-request error of id null, is not run, and the session goes on.
func TestStdioTransportAnswersNullID(t *testing.T) {
	p := serveOverPipes(t, context.Background(), greetServer(t), func(in, out *os.File) mcp.Transport { return &StdioTransport{In: in, Out: out} })
	p.initialize()
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"greet","arguments":{"name":"bo"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9},"id":null}`,
		`{"jsonrpc":"2.0","id" : null ,"method":"no/such"}`,
	} {
		p.send(line)
		got := p.recv()
		if !strings.HasPrefix(got, `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"`) || !strings.Contains(got, "null") {
			t.Errorf("%s:\n got %s\nwant an invalid-request error of id null", line, got)
		}
	}
	// A notification (no id member) still gets no answer: the next line
	// read is the ping's.
	p.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}`)
	p.send(`{"jsonrpc":"2.0","id":10,"method":"ping"}`)
	if got := p.recv(); got != `{"jsonrpc":"2.0","id":10,"result":{}}` {
		t.Errorf("ping after the null ids: %s", got)
	}
}
