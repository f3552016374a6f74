package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/sandbox"
	"github.com/wildawm/wildawm/internal/vision"
)

// Browser is what the GUI tools need of a browser: internal/browser drives
// Chromium, internal/browser/fake speaks HTTP without one. Selectors are
// CSS; Snapshot numbers the page's elements and browser.Ref(n) is the
// selector of number n.
type Browser interface {
	Navigate(ctx context.Context, url string) error
	Click(ctx context.Context, selector string) error
	SetValue(ctx context.Context, selector, value string) error
	Select(ctx context.Context, selector, value string) error
	Submit(ctx context.Context, selector string) error
	Text(ctx context.Context, selector string) (string, error)
	ImageBytes(ctx context.Context, selector string) ([]byte, error)
	HTML(ctx context.Context) (string, error)
	URL(ctx context.Context) (string, error)
	// Snapshot is the page as accessible text with numbered elements.
	Snapshot(ctx context.Context) (string, error)
	Scroll(ctx context.Context, dy int) error
	Back(ctx context.Context) error
	Screenshot(ctx context.Context) ([]byte, error)
}

// Files reads and writes files of the instance's home.
type Files interface {
	ReadFile(ctx context.Context, path string) ([]byte, error)
	WriteFile(ctx context.Context, path string, data []byte) error
}

// Shell runs a command in the sandboxed shell.
type Shell func(ctx context.Context, command string) (*sandbox.Result, error)

// ErrInfra marks a failure of the harness itself (the MCP transport, the
// sandbox could not start), as opposed to an action the world rejected. A
// rollout that ends on it is an infrastructure failure, not the agent's.
var ErrInfra = errors.New("infrastructure failure")

// ErrServerConfig marks a model server that refused what the harness
// needs because it was not started for it (model.ErrServerConfig: tool
// calling off): a stage stops at it rather than record one
// infrastructure failure per rollout.
var ErrServerConfig = model.ErrServerConfig

// Env is one rollout's tools. Every call records a step. A tool that the
// site, service or shell rejects returns an error observation (and the
// error), never changing state on its own.
type Env struct {
	Browser Browser
	// BaseURL is the website a path ("/login") opens on: the shop's, in
	// the case study.
	BaseURL string
	// Sites maps every website of the instance to its base URL. The
	// browser opens these origins and BaseURL's, nothing else.
	Sites map[string]string
	// MCP holds one client session per MCP service of the instance, by
	// service name. Tools are called by namespaced name, SERVICE__TOOL
	// ("messages__send_message"; see ToolSep), so every service is
	// reachable and two services may have tools of the same name.
	MCP   map[string]*mcp.ClientSession
	Shell Shell
	// Files are the home's files for the file tools; nil means none.
	Files Files
	// Describe is the vision tool: nil means vision.Describe, the offline
	// analyser of the pixels; ModelVision asks a vision model.
	Describe func(ctx context.Context, img []byte) (*vision.Description, error)
	// Artifacts is the directory screenshots are saved in (a step names
	// them relative to ArtifactsRel); empty means they are not kept.
	Artifacts, ArtifactsRel string
	// AblateImages removes the images' information from the vision tool:
	// LookAt returns a description with no visual attributes. The
	// image-ablation gate runs the reference procedure this way; a task
	// whose decisive step is an image must then fail.
	AblateImages bool
	// MaxObservation bounds each observation's length, recorded and sent
	// to a model (default DefaultMaxObservation).
	MaxObservation int

	Traj *Trajectory

	// turn and callID are the model turn and tool call the next steps
	// belong to (At).
	turn   int
	callID string
	// artifacts are the artifacts of the step being recorded.
	artifacts []string
}

// At marks the steps recorded next as issued by model turn turn's tool
// call id (0 and "" for a scripted policy).
func (e *Env) At(turn int, callID string) { e.turn, e.callID = turn, callID }

// guiErr marks a browser error as the harness's when the browser itself is
// gone while the rollout goes on.
func guiErr(ctx context.Context, err error) error {
	if err != nil && ctx.Err() == nil && errors.Is(err, browser.ErrGone) {
		return fmt.Errorf("%w: %v", ErrInfra, err)
	}
	return err
}

