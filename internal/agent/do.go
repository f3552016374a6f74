package agent

import (
	"context"
	"fmt"
	"strings"
)

// Do performs one recorded action by tool name ("browser.open",
// "browser.fill", "browser.click", "browser.read", "vision.describe",
// "shell.run", "mcp.SERVICE__TOOL") with its arguments: it replays a reference
// completion or a trajectory through the same tools.
func (e *Env) Do(ctx context.Context, tool string, args map[string]any) error {
	str := func(k string) string { s, _ := args[k].(string); return s }
	switch {
	case tool == "browser.open":
		return e.Open(ctx, str("url"))
	case tool == "browser.fill":
		return e.Fill(ctx, str("selector"), str("value"))
	case tool == "browser.click":
		return e.Click(ctx, str("selector"))
	case tool == "browser.read":
		_, err := e.Read(ctx, str("selector"))
		return err
	case tool == "vision.describe":
		_, err := e.LookAt(ctx, str("selector"))
		return err
	case tool == "shell.run":
		_, err := e.Run(ctx, str("command"))
		return err
	case strings.HasPrefix(tool, "mcp."):
		_, err := e.CallTool(ctx, strings.TrimPrefix(tool, "mcp."), args)
		return err
	}
	return fmt.Errorf("unknown tool %q", tool)
}
