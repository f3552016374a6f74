package agent

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wildawm/wildawm/internal/browser"
	"github.com/wildawm/wildawm/internal/vision"
)

// ToolDef is one tool as a model sees it: a name matching
// ^[a-zA-Z0-9_-]{1,64}$, a description, the interface it acts through and
// its arguments' JSON Schema.
type ToolDef struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Interface   string          `json:"interface"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ErrFormat marks a tool call that cannot be parsed: arguments that are not
// a JSON object, or no tool name. It ends a model's rollout as a format
// failure (the paper's reward gives it -1).
var ErrFormat = errors.New("format failure")

// builtin is one of the harness's own tools.
type builtin struct {
	name, desc, iface, params string
	call                      func(ctx context.Context, e *Env, a args) (string, error)
}

// Ref returns the CSS selector of the element Snapshot numbered n
// (browser.Ref: the real and the fake browser number elements alike).
func Ref(n int) string { return browser.Ref(n) }

const (
	noParams  = `{"type":"object","properties":{},"additionalProperties":false}`
	refParam  = `"ref":{"type":"integer","minimum":1,"description":"the element's number in the last browser_read"}`
	pathParam = `"path":{"type":"string","description":"a path relative to the home directory, e.g. notes/todo.md"}`
)

// builtins are the harness's tools besides the instance's MCP tools, in the
// order a model sees them.
var builtins = []builtin{
	{"browser_navigate", "Open a web page of one of this computer's websites: a full URL (http://127.0.0.1:PORT/...) or a path on the default website (/login). Returns the page as text with numbered elements.", GUI,
		`{"type":"object","properties":{"url":{"type":"string"}},"required":["url"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			if err := e.Open(ctx, a.str("url")); err != nil {
				return "", err
			}
			return e.Snapshot(ctx)
		}},
	{"browser_read", "Read the current page as text; every link, button, input, select and image has a number [N] the other browser tools take as ref.", GUI, noParams,
		func(ctx context.Context, e *Env, _ args) (string, error) { return e.Snapshot(ctx) }},
	{"browser_click", "Click element [ref] (a link, a button). Returns the page after the click.", GUI,
		`{"type":"object","properties":{` + refParam + `},"required":["ref"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.guiThenRead(ctx, "browser.click", a, func() error { return e.Browser.Click(ctx, Ref(a.int("ref"))) })
		}},
	{"browser_type", "Replace the text of input [ref] with text.", GUI,
		`{"type":"object","properties":{` + refParam + `,"text":{"type":"string"}},"required":["ref","text"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.gui(ctx, "browser.fill", a, func() (string, error) { return "", e.Browser.SetValue(ctx, Ref(a.int("ref")), a.str("text")) })
		}},
	{"browser_select", "Choose an option of select [ref] by its value or its label.", GUI,
		`{"type":"object","properties":{` + refParam + `,"value":{"type":"string"}},"required":["ref","value"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.gui(ctx, "browser.select", a, func() (string, error) { return "", e.Browser.Select(ctx, Ref(a.int("ref")), a.str("value")) })
		}},
	{"browser_submit", "Submit the form element [ref] belongs to. Returns the resulting page.", GUI,
		`{"type":"object","properties":{` + refParam + `},"required":["ref"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.guiThenRead(ctx, "browser.submit", a, func() error { return e.Browser.Submit(ctx, Ref(a.int("ref"))) })
		}},
	{"browser_scroll", "Scroll the page by dy pixels (negative scrolls up).", GUI,
		`{"type":"object","properties":{"dy":{"type":"integer"}},"required":["dy"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.gui(ctx, "browser.scroll", a, func() (string, error) { return "", e.Browser.Scroll(ctx, a.int("dy")) })
		}},
	{"browser_back", "Go back to the previous page. Returns it.", GUI, noParams,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.guiThenRead(ctx, "browser.back", a, func() error { return e.Browser.Back(ctx) })
		}},
	{"browser_screenshot", "Take a screenshot of the page (kept as an artifact of the rollout; use describe_image to learn what an image shows).", GUI, noParams,
		func(ctx context.Context, e *Env, a args) (string, error) { return e.Screenshot(ctx) }},
	{"describe_image", "Describe what an image shows: image [ref] of the current page, or an image file of the home directory by path (PNG, JPEG or GIF; at most 8 MiB and 4096x4096 pixels).", GUI,
		`{"type":"object","properties":{` + refParam + `,` + pathParam + `},"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			switch {
			case a.has("path") && a.has("ref"):
				return "", e.refuse(GUI, "vision.describe", a.m, "describe_image: give ref or path, not both")
			case a.has("path"):
				return e.DescribeFile(ctx, a.str("path"))
			case !a.has("ref"):
				return "", e.refuse(GUI, "vision.describe", a.m, "describe_image: give ref (an image of the page, from browser_read) or path (an image file)")
			}
			d, err := e.LookAt(ctx, Ref(a.int("ref")))
			if err != nil {
				return "", err
			}
			return d.Text, nil
		}},
	{"shell", "Run a bash command in the home directory (no network; python3, pdftotext, sqlite3, jq and the usual tools are there). Returns its output.", CLI,
		`{"type":"object","properties":{"command":{"type":"string"}},"required":["command"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			obs, _, err := e.run(ctx, a.str("command"))
			return obs, err
		}},
	{"read_file", "Read a text file of the home directory (at most 8 MiB; symlinks are not followed): up to 4000 bytes from offset (default 0); a longer file says where the next part starts.", File,
		`{"type":"object","properties":{` + pathParam + `,"offset":{"type":"integer","minimum":0,"description":"the byte to start at"}},"required":["path"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.readPart(ctx, a.str("path"), a.int("offset"))
		}},
	{"write_file", "Write a text file of the home directory (at most 8 MiB), replacing it (parent directories are made; symlinks are not followed).", File,
		`{"type":"object","properties":{` + pathParam + `,"content":{"type":"string"}},"required":["path","content"],"additionalProperties":false}`,
		func(ctx context.Context, e *Env, a args) (string, error) {
			return e.WriteFile(ctx, a.str("path"), a.str("content"))
		}},
}

// Builtins lists the harness's own tools.
func Builtins() []ToolDef {
	out := make([]ToolDef, len(builtins))
	for i, b := range builtins {
		out[i] = ToolDef{Name: b.name, Description: b.desc, Interface: b.iface, Parameters: json.RawMessage(b.params)}
	}
	return out
}

// Tools lists every tool of the rollout: the harness's own, then each MCP
// service's, namespaced SERVICE__TOOL.
func (e *Env) Tools(ctx context.Context) ([]ToolDef, error) {
	out := Builtins()
	mcpTools, err := e.ListTools(ctx)
	if err != nil {
		return nil, err
	}
	for _, t := range mcpTools {
		schema, err := json.Marshal(t.InputSchema)
		if err != nil {
			return nil, fmt.Errorf("%w: tool %s: encode its schema: %v", ErrInfra, t.Name, err)
		}
		out = append(out, ToolDef{Name: t.Name, Description: t.Description, Interface: MCP, Parameters: schema})
	}
	return out, nil
}

// Call runs one tool call by the name a model uses (Tools) with its
// arguments as the model wrote them, and returns the observation. A call
// whose arguments are not a JSON object returns an error wrapping ErrFormat
// and records nothing; an unknown tool or wrong arguments are error
// observations the model can correct; a failure of the harness wraps
// ErrInfra.
func (e *Env) Call(ctx context.Context, name, arguments string) (string, error) {
	var raw map[string]any
	if strings.TrimSpace(arguments) == "" {
		arguments = "{}"
	}
	dec := json.NewDecoder(strings.NewReader(arguments))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil || raw == nil || dec.More() {
		why := "is not a JSON object"
		if err != nil {
			why += ": " + err.Error()
		}
		return "", fmt.Errorf("%w: tool call %s: arguments %s", ErrFormat, name, why)
	}
	if name == "" {
		return "", fmt.Errorf("%w: a tool call without a name", ErrFormat)
	}
	if i := slices.IndexFunc(builtins, func(b builtin) bool { return b.name == name }); i >= 0 {
		b := builtins[i]
		if err := checkArgs(b, raw); err != nil {
			// A wrong argument is the tool's error, with nothing done.
			e.record(b.iface, stepTool(b.name), raw, time.Now(), err.Error(), err)
			return "", err
		}
		return b.call(ctx, e, args{m: raw})
	}
	if strings.Contains(name, ToolSep) {
		return e.CallTool(ctx, name, raw)
	}
	start := time.Now()
	err := fmt.Errorf("no tool %q: the tools are %s and SERVICE%sTOOL for the MCP services %s", name, strings.Join(builtinNames(), ", "), ToolSep, strings.Join(e.Services(), ", "))
	e.record("", name, raw, start, err.Error(), err)
	return "", err
}

func builtinNames() []string {
	out := make([]string, len(builtins))
	for i, b := range builtins {
		out[i] = b.name
	}
	return out
}

// stepTool is the trajectory's name of a builtin (the names references and
// scripted policies use).
func stepTool(name string) string {
	switch name {
	case "browser_navigate":
		return "browser.open"
	case "browser_read":
		return "browser.snapshot"
	case "browser_type":
		return "browser.fill"
	case "describe_image":
		return "vision.describe"
	case "shell":
		return "shell.run"
	case "read_file":
		return "file.read"
	case "write_file":
		return "file.write"
	}
	return strings.Replace(name, "_", ".", 1)
}

// args are a call's arguments, already checked against the tool's schema
// (checkArgs): the accessors only convert.
type args struct{ m map[string]any }

func (a args) str(k string) string { s, _ := a.m[k].(string); return s }

func (a args) has(k string) bool { _, ok := a.m[k]; return ok }

func (a args) int(k string) int {
	switch n := a.m[k].(type) {
	case json.Number:
		f, _ := n.Float64()
		return int(f)
	case float64:
		return int(n)
	case int:
		return n
	case string:
		f, _ := strconv.ParseFloat(strings.TrimSpace(n), 64)
		return int(f)
	}
	return 0
}

// checkArgs holds a builtin call's arguments to its schema: no unknown
// argument, every required one, strings and integers as declared (a quoted
// integer, as models often write, is taken).
func checkArgs(b builtin, m map[string]any) error {
	var schema struct {
		Properties map[string]struct {
			Type string `json:"type"`
		} `json:"properties"`
		Required []string `json:"required"`
	}
	if err := json.Unmarshal([]byte(b.params), &schema); err != nil {
		panic(fmt.Sprintf("agent: tool %s: bad schema: %v", b.name, err))
	}
	names := slices.Sorted(maps.Keys(schema.Properties))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		p, ok := schema.Properties[k]
		if !ok {
			takes := "no arguments"
			if len(names) > 0 {
				takes = strings.Join(names, ", ")
			}
			return fmt.Errorf("%s: no argument %q: it takes %s", b.name, k, takes)
		}
		v := m[k]
		switch p.Type {
		case "string":
			if _, ok := v.(string); !ok {
				return fmt.Errorf("%s: argument %q must be a string, got %s", b.name, k, jsonType(v))
			}
		case "integer":
			var f float64
			var err error
			switch n := v.(type) {
			case json.Number:
				f, err = n.Float64()
			case float64:
				f = n
			case string:
				f, err = strconv.ParseFloat(strings.TrimSpace(n), 64)
			default:
				err = fmt.Errorf("got %s", jsonType(v))
			}
			if err != nil || f != math.Trunc(f) || math.Abs(f) > 1<<31 {
				return fmt.Errorf("%s: argument %q must be an integer, got %v", b.name, k, v)
			}
		}
	}
	for _, k := range schema.Required {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s: argument %q is missing", b.name, k)
		}
	}
	return nil
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case string:
		return "a string"
	case []any:
		return "an array"
	}
	return "an object"
}

