package sft

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/net/html"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/browser"
	fakebrowser "github.com/wildawm/wildawm/internal/browser/fake"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/task"
)

// ErrUntranslatable ends a harness replay at a script's step the harness's
// tools cannot express: an element its selector names that the harness's
// browser_read does not number, or a step no harness tool does.
var ErrUntranslatable = errors.New("a script's step the harness cannot express")

// MaxReadParts bounds the read_file calls a replayed file.read becomes: a
// script reads a whole file, the harness 4,000 bytes a call, and the
// replay reads on as a model would, up to this many parts.
const MaxReadParts = 16

// Harnessed is a rollout policy that performs a script's steps through the
// harness a model acts through (agent.Harness, its tool layer and its
// loop): each step becomes the call of the harness tool that does it, one
// call a turn, so the trajectory holds the harness's turns, requests and
// observations (element numbers, page text, tool results, shell output)
// and renders as the chats a model would have been sent. A CSS selector
// becomes the number [N] the last browser_read gave the element it
// selects; site:NAME/ paths the instance's URL (the system prompt lists
// those); a file.read reads on in parts as the harness returns them; a
// read of a page the previous call had just returned is left out. It is a
// script, never a model: it names itself as Source does.
type Harnessed struct {
	// Source is the script's trajectory: its steps, in order, and its answer.
	Source *agent.Trajectory
	// ContextTokens, MaxTurns and MaxTokens (a completion's) are the
	// harness's budgets (defaults DefaultContextTokens, DefaultMaxTurns,
	// the paper's, and agent.DefaultMaxTokens): the replay compacts where
	// a model under the same budgets would.
	ContextTokens, MaxTurns, MaxTokens int

	// Mapping says how the steps became calls; Tools and Sites are what
	// the harness offered the session. Set by Run.
	Mapping *Mapping
	Tools   []Tool
	Sites   []string
	// Err is why the replay stopped short (wrapping ErrUntranslatable).
	Err error
}

// Name implements rollout.Policy: the script's own name.
func (h *Harnessed) Name() string { return h.Source.Policy }

// Run implements rollout.Policy.
func (h *Harnessed) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	c := &scriptChat{env: env, steps: h.Source.Steps, answer: h.Source.Answer,
		mapping: &Mapping{Note: harnessNote, Tools: map[string]string{}}}
	hs := agent.Harness{Model: c, ContextTokens: cmpOr(h.ContextTokens, DefaultContextTokens), MaxTurns: cmpOr(h.MaxTurns, DefaultMaxTurns), MaxTokens: h.MaxTokens}
	h.Sites = nil
	for _, name := range slices.Sorted(maps.Keys(env.Sites)) {
		h.Sites = append(h.Sites, name+" "+env.Sites[name])
	}
	answer, err := hs.Run(ctx, env, t.Instruction, t.Hint)
	h.Mapping, h.Tools, h.Err = c.mapping, c.tools, c.err
	if c.err != nil {
		return "", c.err
	}
	return answer, err
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

// harnessNote is what every record of a replayed script says of itself.
const harnessNote = "a script acted, not a model, through the wildawm harness: each step was issued as one call of the harness tool that does it, " +
	"CSS selectors as the element numbers [N] of the last browser_read, site:NAME/ as the instance's URL; the observations are the harness's"

// scriptChat is the model the harness talks to in a replay: each request
// answered with the next step as a tool call, the script's answer at the
// end, a summary of the calls so far when the harness compacts.
type scriptChat struct {
	env    *agent.Env
	steps  []agent.Step
	answer string

	next    int // the next step
	calls   int
	tools   []Tool
	mapping *Mapping
	err     error
	// last is the call of the previous turn; fresh that the page the model
	// holds is the browser's (the last call returned it, nothing changed it).
	last  string
	fresh bool
	// page is the last page the harness returned, as the model saw it.
	page string
	// reading is the path a file.read is being read on from, parts its
	// parts so far.
	reading string
	parts   int
}

var readOn = regexp.MustCompile(`read on with offset (\d+)\]$`)

