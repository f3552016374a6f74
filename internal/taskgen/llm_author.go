package taskgen

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// The llm author's limits.
const (
	// DefaultAuthorTries is how many submit_task calls the author may make
	// when LLMAuthorOptions leaves Tries zero; DefaultAuthorTurns its model
	// turns.
	DefaultAuthorTries = 3
	DefaultAuthorTurns = 12
	// maxAuthorRows and maxAuthorCell bound query_world's result,
	// maxAuthorRead read_home's.
	maxAuthorRows = 100
	maxAuthorCell = 500
	maxAuthorRead = 16 << 10
	// maxContractFiles bounds the home files the contract lists.
	maxContractFiles = 150
)

// The author's tools.
const (
	SubmitTaskTool = "submit_task"
	QueryWorldTool = "query_world"
	ReadHomeTool   = "read_home"
)

// LLMAuthorOptions configure the llm author; the zero value means the
// defaults.
type LLMAuthorOptions struct {
	// Tries is the most submit_task calls (DefaultAuthorTries); MaxTurns
	// the most model turns (DefaultAuthorTurns).
	Tries    int
	MaxTurns int
	// MaxTokens bounds each completion; 0 means DefaultAuthorMaxTokens,
	// a negative value leaves it to the server.
	MaxTokens int
}

// LLMAuthor is the model that writes a sketch's seven artifacts: given the
// sketch, the world's capability contract and the feedback of failed
// checks, it hands in the task with one submit_task call, parsed strictly
// into a Draft and validated (task.Validate and the XAI rule); a refused
// call goes back as the tool's result until Tries run out.
type LLMAuthor struct {
	client *model.Client
	o      LLMAuthorOptions
	prompt Prompt
}

// DefaultAuthorMaxTokens bounds an author's completion by default: a
// task's instruction, reference, verifier and scripts in one tool call,
// within a 32K-token context beside the world's summary.
const DefaultAuthorMaxTokens = 8192

// NewLLMAuthor returns the llm author over client.
func NewLLMAuthor(client *model.Client, o LLMAuthorOptions) *LLMAuthor {
	switch {
	case o.MaxTokens == 0:
		o.MaxTokens = DefaultAuthorMaxTokens
	case o.MaxTokens < 0:
		o.MaxTokens = 0 // the server's
	}
	o.Tries = cmp.Or(o.Tries, DefaultAuthorTries)
	o.MaxTurns = cmp.Or(o.MaxTurns, DefaultAuthorTurns)
	return &LLMAuthor{client: client, o: o, prompt: mustPrompt("author")}
}

// Name implements AuthorBackend: "llm:MODEL@author.vN".
func (a *LLMAuthor) Name() string {
	return fmt.Sprintf("llm:%s@author.v%d", a.client.Spec().Model, a.prompt.Version)
}

// AuthorError is an authoring the model did not complete: every
// submit_task call was refused, or the turns ran out first. Err is the
// last problem, which names the field.
type AuthorError struct {
	Sketch string
	Turns  int
	Tries  int
	Err    error
}

func (e *AuthorError) Error() string {
	return fmt.Sprintf("taskgen: llm author %q: no valid task after %d submit_task calls in %d turns; the last problem: %v", e.Sketch, e.Tries, e.Turns, e.Err)
}

func (e *AuthorError) Unwrap() error { return e.Err }

// ErrNoSubmission is the problem of an authoring whose model never called
// submit_task.
var ErrNoSubmission = errors.New("submit_task was never called")

const submitSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["instruction", "interfaces", "subtasks", "hint", "rubric", "reference", "verifier", "rationale"],
  "properties": {
    "instruction": {"type": "string"},
    "interfaces": {"type": "array", "items": {"enum": ["gui", "mcp", "cli"]}},
    "subtasks": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["id", "title", "interface"],
      "properties": {"id": {"type": "string"}, "title": {"type": "string"}, "interface": {"enum": ["gui", "mcp", "cli"]}, "decisive": {"enum": ["image"]}}}},
    "hint": {"type": "string"},
    "rubric": {"type": "array", "items": {"type": "string"}},
    "reference": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["tool"],
      "properties": {"tool": {"type": "string"}, "args": {"type": "object"}, "note": {"type": "string"}, "interface": {"enum": ["gui", "mcp", "cli"]},
        "facts": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["id", "kind", "value", "wrong"],
          "properties": {"id": {"type": "string"}, "kind": {"enum": ["read", "output", "choice"]}, "value": {"type": "string"}, "wrong": {"type": "string"}, "cue": {"type": "string"},
            "forms": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["value", "wrong"], "properties": {"value": {"type": "string"}, "wrong": {"type": "string"}}}}}}}}}},
    "verifier": {"type": "object", "additionalProperties": false, "required": ["criteria"],
      "properties": {"criteria": {"type": "array", "items": {"type": "object", "required": ["id", "kind"]}}}},
    "scripts": {"type": "object", "additionalProperties": {"type": "string"}, "description": "NAME.py -> Python source, for each script criterion"},
    "answer": {"type": "string"},
    "rationale": {"type": "string"}
  }
}`

// Submission is submit_task's arguments: the seven artifacts.
type Submission struct {
	Instruction string            `json:"instruction"`
	Interfaces  []string          `json:"interfaces"`
	Subtasks    []task.Subtask    `json:"subtasks"`
	Hint        string            `json:"hint"`
	Rubric      []string          `json:"rubric"`
	Reference   []task.Step       `json:"reference"`
	Verifier    *task.Verifier    `json:"verifier"`
	Scripts     map[string]string `json:"scripts,omitempty"`
	Answer      string            `json:"answer,omitempty"`
	Rationale   string            `json:"rationale"`
}

// SubmissionOf is a draft as submit_task's arguments (the reverse of
// DraftFromSubmission, but for the ID and provenance, which are the
// pipeline's).
func SubmissionOf(d *Draft) Submission {
	t := d.Task
	return Submission{Instruction: t.Instruction, Interfaces: t.Interfaces, Subtasks: t.Subtasks, Hint: t.Hint, Rubric: t.Rubric,
		Reference: t.Reference, Verifier: &t.Verifier, Scripts: d.Scripts, Answer: t.Answer, Rationale: t.Rationale}
}

// Author implements AuthorBackend.
func (a *LLMAuthor) Author(ctx context.Context, w *World, s Sketch, feedback string) (*Draft, error) {
	tools := []model.Tool{
		{Name: QueryWorldTool, Description: fmt.Sprintf("Run one read-only SELECT on a database of the initial world (db/NAME.sqlite); at most %d rows.", maxAuthorRows),
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["db","sql"],"properties":{"db":{"type":"string"},"sql":{"type":"string"}}}`)},
		{Name: ReadHomeTool, Description: "Read a file of the initial world's home directory, by its path relative to home.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{"path":{"type":"string"}}}`)},
		{Name: SubmitTaskTool, Description: "Hand in the task: its seven artifacts. A refused task comes back with the field to fix; then submit the whole task again.",
			Parameters: json.RawMessage(submitSchema)},
	}
	names := []string{QueryWorldTool, ReadHomeTool, SubmitTaskTool}
	msgs := []model.Message{{Role: model.RoleSystem, Content: a.prompt.Text}, {Role: model.RoleUser, Content: authorJob(w, s, feedback)}}
	tries := 0
	var last error = ErrNoSubmission
	fail := func(turn int) error { return &AuthorError{Sketch: s.Title, Turns: turn, Tries: tries, Err: last} }
	for turn := 1; turn <= a.o.MaxTurns; turn++ {
		resp, err := a.client.Chat(ctx, model.Request{Messages: msgs, Tools: tools, MaxTokens: a.o.MaxTokens})
		if err != nil {
			return nil, fmt.Errorf("taskgen: llm author %q, turn %d: %w", s.Title, turn, err)
		}
		calls := slices.Clone(resp.ToolCalls)
		for i := range calls {
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", turn, i)
			}
			if calls[i].Name == "" {
				calls[i].Name = "unnamed"
			}
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: calls})
		if len(calls) == 0 {
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: "Your reply called no tool. Hand in the task with " + SubmitTaskTool + "."})
			continue
		}
		for _, c := range calls {
			var out string
			switch {
			case !slices.Contains(names, c.Name):
				out = fmt.Sprintf("error: there is no tool %q; the tools are %s", c.Name, strings.Join(names, ", "))
			case c.ArgError != "":
				if c.Name == SubmitTaskTool {
					tries++
					last = fmt.Errorf("the arguments: %s", c.ArgError)
				}
				out = fmt.Sprintf("error: the arguments of %s are unusable: %s; send one JSON object with the tool's parameters", c.Name, c.ArgError)
			case c.Name == QueryWorldTool:
				out = authorQuery(w, c.Arguments)
			case c.Name == ReadHomeTool:
				out = authorRead(w, c.Arguments)
			default:
				tries++
				d, err := DraftFromSubmission(w, s, c.Arguments)
				if err == nil {
					return d, nil
				}
				last = err
				out = fmt.Sprintf("error: %v. Fix it and call %s again with the whole task (%d of %d calls left).", err, SubmitTaskTool, a.o.Tries-tries, a.o.Tries)
			}
			if tries >= a.o.Tries {
				return nil, fail(turn)
			}
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: out})
		}
	}
	return nil, fail(a.o.MaxTurns)
}

