package runtime_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/runtime"
)

// BenchmarkMCPInstances times MCP tools/call (send_message, the go-sdk
// client through the agent listener) one call at a time, round robin over
// the instances, with 1 and then 256 of them mounted, each warmed by one
// call first: what a call costs as the machine's instances grow. p50-ms is
// the median call.
func BenchmarkMCPInstances(b *testing.B) {
	ctx := context.Background()
	p, m := caseStudyManager(b, runtime.ManagerOptions{})
	defer m.Close(ctx)
	agent := httptest.NewServer(m.AgentHandler())
	defer agent.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	var sessions []*mcp.ClientSession
	defer func() {
		for _, cs := range sessions {
			cs.Close()
		}
	}()
	for _, n := range []int{1, 256} {
		for len(sessions) < n {
			info, err := m.Create(ctx, p.W0())
			if err != nil {
				b.Fatal(err)
			}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: agent.URL + info.MCPPath + "/messages", MaxRetries: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			sessions = append(sessions, cs)
		}
		b.Run("instances="+strconv.Itoa(n), func(b *testing.B) { benchMCP(b, sessions) })
		if n > 1 {
			b.Run("instances="+strconv.Itoa(n)+"/one", func(b *testing.B) { benchMCP(b, sessions[:1]) })
		}
	}
	// The first call after a reset, as every rollout's is: the instance's
	// service opens its database and prepares its statements again.
	b.Run("instances=256/first-after-reset", func(b *testing.B) {
		ids := m.List()
		var d []time.Duration
		n := 0
		for b.Loop() {
			b.StopTimer()
			i := n % len(ids)
			n++
			if err := m.Reset(ctx, ids[i].ID); err != nil {
				b.Fatal(err)
			}
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: agent.URL + ids[i].MCPPath + "/messages", MaxRetries: -1}, nil)
			if err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			t0 := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": fmt.Sprint("first ", n)}})
			d = append(d, time.Since(t0))
			b.StopTimer()
			if err != nil || res.IsError {
				b.Fatalf("send_message: %v %v", err, res)
			}
			cs.Close()
			b.StartTimer()
		}
		slices.Sort(d)
		b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
	})
}

func benchMCP(b *testing.B, sessions []*mcp.ClientSession) {
	var d []time.Duration
	n := 0
	call := func() {
		cs := sessions[n%len(sessions)]
		n++
		t0 := time.Now()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "send_message", Arguments: map[string]any{"to": "Priya Mehta", "body": fmt.Sprint("bench ", n)}})
		if err != nil || res.IsError {
			b.Fatalf("send_message: %v %v", err, res)
		}
		d = append(d, time.Since(t0))
	}
	for range len(sessions) + 30 {
		call()
	}
	d = d[:0]
	for b.Loop() {
		call()
	}
	slices.Sort(d)
	b.ReportMetric(float64(d[len(d)/2].Microseconds())/1000, "p50-ms")
}
