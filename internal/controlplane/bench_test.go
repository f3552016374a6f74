package controlplane

import (
	"context"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// BenchmarkHealthUnderSlowClients times GET /health while 1,000 clients
// trickle request bodies a byte every 20ms, behind a Server (cap 256)
// and behind the plain http.Server rl serve and openenv serve had
// (ReadHeaderTimeout only); held-conns is what the server holds open
// at the end (docs/BENCHMARKS.md, issue 29).
//
//	go test ./internal/controlplane -run '^$' -bench HealthUnderSlowClients -benchtime 50x
func BenchmarkHealthUnderSlowClients(b *testing.B) {
	const slow = 1000
	for _, name := range []string{"controlplane", "plain"} {
		b.Run(name, func(b *testing.B) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				b.Fatal(err)
			}
			var held func() int
			switch name {
			case "controlplane":
				s := New(ln, echo(), Options{})
				go s.Serve()
				defer s.Close()
				held = s.Conns
			default:
				var mu sync.Mutex
				open := 0
				hs := &http.Server{Handler: echo(), ReadHeaderTimeout: 10 * time.Second, ConnState: func(_ net.Conn, st http.ConnState) {
					mu.Lock()
					defer mu.Unlock()
					switch st {
					case http.StateNew:
						open++
					case http.StateClosed, http.StateHijacked:
						open--
					}
				}}
				go hs.Serve(ln)
				defer hs.Close()
				held = func() int { mu.Lock(); defer mu.Unlock(); return open }
			}
			url := "http://" + ln.Addr().String()
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range slow {
				wg.Go(func() {
					for ctx.Err() == nil {
						trickle(ctx, strings.TrimPrefix(url, "http://"))
						time.Sleep(50 * time.Millisecond)
					}
				})
			}
			time.Sleep(2 * time.Second)
			c := &http.Client{Timeout: 10 * time.Second}
			b.ResetTimer()
			for range b.N {
				if err := health(url, 10*time.Second); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(held()), "held-conns")
			c.CloseIdleConnections()
			cancel()
			wg.Wait()
		})
	}
}