// LLMTaskID is the task ID of a sketch the llm author writes: the sketch's
// family and title, and a hash of what the diversity gate compares, so
// that a revision keeps its ID and two sketches get two.
func LLMTaskID(s Sketch) string {
	h := fnv.New32a()
	h.Write([]byte(SketchText(s)))
	suffix := fmt.Sprintf("%08x", h.Sum32())
	title := idPart(s.Title)
	if len(title) > 40 {
		title = strings.TrimRight(title[:40], "-")
	}
	return taskID(s.Family, title, suffix)
}

// DraftFromSubmission parses submit_task's arguments strictly into a draft
// of sketch s on w and validates it: task.Validate, the XAI rule (declares
// GUI, MCP and CLI and uses each in a sub-task and the reference, with a
// shell step before a later GUI or MCP one: a script's result informs a
// later decision), reference tools the harness replays on this world's
// sites and services, and scripts that are exactly the script criteria's.
// The error names the field.
func DraftFromSubmission(w *World, s Sketch, raw json.RawMessage) (*Draft, error) {
	var sub Submission
	if err := decodeStrict(raw, &sub); err != nil {
		return nil, err
	}
	if sub.Verifier == nil {
		return nil, errors.New("field verifier is missing: give {criteria: [...]}")
	}
	for _, in := range []string{task.GUI, task.MCP, task.CLI} {
		if !slices.Contains(sub.Interfaces, in) {
			return nil, fmt.Errorf("field interfaces: %v lacks %q: the task must need the GUI, MCP and CLI, each indispensable", sub.Interfaces, in)
		}
	}
	services := rollout.Services(w.Dir)
	sites := siteNames()
	cli := -1
	later := false
	for i := range sub.Reference {
		st := &sub.Reference[i]
		f := fmt.Sprintf("reference[%d]", i)
		in, err := stepInterface(st.Tool, st.Args, sites, services)
		if err != nil {
			return nil, fmt.Errorf("field %s: %v", f, err)
		}
		switch {
		case st.Interface == "":
			st.Interface = in
		case st.Interface != in:
			return nil, fmt.Errorf("field %s.interface: %q, but %s acts through %q", f, st.Interface, st.Tool, in)
		}
		if in == task.CLI && cli < 0 {
			cli = i
		}
		if in != task.CLI && cli >= 0 {
			later = true
		}
	}
	if cli >= 0 && !later {
		return nil, errors.New("field reference: no gui or mcp step comes after the first shell step: a script's result must inform a later decision in the browser or an application")
	}
	t := &task.Task{Version: task.Version, ID: LLMTaskID(s), Instruction: sub.Instruction, Interfaces: canonical(sub.Interfaces), Subtasks: sub.Subtasks,
		Hint: sub.Hint, Rubric: sub.Rubric, Reference: sub.Reference, Verifier: *sub.Verifier, Answer: sub.Answer, Provenance: provenance(w), Rationale: sub.Rationale}
	if err := t.Validate(); err != nil {
		return nil, err
	}
	scripts := map[string]string{}
	for _, p := range t.Verifier.Scripts() {
		name := strings.TrimPrefix(p, "scripts/")
		src, ok := sub.Scripts[name]
		if !ok || blank(src) {
			return nil, fmt.Errorf("field scripts: no source for %q, which a criterion runs: give scripts[%q]", name, name)
		}
		scripts[name] = src
	}
	for _, name := range slices.Sorted(maps.Keys(sub.Scripts)) {
		if _, ok := scripts[name]; !ok {
			return nil, fmt.Errorf("field scripts[%q]: no criterion runs it: add a script criterion {\"kind\": \"script\", \"script\": \"scripts/%s\"} or drop it", name, name)
		}
	}
	return &Draft{Task: t, Scripts: scripts}, nil
}

// canonical orders interfaces as task.GUI, task.MCP, task.CLI.
func canonical(in []string) []string {
	var out []string
	for _, i := range []string{task.GUI, task.MCP, task.CLI} {
		if slices.Contains(in, i) {
			out = append(out, i)
		}
	}
	return out
}

