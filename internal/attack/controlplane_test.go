package attack

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/wildawm/wildawm/internal/controlplane"
	"github.com/wildawm/wildawm/internal/openenv"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/trainer"
)

// planeToken is the bearer token the control planes of these attacks
// are started with.
const planeToken = "c0ntrol-plane-t0ken-for-the-attack-suite"

// Limits the planes run with: small, so that the attacks reach them.
const (
	planeMaxConns    = 32
	planeBodyTimeout = 2 * time.Second
)

// planes are rl serve's and openenv serve's handlers, each behind the
// controlplane server the commands put them behind, on loopback with a
// token.
type planes struct {
	svc      *trainer.Service
	env      *openenv.Server
	rl, oenv *controlplane.Server
	rlURL    string
	envURL   string
	dir      string
}

// startPlanes starts both over the case study's task: a pool of its own
// in a temporary directory (the fixture's store is never written), a
// rollout service whose rollouts would fail (no attack may start one) and
// an OpenEnv server whose instances cannot start (no attack may reset).
func startPlanes(f *fixture) (*planes, error) {
	dir, err := os.MkdirTemp("", "wildawm-attack-plane-")
	if err != nil {
		return nil, err
	}
	p := &planes{dir: dir}
	ok := false
	defer func() {
		if !ok {
			p.close()
		}
	}()
	idx := &pool.Pool{Version: pool.Version, TasksDir: filepath.Dir(f.p.TaskDir), Tasks: []pool.Entry{{ID: f.p.Task.ID, Dir: filepath.Base(f.p.TaskDir), Split: pool.SplitRL}}}
	if err := idx.Save(filepath.Join(dir, pool.File)); err != nil {
		return nil, err
	}
	p.svc, err = trainer.Open(context.Background(), trainer.Options{Dir: dir, StateDir: filepath.Join(dir, "rl"), Parallel: 1,
		Rollout: func(context.Context, trainer.RolloutJob) (*trainer.RolloutResult, error) {
			return nil, errors.New("an attack started a rollout")
		}})
	if err != nil {
		return nil, err
	}
	p.env, err = openenv.New(openenv.Options{Tasks: []openenv.Task{{Task: f.p.Task, Dir: f.p.TaskDir}},
		Env: func(*task.Task) (openenv.Episodes, error) { return nil, errors.New("an attack reset an episode") }})
	if err != nil {
		return nil, err
	}
	o := controlplane.Options{Token: planeToken, MaxConns: planeMaxConns, BodyTimeout: planeBodyTimeout}
	for _, s := range []struct {
		h   http.Handler
		srv **controlplane.Server
		url *string
	}{{p.svc.Handler(), &p.rl, &p.rlURL}, {p.env.Handler(), &p.oenv, &p.envURL}} {
		ln, err := controlplane.Listen("127.0.0.1:0", planeToken)
		if err != nil {
			return nil, err
		}
		*s.srv = controlplane.New(ln, s.h, o)
		*s.url = controlplane.URL(ln.Addr())
		go (*s.srv).Serve()
	}
	ok = true
	return p, nil
}

func (p *planes) close() {
	for _, s := range []*controlplane.Server{p.rl, p.oenv} {
		if s != nil {
			s.Close()
		}
	}
	if p.env != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		p.env.Close(ctx)
		cancel()
	}
	if p.svc != nil {
		p.svc.Close(context.Background())
	}
	os.RemoveAll(p.dir)
}

// call sends one request with the given Authorization header ("" for
// none) and returns the status and body.
func (p *planes) call(ctx context.Context, method, url, auth, body string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		return 0, "", err
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	return resp.StatusCode, string(b), err
}

// noBatches checks that the rollout service saved no batch.
func (p *planes) noBatches() error {
	steps, err := p.svc.Steps()
	if err != nil {
		return err
	}
	if len(steps) > 0 {
		return fmt.Errorf("the rollout service holds batches of steps %v", steps)
	}
	return nil
}

