package agent

import (
	"context"
	"fmt"
	"strings"
)

// Do performs one recorded action by its trajectory tool name
// ("browser.open", "browser.fill", "browser.click", "browser.select",
// "browser.submit", "browser.read", "browser.snapshot", "browser.scroll",
// "browser.back", "browser.screenshot", "vision.describe", "shell.run",
// "file.read", "file.write", "mcp.SERVICE__TOOL") with its arguments: it
// replays a reference completion or a trajectory through the same tools.
// A browser action takes a CSS "selector" or the "ref" of an element the
// last snapshot numbered.
func (e *Env) Do(ctx context.Context, tool string, args map[string]any) error {
	str := func(k string) string { s, _ := args[k].(string); return s }
	sel := func() string {
		if s := str("selector"); s != "" {
			return s
		}
		if _, ok := args["ref"]; ok {
			return Ref(argsOf(args).int("ref"))
		}
		return ""
	}
	var err error
	switch {
	case tool == "browser.open":
		err = e.Open(ctx, str("url"))
	case tool == "browser.fill":
		v, ok := args["value"].(string)
		if !ok {
			v = str("text") // the model-facing browser_type's name
		}
		err = e.Fill(ctx, sel(), v)
	case tool == "browser.click":
		err = e.Click(ctx, sel())
	case tool == "browser.select":
		_, err = e.gui(ctx, tool, argsOf(args), func() (string, error) { return "", e.Browser.Select(ctx, sel(), str("value")) })
	case tool == "browser.submit":
		_, err = e.gui(ctx, tool, argsOf(args), func() (string, error) { return "", e.Browser.Submit(ctx, sel()) })
	case tool == "browser.scroll":
		_, err = e.gui(ctx, tool, argsOf(args), func() (string, error) { return "", e.Browser.Scroll(ctx, argsOf(args).int("dy")) })
	case tool == "browser.back":
		_, err = e.gui(ctx, tool, argsOf(args), func() (string, error) { return "", e.Browser.Back(ctx) })
	case tool == "browser.read":
		_, err = e.Read(ctx, sel())
	case tool == "browser.snapshot":
		_, err = e.Snapshot(ctx)
	case tool == "browser.html":
		_, err = e.Page(ctx)
	case tool == "browser.screenshot":
		_, err = e.Screenshot(ctx)
	case tool == "vision.describe" && str("path") != "":
		_, err = e.DescribeFile(ctx, str("path"))
	case tool == "vision.describe":
		_, err = e.LookAt(ctx, sel())
	case tool == "shell.run":
		_, err = e.Run(ctx, str("command"))
	case tool == "file.read":
		_, err = e.ReadFile(ctx, str("path"))
	case tool == "file.write":
		_, err = e.WriteFile(ctx, str("path"), str("content"))
	case strings.HasPrefix(tool, "mcp."):
		_, err = e.CallTool(ctx, strings.TrimPrefix(tool, "mcp."), args)
	default:
		err = fmt.Errorf("unknown tool %q", tool)
	}
	return err
}
