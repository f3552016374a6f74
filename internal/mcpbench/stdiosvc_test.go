package mcpbench

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// BenchmarkStdioService calls each measured tool of the messages service
// on the benchmark world, served over a pipe pair with dbtool's stdio
// transport (as `mcp serve --ephemeral` runs it) and called with the raw
// client: what bench mcp's stdio/raw rows measure, in one process, for
// profiling.
func BenchmarkStdioService(b *testing.B) {
	ctx := context.Background()
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"list_threads", map[string]any{}},
		{"list_threads", map[string]any{"limit": 5}},
		{"read_thread", map[string]any{"thread": readThread}},
		{"send_message", map[string]any{"thread": writeThread, "body": "Sounds good, see you at the station at seven."}},
		{"search_messages", map[string]any{"query": "invoice", "limit": 5}},
	} {
		name := c.tool
		if c.args["limit"] != nil {
			name += "_5"
		}
		b.Run(name, func(b *testing.B) {
			svc := benchService(b, true)
			srv := svc.Server()
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- srv.Run(context.Background(), &dbtool.StdioTransport{In: inR, Out: outW}) }()
			defer func() { inW.Close(); <-done; outR.Close(); outW.Close() }()
			rc := &rawStdio{in: inW, out: bufio.NewReaderSize(outR, 64<<10)}
			msg, _, err := rc.roundTrip(0, rawMessage(0, "initialize", initializeParams()))
			if err == nil {
				_, err = checkResponse(msg, 0)
			}
			if err != nil {
				b.Fatal(err)
			}
			if _, err := inW.Write(append(rawMessage(-1, "notifications/initialized", nil), '\n')); err != nil {
				b.Fatal(err)
			}
			var id int64
			for b.Loop() {
				id++
				msg, _, err := rc.call(ctx, id, c.tool, c.args)
				if err == nil {
					_, err = checkResponse(msg, id)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchService opens the messages service on a new benchmark world (50
// threads, 2000 messages).
func benchService(b *testing.B, ephemeral bool) service.Service {
	dir := filepath.Join(b.TempDir(), "w")
	if _, err := writeWorld(context.Background(), dir, 50, 2000, 1); err != nil {
		b.Fatal(err)
	}
	svc, err := openMessages(dir, ephemeral)
	if err != nil {
		b.Fatal(err)
	}
	return svc
}