// dialWS opens an OpenEnv session with the token.
func (p *planes) dialWS(ctx context.Context, auth string) (*websocket.Conn, *http.Response, error) {
	h := http.Header{}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	return websocket.Dial(ctx, "ws"+strings.TrimPrefix(p.envURL, "http")+"/ws", &websocket.DialOptions{HTTPHeader: h})
}

// wsCall sends one raw message and reads the answer's type and data.
func wsCall(ctx context.Context, c *websocket.Conn, msg string) (string, map[string]any, error) {
	if err := c.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		return "", nil, err
	}
	_, b, err := c.Read(ctx)
	if err != nil {
		return "", nil, err
	}
	var r struct {
		Type string         `json:"type"`
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		return "", nil, fmt.Errorf("answer %s: %w", b, err)
	}
	return r.Type, r.Data, nil
}

// trickleConn connects to addr and sends what head says, then a byte of
// body every 50ms, until the server closes the connection or ctx ends;
// with head "" it trickles the headers themselves.
func trickleConn(ctx context.Context, addr, head string) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return
	}
	defer c.Close()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	drip := "x"
	if head == "" {
		head, drip = "GET /health HTTP/1.1\r\nHost: x\r\n", "X-Slow: y\r\n"
	}
	if _, err := io.WriteString(c, head); err != nil {
		return
	}
	for ctx.Err() == nil {
		for i := range len(drip) {
			c.SetWriteDeadline(time.Now().Add(time.Second))
			if _, err := c.Write([]byte{drip[i]}); err != nil {
				return
			}
			c.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
			var b [256]byte
			if _, err := c.Read(b[:]); err != nil {
				var ne net.Error
				if !errors.As(err, &ne) || !ne.Timeout() {
					return
				}
			}
		}
	}
}

// healthWithin asks GET /health until it answers 200 or d passes (a
// client retries a connection closed for room).
func healthWithin(url string, d time.Duration) error {
	end := time.Now().Add(d)
	c := &http.Client{Timeout: d}
	for {
		resp, err := c.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("HTTP %d", resp.StatusCode)
		}
		if time.Now().After(end) {
			return fmt.Errorf("GET %s/health: no answer within %v: %w", url, d, err)
		}
	}
}

