package mail

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// newWorld writes the test world and returns its directory.
func newWorld(t testing.TB) string {
	t.Helper()
	return MakeTestWorld(t, filepath.Join(t.TempDir(), "world"))
}

func dbPath(dir string) string { return world.DBPath(dir, DBName) }

// connectMemory connects an SDK client to s over in-memory transports.
func connectMemory(t testing.TB, s *Service) *mcp.ClientSession {
	t.Helper()
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := s.Server().Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ss.Wait()
	})
	return cs
}

// connectHTTP connects an SDK client to s over streamable HTTP.
func connectHTTP(t testing.TB, s *Service) *mcp.ClientSession {
	t.Helper()
	ts := httptest.NewServer(s.HTTPHandler())
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: ts.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		ts.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		ts.Close()
	})
	return cs
}

var transports = []struct {
	name    string
	connect func(testing.TB, *Service) *mcp.ClientSession
}{
	{"memory", connectMemory},
	{"http", connectHTTP},
}

// call calls a tool that must succeed and decodes its structured result.
func call[Out any](t testing.TB, cs *mcp.ClientSession, name string, args any) Out {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%v): tool error: %s", name, args, resultText(res))
	}
	var out Out
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	return out
}

// callError calls a tool that must fail with a tool error and returns its text.
func callError(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%v): protocol error %v, want a tool error", name, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%v): succeeded, want a tool error", name, args)
	}
	return resultText(res)
}

func resultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func hashDB(t testing.TB, path string) world.ID {
	t.Helper()
	id, _, err := state.HashDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
