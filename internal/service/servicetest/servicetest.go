// Package servicetest has the helpers the MCP services' tests share:
// connecting a real SDK client in memory or over HTTP, calling tools (and
// checking their results against their output schemas), checking tool
// schemas against the model APIs' function-calling rules (schema.go),
// reading resources and hashing a database. Tests only; it imports state
// and world.
package servicetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// ReadResource reads uri through cs and returns its only content's text,
// failing the test on an error, on other contents, or on a MIME type other
// than mimeType.
func ReadResource(t testing.TB, cs *mcp.ClientSession, uri, mimeType string) string {
	t.Helper()
	res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		t.Fatalf("read %s: %v", uri, err)
	}
	if len(res.Contents) != 1 || res.Contents[0].URI != uri || res.Contents[0].MIMEType != mimeType {
		t.Fatalf("read %s: contents %+v, want one %s content", uri, res.Contents, mimeType)
	}
	return res.Contents[0].Text
}

// WantNotFound fails the test unless reading uri through cs is the SDK's
// resource-not-found error.
func WantNotFound(t testing.TB, cs *mcp.ClientSession, uri string) {
	t.Helper()
	_, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: uri})
	var we *jsonrpc.Error
	if !errors.As(err, &we) || we.Code != mcp.CodeResourceNotFound {
		t.Errorf("read %s: %v, want resource not found", uri, err)
	}
}

// WantText fails the test for every one of wants that text (read from uri)
// lacks.
func WantText(t testing.TB, uri, text string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(text, want) {
			t.Errorf("%s lacks %q:\n%s", uri, want, text)
		}
	}
}

// WantTemplates fails the test unless cs lists exactly the resource
// templates want (URI templates, in any order), each with a name, title,
// description and the MIME type mimeType.
func WantTemplates(t testing.TB, cs *mcp.ClientSession, mimeType string, want ...string) {
	t.Helper()
	res, err := cs.ListResourceTemplates(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var uris []string
	for _, rt := range res.ResourceTemplates {
		uris = append(uris, rt.URITemplate)
		if rt.Name == "" || rt.Title == "" || rt.Description == "" || rt.MIMEType != mimeType {
			t.Errorf("template %+v: name, title, description or MIME type %s missing", rt, mimeType)
		}
	}
	slices.Sort(uris)
	want = slices.Sorted(slices.Values(want))
	if !slices.Equal(uris, want) {
		t.Fatalf("templates = %v, want %v", uris, want)
	}
}

// Server is what a service under test offers.
type Server interface {
	Server() *mcp.Server
	HTTPHandler() http.Handler
}

// ConnectMemory connects an SDK client to s over in-memory transports; the
// session closes when the test ends.
func ConnectMemory(t testing.TB, s Server) *mcp.ClientSession {
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

// ConnectHTTP connects an SDK client to s over streamable HTTP on a
// loopback test server; both close when the test ends.
func ConnectHTTP(t testing.TB, s Server) *mcp.ClientSession {
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

// Transport is one way a test connects to a service.
type Transport struct {
	Name    string
	Connect func(testing.TB, Server) *mcp.ClientSession
}

// Transports are the in-memory and streamable-HTTP transports, for tests
// that run over both.
func Transports() []Transport {
	return []Transport{{"memory", ConnectMemory}, {"http", ConnectHTTP}}
}

// Call calls the tool name with args and decodes its structured result,
// failing the test on a protocol or tool error, or on a result that the
// tool's output schema does not allow (a client such as the TypeScript
// SDK's refuses one: an array that is null, a missing required field).
func Call[Out any](t testing.TB, cs *mcp.ClientSession, name string, args any) Out {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%.200v): %v", name, args, err)
	}
	if res.IsError {
		t.Fatalf("%s(%.200v): tool error: %s", name, args, ResultText(res))
	}
	var out Out
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := checkOutput(cs, name, raw); err != nil {
		t.Fatalf("%s(%.200v): %v", name, args, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
	return out
}

// CallError calls the tool name with args and returns its tool error's
// message, failing the test on a protocol error or a success.
func CallError(t testing.TB, cs *mcp.ClientSession, name string, args any) string {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s(%.200v): protocol error %v, want a tool error", name, args, err)
	}
	if !res.IsError {
		t.Fatalf("%s(%.200v): succeeded, want a tool error", name, args)
	}
	return ResultText(res)
}

// ResultText joins the text contents of res.
func ResultText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// checkOutput validates raw, the structured result of the tool name,
// against the output schema cs lists for it.
func checkOutput(cs *mcp.ClientSession, name string, raw []byte) error {
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		return fmt.Errorf("listing the tools: %w", err)
	}
	i := slices.IndexFunc(res.Tools, func(tool *mcp.Tool) bool { return tool.Name == name })
	if i < 0 || res.Tools[i].OutputSchema == nil {
		return nil
	}
	b, err := json.Marshal(res.Tools[i].OutputSchema)
	if err != nil {
		return err
	}
	var schema jsonschema.Schema
	if err := json.Unmarshal(b, &schema); err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		return fmt.Errorf("output schema: %w", err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return err
	}
	if err := resolved.Validate(v); err != nil {
		return fmt.Errorf("the result does not fit the output schema: %w\nresult: %.2000s", err, raw)
	}
	return nil
}

// HashDB is the logical hash of the database at path.
func HashDB(t testing.TB, path string) world.ID {
	t.Helper()
	id, _, err := state.HashDB(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// SchemaProblems lists the rules of the model APIs' function-calling
// adapters that tool's schemas break (dbtool.SchemaProblems).
func SchemaProblems(tool *mcp.Tool) []string { return dbtool.SchemaProblems(tool) }