func (e *Env) record(iface, tool string, args map[string]any, start time.Time, obs string, err error) {
	limit := e.MaxObservation
	if limit == 0 {
		limit = DefaultMaxObservation
	}
	if len(obs) > limit {
		head := cutUTF8(obs, limit)
		obs = head + fmt.Sprintf("... [%d more bytes]", len(obs)-len(head))
	}
	s := Step{Index: len(e.Traj.Steps), Interface: iface, Tool: tool, Args: args, Observation: obs,
		Turn: e.turn, CallID: e.callID, Artifacts: e.artifacts, DurationMS: float64(time.Since(start).Microseconds()) / 1000}
	e.artifacts = nil
	if err != nil {
		s.Error = err.Error()
	}
	e.Traj.Steps = append(e.Traj.Steps, s)
}

// Open navigates the browser to a path of the default website ("/p/X"),
// or to an absolute URL on one of the instance's websites. Anything else
// (another host or port, file:, data:, javascript:) is refused: the
// agent's browser reaches its own instance only (and the browser enforces
// the same rule on every request a page makes).
func (e *Env) Open(ctx context.Context, path string) error {
	start := time.Now()
	url, err := e.resolve(path)
	if err == nil {
		err = guiErr(ctx, e.Browser.Navigate(ctx, url))
	}
	e.record(GUI, "browser.open", map[string]any{"url": path}, start, "", err)
	return err
}

// SitePrefix names a page of one of the instance's websites whatever its
// origin: "site:recipes/saved" is the recipes site's /saved. References
// and scripts use it, since an instance's origins change with its ports.
const SitePrefix = "site:"

// resolve turns what the agent asked to open into a URL of the instance.
func (e *Env) resolve(path string) (string, error) {
	if rest, ok := strings.CutPrefix(path, SitePrefix); ok {
		name, p, _ := strings.Cut(rest, "/")
		base, ok := e.Sites[name]
		if !ok {
			return "", fmt.Errorf("refused: %q names no website of this instance; the websites are %s", path, strings.Join(e.siteList(), ", "))
		}
		return base + "/" + p, nil
	}
	if strings.HasPrefix(path, "/") && !strings.HasPrefix(path, "//") {
		if e.BaseURL == "" {
			return "", fmt.Errorf("refused: %q is a path but this instance has no default website; open a full URL: %s", path, strings.Join(e.siteList(), ", "))
		}
		return e.BaseURL + path, nil
	}
	for _, base := range e.origins() {
		if path == base || strings.HasPrefix(path, base+"/") || strings.HasPrefix(path, base+"?") {
			return path, nil
		}
	}
	return "", fmt.Errorf("refused: %q is not on one of this instance's websites; open one of %s, or a path such as /login", path, strings.Join(e.siteList(), ", "))
}

// origins lists the base URLs the browser may open.
func (e *Env) origins() []string {
	out := slices.Sorted(maps.Values(e.Sites))
	if e.BaseURL != "" && !slices.Contains(out, e.BaseURL) {
		out = append(out, e.BaseURL)
	}
	return out
}

// siteList names the websites as "name URL", sorted by name.
func (e *Env) siteList() []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(e.Sites)) {
		out = append(out, name+" "+e.Sites[name])
	}
	if len(out) == 0 && e.BaseURL != "" {
		out = append(out, e.BaseURL)
	}
	return out
}

// Click clicks an element.
func (e *Env) Click(ctx context.Context, selector string) error {
	start := time.Now()
	err := guiErr(ctx, e.Browser.Click(ctx, selector))
	e.record(GUI, "browser.click", map[string]any{"selector": selector}, start, "", err)
	return err
}

// Fill sets an input's value.
func (e *Env) Fill(ctx context.Context, selector, value string) error {
	start := time.Now()
	err := guiErr(ctx, e.Browser.SetValue(ctx, selector, value))
	e.record(GUI, "browser.fill", map[string]any{"selector": selector, "value": value}, start, "", err)
	return err
}

// Read returns an element's visible text.
func (e *Env) Read(ctx context.Context, selector string) (string, error) {
	start := time.Now()
	txt, err := e.Browser.Text(ctx, selector)
	err = guiErr(ctx, err)
	e.record(GUI, "browser.read", map[string]any{"selector": selector}, start, txt, err)
	return txt, err
}

// Page returns the current page's HTML.
func (e *Env) Page(ctx context.Context) (string, error) {
	start := time.Now()
	html, err := e.Browser.HTML(ctx)
	err = guiErr(ctx, err)
	e.record(GUI, "browser.html", nil, start, html, err)
	return html, err
}

// LookAt fetches an image shown on the page and describes it with the
// vision tool.
func (e *Env) LookAt(ctx context.Context, selector string) (*vision.Description, error) {
	start := time.Now()
	img, err := e.Browser.ImageBytes(ctx, selector)
	err = guiErr(ctx, err)
	var d *vision.Description
	switch {
	case err == nil && e.AblateImages:
		d = vision.Ablated()
	case err == nil:
		d, err = e.describe(ctx, img)
	}
	obs := ""
	if d != nil {
		obs = d.Text
	}
	e.record(GUI, "vision.describe", map[string]any{"selector": selector}, start, obs, err)
	return d, err
}

