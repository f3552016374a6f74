package mcpbench

import (
	"context"

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
