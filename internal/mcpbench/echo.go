package mcpbench

import (
	"context"
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// EchoIn is the echo tool's input.
type EchoIn struct {
	Message string `json:"message" jsonschema:"the text to echo back"`
}

// EchoServer is the floor the measurement compares against: a plain go-sdk
// server, written as the SDK's documentation writes one (mcp.AddTool with a
// typed input), whose one tool echoes its message as text, as
// server-everything's echo does. No database, no schema of ours: what is
// left is the SDK's own cost per call.
func EchoServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "go-sdk-echo", Version: "1"}, nil)
	mcp.AddTool(srv, &mcp.Tool{Name: "echo", Description: "Echoes back the input."},
		func(_ context.Context, _ *mcp.CallToolRequest, in EchoIn) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "Echo: " + in.Message}}}, nil, nil
		})
	return srv
}

// PlainEchoHandler answers MCP's JSON-RPC over HTTP POST without the SDK:
// initialize, notifications (202) and tools/call of echo, one JSON body
// each, and DELETE. It is no MCP server (no sessions, no checks); it is the
// floor of net/http itself, what any Go server of streamable HTTP pays per
// call before the MCP SDK's handler does anything.
func PlainEchoHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			return
		}
		var req struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Arguments EchoIn `json:"arguments"`
			} `json:"params"`
		}
		if r.Method != http.MethodPost || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "POST one JSON-RPC message", http.StatusBadRequest)
			return
		}
		if req.ID == nil {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		var result any
		switch req.Method {
		case "initialize":
			w.Header().Set("Mcp-Session-Id", "plain")
			result = map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{"tools": map[string]any{}},
				"serverInfo": map[string]any{"name": "net-http-echo", "version": "1"}}
		case "tools/call":
			result = map[string]any{"content": []any{map[string]any{"type": "text", "text": "Echo: " + req.Params.Arguments.Message}}}
		default:
			http.Error(w, "only initialize and tools/call", http.StatusBadRequest)
			return
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": result})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
}
