package openenv

import (
	"encoding/json"
	"math"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
)

// stepArgs are the arguments a trajectory tool name takes (agent.Env.Do):
// required strings, and whether it acts on an element (a CSS "selector" or
// the "ref" number of the last snapshot).
type stepArgs struct {
	strings  []string
	optional []string
	target   bool
	ints     []string
}

// stepTools are the trajectory tool names Do replays (docs/trajectory.md),
// besides mcp.SERVICE__TOOL.
var stepTools = map[string]stepArgs{
	"browser.open":       {strings: []string{"url"}},
	"browser.fill":       {target: true, optional: []string{"value", "text"}},
	"browser.click":      {target: true},
	"browser.select":     {target: true, strings: []string{"value"}},
	"browser.submit":     {target: true},
	"browser.scroll":     {ints: []string{"dy"}},
	"browser.back":       {},
	"browser.read":       {target: true},
	"browser.snapshot":   {},
	"browser.html":       {},
	"browser.screenshot": {},
	"vision.describe":    {optional: []string{"path"}},
	"shell.run":          {strings: []string{"command"}},
	"file.read":          {strings: []string{"path"}},
	"file.write":         {strings: []string{"path", "content"}},
}

// checkStepArgs holds a trajectory tool's arguments to what Do reads, so
// that a mistyped argument is the client's error and not a silent empty
// string.
func checkStepArgs(tool string, spec stepArgs, args map[string]any) *protoError {
	field := func(k string) string { return "data.args." + k }
	known := slices.Concat(spec.strings, spec.optional, spec.ints)
	if spec.target {
		known = append(known, "selector", "ref")
	}
	if tool == "vision.describe" {
		known = append(known, "selector", "ref")
	}
	for k, v := range args {
		if !slices.Contains(known, k) {
			takes := "no arguments"
			if len(known) > 0 {
				takes = strings.Join(known, ", ")
			}
			return invalid(field(k), "%s takes no argument %q: it takes %s", tool, k, takes)
		}
		switch {
		case k == "ref" || slices.Contains(spec.ints, k):
			if !isInt(v) {
				return invalid(field(k), "%s: %s must be an integer", tool, k)
			}
		default:
			if _, ok := v.(string); !ok {
				return invalid(field(k), "%s: %s must be a string", tool, k)
			}
		}
	}
	for _, k := range slices.Concat(spec.strings, spec.ints) {
		if _, ok := args[k]; !ok {
			return invalid(field(k), "%s needs %s", tool, k)
		}
	}
	_, sel := args["selector"]
	_, ref := args["ref"]
	if spec.target && !sel && !ref {
		return invalid("data.args", "%s needs the element: selector (CSS) or ref (the number from the last browser.snapshot)", tool)
	}
	if tool == "vision.describe" && !sel && !ref && args["path"] == nil {
		return invalid("data.args", "vision.describe needs selector or ref (an image of the page) or path (an image file of the home directory)")
	}
	return nil
}

func isInt(v any) bool {
	var f float64
	switch n := v.(type) {
	case json.Number:
		var err error
		if f, err = n.Float64(); err != nil {
			return false
		}
	case float64:
		f = n
	default:
		return false
	}
	return f == math.Trunc(f) && math.Abs(f) < 1<<31
}

// answerTool is the answer action as a model sees it.
var answerTool = Tool{Name: AnswerTool, Description: "Finish the task: give the final answer (empty when the task asks for none). The episode ends and is verified.",
	Parameters: answerParams, InputSchema: answerParams}

var answerParams = json.RawMessage(`{"type":"object","properties":{"text":{"type":"string","description":"the final answer"}},"additionalProperties":false}`)

// toolsOf is the tools list of a reset observation: the harness's
// model-facing tools with the instance's MCP tools, and answer.
func toolsOf(defs []agent.ToolDef) []Tool {
	out := make([]Tool, 0, len(defs)+1)
	for _, d := range defs {
		out = append(out, Tool{Name: d.Name, Description: d.Description, Interface: d.Interface, Parameters: d.Parameters, InputSchema: d.Parameters})
	}
	return append(out, answerTool)
}