// stepTools are the tools agent.Env.Do replays, by interface.
var stepTools = map[string]string{
	"browser.open": task.GUI, "browser.fill": task.GUI, "browser.click": task.GUI, "browser.select": task.GUI, "browser.submit": task.GUI,
	"browser.read": task.GUI, "browser.snapshot": task.GUI, "browser.scroll": task.GUI, "browser.back": task.GUI, "browser.screenshot": task.GUI,
	"vision.describe": task.GUI, "shell.run": task.CLI, "file.read": task.CLI, "file.write": task.CLI,
}

// stepInterface checks a reference step and returns the interface it acts
// through.
func stepInterface(tool string, args map[string]any, sites, services []string) (string, error) {
	str := func(k string) string { s, _ := args[k].(string); return s }
	if rest, ok := strings.CutPrefix(tool, "mcp."); ok {
		svc, name, _ := strings.Cut(rest, agent.ToolSep)
		if !slices.Contains(services, svc) || name == "" {
			return "", fmt.Errorf("tool %q: want mcp.SERVICE__TOOL, SERVICE one of %s", tool, strings.Join(services, ", "))
		}
		if spec, err := service.Lookup(svc); err == nil {
			var tools []string
			for _, t := range spec.Compiled().Def.Tools {
				tools = append(tools, t.Name)
			}
			if !slices.Contains(tools, name) {
				return "", fmt.Errorf("tool %q: %s has no tool %q; its tools are %s", tool, svc, name, strings.Join(tools, ", "))
			}
		}
		return task.MCP, nil
	}
	in, ok := stepTools[tool]
	if !ok {
		return "", fmt.Errorf("tool %q is none the harness replays: %s, or mcp.SERVICE__TOOL", tool, strings.Join(slices.Sorted(maps.Keys(stepTools)), ", "))
	}
	switch tool {
	case "browser.open":
		rest, ok := strings.CutPrefix(str("url"), agent.SitePrefix)
		name, _, _ := strings.Cut(rest, "/")
		if !ok || !slices.Contains(sites, name) {
			return "", fmt.Errorf("args.url %q: want site:NAME/path, NAME one of %s (an instance's ports change)", str("url"), strings.Join(sites, ", "))
		}
	case "browser.fill", "browser.click", "browser.select", "browser.submit", "browser.read":
		if str("selector") == "" {
			return "", fmt.Errorf("args.selector is missing: %s takes a CSS selector", tool)
		}
	case "shell.run":
		if blank(str("command")) {
			return "", errors.New("args.command is missing: shell.run takes a bash command")
		}
	case "file.read", "file.write":
		if blank(str("path")) {
			return "", fmt.Errorf("args.path is missing: %s takes a path relative to home", tool)
		}
	}
	return in, nil
}

func siteNames() []string {
	var out []string
	for _, s := range site.All() {
		out = append(out, s.Name)
	}
	return out
}

// authorJob is the author's task message: the sketch, the capability
// contract and the feedback.
func authorJob(w *World, s Sketch, feedback string) string {
	var b strings.Builder
	sk, _ := json.MarshalIndent(s, "", "  ")
	fmt.Fprintf(&b, "# The sketch\n\n%s\n\n", sk)
	b.WriteString("# The computer\n\n")
	b.WriteString(Contract(w))
	if strings.TrimSpace(feedback) != "" {
		fmt.Fprintf(&b, "\n# Feedback on an earlier draft of this task\n\nAn earlier draft failed its checks. Write the task again so that it passes:\n\n%s\n", strings.TrimSpace(feedback))
	}
	fmt.Fprintf(&b, "\nWrite the task and hand it in with %s.", SubmitTaskTool)
	return b.String()
}