// pageTools are the harness tools whose observation is the page.
var pageTools = map[string]bool{"browser_navigate": true, "browser_read": true, "browser_click": true, "browser_submit": true, "browser_back": true}

// Chat implements agent.Chatter.
func (c *scriptChat) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	if req.Tools == nil {
		return &model.Response{Content: c.summary(req.Messages), FinishReason: "stop"}, nil
	}
	if c.tools == nil {
		for _, t := range req.Tools {
			c.tools = append(c.tools, toolOf(t.Name, t.Description, t.Parameters))
		}
	}
	obs := ""
	if m := req.Messages[len(req.Messages)-1]; m.Role == model.RoleTool {
		obs = m.Content
	}
	failed := strings.HasPrefix(obs, "error: ")
	switch {
	case pageTools[c.last]:
		c.fresh = !failed
		if !failed {
			c.page = obs
		}
	case c.last == "browser_type" || c.last == "browser_select":
		c.fresh = false // the page shows inputs' values
	}
	// A file read on in parts, as the harness says where the next starts.
	if c.reading != "" {
		if m := readOn.FindStringSubmatch(obs); m != nil && !failed && c.parts < MaxReadParts {
			off, _ := strconv.Atoi(m[1])
			c.parts++
			return c.call("read_file", map[string]any{"path": c.reading, "offset": off})
		}
		c.reading = ""
	}
	for c.next < len(c.steps) {
		s := c.steps[c.next]
		c.next++
		name, args, err := c.translate(ctx, s)
		if err != nil {
			c.err = fmt.Errorf("%w: step %d (%s %v): %v", ErrUntranslatable, s.Index+1, s.Tool, s.Args, err)
			return &model.Response{FinishReason: "stop"}, nil
		}
		if name == "" {
			c.mapping.Skipped++
			continue
		}
		c.mapping.Tools[s.Tool] = name
		if name == "read_file" {
			c.reading, c.parts = args["path"].(string), 1
		}
		return c.call(name, args)
	}
	return &model.Response{Content: c.answer, FinishReason: "stop"}, nil
}

func (c *scriptChat) call(name string, args map[string]any) (*model.Response, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("sft: the arguments of %s: %w", name, err)
	}
	c.calls++
	c.last = name
	return &model.Response{FinishReason: "tool_calls", ToolCalls: []model.ToolCall{{ID: fmt.Sprintf("call_%d", c.calls), Name: name, Arguments: b}}}, nil
}

// translate is the harness call that does step s: its tool's name and
// arguments, or "" for a read of the page the model already holds.
func (c *scriptChat) translate(ctx context.Context, s agent.Step) (string, map[string]any, error) {
	a := s.Args
	str := func(k string) string { v, _ := a[k].(string); return v }
	switch s.Tool {
	case "browser.open":
		return "browser_navigate", map[string]any{"url": c.url(str("url"))}, nil
	case "browser.snapshot", "browser.read", "browser.html":
		// The harness reads the whole page: one element's text, or the
		// HTML, is in it.
		if c.fresh {
			return "", nil, nil
		}
		return "browser_read", map[string]any{}, nil
	case "browser.click", "browser.submit":
		n, err := c.ref(ctx, a, s.Tool == "browser.submit")
		return strings.Replace(s.Tool, ".", "_", 1), map[string]any{"ref": n}, err
	case "browser.fill":
		n, err := c.ref(ctx, a, false)
		text, ok := a["value"].(string)
		if !ok {
			text = str("text")
		}
		return "browser_type", map[string]any{"ref": n, "text": text}, err
	case "browser.select":
		n, err := c.ref(ctx, a, false)
		return "browser_select", map[string]any{"ref": n, "value": str("value")}, err
	case "browser.scroll":
		return "browser_scroll", map[string]any{"dy": a["dy"]}, nil
	case "browser.back":
		return "browser_back", map[string]any{}, nil
	case "browser.screenshot":
		return "browser_screenshot", map[string]any{}, nil
	case "vision.describe":
		if p := str("path"); p != "" {
			return "describe_image", map[string]any{"path": p}, nil
		}
		n, err := c.ref(ctx, a, false)
		return "describe_image", map[string]any{"ref": n}, err
	case "shell.run":
		return "shell", map[string]any{"command": str("command")}, nil
	case "file.read":
		return "read_file", map[string]any{"path": str("path")}, nil
	case "file.write":
		return "write_file", map[string]any{"path": str("path"), "content": str("content")}, nil
	}
	if name, ok := strings.CutPrefix(s.Tool, "mcp."); ok {
		args := map[string]any{}
		maps.Copy(args, a)
		return name, args, nil
	}
	return "", nil, fmt.Errorf("no harness tool does %s", s.Tool)
}

