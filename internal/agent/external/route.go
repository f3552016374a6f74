package external

import (
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
)

// Gateway is the name a Run gives wildawm's own tool server (the gateway:
// browser_*, describe_image, shell, read_file, write_file) among its MCP
// servers: agent.GatewayName.
const Gateway = agent.GatewayName

// Route is how one call of an MCP tool is recorded: the step's interface
// and its tool name.
type Route struct {
	Interface string
	Tool      string
}

// Router routes a call of tool of the MCP server named server.
type Router func(server, tool string) Route

// GatewayRoutes is the gateway's table: a tool's name, or a prefix ending
// in "*", to its route. A "*" in the route's Tool stands for what the
// prefix's "*" matched. The names are those the wildawm harness records
// for the same tools, so a trajectory reads the same whoever drove them.
func GatewayRoutes() map[string]Route {
	return map[string]Route{
		"shell":            {agent.CLI, "shell.run"},
		"read_file":        {agent.File, "file.read"},
		"write_file":       {agent.File, "file.write"},
		"describe_image":   {agent.GUI, "vision.describe"},
		"browser_navigate": {agent.GUI, "browser.open"},
		"browser_read":     {agent.GUI, "browser.snapshot"},
		"browser_type":     {agent.GUI, "browser.fill"},
		"browser_*":        {agent.GUI, "browser.*"},
	}
}

// TableRouter routes the tools of the server named gateway by table (an
// exact name first, then the longest matching prefix), and every other
// server's tool, or a gateway tool the table does not name, as an MCP
// call: interface mcp, tool mcp.SERVER__TOOL. A gateway tool named
// SERVICE__TOOL is a service's the gateway serves for the instance
// (agent.NewGateway with services): mcp.SERVICE__TOOL.
func TableRouter(gateway string, table map[string]Route) Router {
	return func(server, tool string) Route {
		if server == gateway && strings.Contains(tool, agent.ToolSep) {
			return Route{agent.MCP, "mcp." + tool}
		}
		if server == gateway {
			if r, ok := table[tool]; ok {
				return r
			}
			best := ""
			for k := range table {
				p, ok := strings.CutSuffix(k, "*")
				if ok && strings.HasPrefix(tool, p) && len(k) > len(best) {
					best = k
				}
			}
			if best != "" {
				r := table[best]
				r.Tool = strings.Replace(r.Tool, "*", strings.TrimPrefix(tool, strings.TrimSuffix(best, "*")), 1)
				return r
			}
		}
		return Route{agent.MCP, "mcp." + server + agent.ToolSep + tool}
	}
}

// DefaultRouter is TableRouter(Gateway, GatewayRoutes()).
func DefaultRouter() Router { return TableRouter(Gateway, GatewayRoutes()) }