func controlPlaneAttacks(f *fixture) []attack {
	_ = f
	auths := []string{"", "Bearer", "Bearer ", "Bearer wrong", "Bearer " + strings.ToUpper(planeToken), "Bearer " + planeToken[:len(planeToken)-1], "Basic " + planeToken, planeToken}
	return []attack{
		{
			name: "slow clients against rl serve and openenv serve", category: "control-plane",
			action:  fmt.Sprintf("3x the connection cap (%d) of clients that send their headers a line at a time, or a POST's headers and then its body a byte every 50ms, reconnecting when cut off, against both servers at once", planeMaxConns),
			contain: fmt.Sprintf("/health answers within 4s (the 1s grace a connection has before it may be closed for room, and 3s for a loaded host) throughout; never more than %d connections open; every one freed within the body timeout (%v) once the clients stop", planeMaxConns, planeBodyTimeout),
			try: func(ctx context.Context, f *fixture) (string, error) {
				p, err := startPlanes(f)
				if err != nil {
					return "", err
				}
				defer p.close()
				actx, stop := context.WithCancel(ctx)
				defer stop()
				var wg sync.WaitGroup
				for _, s := range []struct{ url, head string }{
					{p.rlURL, "POST /v1/batches HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"},
					{p.envURL, "POST /metadata HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"},
					{p.rlURL, ""}, {p.envURL, ""},
				} {
					for range 3 * planeMaxConns / 2 {
						wg.Go(func() {
							for actx.Err() == nil {
								trickleConn(actx, strings.TrimPrefix(s.url, "http://"), s.head)
								time.Sleep(50 * time.Millisecond)
							}
						})
					}
				}
				time.Sleep(500 * time.Millisecond)
				most := 0
				for range 10 {
					for _, u := range []string{p.rlURL, p.envURL} {
						if err := healthWithin(u, controlplane.EvictGrace+3*time.Second); err != nil {
							return "", err
						}
					}
					most = max(most, p.rl.Conns(), p.oenv.Conns())
					if most > planeMaxConns {
						return "", fmt.Errorf("%d connections open, over the cap of %d", most, planeMaxConns)
					}
					time.Sleep(100 * time.Millisecond)
				}
				stop()
				wg.Wait()
				http.DefaultTransport.(*http.Transport).CloseIdleConnections()
				end := time.Now().Add(planeBodyTimeout + 2*time.Second)
				for p.rl.Conns()+p.oenv.Conns() > 0 {
					if time.Now().After(end) {
						return "", fmt.Errorf("%d and %d connections still open %v after the clients stopped", p.rl.Conns(), p.oenv.Conns(), planeBodyTimeout+2*time.Second)
					}
					time.Sleep(50 * time.Millisecond)
				}
				if err := p.noBatches(); err != nil {
					return "", err
				}
				return fmt.Sprintf("/health answered within 4s 20 times under %d trickling clients; at most %d connections open per server; all freed after", 6*planeMaxConns, most), nil
			},
		},
		{
			name: "rl serve and openenv serve without the token", category: "control-plane",
			action:  "POST /v1/batches (a valid request), GET /v1/state and /v1/batches/step-000001 on rl serve; GET /metadata, /schema and the WebSocket /ws on openenv serve; each with no Authorization, an empty or wrong bearer token, the token upper-cased, a prefix of it, Basic, and the bare token",
			contain: "401 for each (the WebSocket upgrade refused); no batch requested; /health alone answers without the token",
			try: func(ctx context.Context, f *fixture) (string, error) {
				p, err := startPlanes(f)
				if err != nil {
					return "", err
				}
				defer p.close()
				n := 0
				req := `{"step": 1, "tasks": 1, "g": 2, "policy": "scripted:replay-ensemble"}`
				for _, auth := range auths {
					for _, c := range [][3]string{{"POST", p.rlURL + "/v1/batches", req}, {"GET", p.rlURL + "/v1/state?step=0", ""},
						{"GET", p.rlURL + "/v1/batches/step-000001", ""}, {"GET", p.envURL + "/metadata", ""}, {"GET", p.envURL + "/schema", ""}} {
						st, body, err := p.call(ctx, c[0], c[1], auth, c[2])
						if err != nil {
							return "", err
						}
						if st != http.StatusUnauthorized {
							return "", fmt.Errorf("%s %s with Authorization %q: HTTP %d %.200s", c[0], c[1], auth, st, body)
						}
						n++
					}
					conn, resp, err := p.dialWS(ctx, auth)
					if err == nil {
						conn.CloseNow()
						return "", fmt.Errorf("the WebSocket /ws opened with Authorization %q", auth)
					}
					if resp == nil || resp.StatusCode != http.StatusUnauthorized {
						return "", fmt.Errorf("the WebSocket /ws with Authorization %q: %v, want 401", auth, err)
					}
					n++
				}
				if err := p.noBatches(); err != nil {
					return "", err
				}
				for _, u := range []string{p.rlURL, p.envURL} {
					if st, body, err := p.call(ctx, "GET", u+"/health", "", ""); err != nil || st != http.StatusOK {
						return "", fmt.Errorf("GET %s/health without the token: %d %s %v", u, st, body, err)
					}
				}
				// The token itself is let in: the refusals are the token's.
				if st, body, err := p.call(ctx, "GET", p.envURL+"/metadata", "Bearer "+planeToken, ""); err != nil || st != http.StatusOK {
					return "", fmt.Errorf("GET /metadata with the token: %d %s %v", st, body, err)
				}
				return fmt.Sprintf("%d requests without the right token: 401 each; no batch; /health open", n), nil
			},
		},
		{
			name: "duplicate JSON keys and out-of-bound numbers", category: "control-plane",
			action:  "with the token: POST /v1/batches {\"step\": 1, \"step\": 2, ...}, a sampling object naming temperature twice, step 2^63-1; on an OpenEnv session {\"type\": \"state\", \"type\": \"close\"} and a file.write step whose args name content twice",
			contain: "each refused naming the key or field (400 on rl serve, VALIDATION_ERROR on the session, which goes on); no batch requested, nothing written",
			try: func(ctx context.Context, f *fixture) (string, error) {
				p, err := startPlanes(f)
				if err != nil {
					return "", err
				}
				defer p.close()
				auth := "Bearer " + planeToken
				for _, c := range [][2]string{
					{`{"step": 1, "step": 2, "tasks": 1, "policy": "scripted:replay-ensemble"}`, `step: key "step" appears twice`},
					{`{"step": 1, "tasks": 1, "engine": "http://127.0.0.1:1/v1#m", "sampling": {"temperature": 1, "temperature": 0}}`, "sampling.temperature"},
					{`{"step": 9223372036854775807, "tasks": 1, "policy": "scripted:replay-ensemble"}`, "step: 9223372036854775807"},
				} {
					st, body, err := p.call(ctx, "POST", p.rlURL+"/v1/batches", auth, c[0])
					if err != nil {
						return "", err
					}
					var e struct{ Error string }
					json.Unmarshal([]byte(body), &e)
					if st != http.StatusBadRequest || !strings.Contains(e.Error, c[1]) {
						return "", fmt.Errorf("POST %s: HTTP %d %.300s, want 400 naming %s", c[0], st, body, c[1])
					}
				}
				if err := p.noBatches(); err != nil {
					return "", err
				}
				conn, _, err := p.dialWS(ctx, auth)
				if err != nil {
					return "", err
				}
				defer conn.CloseNow()
				for _, c := range [][2]string{
					{`{"type": "state", "type": "close"}`, "type"},
					{`{"type": "step", "data": {"tool": "file.write", "args": {"path": "x.txt", "content": "a", "content": "b"}}}`, "data.args.content"},
				} {
					typ, data, err := wsCall(ctx, conn, c[0])
					if err != nil {
						return "", fmt.Errorf("%s: %w", c[0], err)
					}
					if typ != openenv.TypeError || data["code"] != openenv.CodeValidation || data["field"] != c[1] {
						return "", fmt.Errorf("%s: %s %v, want VALIDATION_ERROR on %s", c[0], typ, data, c[1])
					}
				}
				// The session went on: a state message answers.
				if typ, _, err := wsCall(ctx, conn, `{"type": "state"}`); err != nil || typ != openenv.TypeState {
					return "", fmt.Errorf("state after the refusals: %s %v", typ, err)
				}
				return "3 rl requests refused 400 naming the key or field; 2 OpenEnv messages refused naming it, the session alive", nil
			},
		},
		{
			name: "a control plane bound beyond loopback without a token", category: "control-plane",
			action:  "listen on 0.0.0.0:0 and [::]:0 without a token, as rl serve --addr 0.0.0.0:8020 would",
			contain: "refused before serving (ErrNeedsToken: the commands name --token-file); with a token the listener's real address is unspecified, port not 0",
			try: func(ctx context.Context, f *fixture) (string, error) {
				for _, a := range []string{"0.0.0.0:0", "[::]:0"} {
					ln, err := controlplane.Listen(a, "")
					if err == nil {
						ln.Close()
						return "", fmt.Errorf("%s without a token: listening on %s", a, ln.Addr())
					}
					if !errors.Is(err, controlplane.ErrNeedsToken) {
						return "", fmt.Errorf("%s: %v, want ErrNeedsToken", a, err)
					}
				}
				ln, err := controlplane.Listen("0.0.0.0:0", planeToken)
				if err != nil {
					return "", err
				}
				defer ln.Close()
				u := controlplane.URL(ln.Addr())
				if !controlplane.BeyondLoopback(ln.Addr()) || strings.HasSuffix(u, ":0") || strings.Contains(u, "127.0.0.1") {
					return "", fmt.Errorf("with a token: %s, want the unspecified host and the real port", u)
				}
				return "both refused; with a token: " + u, nil
			},
		},
	}
}