// url is what a model reads off the system prompt for a site:NAME/ path:
// the instance's URL of that website.
func (c *scriptChat) url(u string) string {
	rest, ok := strings.CutPrefix(u, agent.SitePrefix)
	if !ok {
		return u
	}
	name, p, _ := strings.Cut(rest, "/")
	if base, ok := c.env.Sites[name]; ok {
		return base + "/" + p
	}
	return u // the harness refuses it, as it refused the script
}

// ref is the number the last browser_read gave the element a step's
// selector selects (for a form to submit, its first numbered element).
// A step that names a ref already keeps it.
func (c *scriptChat) ref(ctx context.Context, a map[string]any, within bool) (int, error) {
	if r, ok := a["ref"]; ok {
		var n int
		switch v := r.(type) {
		case float64:
			n = int(v)
		case json.Number:
			i, _ := v.Int64()
			n = int(i)
		case int:
			n = v
		}
		return n, nil
	}
	sel, _ := a["selector"].(string)
	if sel == "" {
		return 0, errors.New("no selector and no ref")
	}
	page, err := c.env.Browser.HTML(ctx)
	if err != nil {
		return 0, fmt.Errorf("read the page to find %s: %v", sel, err)
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		return 0, fmt.Errorf("parse the page to find %s: %v", sel, err)
	}
	el, err := fakebrowser.Find(doc, sel)
	if err != nil {
		return 0, err
	}
	if el == nil {
		return 0, fmt.Errorf("no element on the page matches %s", sel)
	}
	n := refAttr(el)
	if n == 0 && within {
		for d := range el.Descendants() {
			if n = refAttr(d); n > 0 {
				break
			}
		}
	}
	if n == 0 {
		return 0, fmt.Errorf("the element %s selects has no number in browser_read (the harness names only links, buttons, inputs, selects and images)", sel)
	}
	c.mapping.Selectors++
	if !strings.Contains(c.page, "["+strconv.Itoa(n)+"] ") {
		c.mapping.Unseen++
	}
	return n, nil
}

func refAttr(n *html.Node) int {
	if n.Type != html.ElementNode {
		return 0
	}
	for _, a := range n.Attr {
		if a.Key == browser.RefAttr {
			v, err := strconv.Atoi(a.Val)
			if err == nil {
				return v
			}
		}
	}
	return 0
}

// summary is the script's summary when the harness compacts: the task,
// then each call so far and the start of what it returned.
func (c *scriptChat) summary(msgs []model.Message) string {
	var b strings.Builder
	for _, m := range msgs {
		if m.Role == model.RoleUser {
			fmt.Fprintf(&b, "Task: %s\n", m.Content)
			break
		}
	}
	b.WriteString("Calls so far:\n")
	results := map[string]string{}
	for _, m := range msgs {
		if m.Role == model.RoleTool {
			results[m.ToolCallID] = m.Content
		}
	}
	for _, m := range msgs {
		for _, tc := range m.ToolCalls {
			fmt.Fprintf(&b, "- %s %s: %s\n", tc.Name, tc.Arguments, abbrev(results[tc.ID], 200))
		}
	}
	fmt.Fprintf(&b, "Left: %d of %d steps.", len(c.steps)-c.next, len(c.steps))
	return b.String()
}

func abbrev(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "..."
}

// toolOf is a tool as the harness offers it, in the OpenAI function form.
func toolOf(name, desc string, params json.RawMessage) Tool {
	if len(params) == 0 {
		params = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	return Tool{Type: "function", Function: ToolDef{Name: name, Description: desc, Parameters: params}}
}
