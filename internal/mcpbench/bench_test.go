package mcpbench

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/state"
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
			svc := benchService(b, false)
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

// BenchmarkAddTool compares the SDK's mcp.AddTool (schema validation of the
// input and the output on every call) with a tool the service engine
// serves (its arguments checked by dbtool.Args, its result shaped by the
// output schema and handed over as JSON, in a read transaction) on a
// handler that returns a fixed 40-message read_thread result, in process.
func BenchmarkAddTool(b *testing.B) {
	out := fixedThread()
	for _, kind := range []string{"mcp.AddTool", "engine"} {
		b.Run(kind, func(b *testing.B) {
			var srv *mcp.Server
			if kind == "mcp.AddTool" {
				srv = mcp.NewServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
				mcp.AddTool(srv, &mcp.Tool{Name: "read_thread", Description: "Reads a thread."}, func(ctx context.Context, _ *mcp.CallToolRequest, in readThreadIn) (*mcp.CallToolResult, readThreadOut, error) {
					return nil, out, nil
				})
			} else {
				srv = fixedThreadService(b, out).Server()
			}
			ctx := context.Background()
			ct, st := mcp.NewInMemoryTransports()
			ss, err := srv.Connect(ctx, st, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer ss.Close()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				b.Fatal(err)
			}
			defer cs.Close()
			p := &mcp.CallToolParams{Name: "read_thread", Arguments: map[string]any{"thread": readThread}}
			for b.Loop() {
				if res, err := cs.CallTool(ctx, p); err != nil || res.IsError {
					b.Fatalf("%v %v", err, res)
				}
			}
		})
	}
}

// fixedThreadDef is a definition with one tool, read_thread, whose hook
// answers a fixed result: the engine's side of BenchmarkAddTool.
const fixedThreadDef = `
wildawm_service: 1
name: fixedthread
title: Fixed thread
instructions: One fixed thread.
health_tool: read_thread
tables:
  - name: threads
    columns: [id INTEGER PRIMARY KEY, thread TEXT NOT NULL UNIQUE]
    key: [thread]
tools:
  - name: read_thread
    description: Reads a thread.
    annotations: {readOnlyHint: true}
    input: {type: object, properties: {thread: {type: string}}, required: [thread]}
    output:
      type: object
      required: [thread, title, kind, participants, messages]
      properties:
        thread: {type: string}
        title: {type: string}
        kind: {type: string}
        participants: {type: array, items: {type: string}}
        messages:
          type: array
          items:
            type: object
            required: [seq, sender, sent_at, body]
            properties: {seq: {type: integer}, sender: {type: string}, sent_at: {type: string}, body: {type: string}}
    steps:
      - hook: fixed
`

// fixedThreadService serves fixedThreadDef, its hook answering out, over a
// database of its own.
func fixedThreadService(b *testing.B, out readThreadOut) *engine.Service {
	b.Helper()
	fixed, err := json.Marshal(out)
	if err != nil {
		b.Fatal(err)
	}
	d, err := engine.Parse([]byte(fixedThreadDef))
	if err != nil {
		b.Fatal(err)
	}
	c, err := engine.Compile(d, engine.Hooks{Steps: map[string]engine.StepFunc{"fixed": func(c *engine.Call) error {
		c.Result = fixed
		return nil
	}}})
	if err != nil {
		b.Fatal(err)
	}
	path := filepath.Join(b.TempDir(), "fixedthread.sqlite")
	state.ExecTest(b, path, d.Schema()...)
	svc, err := engine.New(c, engine.Options{DBPath: path, Clock: world.FixedClock(time.Date(2026, 1, 2, 9, 0, 0, 0, time.UTC)), Self: Self})
	if err != nil {
		b.Fatal(err)
	}
	return svc
}