func (e *Env) describe(ctx context.Context, img []byte) (*vision.Description, error) {
	if e.Describe != nil {
		return e.Describe(ctx, img)
	}
	return vision.Describe(ctx, img)
}

// DefaultMaxObservation is the default bound of an observation, in bytes.
const DefaultMaxObservation = 4000

// ToolSep joins a service's name and its tool's name into the name an agent
// calls: "messages" + ToolSep + "send_message". Model APIs accept tool names
// matching ^[a-zA-Z0-9_-]{1,64}$ only (OpenAI, Anthropic), so the separator
// is not a dot; two underscores, as other MCP hosts namespace servers, never
// occur in a service name (the registry's names are lower-case words).
const ToolSep = "__"

// CallTool calls an MCP tool by its namespaced name, SERVICE__TOOL, and
// returns its text content. A tool result with isError is returned as an
// error whose text is the tool's message; so is a name that names no
// service of this instance (the observation lists the services).
func (e *Env) CallTool(ctx context.Context, name string, args map[string]any) (string, error) {
	start := time.Now()
	var obs string
	var err error
	svc, tool, ok := strings.Cut(name, ToolSep)
	cs := e.MCP[svc]
	switch {
	case !ok || tool == "":
		err = fmt.Errorf("tool %q is not namespaced: call SERVICE__TOOL, SERVICE one of %s", name, strings.Join(e.Services(), ", "))
	case cs == nil:
		err = fmt.Errorf("no MCP service %q on this instance: the services are %s", svc, strings.Join(e.Services(), ", "))
	default:
		var res *mcp.CallToolResult
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
		if err != nil && ctx.Err() == nil {
			err = fmt.Errorf("%w: MCP transport: %v", ErrInfra, err)
		}
		if err == nil {
			obs = contentText(res)
			if res.IsError {
				err = errors.New(obs)
			}
		}
	}
	if err != nil && obs == "" {
		obs = err.Error()
	}
	e.record(MCP, "mcp."+name, args, start, obs, err)
	return obs, err
}

// Services lists the instance's MCP services, sorted.
func (e *Env) Services() []string {
	return slices.Sorted(maps.Keys(e.MCP))
}

// Tool is one MCP tool as the agent sees it: namespaced by its service.
type Tool struct {
	Name        string `json:"name"` // SERVICE__TOOL
	Description string `json:"description"`
	InputSchema any    `json:"input_schema"`
}

// ListTools discovers every service's tools, namespaced, in service order.
func (e *Env) ListTools(ctx context.Context) ([]Tool, error) {
	var out []Tool
	for _, svc := range e.Services() {
		for t, err := range e.MCP[svc].Tools(ctx, nil) {
			if err != nil {
				return nil, fmt.Errorf("%w: list %s tools: %v", ErrInfra, svc, err)
			}
			out = append(out, Tool{Name: svc + ToolSep + t.Name, Description: t.Description, InputSchema: t.InputSchema})
		}
	}
	return out, nil
}

func contentText(res *mcp.CallToolResult) string {
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			return string(b)
		}
	}
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// Run runs a shell command; a non-zero exit is an error observation. It
// returns the command's stdout (what a script parses); the step records
// stdout and stderr, as the shell tool shows a model.
func (e *Env) Run(ctx context.Context, command string) (string, error) {
	_, stdout, err := e.run(ctx, command)
	return stdout, err
}

// run runs a command and returns the observation (stdout, then stderr
// under a marker) and stdout.
func (e *Env) run(ctx context.Context, command string) (obs, stdout string, err error) {
	start := time.Now()
	res, err := e.Shell(ctx, command)
	if err != nil && ctx.Err() == nil {
		err = fmt.Errorf("%w: shell: %v", ErrInfra, err)
	}
	if err == nil {
		stdout = string(res.Stdout)
		obs = stdout
		if len(res.Stderr) > 0 {
			obs += "\n[stderr]\n" + string(res.Stderr)
		}
		switch {
		case res.TimedOut:
			err = fmt.Errorf("command timed out")
		case res.ExitCode != 0:
			err = fmt.Errorf("exit status %d", res.ExitCode)
		}
	}
	e.record(CLI, "shell.run", map[string]any{"command": command}, start, obs, err)
	if err != nil {
		return obs, obs, err
	}
	return obs, stdout, nil
}
