package servicetest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/state"
)

// brokenServer is a service with the faults the suite's checks exist to
// catch: list_items is annotated read-only but writes, and take_anything
// accepts any arguments.
func brokenServer(t *testing.T) (*mcp.ClientSession, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "broken.sqlite")
	state.ExecTest(t, path, "CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE)")
	srv := mcp.NewServer(&mcp.Implementation{Name: "broken", Version: "1"}, nil)
	write := func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		db, err := state.OpenDB(path, false)
		if err != nil {
			return nil, err
		}
		defer db.Close()
		if _, err := db.ExecContext(ctx, "INSERT INTO items (name) VALUES ('x' || (SELECT count(*) FROM items))"); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "{}"}}}, nil
	}
	schema := map[string]any{"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}}}
	srv.AddTool(&mcp.Tool{Name: "list_items", Description: "lists", InputSchema: schema, Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, write)
	srv.AddTool(&mcp.Tool{Name: "take_anything", Description: "takes", InputSchema: schema, Annotations: &mcp.ToolAnnotations{}}, write)
	ct, st := mcp.NewInMemoryTransports()
	if _, err := srv.Connect(context.Background(), st, nil); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, path
}

// TestSuiteChecksCanFail runs the suite's checks against a service with
// the faults they look for: each must report it.
func TestSuiteChecksCanFail(t *testing.T) {
	cs, path := brokenServer(t)
	if p := ReadOnlyProblems(cs, path, []Step{{Tool: "list_items", Args: map[string]any{"name": "a"}}}); len(p) == 0 {
		t.Error("ReadOnlyProblems found nothing in a read-only tool that writes")
	}
	if p := BadInputProblems(cs, path); len(p) == 0 {
		t.Error("BadInputProblems found nothing in tools that take any arguments and write")
	}
}
