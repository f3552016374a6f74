package agent

import (
	"context"
	"errors"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// GatewayName is the gateway's MCP server name, and the name external
// harnesses give its entry in their configuration.
const GatewayName = "wildawm"

// Gateway serves a rollout's tools as one MCP server, for harnesses that
// bring their own tool loop (an agent CLI): the harness's own tools
// (browser_*, describe_image, shell, read_file, write_file) and, with
// services set, every MCP service of the instance as SERVICE__TOOL. Each
// call goes through env exactly as the wildawm harness's would, so it is
// recorded as a step of env.Traj; calls run one at a time.
type Gateway struct {
	env    *Env
	server *mcp.Server
	mu     sync.Mutex
	calls  []GatewayCall
	infra  error // the first failure of the harness under a call
	closed bool
}

// GatewayCall is one tool call the gateway served: the steps it recorded
// are env.Traj.Steps[First:End] (a browser action records the action and
// the page after it).
type GatewayCall struct {
	Tool       string
	First, End int
}

// NewGateway builds the gateway over env's tools, discovering the MCP
// services' tools when services is set.
func NewGateway(ctx context.Context, env *Env, services bool) (*Gateway, error) {
	g := &Gateway{env: env, server: mcp.NewServer(&mcp.Implementation{Name: GatewayName, Version: "1"}, nil)}
	defs := Builtins()
	if services {
		all, err := env.Tools(ctx)
		if err != nil {
			return nil, err
		}
		defs = all
	}
	for _, d := range defs {
		g.server.AddTool(&mcp.Tool{Name: d.Name, Description: d.Description, InputSchema: d.Parameters}, g.handler(d.Name))
	}
	return g, nil
}

func (g *Gateway) handler(name string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		g.mu.Lock()
		defer g.mu.Unlock()
		if g.closed {
			return nil, errors.New("the rollout is over: this gateway takes no more calls")
		}
		args := "{}"
		if len(req.Params.Arguments) > 0 {
			args = string(req.Params.Arguments)
		}
		first := len(g.env.Traj.Steps)
		obs, err := g.env.Call(ctx, name, args)
		g.calls = append(g.calls, GatewayCall{Tool: name, First: first, End: len(g.env.Traj.Steps)})
		if err != nil {
			if errors.Is(err, ErrInfra) {
				// The harness failed, not the call: a protocol error to the
				// client, and the rollout's failure (Err), whatever the
				// client makes of it.
				if g.infra == nil {
					g.infra = err
				}
				return nil, err
			}
			text := err.Error()
			if obs != "" {
				text += "\n" + obs
			}
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: obs}}}, nil
	}
}

// Server is the gateway's MCP server (to connect in memory).
func (g *Gateway) Server() *mcp.Server { return g.server }

// Handler serves the gateway over streamable HTTP.
func (g *Gateway) Handler() http.Handler {
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return g.server }, nil)
}

// Close refuses every later call and waits for the one in flight, so that
// nothing acts on the world after the rollout ends. It is safe to call more
// than once.
func (g *Gateway) Close() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.closed = true
}

// Err is the first infrastructure failure under a call (agent.ErrInfra),
// or nil: an external harness may shrug off a failed call, the rollout
// must not.
func (g *Gateway) Err() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.infra
}

// Calls lists the calls served so far, in order.
func (g *Gateway) Calls() []GatewayCall {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]GatewayCall(nil), g.calls...)
}

// Steps returns a copy of the steps recorded so far.
func (g *Gateway) Steps() []Step {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]Step(nil), g.env.Traj.Steps...)
}
