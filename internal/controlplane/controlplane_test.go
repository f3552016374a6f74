package controlplane

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// start serves h behind a Server on a free loopback port.
func start(t *testing.T, h http.Handler, o Options) (*Server, string) {
	t.Helper()
	ln, err := Listen("127.0.0.1:0", o.Token)
	if err != nil {
		t.Fatal(err)
	}
	s := New(ln, h, o)
	go s.Serve()
	t.Cleanup(func() { s.Close() })
	return s, URL(ln.Addr())
}

func echo() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok") })
	mux.HandleFunc("POST /echo", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			code := http.StatusBadRequest
			if TooLarge(err) {
				code = http.StatusRequestEntityTooLarge
			}
			writeError(w, code, BodyTooLarge(err))
			return
		}
		w.Write(b)
	})
	mux.HandleFunc("GET /poll", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
			io.WriteString(w, "done")
		case <-r.Context().Done():
		}
	})
	return mux
}

// get does one request and returns its status and body.
func get(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestSlowClients: three times the cap of clients that send their
// headers, then a body a byte at a time, and connect again when cut off,
// never hold more than MaxConns open, cannot stop /health from answering
// within EvictGrace and a second, and are freed at the body timeout. (A plain
// http.Server with only ReadHeaderTimeout, as rl serve and openenv serve
// had, holds every one of them for as long as it trickles.)
func TestSlowClients(t *testing.T) {
	const slow, max = 120, 40
	s, url := start(t, echo(), Options{MaxConns: max, BodyTimeout: 3 * time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	for range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				trickle(ctx, strings.TrimPrefix(url, "http://"))
				time.Sleep(50 * time.Millisecond)
			}
		}()
	}
	waitFor(t, 5*time.Second, func() bool { return s.Conns() >= max }, func() string { return fmt.Sprintf("only %d slow clients connected", s.Conns()) })
	// A connection at the cap is closed for room only after EvictGrace:
	// /health gets in within it and a second.
	within := EvictGrace + time.Second
	for range 10 {
		probe := time.Now()
		if err := health(url, within); err != nil {
			t.Fatalf("/health under %d slow clients and a cap of %d: %v", slow, max, err)
		}
		if d := time.Since(probe); d > within {
			t.Fatalf("/health under %d slow clients took %v", slow, d)
		}
		if n := s.Conns(); n > max {
			t.Fatalf("%d connections open, over the cap of %d", n, max)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Stop the attack and the body timeout frees what it left.
	cancel()
	wg.Wait()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections() // /health's keep-alive
	waitFor(t, 3*time.Second, func() bool { return s.Conns() == 0 }, func() string { return fmt.Sprintf("%d connections still open", s.Conns()) })
}

// TestBodyTimeout: one client trickling its body is cut at the body
// timeout even though it never stops sending.
func TestBodyTimeout(t *testing.T) {
	s, url := start(t, echo(), Options{BodyTimeout: 500 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	begin := time.Now()
	trickle(ctx, strings.TrimPrefix(url, "http://"))
	if d := time.Since(begin); d > 3*time.Second {
		t.Fatalf("a trickled body held its connection %v; the body timeout is 500ms", d)
	}
	waitFor(t, 2*time.Second, func() bool { return s.Conns() == 0 }, func() string { return "the connection is still counted" })
}

// health asks GET /health until it answers 200, or d passes; a client
// retries a connection the server closed for room.
func health(url string, d time.Duration) error {
	end := time.Now().Add(d)
	c := &http.Client{Timeout: d}
	for {
		resp, err := c.Get(url + "/health")
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return nil
			}
			err = fmt.Errorf("%d %s", resp.StatusCode, b)
		}
		if time.Now().After(end) {
			return err
		}
	}
}

// trickle opens a connection, sends a POST's headers and then its body a
// byte every 20ms until the server closes it or ctx ends.
func trickle(ctx context.Context, addr string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	if _, err := fmt.Fprintf(c, "POST /echo HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"); err != nil {
		return
	}
	go func() { <-ctx.Done(); c.Close() }()
	for ctx.Err() == nil {
		c.SetWriteDeadline(time.Now().Add(time.Second))
		if _, err := c.Write([]byte("x")); err != nil {
			return
		}
		// A closed connection shows as a read of EOF or a reset.
		c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
		var b [512]byte
		if _, err := c.Read(b[:]); err != nil && !isTimeout(err) {
			return
		}
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func waitFor(t *testing.T, d time.Duration, ok func() bool, why func() string) {
	t.Helper()
	end := time.Now().Add(d)
	for !ok() {
		if time.Now().After(end) {
			t.Fatal(why())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestLongPollOutlivesBodyTimeout: a request without a body whose handler
// takes longer than the body timeout (a trainer's long poll) is answered.
func TestLongPollOutlivesBodyTimeout(t *testing.T) {
	_, url := start(t, echo(), Options{BodyTimeout: 200 * time.Millisecond})
	if code, body := get(t, "GET", url+"/poll", "", ""); code != 200 || body != "done" {
		t.Fatalf("a 1s long poll behind a 200ms body timeout: %d %q", code, body)
	}
}

// TestWebSocketOutlivesBodyTimeout: a WebSocket session goes on past the
// body timeout (openenv's sessions last minutes).
func TestWebSocketOutlivesBodyTimeout(t *testing.T) {
	_, url := start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		for {
			typ, b, err := c.Read(r.Context())
			if err != nil {
				return
			}
			c.Write(r.Context(), typ, b)
		}
	}), Options{BodyTimeout: 200 * time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	time.Sleep(600 * time.Millisecond)
	if err := c.Write(ctx, websocket.MessageText, []byte("still there")); err != nil {
		t.Fatal(err)
	}
	if _, b, err := c.Read(ctx); err != nil || string(b) != "still there" {
		t.Fatalf("a WebSocket past the 200ms body timeout: %q %v", b, err)
	}
}

// TestToken: with a token, every path but /health needs it; a missing or
// wrong one is 401.
func TestToken(t *testing.T) {
	_, url := start(t, echo(), Options{Token: "s3cret"})
	for _, c := range []struct {
		token string
		want  int
	}{{"", 401}, {"wrong", 401}, {"s3cret0", 401}, {"s3cre", 401}, {"S3CRET", 401}, {"s3cret", 200}} {
		code, body := get(t, "POST", url+"/echo", c.token, "hi")
		if code != c.want {
			t.Errorf("token %q: %d %s, want %d", c.token, code, body, c.want)
		}
		if code == 401 && !strings.Contains(body, "Authorization: Bearer") {
			t.Errorf("token %q: the 401 does not say what to send: %s", c.token, body)
		}
	}
	if code, _ := get(t, "GET", url+"/health", "", ""); code != 200 {
		t.Errorf("/health without a token: %d, want 200", code)
	}
	for auth, want := range map[string]int{"bearer s3cret": 200, "Basic s3cret": 401, "s3cret": 401, "Bearer": 401} {
		req, _ := http.NewRequest("POST", url+"/echo", strings.NewReader("hi"))
		req.Header.Set("Authorization", auth)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Authorization %q: %d, want %d", auth, resp.StatusCode, want)
		}
	}
}

// TestBodyCap: a body over MaxBody is 413 with a message saying so,
// whether its length is declared or not.
func TestBodyCap(t *testing.T) {
	_, url := start(t, echo(), Options{MaxBody: 100})
	code, body := get(t, "POST", url+"/echo", "", strings.Repeat("x", 101))
	if code != 413 || !strings.Contains(body, "at most 100") {
		t.Errorf("a declared 101-byte body: %d %s", code, body)
	}
	req, _ := http.NewRequest("POST", url+"/echo", io.MultiReader(strings.NewReader(strings.Repeat("x", 200))))
	req.ContentLength = -1 // chunked: only the read finds out
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 413 || !strings.Contains(string(b), "over 100 bytes") {
		t.Errorf("a chunked 200-byte body: %d %s", resp.StatusCode, b)
	}
}

// TestListenBeyondLoopback: an unspecified host without a token is
// refused; with one it is served, and its URL shows the real port.
func TestListenBeyondLoopback(t *testing.T) {
	if _, err := Listen("0.0.0.0:0", ""); !errors.Is(err, ErrNeedsToken) {
		t.Fatalf("0.0.0.0:0 without a token: %v, want ErrNeedsToken", err)
	}
	ln, err := Listen("0.0.0.0:0", "t")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	// Go binds 0.0.0.0 dual-stack, and says so: [::].
	u := URL(ln.Addr())
	if !(strings.HasPrefix(u, "http://0.0.0.0:") || strings.HasPrefix(u, "http://[::]:")) || strings.HasSuffix(u, ":0") || !BeyondLoopback(ln.Addr()) {
		t.Fatalf("URL %s (beyond loopback %v): want the unspecified host with the real port", u, BeyondLoopback(ln.Addr()))
	}
	lo, err := Listen("127.0.0.1:0", "")
	if err != nil {
		t.Fatal(err)
	}
	defer lo.Close()
	if BeyondLoopback(lo.Addr()) {
		t.Fatal("127.0.0.1 is loopback")
	}
}

// TestTokenFile: a missing file gets a fresh token, mode 0600, read back
// the same; an empty file is refused.
func TestTokenFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "token")
	tok, created, err := Token(path)
	if err != nil || !created || len(tok) != 48 {
		t.Fatalf("Token of a missing file: %q %v %v", tok, created, err)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, want 0600", fi.Mode().Perm())
	}
	again, created, err := Token(path)
	if err != nil || created || again != tok {
		t.Fatalf("Token read back: %q %v %v, want %q", again, created, err, tok)
	}
	os.WriteFile(path, []byte("\n"), 0o600)
	if _, _, err := Token(path); err == nil {
		t.Fatal("an empty token file was accepted")
	}
}

// TestDuplicateKey: a repeated key is found at any depth and named by its
// path; distinct keys, arrays of objects and invalid JSON are not its
// business.
func TestDuplicateKey(t *testing.T) {
	for _, c := range []struct{ doc, field string }{
		{`{"a": 1, "a": 2}`, "a"},
		{`{"type": "step", "data": {"tool": "x", "args": {"command": "ls", "command": "rm"}}}`, "data.args.command"},
		{`{"a": [{"b": 1}, {"b": 1, "c": {"d": 1, "d": 2}}]}`, "a[1].c.d"},
		{`{"a": 1, "\u0061": 2}`, "a"},
		{`{"a": {"x": 1}, "b": {"x": 1}}`, ""},
		{`[{"a": 1}, {"a": 2}]`, ""},
		{`{"a": 1, "a"`, ""},
		{`"a"`, ""},
		{strings.Repeat("[", 20000) + strings.Repeat("]", 20000), ""},
	} {
		err := DuplicateKey([]byte(c.doc))
		var dup *DuplicateKeyError
		switch {
		case c.field == "" && err != nil:
			t.Errorf("%.40s: %v, want none", c.doc, err)
		case c.field != "" && !errors.As(err, &dup):
			t.Errorf("%.40s: %v, want a duplicate at %s", c.doc, err, c.field)
		case c.field != "" && (dup.Field() != c.field || !strings.Contains(err.Error(), c.field)):
			t.Errorf("%.40s: %v (field %s), want field %s", c.doc, err, dup.Field(), c.field)
		}
	}
}
