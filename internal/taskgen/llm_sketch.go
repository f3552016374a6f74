package taskgen

import (
	"bytes"
	"cmp"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// The llm backends of task synthesis (docs/task-synthesis.md): a sketch
// agent that explores a live instance of the world through the harness's
// tool loop and proposes sketches, and an author that writes a sketch's
// seven artifacts and hands them in with one submit_task call. Both work
// under a versioned constitution (prompts/*.md), and what they hand in is
// checked: a refused call goes back to the model as the tool's result.

// prompts are the constitutions of the llm backends, each file starting
// with its version line ("version: N").
//
//go:embed prompts/*.md
var prompts embed.FS

// SketchBackend proposes the sketches of a job on a world state instead of
// the job's family. nil in Synth means the procedural families.
type SketchBackend interface {
	// Name names the backend in reports ("llm:MODEL@sketch.v1").
	Name() string
	Sketch(ctx context.Context, j Job, st State, w *World) ([]Sketch, error)
}

// AuthorBackend writes a sketch's artifacts instead of its family. feedback,
// when not empty, is what failed checks or gates said of an earlier draft
// (gate.Feedback). nil in Synth means the families' own Author.
type AuthorBackend interface {
	Name() string
	Author(ctx context.Context, w *World, s Sketch, feedback string) (*Draft, error)
}

// LLMFamily is the family of the sketch agent's sketches and the jobs that
// run it: the agent is family-free, so its sketches need an author that is
// not a family's (the llm author).
const LLMFamily = "llm"

// Prompt is one constitution of the llm backends.
type Prompt struct {
	Stage   string   `json:"stage"`
	File    string   `json:"file"`
	Version int      `json:"version"`
	SHA256  world.ID `json:"sha256"`
	Text    string   `json:"-"`
}

// LLMPrompt returns the constitution of stage "sketch" or "author".
func LLMPrompt(stage string) (Prompt, error) {
	file := "prompts/" + stage + ".md"
	b, err := prompts.ReadFile(file)
	if err != nil {
		return Prompt{}, fmt.Errorf("taskgen: %w", err)
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(strings.TrimSpace(first), "version:")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if !ok || err != nil || n < 1 {
		return Prompt{}, fmt.Errorf("taskgen: %s: the first line must be \"version: N\" with N >= 1, got %q", file, first)
	}
	text := strings.TrimSpace(rest)
	if text == "" {
		return Prompt{}, fmt.Errorf("taskgen: %s: no text after the version line", file)
	}
	return Prompt{Stage: stage, File: file, Version: n, SHA256: world.Hash(b), Text: text}, nil
}

func mustPrompt(stage string) Prompt {
	p, err := LLMPrompt(stage)
	if err != nil {
		panic(err) // the embedded files are the build's: TestLLMPrompts catches it
	}
	return p
}

// The sketch agent's limits.
const (
	// MaxSessionSketches is the most sketches one session may propose.
	MaxSessionSketches = 4
	// DefaultSketchTurns and DefaultSketchWall are a session's budgets
	// when LLMSketchOptions leaves them zero.
	DefaultSketchTurns = 40
	DefaultSketchWall  = 10 * time.Minute
	// maxCore bounds a sketch's core items.
	maxCore = 8
)

// SessionService is the MCP service of the sketch session's own tools:
// the model calls SessionService__propose_sketch and SessionService__done.
const SessionService = "taskgen"

// The session's tool names, as the model calls them.
const (
	ProposeSketchTool = SessionService + agent.ToolSep + "propose_sketch"
	DoneTool          = SessionService + agent.ToolSep + "done"
)

// unparsedKey carries the raw text of a session tool call whose arguments
// do not parse, so that the call is refused and not a format failure.
const unparsedKey = "unparsed_arguments"

// LLMSketchOptions configure the sketch agent; the zero value means the
// defaults, but Env is required.
type LLMSketchOptions struct {
	// Env gives the rollout environment a persona's world runs in: each
	// session explores a fresh live instance of the job's state.
	Env func(p *persona.Persona) *rollout.Env
	// MaxTurns and WallTime are a session's budgets (DefaultSketchTurns,
	// DefaultSketchWall); MaxTokens and ContextTokens the harness's.
	MaxTurns      int
	WallTime      time.Duration
	MaxTokens     int
	ContextTokens int
	// Dir, when set, keeps every session (SketchSession with its
	// trajectory) as Dir/PERSONA-dDAY.json; a session kept there for the
	// same job is reused, not run again, so a rerun resumes.
	Dir string
}

// LLMSketcher is the sketch agent: a model explores a live instance of the
// world state through agent.Harness and proposes at most
// MaxSessionSketches sketches with ProposeSketchTool, ending with DoneTool.
type LLMSketcher struct {
	client *model.Client
	o      LLMSketchOptions
	prompt Prompt
}

// NewLLMSketcher returns the sketch agent over client.
func NewLLMSketcher(client *model.Client, o LLMSketchOptions) *LLMSketcher {
	o.MaxTurns = cmp.Or(o.MaxTurns, DefaultSketchTurns)
	o.WallTime = cmp.Or(o.WallTime, DefaultSketchWall)
	return &LLMSketcher{client: client, o: o, prompt: mustPrompt("sketch")}
}

// Name implements SketchBackend: "llm:MODEL@sketch.vN".
func (l *LLMSketcher) Name() string {
	return fmt.Sprintf("llm:%s@sketch.v%d", l.client.Spec().Model, l.prompt.Version)
}

// SketchSession is one session of the sketch agent: what it proposed, why
// it ended and its trajectory.
type SketchSession struct {
	Job      Job      `json:"job"`
	Model    string   `json:"model"`
	Prompt   string   `json:"prompt"`
	Sketches []Sketch `json:"sketches"`
	// Stop is why the session ended: "done" (the model called DoneTool),
	// "answer" (it replied without a tool call), "budget: ..." (turns or
	// time ran out) or "format: ..." (a call of an exploration tool that
	// does not parse ends a session as it ends a rollout).
	Stop string `json:"stop"`
	// Refused counts the refused calls of the session's tools; Unparsed
	// those whose arguments did not parse (kept as {"unparsed_arguments":
	// RAW} in the trajectory, and refused).
	Refused  int `json:"refused"`
	Unparsed int `json:"unparsed,omitempty"`
	// Trajectory is the session's record: every model turn and tool step.
	Trajectory *agent.Trajectory `json:"trajectory"`
}

// SessionFile is where a session of persona's day is kept under Dir.
func SessionFile(dir string, j Job) string {
	return filepath.Join(dir, fmt.Sprintf("%s-d%d.json", j.Persona, j.Day))
}

// Sketch implements SketchBackend.
func (l *LLMSketcher) Sketch(ctx context.Context, j Job, st State, w *World) ([]Sketch, error) {
	s, err := l.Session(ctx, j, st, w)
	if err != nil {
		return nil, err
	}
	return s.Sketches, nil
}

// Session runs (or, with Dir, reuses) the sketch session of job j.
func (l *LLMSketcher) Session(ctx context.Context, j Job, st State, w *World) (*SketchSession, error) {
	if l.o.Env == nil {
		return nil, errors.New("taskgen: the llm sketch agent needs a live environment (LLMSketchOptions.Env)")
	}
	if l.o.Dir != "" {
		if b, err := os.ReadFile(SessionFile(l.o.Dir, j)); err == nil {
			var old SketchSession
			if json.Unmarshal(b, &old) == nil && old.Job == j && old.Prompt == l.Name() {
				return &old, nil
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	s, err := l.run(ctx, j, st, w)
	if err != nil {
		return nil, err
	}
	if l.o.Dir != "" {
		b, err := json.MarshalIndent(s, "", "  ")
		if err != nil {
			return nil, err
		}
		if err := os.MkdirAll(l.o.Dir, 0o755); err != nil {
			return nil, err
		}
		if err := world.WriteFileAtomic(SessionFile(l.o.Dir, j), append(b, '\n'), 0o644); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func (l *LLMSketcher) run(ctx context.Context, j Job, st State, w *World) (*SketchSession, error) {
	env := l.o.Env(st.Persona)
	name := fmt.Sprintf("sketch-%s-d%d", j.Persona, j.Day)
	inst, err := env.Start(ctx, st.Snapshot, name)
	if err != nil {
		return nil, fmt.Errorf("taskgen: sketch session %s: %w", name, err)
	}
	defer inst.Close(context.WithoutCancel(ctx))
	traj := &agent.Trajectory{Version: agent.TrajectoryVersion, TaskID: name, Rollout: "sketch"}
	sess, err := env.Open(ctx, inst, traj)
	if err != nil {
		return nil, fmt.Errorf("taskgen: sketch session %s: %w", name, err)
	}
	defer sess.Close(context.WithoutCancel(ctx))

	ss := &sketchState{job: j}
	cs, closeTools, err := ss.connect(ctx)
	if err != nil {
		return nil, fmt.Errorf("taskgen: sketch session %s: %w", name, err)
	}
	defer closeTools()
	aenv := *sess.Env
	aenv.MCP = maps.Clone(sess.Env.MCP)
	aenv.MCP[SessionService] = cs

	h := &agent.Harness{Model: &sessionChatter{m: l.client, s: ss}, ModelName: l.client.Spec().Model, MaxTurns: l.o.MaxTurns, WallTime: l.o.WallTime,
		MaxTokens: l.o.MaxTokens, ContextTokens: l.o.ContextTokens, System: l.prompt.Text}
	answer, err := h.Run(ctx, &aenv, sketchJob(w, st, aenv.Services()), "")
	out := &SketchSession{Job: j, Model: l.client.Spec().Model, Prompt: l.Name(), Trajectory: traj}
	ss.mu.Lock()
	out.Sketches, out.Refused, out.Unparsed = slices.Clone(ss.sketches), ss.refused, ss.unparsed
	done := ss.done
	ss.mu.Unlock()
	traj.Policy, traj.Answer = "model:"+l.client.Spec().Model, answer
	switch {
	case done:
		out.Stop, traj.Outcome = "done", agent.OutcomeDone
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case err == nil:
		out.Stop, traj.Outcome = "answer", agent.OutcomeDone
	case errors.Is(err, agent.ErrBudget):
		out.Stop, traj.Outcome, traj.Error = "budget: "+err.Error(), agent.OutcomeBudget, err.Error()
	case errors.Is(err, agent.ErrFormat):
		out.Stop, traj.Outcome, traj.Error = "format: "+err.Error(), agent.OutcomeFormat, err.Error()
	default:
		return nil, fmt.Errorf("taskgen: sketch session %s: %w", name, err)
	}
	return out, nil
}

// sketchJob is the session's task message.
func sketchJob(w *World, st State, services []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "This computer is %s's, on day %d of their story (the clock says %s).\n", st.Persona.Name, w.Manifest.Day, w.Manifest.Clock)
	if len(w.Logins) > 0 {
		fmt.Fprintf(&b, "They keep logins for these websites in %s: %s.\n", LoginsFile, strings.Join(slices.Sorted(maps.Keys(w.Logins)), ", "))
	}
	var apps []string
	for _, s := range services {
		if s != SessionService {
			apps = append(apps, s)
		}
	}
	fmt.Fprintf(&b, "Their applications (MCP services): %s.\n\n", strings.Join(apps, ", "))
	fmt.Fprintf(&b, "Explore, then propose up to %d tasks with %s and end with %s.", MaxSessionSketches, ProposeSketchTool, DoneTool)
	return b.String()
}

// sketchState is a session's proposals, behind its tools.
type sketchState struct {
	job      Job
	mu       sync.Mutex
	sketches []Sketch
	refused  int
	unparsed int
	done     bool
}

// errSessionOver is the session's chatter's answer once done was
// accepted: the harness stops without another model turn.
var errSessionOver = errors.New("the sketch session is over")

// sessionChatter is the model as the harness sees it in a sketch session:
// it stops the loop once done is accepted, and turns a session tool call
// whose arguments do not parse into one the tool refuses (the harness
// would end the session on it as a format failure).
type sessionChatter struct {
	m agent.Chatter
	s *sketchState
}

func (c *sessionChatter) Chat(ctx context.Context, req model.Request) (*model.Response, error) {
	c.s.mu.Lock()
	over := c.s.done
	c.s.mu.Unlock()
	if over {
		return nil, errSessionOver
	}
	resp, err := c.m.Chat(ctx, req)
	if err != nil {
		return nil, err
	}
	out := *resp
	out.ToolCalls = slices.Clone(resp.ToolCalls)
	for i, tc := range out.ToolCalls {
		if tc.ArgError == "" || !strings.HasPrefix(tc.Name, SessionService+agent.ToolSep) {
			continue
		}
		raw := tc.RawArguments
		if raw == "" {
			raw = string(tc.Arguments)
		}
		b, _ := json.Marshal(map[string]string{unparsedKey: raw})
		out.ToolCalls[i].Arguments, out.ToolCalls[i].RawArguments, out.ToolCalls[i].ArgError = b, "", ""
		c.s.mu.Lock()
		c.s.unparsed++
		c.s.mu.Unlock()
	}
	return &out, nil
}

const proposeSchema = `{
  "type": "object",
  "additionalProperties": false,
  "required": ["title", "interfaces", "core", "params"],
  "properties": {
    "title": {"type": "string", "description": "one line: what the task achieves"},
    "interfaces": {"type": "object", "additionalProperties": false, "required": ["gui", "mcp", "cli"],
      "description": "what the task does through each interface, one sentence each",
      "properties": {"gui": {"type": "string"}, "mcp": {"type": "string"}, "cli": {"type": "string"}}},
    "core": {"type": "array", "minItems": 1, "maxItems": 8, "items": {"type": "string"},
      "description": "the core actions and artifacts, e.g. \"order devices LD-0149\", \"file decisions/fares.csv\""},
    "params": {"type": "object", "additionalProperties": {"type": "string"},
      "description": "the data found that the task rests on, by name"}
  }
}`

// proposal is propose_sketch's arguments.
type proposal struct {
	Title      string `json:"title"`
	Interfaces *struct {
		GUI string `json:"gui"`
		MCP string `json:"mcp"`
		CLI string `json:"cli"`
	} `json:"interfaces"`
	Core   []string          `json:"core"`
	Params map[string]string `json:"params"`
}

// InterfaceParam is the sketch parameter that holds what a proposed task
// does through interface iface ("interface.gui").
func InterfaceParam(iface string) string { return "interface." + iface }

// connect serves the session's tools as an in-memory MCP service and
// returns a client session on it.
func (s *sketchState) connect(ctx context.Context) (*mcp.ClientSession, func(), error) {
	srv := mcp.NewServer(&mcp.Implementation{Name: SessionService, Version: "1"}, nil)
	srv.AddTool(&mcp.Tool{Name: "propose_sketch", Description: fmt.Sprintf("Propose a task you found (at most %d in this session). Returns how many you may still propose, or why the proposal is refused.", MaxSessionSketches),
		InputSchema: json.RawMessage(proposeSchema)}, s.propose)
	srv.AddTool(&mcp.Tool{Name: "done", Description: "End the session once you have proposed what you found.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)}, s.finish)
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, nil, err
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "wildawm-sketch", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		ss.Close()
		return nil, nil, err
	}
	return cs, func() { cs.Close(); ss.Close() }, nil
}

func toolText(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

// refuse counts and returns a refusal.
func (s *sketchState) refuse(format string, args ...any) *mcp.CallToolResult {
	s.refused++
	return toolText(fmt.Sprintf(format, args...), true)
}

func (s *sketchState) propose(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.refuse("the session is over: done was called"), nil
	}
	raw := []byte(req.Params.Arguments)
	var unparsed map[string]string
	if json.Unmarshal(raw, &unparsed) == nil && len(unparsed) == 1 && unparsed[unparsedKey] != "" {
		return s.refuse("propose_sketch: the arguments are not a JSON object (%s); send one JSON object with title, interfaces {gui, mcp, cli}, core and params", abbrevText(unparsed[unparsedKey], 200)), nil
	}
	if len(s.sketches) >= MaxSessionSketches {
		return s.refuse("propose_sketch: this session has proposed %d sketches, the most it may; call %s", MaxSessionSketches, DoneTool), nil
	}
	var p proposal
	if err := decodeStrict(raw, &p); err != nil {
		return s.refuse("propose_sketch: %v", err), nil
	}
	sk, err := s.sketch(p)
	if err != nil {
		return s.refuse("propose_sketch: %v", err), nil
	}
	s.sketches = append(s.sketches, sk)
	left := MaxSessionSketches - len(s.sketches)
	return toolText(fmt.Sprintf("sketch %d accepted: %q; you may propose %d more, then call %s", len(s.sketches), sk.Title, left, DoneTool), false), nil
}

// sketch checks a proposal and makes it a sketch.
func (s *sketchState) sketch(p proposal) (Sketch, error) {
	if blank(p.Title) {
		return Sketch{}, errors.New("field title is missing or empty: say in one line what the task achieves")
	}
	if p.Interfaces == nil {
		return Sketch{}, errors.New("field interfaces is missing: say what the task does through gui, mcp and cli")
	}
	for _, f := range []struct{ name, v string }{{task.GUI, p.Interfaces.GUI}, {task.MCP, p.Interfaces.MCP}, {task.CLI, p.Interfaces.CLI}} {
		if blank(f.v) {
			return Sketch{}, fmt.Errorf("field interfaces.%s is missing or empty: every task needs the GUI, MCP and CLI, each indispensable", f.name)
		}
	}
	if len(p.Core) == 0 || len(p.Core) > maxCore {
		return Sketch{}, fmt.Errorf("field core has %d items: give 1 to %d core actions and artifacts", len(p.Core), maxCore)
	}
	core := make([]string, len(p.Core))
	for i, c := range p.Core {
		core[i] = strings.Join(strings.Fields(c), " ")
		if core[i] == "" {
			return Sketch{}, fmt.Errorf("field core[%d] is empty", i)
		}
		if slices.Contains(core[:i], core[i]) {
			return Sketch{}, fmt.Errorf("field core[%d] %q is listed twice", i, core[i])
		}
	}
	if p.Params == nil {
		return Sketch{}, errors.New("field params is missing: give the data the task rests on, by name")
	}
	params := map[string]string{}
	for k, v := range p.Params {
		if blank(k) || strings.HasPrefix(k, "interface.") {
			return Sketch{}, fmt.Errorf("field params: the name %q is not allowed (blank, or interface.*)", k)
		}
		params[k] = v
	}
	params[InterfaceParam(task.GUI)] = strings.TrimSpace(p.Interfaces.GUI)
	params[InterfaceParam(task.MCP)] = strings.TrimSpace(p.Interfaces.MCP)
	params[InterfaceParam(task.CLI)] = strings.TrimSpace(p.Interfaces.CLI)
	for i, o := range s.sketches {
		for _, c := range core {
			if slices.Contains(o.Core, c) {
				return Sketch{}, fmt.Errorf("field core: %q is sketch %d's too (%q): two tasks sharing a core action or artifact are duplicates; propose a different task", c, i+1, o.Title)
			}
		}
	}
	return Sketch{Family: LLMFamily, Title: strings.TrimSpace(p.Title), Params: params, Core: core}, nil
}

func (s *sketchState) finish(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return s.refuse("the session is over: done was called"), nil
	}
	var none struct{}
	if err := decodeStrict([]byte(req.Params.Arguments), &none); err != nil && len(bytes.TrimSpace(req.Params.Arguments)) > 0 {
		return s.refuse("done takes no arguments: %v", err), nil
	}
	s.done = true
	return toolText(fmt.Sprintf("session over: %d sketches proposed", len(s.sketches)), false), nil
}

// decodeStrict decodes one JSON object into v: unknown fields, mistyped
// values and trailing data are errors naming the field.
func decodeStrict(b []byte, v any) error {
	if len(bytes.TrimSpace(b)) == 0 {
		b = []byte("{}")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && te.Field != "" {
			return fmt.Errorf("field %s: want %s, got a JSON %s", te.Field, te.Type, te.Value)
		}
		return fmt.Errorf("the arguments: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
	if dec.More() {
		return errors.New("the arguments: more than one JSON value")
	}
	return nil
}

func abbrevText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "") + "..."
}

func blank(s string) bool { return strings.TrimSpace(s) == "" }