// BenchmarkHTTPResponse compares the two ways streamable HTTP may answer a
// POST, as the raw client sees them: one application/json body (what
// dbtool.NewHTTPHandler serves) and an event stream (the SDK's default),
// for send_message on the benchmark world.
func BenchmarkHTTPResponse(b *testing.B) {
	ctx := context.Background()
	for _, jsonResponse := range []bool{true, false} {
		name := "event-stream"
		if jsonResponse {
			name = "json"
		}
		b.Run(name, func(b *testing.B) {
			svc := benchService(b, true)
			srv := svc.Server()
			hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse}))
			defer hs.Close()
			rc, err := startRawHTTP(ctx, hs.URL)
			if err != nil {
				b.Fatal(err)
			}
			defer rc.close()
			args := map[string]any{"thread": writeThread, "body": "Sounds good, see you at the station at seven."}
			var id int64
			for b.Loop() {
				id++
				msg, _, err := rc.call(ctx, id, "send_message", args)
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

// BenchmarkStdioResult times a read_thread-sized answer (a fixed
// 40-message result, 18 KiB on the wire) over a pipe with the raw client,
// three ways: the SDK's result encoding and stdio transport
// (mcp.NewServer, mcp.IOTransport), dbtool's one-pass result encoding on
// the SDK's transport (dbtool.NewServer), and both of dbtool's
// (dbtool.StdioTransport, as `wildawm mcp serve` runs). The tool's handler
// returns the result as JSON (json.RawMessage), as the service engine's
// tools do.
func BenchmarkStdioResult(b *testing.B) {
	fixed, err := json.Marshal(fixedThread())
	if err != nil {
		b.Fatal(err)
	}
	tool := &mcp.Tool{Name: "read_thread", Description: "Reads a thread.", InputSchema: &jsonschema.Schema{
		Type: "object", Properties: map[string]*jsonschema.Schema{"thread": {Type: "string"}}, Required: []string{"thread"}}}
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(fixed)}}, StructuredContent: json.RawMessage(fixed)}, nil
	}
	for _, c := range []struct {
		name      string
		newServer func(*mcp.Implementation, *mcp.ServerOptions) *mcp.Server
		transport func(in, out *os.File) mcp.Transport
	}{
		{"sdk-encoding/sdk-stdio", mcp.NewServer, func(in, out *os.File) mcp.Transport { return &mcp.IOTransport{Reader: in, Writer: out} }},
		{"dbtool-encoding/sdk-stdio", dbtool.NewServer, func(in, out *os.File) mcp.Transport { return &mcp.IOTransport{Reader: in, Writer: out} }},
		{"dbtool-encoding/dbtool-stdio", dbtool.NewServer, func(in, out *os.File) mcp.Transport { return &dbtool.StdioTransport{In: in, Out: out} }},
	} {
		b.Run(c.name, func(b *testing.B) {
			srv := c.newServer(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
			srv.AddTool(tool, handler)
			inR, inW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			outR, outW, err := os.Pipe()
			if err != nil {
				b.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- srv.Run(context.Background(), c.transport(inR, outW)) }()
			defer func() { inW.Close(); <-done; outR.Close(); outW.Close() }()
			// The raw client over the pipe pair, as startRawStdio speaks to
			// a command.
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
			args := map[string]any{"thread": readThread}
			var id int64
			for b.Loop() {
				id++
				msg, _, err := rc.call(context.Background(), id, "read_thread", args)
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

// fixedThread is the fixed read_thread result the benchmarks serve: 40
// messages of a direct-message thread.
func fixedThread() readThreadOut {
	out := readThreadOut{Thread: readThread, Title: "Sam Tanaka", Kind: "dm", Participants: []string{Self, "Sam Tanaka"}}
	for i := range 40 {
		out.Messages = append(out.Messages, message{Seq: i + 1, Sender: "Sam Tanaka", SentAt: "2026-01-01 21:42:05",
			Body: "thanks friday hiking numbers sent next flight call sure reservation you deadline call when pickup you ok hotel good when friday week review"})
	}
	return out
}

// The read_thread result's shape, for the benchmarks that serve a fixed one.
type (
	readThreadIn struct {
		Thread string `json:"thread"`
	}
	message struct {
		Seq    int    `json:"seq"`
		Sender string `json:"sender"`
		SentAt string `json:"sent_at"`
		Body   string `json:"body"`
	}
	readThreadOut struct {
		Thread       string    `json:"thread"`
		Title        string    `json:"title"`
		Kind         string    `json:"kind"`
		Participants []string  `json:"participants"`
		Messages     []message `json:"messages"`
	}
)
