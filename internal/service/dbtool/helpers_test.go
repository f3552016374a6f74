package dbtool

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The client helpers of servicetest, which imports the engine and so
// cannot be imported by dbtool's own tests.

type testServer interface {
	Server() *mcp.Server
	HTTPHandler() http.Handler
}

// serverOf makes a server a testServer.
type serverOf func() *mcp.Server

func (f serverOf) Server() *mcp.Server       { return f() }
func (f serverOf) HTTPHandler() http.Handler { return NewHTTPHandler(f(), nil, 0, 0) }

func connectMemory(t testing.TB, s testServer) *mcp.ClientSession {
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

// schemaOf decodes a JSON Schema, as the service engine reads a
// definition's.
func schemaOf(t testing.TB, text string) *jsonschema.Schema {
	t.Helper()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(text), &s); err != nil {
		t.Fatalf("schema %s: %v", text, err)
	}
	return &s
}

// greetInput is the input schema of the tool greet (addGreet).
const greetInput = `{"type": "object", "required": ["name"], "properties": {
	"name": {"type": "string", "description": "who to greet"},
	"count": {"type": "integer", "description": "how many times, 1 to 10; omit for 1", "minimum": 1, "maximum": 10},
	"loud": {"type": "boolean"},
	"title": {"type": ["string", "null"], "description": "a title; omit for none"},
	"tags": {"type": ["array", "null"], "items": {"type": "string"}}}}`

// addGreet adds the tool greet to srv as the service engine adds a tool:
// its arguments checked by Args against its input schema, its result
// handed over as JSON (json.RawMessage) and a ToolError as an isError
// result. It answers {"text": "hi NAME\nbye"}; the name "bad" is a
// ToolError.
func addGreet(t testing.TB, srv *mcp.Server) {
	t.Helper()
	in := schemaOf(t, greetInput)
	args := NewArgs("greet", in)
	pub, err := Portable(in)
	if err != nil {
		t.Fatal(err)
	}
	srv.AddTool(&mcp.Tool{Name: "greet", Description: "greets", InputSchema: pub}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		fields, err := args.Check(req.Params.Arguments)
		var name string
		if err == nil {
			json.Unmarshal(fields["name"], &name)
			if name == "bad" {
				err = BadCall("name %q is bad; pick another", name)
			}
		}
		if err != nil {
			var res mcp.CallToolResult
			res.SetError(err)
			return &res, nil
		}
		// The text is the JSON a model reads: <, > and & stay as they are.
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(map[string]string{"text": "hi " + name + "\nbye"}); err != nil {
			return nil, err
		}
		out := json.RawMessage(bytes.TrimSpace(b.Bytes()))
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(out)}}, StructuredContent: out}, nil
	})
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
