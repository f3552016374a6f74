package messages

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/servicetest"
)

// BenchmarkCallTool measures one tools/call through a real SDK client, in
// process and over streamable HTTP (loopback), and reports the median.
func BenchmarkCallTool(b *testing.B) {
	calls := []struct {
		name string
		args map[string]any
	}{
		{"read_thread", map[string]any{"thread": "grp-lisbon"}},
		{"send_message", map[string]any{"thread": "grp-lisbon", "body": "benchmark message"}},
		{"list_threads", map[string]any{}},
		{"search_messages", map[string]any{"query": "dinner"}},
	}
	for _, tr := range servicetest.Transports() {
		for _, c := range calls {
			b.Run(tr.Name+"/"+c.name, func(b *testing.B) {
				cs := tr.Connect(b, newService(b, newWorld(b)))
				ctx := context.Background()
				params := &mcp.CallToolParams{Name: c.name, Arguments: c.args}
				durs := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for b.Loop() {
					start := time.Now()
					res, err := cs.CallTool(ctx, params)
					durs = append(durs, time.Since(start))
					if err != nil || res.IsError {
						b.Fatalf("%s: %v %v", c.name, err, res)
					}
				}
				slices.Sort(durs)
				b.ReportMetric(float64(durs[len(durs)/2].Microseconds()), "p50-µs")
			})
		}
	}
}
