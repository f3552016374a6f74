package mcpbench

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// rawProtocolVersion is the protocol version the raw client asks for: one
// every server measured here speaks.
const rawProtocolVersion = "2025-11-25"

// A rawClient speaks MCP as bare JSON-RPC: it writes a tools/call request
// and stops the clock when the last byte of the response has arrived,
// before parsing it. What it times is the server (and the transport), not a
// client library: with the go-sdk client, more than half of a small call's
// time is the client's own decoding and goroutine hand-offs. The response
// is parsed and checked after the clock stops.
type rawClient interface {
	// call sends tools/call with the given id and returns the response
	// message (the JSON-RPC object) and the time from the request's first
	// byte written to the response's last byte read.
	call(ctx context.Context, id int64, name string, args any) ([]byte, time.Duration, error)
	close()
}

type rawRequest struct {
	JSONRPC string `json:"jsonrpc"`
	ID      *int64 `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

type rawResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		ProtocolVersion string `json:"protocolVersion"`
	} `json:"result"`
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rawMessage encodes a request with id, or a notification if id < 0.
func rawMessage(id int64, method string, params any) []byte {
	req := rawRequest{JSONRPC: "2.0", Method: method, Params: params}
	if id >= 0 {
		req.ID = &id
	}
	b, err := json.Marshal(req)
	if err != nil {
		panic(err) // only the benchmark's own literals are encoded here
	}
	return b
}

func initializeParams() map[string]any {
	return map[string]any{"protocolVersion": rawProtocolVersion, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "wildawm-mcpbench-raw", "version": "1"}}
}

// checkResponse parses msg as the response to request id and returns its
// result, or an error naming what is wrong: another id, a JSON-RPC error or
// a tool error.
func checkResponse(msg []byte, id int64) (*rawResponse, error) {
	var r rawResponse
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("response is not JSON-RPC: %v: %.200s", err, msg)
	}
	if string(r.ID) != fmt.Sprint(id) {
		return nil, fmt.Errorf("response has id %s, want %d", r.ID, id)
	}
	if r.Error != nil {
		return nil, fmt.Errorf("JSON-RPC error %d: %s", r.Error.Code, r.Error.Message)
	}
	if r.Result == nil {
		return nil, errors.New("response has neither result nor error")
	}
	if r.Result.IsError {
		var text strings.Builder
		for _, c := range r.Result.Content {
			text.WriteString(c.Text)
		}
		return nil, fmt.Errorf("tool error: %s", text.String())
	}
	return &r, nil
}

// hasID reports whether msg is a JSON-RPC message with the given id (a
// response), as opposed to a notification or a request of the server.
func hasID(msg []byte, id int64) bool {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	return json.Unmarshal(msg, &m) == nil && string(m.ID) == fmt.Sprint(id)
}

// rawStdio is a raw client of a server started as a command, one message
// per line.
type rawStdio struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	line []byte
}

// startRawStdio starts cmd and initializes an MCP session over its stdin
// and stdout.
func startRawStdio(ctx context.Context, cmd *exec.Cmd) (*rawStdio, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &rawStdio{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 64<<10)}
	msg, _, err := c.roundTrip(0, rawMessage(0, "initialize", initializeParams()))
	if err == nil {
		_, err = checkResponse(msg, 0)
	}
	if err == nil {
		_, err = c.in.Write(append(rawMessage(-1, "notifications/initialized", nil), '\n'))
	}
	if err != nil {
		c.close()
		return nil, fmt.Errorf("initialize over stdio: %w", err)
	}
	return c, nil
}

// roundTrip writes req and reads lines until the response with id; the
// server's notifications before it are skipped. It returns the response and
// when its last byte was read.
func (c *rawStdio) roundTrip(id int64, req []byte) ([]byte, time.Time, error) {
	if _, err := c.in.Write(append(req, '\n')); err != nil {
		return nil, time.Time{}, err
	}
	for {
		c.line = c.line[:0]
		for {
			chunk, err := c.out.ReadSlice('\n')
			c.line = append(c.line, chunk...)
			if err == nil {
				break
			}
			if !errors.Is(err, bufio.ErrBufferFull) {
				return nil, time.Time{}, fmt.Errorf("reading the server's stdout: %w", err)
			}
		}
		read := time.Now()
		if hasID(c.line, id) {
			return bytes.TrimRight(c.line, "\r\n"), read, nil
		}
	}
}

func (c *rawStdio) call(_ context.Context, id int64, name string, args any) ([]byte, time.Duration, error) {
	req := rawMessage(id, "tools/call", map[string]any{"name": name, "arguments": args})
	start := time.Now()
	msg, read, err := c.roundTrip(id, req)
	if err != nil {
		return nil, time.Since(start), err
	}
	return msg, read.Sub(start), nil
}

func (c *rawStdio) close() {
	c.in.Close()
	done := make(chan struct{})
	go func() { c.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// rawHTTP is a raw client of a streamable HTTP endpoint: one POST per
// message, with the session id and protocol version headers the transport
// requires; a response comes as a JSON body or as server-sent events. It
// writes HTTP/1.1 by hand on one kept-alive TCP connection and reads the
// response on the calling goroutine: net/http's client hands every request
// to two goroutines of its own (a connection's reader and writer), whose
// wake-ups a cold call would time as the server's.
type rawHTTP struct {
	host, path string // the request line's target and Host
	addr       string // where to dial
	conn       net.Conn
	br         *bufio.Reader
	req        []byte
	session    string
	protocol   string
}

// startRawHTTP initializes an MCP session with the endpoint at url.
func startRawHTTP(ctx context.Context, endpoint string) (*rawHTTP, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return nil, fmt.Errorf("raw HTTP client: endpoint %q: want http://HOST:PORT/PATH", endpoint)
	}
	c := &rawHTTP{host: u.Host, path: u.RequestURI(), addr: u.Host}
	if u.Port() == "" {
		c.addr = net.JoinHostPort(u.Hostname(), "80")
	}
	body, hdr, _, err := c.post(ctx, http.MethodPost, rawMessage(0, "initialize", initializeParams()))
	if err != nil {
		return nil, fmt.Errorf("initialize over HTTP: %w", err)
	}
	msg, err := responseIn(body, hdr, 0)
	if err != nil {
		return nil, fmt.Errorf("initialize over HTTP: %w", err)
	}
	r, err := checkResponse(msg, 0)
	if err != nil {
		return nil, fmt.Errorf("initialize over HTTP: %w", err)
	}
	c.session = hdr.Get("Mcp-Session-Id")
	c.protocol = r.Result.ProtocolVersion
	if _, _, _, err := c.post(ctx, http.MethodPost, rawMessage(-1, "notifications/initialized", nil)); err != nil {
		return nil, fmt.Errorf("initialized notification over HTTP: %w", err)
	}
	return c, nil
}

// post sends one request (a POST of msg, or a DELETE) and reads the whole
// response body; sent is when the request that got the response was
// written. A kept-alive connection the server has closed since the last
// request (the write fails, or the connection ends before a byte of the
// response) is dialled again, once: the server never saw that request, so
// nothing runs twice, and the clock starts again with the new attempt. The
// request stops when ctx ends.
func (c *rawHTTP) post(ctx context.Context, method string, msg []byte) (body []byte, hdr http.Header, sent time.Time, err error) {
	c.req = append(c.req[:0], method+" "+c.path+" HTTP/1.1\r\nHost: "+c.host+"\r\n"...)
	if method == http.MethodPost {
		c.req = append(c.req, "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"...)
	}
	if c.session != "" {
		c.req = append(c.req, "Mcp-Session-Id: "+c.session+"\r\n"...)
	}
	if c.protocol != "" {
		c.req = append(c.req, "Mcp-Protocol-Version: "+c.protocol+"\r\n"...)
	}
	c.req = append(c.req, "Content-Length: "...)
	c.req = strconv.AppendInt(c.req, int64(len(msg)), 10)
	c.req = append(c.req, "\r\n\r\n"...)
	c.req = append(c.req, msg...)
	for attempt := 0; ; attempt++ {
		fresh := c.conn == nil
		if fresh {
			var d net.Dialer
			conn, err := d.DialContext(ctx, "tcp", c.addr)
			if err != nil {
				return nil, nil, time.Time{}, err
			}
			c.conn, c.br = conn, bufio.NewReaderSize(conn, 64<<10)
		}
		sent = time.Now()
		body, hdr, stale, err := c.roundTrip(ctx, method)
		if err == nil {
			return body, hdr, sent, nil
		}
		c.drop()
		if !stale || fresh || attempt > 0 {
			return nil, nil, time.Time{}, err
		}
	}
}

// drop closes the connection, if one is open.
func (c *rawHTTP) drop() {
	if c.conn != nil {
		c.conn.Close()
		c.conn = nil
	}
}

// statusError is a response that is not 2xx: never retried.
type statusError struct {
	status string
	body   []byte
}

func (e *statusError) Error() string { return fmt.Sprintf("HTTP %s: %.200s", e.status, e.body) }

// roundTrip writes the request and reads its response. stale reports an
// error before any byte of a response arrived on a connection the server
// had closed (the write failed, or EOF or a reset came first).
func (c *rawHTTP) roundTrip(ctx context.Context, method string) (body []byte, hdr http.Header, stale bool, err error) {
	conn := c.conn
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	} else {
		conn.SetDeadline(time.Time{})
	}
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := conn.Write(c.req); err != nil {
		return nil, nil, ctx.Err() == nil, err
	}
	if _, err := c.br.Peek(1); err != nil {
		return nil, nil, ctx.Err() == nil && (errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET)), err
	}
	resp, err := http.ReadResponse(c.br, &http.Request{Method: method})
	if err != nil {
		return nil, nil, false, err
	}
	body, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, nil, false, err
	}
	if resp.Close {
		c.drop()
	}
	if resp.StatusCode/100 != 2 {
		return nil, nil, false, &statusError{resp.Status, body}
	}
	return body, resp.Header, false, nil
}

// responseIn finds the response with id in a POST's body: the body itself
// (application/json) or the data of one of its server-sent events.
func responseIn(body []byte, hdr http.Header, id int64) ([]byte, error) {
	if !strings.HasPrefix(hdr.Get("Content-Type"), "text/event-stream") {
		return body, nil
	}
	// Lines end in CRLF, LF or CR; an event ends at an empty line, and its
	// data lines join with LF.
	body = bytes.ReplaceAll(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), []byte("\r"), []byte("\n"))
	for event := range bytes.SplitSeq(body, []byte("\n\n")) {
		var data []byte
		for line := range bytes.SplitSeq(event, []byte("\n")) {
			if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
				if data != nil {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(d, []byte(" "))...)
			}
		}
		if len(data) > 0 && hasID(data, id) {
			return data, nil
		}
	}
	return nil, fmt.Errorf("no response with id %d in the event stream: %.200s", id, body)
}

func (c *rawHTTP) call(ctx context.Context, id int64, name string, args any) ([]byte, time.Duration, error) {
	req := rawMessage(id, "tools/call", map[string]any{"name": name, "arguments": args})
	body, hdr, sent, err := c.post(ctx, http.MethodPost, req)
	if err != nil {
		return nil, 0, err
	}
	d := time.Since(sent)
	msg, err := responseIn(body, hdr, id)
	return msg, d, err
}

func (c *rawHTTP) close() {
	if c.session != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		c.post(ctx, http.MethodDelete, nil)
		cancel()
	}
	c.drop()
}
