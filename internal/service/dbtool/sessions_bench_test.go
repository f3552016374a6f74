package dbtool

import (
	"net/http"
	"net/http/httptest"
	"runtime"
	"testing"
)

// BenchmarkSessions opens 5,000 streamable-HTTP sessions per iteration and
// never closes them, with the cap (DefaultMaxSessions) and without it,
// reporting the sessions open and the heap they hold (docs/BENCHMARKS.md).
func BenchmarkSessions(b *testing.B) {
	for _, c := range []struct {
		name string
		max  int
	}{{"capped", 0}, {"uncapped", 1 << 30}} {
		b.Run(c.name, func(b *testing.B) {
			var open int
			var heap float64
			for b.Loop() {
				ts := httptest.NewServer(NewHTTPHandler(greetServer(b), nil, 0, c.max))
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				open = 0
				for range 5000 {
					p := &httpPeer{t: b, url: ts.URL}
					if st, _, _ := p.post(initialize); st == http.StatusOK {
						open++
					}
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = float64(int64(m1.HeapInuse)-int64(m0.HeapInuse)) / 1e6
				ts.Close()
			}
			b.ReportMetric(float64(open), "sessions")
			b.ReportMetric(heap, "heap-MB")
		})
	}
}
