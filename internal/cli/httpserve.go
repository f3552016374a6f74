package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/wildawm/wildawm/internal/controlplane"
)

// serveMCPHTTP serves h at /mcp on addr until ctx ends, after printing the
// endpoint's URL as the first line of out (with port 0 the system picks a
// free port, and a script reads which from that line; an unspecified host
// such as ":0" is printed as 127.0.0.1, which the handler's DNS-rebinding
// protection accepts). When ctx ends, the requests in flight, and the
// event streams clients hold open, end with it.
func serveMCPHTTP(ctx context.Context, addr string, h http.Handler, out io.Writer) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("--http %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return base }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	host := ln.Addr().(*net.TCPAddr)
	if host.IP.IsUnspecified() {
		host = &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: host.Port}
	}
	if _, err := fmt.Fprintf(out, "http://%s/mcp\n", host); err != nil {
		srv.Close()
		return err
	}
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancel() // ends the handlers, the streams held open among them
	sctx, stop := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer stop()
	if err := srv.Shutdown(sctx); err != nil {
		return srv.Close()
	}
	return nil
}

// planeFlags are the listener flags of a control plane (rl serve,
// openenv serve): where it listens, its bearer token and its
// connection cap.
type planeFlags struct {
	addr, tokenFile string
	maxConns        int
	bodyTimeout     time.Duration
}

func (f *planeFlags) register(c *cobra.Command, addr string) {
	c.Flags().StringVar(&f.addr, "addr", addr, "the address to listen on (port 0: a free one, printed); beyond loopback (0.0.0.0, an interface) it needs --token-file")
	c.Flags().StringVar(&f.tokenFile, "token-file", "", "require \"Authorization: Bearer TOKEN\" on every request but GET /health, TOKEN this file's line (a fresh one is written there, mode 0600, when it does not exist)")
	c.Flags().IntVar(&f.maxConns, "max-conns", controlplane.DefaultMaxConns, "connections at once; at the cap the one sending its request the longest is closed")
	c.Flags().DurationVar(&f.bodyTimeout, "body-timeout", controlplane.DefaultBodyTimeout, "bound on receiving a request's headers and body (a long poll or a WebSocket then runs as long as it needs)")
}

// plane is a control plane's listener, before it serves.
type plane struct {
	f     *planeFlags
	ln    net.Listener
	token string
}

// listenPlane reads or writes the token and listens, refusing a bind
// beyond loopback without a token. Call it before the slow set-up, so a
// bad --addr fails at once.
func (e *env) listenPlane(f *planeFlags) (*plane, error) {
	if f.maxConns < 1 || f.bodyTimeout <= 0 {
		return nil, fmt.Errorf("--max-conns %d, --body-timeout %v: give at least 1 connection and a positive timeout", f.maxConns, f.bodyTimeout)
	}
	var token string
	if f.tokenFile != "" {
		t, created, err := controlplane.Token(f.tokenFile)
		if err != nil {
			return nil, fmt.Errorf("--token-file: %w", err)
		}
		if created {
			e.progress("wrote a fresh bearer token to %s (mode 0600): give it to the clients", f.tokenFile)
		}
		token = t
	}
	ln, err := controlplane.Listen(f.addr, token)
	if errors.Is(err, controlplane.ErrNeedsToken) {
		return nil, fmt.Errorf("--addr %s: %w: anyone who reaches the port could drive the server: give --token-file FILE (clients send \"Authorization: Bearer TOKEN\", TOKEN the file's line; it is written if missing), or listen on 127.0.0.1", f.addr, err)
	}
	if err != nil {
		return nil, fmt.Errorf("--addr %s: %w", f.addr, err)
	}
	return &plane{f: f, ln: ln, token: token}, nil
}

// close closes a listener that never served.
func (p *plane) close() { p.ln.Close() }

// serve serves h until ctx ends, after printing the URL the listener
// really bound as the first line of stdout (its real port, and 0.0.0.0 or
// [::] when bound beyond loopback, which the progress line says). On
// interrupt it calls stop (which ends long polls and sessions), then shuts
// the server down.
func (e *env) servePlane(ctx context.Context, p *plane, h http.Handler, what string, stop func(context.Context) error) error {
	srv := controlplane.New(p.ln, h, controlplane.Options{Token: p.token, MaxConns: p.f.maxConns, BodyTimeout: p.f.bodyTimeout})
	base, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv.HTTPServer().BaseContext = func(net.Listener) context.Context { return base }
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve() }()
	url := controlplane.URL(p.ln.Addr())
	fmt.Fprintln(e.stdout, url)
	auth := "no token: loopback only"
	if p.token != "" {
		auth = "bearer token of " + p.f.tokenFile + " required but on /health"
	}
	if controlplane.BeyondLoopback(p.ln.Addr()) {
		e.progress("listening BEYOND LOOPBACK on %s: reachable from other machines (%s)", p.ln.Addr(), auth)
	}
	e.progress("serving %s at %s (%s); interrupt to stop", what, url, auth)
	var serveErr error
	select {
	case serveErr = <-errc:
	case <-ctx.Done():
	}
	cctx, done := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer done()
	var stopErr error
	if stop != nil {
		stopErr = stop(cctx)
	}
	cancel() // ends the long polls still held
	srv.Shutdown(cctx)
	if errors.Is(serveErr, http.ErrServerClosed) {
		serveErr = nil
	}
	return errors.Join(serveErr, stopErr)
}