// refuse records a call the tool refuses with nothing done.
func (e *Env) refuse(iface, tool string, m map[string]any, msg string) error {
	err := errors.New(msg)
	e.record(iface, tool, m, time.Now(), msg, err)
	return err
}

// gui runs a browser action (its arguments already checked by checkArgs),
// recording a step.
func (e *Env) gui(ctx context.Context, tool string, a args, fn func() (string, error)) (string, error) {
	start := time.Now()
	obs, err := fn()
	err = guiErr(ctx, err)
	if err == nil && obs == "" {
		obs = "ok" // a model reads an empty observation as nothing happening
	}
	e.record(GUI, tool, a.m, start, obs, err)
	return obs, err
}

// guiThenRead runs a browser action and returns the page after it.
func (e *Env) guiThenRead(ctx context.Context, tool string, a args, fn func() error) (string, error) {
	if _, err := e.gui(ctx, tool, a, func() (string, error) { return "", fn() }); err != nil {
		return "", err
	}
	return e.Snapshot(ctx)
}

// Snapshot reads the page as text with numbered elements.
func (e *Env) Snapshot(ctx context.Context) (string, error) {
	start := time.Now()
	txt, err := e.Browser.Snapshot(ctx)
	err = guiErr(ctx, err)
	e.record(GUI, "browser.snapshot", nil, start, txt, err)
	return txt, err
}