// Contract is the capability contract of a world the author writes
// against: the person and the clock, the websites and logins, the MCP
// services with their tools, the databases with their tables, and the
// home's files.
func Contract(w *World) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Person: %s (persona %s), day %d, clock %s.\n\n", w.Self, w.Manifest.Persona, w.Manifest.Day, w.Manifest.Clock)
	b.WriteString("## Websites\n\nOpen them as site:NAME/path. Logins (the person notes them in " + LoginsFile + "):\n")
	for _, name := range slices.Sorted(maps.Keys(w.Logins)) {
		l := w.Logins[name]
		fmt.Fprintf(&b, "- %s: user %q, password %q\n", name, l.User, l.Password)
	}
	fmt.Fprintf(&b, "Sites: %s.\n\n## MCP services\n\nCall them as mcp.SERVICE__TOOL with the tool's arguments.\n", strings.Join(siteNames(), ", "))
	for _, svc := range rollout.Services(w.Dir) {
		spec, err := service.Lookup(svc)
		if err != nil {
			fmt.Fprintf(&b, "- %s (served from a definition; its tools as the instance lists them)\n", svc)
			continue
		}
		fmt.Fprintf(&b, "- %s:\n", svc)
		for _, t := range spec.Compiled().Def.Tools {
			in, _ := json.Marshal(t.Input)
			fmt.Fprintf(&b, "  - %s__%s: %s Arguments: %s\n", svc, t.Name, strings.TrimSpace(t.Description), in)
		}
	}
	b.WriteString("\n## Databases (for sql criteria and query_world)\n\n")
	dbs, _ := filepath.Glob(filepath.Join(w.Dir, "db", "*.sqlite"))
	for _, p := range dbs {
		name := strings.TrimSuffix(filepath.Base(p), ".sqlite")
		rows, err := w.Query(name, `SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name`)
		if err != nil {
			continue
		}
		var tables []string
		for _, r := range rows {
			tables = append(tables, str(r[0]))
		}
		fmt.Fprintf(&b, "- %s: %s\n", name, strings.Join(tables, ", "))
	}
	files, _ := w.HomeFiles("")
	fmt.Fprintf(&b, "\n## Home files (%d)\n\n", len(files))
	for i, f := range files {
		if i == maxContractFiles {
			fmt.Fprintf(&b, "- ... and %d more\n", len(files)-i)
			break
		}
		fmt.Fprintf(&b, "- %s\n", f)
	}
	return b.String()
}

// authorQuery is query_world: one read-only SELECT.
func authorQuery(w *World, raw json.RawMessage) string {
	var a struct {
		DB  string `json:"db"`
		SQL string `json:"sql"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return "error: " + err.Error()
	}
	if err := world.ValidDBName(a.DB); err != nil {
		return "error: field db: " + err.Error()
	}
	if _, err := os.Stat(world.DBPath(w.Dir, a.DB)); err != nil {
		return fmt.Sprintf("error: field db: the world has no database %q", a.DB)
	}
	q := strings.TrimSpace(a.SQL)
	head := strings.ToLower(strings.Fields(q + " x")[0])
	if head != "select" && head != "with" || strings.Contains(strings.TrimSuffix(q, ";"), ";") {
		return "error: field sql: give one SELECT (or WITH ... SELECT)"
	}
	rows, err := w.Query(a.DB, q)
	if err != nil {
		return "error: " + err.Error()
	}
	more := len(rows) > maxAuthorRows
	rows = rows[:min(len(rows), maxAuthorRows)]
	for _, r := range rows {
		for i, v := range r {
			if s, ok := v.(string); ok && len(s) > maxAuthorCell {
				r[i] = abbrevText(s, maxAuthorCell)
			}
		}
	}
	b, _ := json.Marshal(rows)
	if more {
		return fmt.Sprintf("%s\n(the first %d rows only)", b, maxAuthorRows)
	}
	return string(b)
}

// authorRead is read_home: a home file of W0.
func authorRead(w *World, raw json.RawMessage) string {
	var a struct {
		Path string `json:"path"`
	}
	if err := decodeStrict(raw, &a); err != nil {
		return "error: " + err.Error()
	}
	b, err := w.Home(a.Path)
	if err != nil {
		return "error: " + err.Error()
	}
	if bytes.IndexByte(b[:min(len(b), 8000)], 0) >= 0 {
		return fmt.Sprintf("(%s is a binary file of %d bytes)", a.Path, len(b))
	}
	if len(b) > maxAuthorRead {
		return abbrevText(string(b), maxAuthorRead) + fmt.Sprintf("\n... [%d more bytes]", len(b)-maxAuthorRead)
	}
	return string(b)
}

// earlierDraft is the draft an earlier run's author wrote for p's sketch
// at p.Dir, so that a rerun does not ask the model again; nil when there
// is none (or only half of one).
func earlierDraft(p Produced) (*Draft, error) {
	b, err := os.ReadFile(filepath.Join(p.Dir, SketchFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var old Produced
	if json.Unmarshal(b, &old) != nil || old.Author != p.Author || !reflect.DeepEqual(old.Sketch, p.Sketch) {
		return nil, nil
	}
	t, err := task.Load(p.Dir)
	if err != nil {
		return nil, nil
	}
	scripts := map[string]string{}
	for _, sp := range t.Verifier.Scripts() {
		src, err := os.ReadFile(filepath.Join(p.Dir, "verifier", filepath.FromSlash(sp)))
		if err != nil {
			return nil, nil
		}
		scripts[strings.TrimPrefix(sp, "scripts/")] = string(src)
	}
	return &Draft{Task: t, Scripts: scripts}, nil
}
