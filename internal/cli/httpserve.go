package cli

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
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
