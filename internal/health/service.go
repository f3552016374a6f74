package health

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mcpTimeout bounds the whole MCP check of one service.
const mcpTimeout = 30 * time.Second

// checkMCP connects to the service at endpoint, lists its tools and calls
// readTool with no arguments. Failures are problems of s; the error is only
// ctx's.
func (c *checker) checkMCP(ctx context.Context, endpoint, readTool string, s *Service) error {
	cctx, cancel := context.WithTimeout(ctx, mcpTimeout)
	defer cancel()
	s.OK = true
	client := mcp.NewClient(&mcp.Implementation{Name: "wildawm-health", Version: "1"}, nil)
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.serviceProblem(s, "does not accept an MCP session at %s: %v; fix the service's database so that it loads", endpoint, err)
		return nil
	}
	defer cs.Close()
	lt, err := cs.ListTools(cctx, nil)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.serviceProblem(s, "tools/list failed: %v", err)
		return nil
	}
	for _, t := range lt.Tools {
		s.Tools = append(s.Tools, t.Name)
	}
	slices.Sort(s.Tools)
	if !slices.Contains(s.Tools, readTool) {
		c.serviceProblem(s, "has no tool %s; fix the service's server", readTool)
		return nil
	}
	res, err := cs.CallTool(cctx, &mcp.CallToolParams{Name: readTool, Arguments: map[string]any{}})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		c.serviceProblem(s, "calling %s failed: %v", readTool, err)
		return nil
	}
	if res.IsError {
		c.serviceProblem(s, "%s answered an error: %s; fix the service's database so that the tool can read it", readTool, toolText(res))
	}
	return nil
}

// toolText is the text content of a tool result.
func toolText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, " ")
}