// Screenshot captures the viewport, keeping it as an artifact.
func (e *Env) Screenshot(ctx context.Context) (string, error) {
	start := time.Now()
	png, err := e.Browser.Screenshot(ctx)
	err = guiErr(ctx, err)
	obs := ""
	if err == nil {
		obs = fmt.Sprintf("screenshot taken (%d bytes of PNG)", len(png))
		if e.Artifacts != "" {
			name := fmt.Sprintf("step-%04d.png", len(e.Traj.Steps))
			if werr := os.MkdirAll(e.Artifacts, 0o755); werr != nil {
				err = fmt.Errorf("%w: keep the screenshot: %v", ErrInfra, werr)
			} else if werr := os.WriteFile(filepath.Join(e.Artifacts, name), png, 0o644); werr != nil {
				err = fmt.Errorf("%w: keep the screenshot: %v", ErrInfra, werr)
			} else {
				rel := filepath.ToSlash(filepath.Join(e.ArtifactsRel, name))
				e.artifacts = []string{rel}
				obs += ", kept as " + rel
			}
		}
	}
	e.record(GUI, "browser.screenshot", nil, start, obs, err)
	return obs, err
}

// DescribeFile describes an image file of the home with the vision tool.
func (e *Env) DescribeFile(ctx context.Context, path string) (string, error) {
	start := time.Now()
	var obs string
	img, err := e.readHome(ctx, path)
	if err == nil {
		if e.AblateImages {
			obs = vision.Ablated().Text
		} else {
			d, derr := e.describe(ctx, img)
			if derr != nil && !errors.Is(derr, ErrInfra) {
				derr = fmt.Errorf("%s: %w", path, derr)
			}
			if err = derr; d != nil {
				obs = d.Text
			}
		}
	}
	e.record(GUI, "vision.describe", map[string]any{"path": path}, start, obs, err)
	return obs, err
}

