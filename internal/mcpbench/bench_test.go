package mcpbench

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/messages"
	"github.com/wildawm/wildawm/internal/world"
)

// BenchmarkInProcess calls each measured tool in process on the benchmark
// world (50 threads, 2000 messages), for profiling what Run measures.
func BenchmarkInProcess(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_threads", map[string]any{}},
		{"list_threads_5", map[string]any{"limit": 5}},
		{"search_messages_5", map[string]any{"query": "invoice", "limit": 5}},
		{"read_thread", map[string]any{"thread": readThread}},
		{"send_message", map[string]any{"thread": writeThread, "body": "Sounds good, see you at the station at seven."}},
	} {
		b.Run(c.tool, func(b *testing.B) {
			dir := filepath.Join(b.TempDir(), "w")
			if _, err := writeWorld(ctx, dir, 50, 2000, 1); err != nil {
				b.Fatal(err)
			}
			svc, err := messages.New(messages.Options{DBPath: world.DBPath(dir, messages.DBName), Clock: world.FixedClock(worldClock), Self: Self})
			if err != nil {
				b.Fatal(err)
			}
			ct, st := mcp.NewInMemoryTransports()
			ss, err := svc.Server().Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolParams{Name: strings.TrimSuffix(c.tool, "_5"), Arguments: c.args}
			for b.Loop() {
				res, err := cs.CallTool(ctx, p)
				if err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	}
}
