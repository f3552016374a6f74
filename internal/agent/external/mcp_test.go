package external

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolServer is a small MCP server over streamable HTTP for the tests,
// standing in for the gateway and an instance's service; it records the
// calls it served.
type toolServer struct {
	URL string

	mu    sync.Mutex
	calls []string
}

func (s *toolServer) record(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, name)
}

func (s *toolServer) Calls() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.calls...)
}

func serve(t *testing.T, srv *mcp.Server) string {
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return ts.URL + "/mcp"
}

type shellIn struct {
	Command string `json:"command" jsonschema:"a bash command"`
}

type pathIn struct {
	Path string `json:"path" jsonschema:"a path relative to the home directory"`
}

func text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func toolError(s string) *mcp.CallToolResult {
	r := text(s)
	r.IsError = true
	return r
}

// newGateway serves the gateway's shell and read_file over home.
func newGateway(t *testing.T, home string) *toolServer {
	ts := &toolServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: Gateway, Version: "test"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "shell", Description: "Run a bash command in the home directory."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in shellIn) (*mcp.CallToolResult, any, error) {
			ts.record("shell")
			cmd := exec.CommandContext(ctx, "bash", "-c", in.Command)
			cmd.Dir = home
			out, err := cmd.CombinedOutput()
			if err != nil {
				return toolError(string(out) + err.Error()), nil, nil
			}
			return text(string(out)), nil, nil
		})
	mcp.AddTool(srv, &mcp.Tool{Name: "read_file", Description: "Read a text file of the home directory."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in pathIn) (*mcp.CallToolResult, any, error) {
			ts.record("read_file")
			b, err := os.ReadFile(filepath.Join(home, filepath.Clean("/"+in.Path)))
			if err != nil {
				return toolError("read_file: no file " + in.Path), nil, nil
			}
			return text(string(b)), nil, nil
		})
	ts.URL = serve(t, srv)
	return ts
}

type listIn struct {
	Limit int `json:"limit,omitempty" jsonschema:"how many notes at most"`
}

type note struct {
	ID    int    `json:"id"`
	Title string `json:"title"`
}

type listOut struct {
	Notes []note `json:"notes"`
}

// newNotes serves an instance-service-like MCP server with list_notes.
func newNotes(t *testing.T) *toolServer {
	ts := &toolServer{}
	srv := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "test"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "list_notes", Description: "List the persona's notes."},
		func(ctx context.Context, _ *mcp.CallToolRequest, in listIn) (*mcp.CallToolResult, listOut, error) {
			ts.record("list_notes")
			all := []note{{1, "groceries"}, {2, "surge protector"}, {3, "trip"}}
			if in.Limit > 0 && in.Limit < len(all) {
				all = all[:in.Limit]
			}
			return nil, listOut{Notes: all}, nil
		})
	ts.URL = serve(t, srv)
	return ts
}