func (e *Env) readHome(ctx context.Context, path string) ([]byte, error) {
	if e.Files == nil {
		return nil, errors.New("this rollout has no file tools")
	}
	return e.Files.ReadFile(ctx, path)
}

// ReadFile reads a file of the home (a script's read: the whole file, up
// to MaxWriteFile).
func (e *Env) ReadFile(ctx context.Context, path string) (string, error) {
	return e.readPart(ctx, path, -1)
}

// readPart reads a text file of the home; offset >= 0 returns the part of
// the observation's size from there, and says where the next one starts.
func (e *Env) readPart(ctx context.Context, path string, offset int) (string, error) {
	start := time.Now()
	b, err := e.readHome(ctx, path)
	obs := ""
	args := map[string]any{"path": path}
	if offset > 0 {
		args["offset"] = offset
	}
	switch {
	case err != nil:
	case bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0:
		err = fmt.Errorf("%s is a binary file (%d bytes): read it with a tool in the shell, or describe_image for a picture", path, len(b))
	case offset < 0:
		obs = string(b)
	case offset > len(b):
		err = fmt.Errorf("%s has %d bytes: offset %d is past its end", path, len(b), offset)
	default:
		limit := cmp.Or(e.MaxObservation, DefaultMaxObservation) - 80
		part := cutUTF8(string(b[offset:]), limit)
		obs = part
		if end := offset + len(part); end < len(b) {
			obs += fmt.Sprintf("\n... [bytes %d-%d of %d; read on with offset %d]", offset, end, len(b), end)
		}
	}
	e.record(File, "file.read", args, start, obs, err)
	return obs, err
}

// WriteFile writes a file of the home, replacing it.
func (e *Env) WriteFile(ctx context.Context, path, content string) (string, error) {
	start := time.Now()
	var err error
	if e.Files == nil {
		err = errors.New("this rollout has no file tools")
	} else {
		err = e.Files.WriteFile(ctx, path, []byte(content))
	}
	obs := ""
	if err == nil {
		obs = fmt.Sprintf("wrote %d bytes to %s", len(content), path)
	}
	e.record(File, "file.write", map[string]any{"path": path, "content": content}, start, obs, err)
	return obs, err
}

func argsOf(m map[string]any) args { return args{m: m} }
