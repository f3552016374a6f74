package synth

import (
	"bytes"
	"context"
	"database/sql"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"modernc.org/sqlite"

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/service/engine"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/validate"
	"github.com/wildawm/wildawm/internal/world"
)

// The llm backend (docs/synthesis-llm.md): each stage is one chat with an
// OpenAI-compatible model under a versioned constitution, in which the
// model works through tools and hands in its result with a final tool
// that the backend checks; what the check refuses goes back to the model
// as the tool's result, until the stage's turn budget runs out.

// constitutions are the stages' system prompts, each file starting with
// its version line ("version: N").
//
//go:embed prompts/*.md
var constitutions embed.FS

// The stages of the llm backend, which are also its prompt files'
// names (prompts/STAGE.md).
const (
	StagePersona   = "persona"
	StagePlan      = "plan"
	StageImplement = "implement"
	StageReview    = "review"
)

// llmStages are the stages in the order Prompts lists them.
var llmStages = []string{StagePersona, StagePlan, StageImplement, StageReview}

// DefaultLLMBudget is the model turns a stage may take when LLMOptions
// leaves Budget zero; DefaultPlanBudget the plan stage's: a day 0 sets up
// some thirty events, and most models propose one a turn.
const (
	DefaultLLMBudget  = 12
	DefaultPlanBudget = 48
)

// DefaultLLMMaxTokens bounds each completion of a stage when LLMOptions
// leaves MaxTokens zero: room for a tool call with a persona's bible or a
// day's events, and within a 32K-token context beside the prompt.
const DefaultLLMMaxTokens = 4096

// Limits of what the implementer's and planner's tools return.
const (
	// MaxQueryRows caps the rows of query_world and query_catalog.
	MaxQueryRows = 200
	// MaxReadBytes caps what read_file shows of a file.
	MaxReadBytes = 64 << 10
	// maxCellBytes caps one text value of a query's rows.
	maxCellBytes = 4 << 10
	// maxListFiles caps list_files' entries.
	maxListFiles = 1000
	// queryTimeout bounds one read-only query.
	queryTimeout = 10 * time.Second
)

// minPlanEvents is the fewest events finish_day accepts.
const minPlanEvents = 2

// Attribute keys of the backend's log records.
const (
	llmKeyStage   = "stage"
	llmKeyTurn    = "turn"
	llmKeyTool    = "tool"
	llmKeyRefused = "refused"
	llmKeyPrompt  = "prompt_version"
	llmKeyTurns   = "turns"
	llmKeyError   = "error"
)

// ErrBudget is matched by the error of a stage whose turn budget ran out.
var ErrBudget = errors.New("the stage's turn budget ran out")

// StageError is what went wrong in one stage of the llm backend: which
// stage, at which model turn (from 1), and why.
type StageError struct {
	Stage string
	Turn  int
	Err   error
}

func (e *StageError) Error() string {
	return fmt.Sprintf("synth: llm %s stage, turn %d: %v", e.Stage, e.Turn, e.Err)
}

func (e *StageError) Unwrap() error { return e.Err }

// Prompt is one stage's constitution.
type Prompt struct {
	Stage string `json:"stage"`
	// File is the embedded file, prompts/STAGE.md.
	File    string `json:"file"`
	Version int    `json:"version"`
	// SHA256 is the hash of the file's bytes.
	SHA256 world.ID `json:"sha256"`
	Text   string   `json:"-"`
}

// parsePrompt reads a constitution: a first line "version: N" (N >= 1),
// then the text.
func parsePrompt(stage, file string, b []byte) (Prompt, error) {
	first, rest, _ := strings.Cut(string(b), "\n")
	v, ok := strings.CutPrefix(strings.TrimSpace(first), "version:")
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if !ok || err != nil || n < 1 {
		return Prompt{}, fmt.Errorf("synth: %s: the first line must be \"version: N\" with N >= 1, got %q", file, first)
	}
	text := strings.TrimSpace(rest)
	if text == "" {
		return Prompt{}, fmt.Errorf("synth: %s: no text after the version line", file)
	}
	return Prompt{Stage: stage, File: file, Version: n, SHA256: world.Hash(b), Text: text}, nil
}

// LLMPrompts returns the embedded constitutions of the stages.
func LLMPrompts() ([]Prompt, error) {
	var out []Prompt
	for _, stage := range llmStages {
		file := "prompts/" + stage + ".md"
		b, err := constitutions.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("synth: %w", err)
		}
		p, err := parsePrompt(stage, file, b)
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// LLMOptions configure the llm backend; the zero value means the
// defaults.
type LLMOptions struct {
	// Budget is the most model turns (chat requests) one stage may take; 0
	// means DefaultLLMBudget (DefaultPlanBudget for the plan stage).
	Budget int
	// MaxTokens bounds each completion; 0 means DefaultLLMMaxTokens, a
	// negative value leaves it to the server.
	MaxTokens int
	// CatalogDir, when set, is the catalog (catalog.Build's output) the
	// plan and implement stages may query with query_catalog.
	CatalogDir string
	// ScratchDir holds the implement stage's replay copies; "" means the
	// system's temporary directory.
	ScratchDir string
	// Generators are the delta's content generators for lint and replay;
	// nil means generator.Default().
	Generators delta.Generators
	// Log receives a record per tool call and per stage; nil discards.
	Log *slog.Logger
	// Record, when set, is told about every stage the backend ran: the
	// prompt version it used, its turns and usage, and how it ended.
	Record func(StageRecord)
}

// StageRecord is what one stage of the llm backend did.
type StageRecord struct {
	Stage         string      `json:"stage"`
	Prompt        string      `json:"prompt"`
	PromptVersion int         `json:"prompt_version"`
	Model         string      `json:"model"`
	Turns         int         `json:"turns"`
	Usage         model.Usage `json:"usage"`
	// Calls and Refused count the tool calls and those refused.
	Calls   int `json:"calls"`
	Refused int `json:"refused"`
	// Err is the stage's error, "" when it succeeded.
	Err string `json:"error,omitempty"`
}

// LLM is the backend that asks a model: the persona author, the day
// planner and the god-mode implementer, each under its constitution.
// What it returns is what the model handed in, checked: the skill
// library emits the model's events and the plan's events, and never
// stands in for the model.
type LLM struct {
	client  *model.Client
	pl      *Planner
	o       LLMOptions
	gens    delta.Generators
	prompts map[string]Prompt
	// mu serialises create_service's Publish (which rewrites the
	// library's index) and add_skill's save, and guards pl.Definitions.ByName, which it replaces
	// with a copy holding the new definition: plan stages of several
	// personas run at once.
	mu sync.Mutex
}

// NewLLM returns the llm backend over client. pl gives the skill library
// and the shared definitions.
func NewLLM(client *model.Client, pl *Planner, o LLMOptions) *LLM {
	ps, err := LLMPrompts()
	if err != nil {
		panic(err) // the embedded files are the build's: TestLLMPrompts catches it
	}
	l := &LLM{client: client, pl: pl, o: o, gens: o.Generators, prompts: map[string]Prompt{}}
	for _, p := range ps {
		l.prompts[p.Stage] = p
	}
	if l.gens == nil {
		l.gens = generator.Default()
	}
	switch {
	case l.o.MaxTokens == 0:
		l.o.MaxTokens = DefaultLLMMaxTokens
	case l.o.MaxTokens < 0:
		l.o.MaxTokens = 0 // the server's
	}
	if l.o.Log == nil {
		l.o.Log = slog.New(slog.DiscardHandler)
	}
	return l
}

// Name implements Backend.
// Name is "llm:MODEL" with each constitution's version ("persona.v1"):
// a run's resume key holds it, so a new prompt version re-runs the days.
func (l *LLM) Name() string {
	var vs []string
	for _, p := range l.Prompts() {
		vs = append(vs, fmt.Sprintf("%s.v%d", p.Stage, p.Version))
	}
	return "llm:" + l.client.Spec().Model + "@" + strings.Join(vs, ",")
}

// Prompts returns the constitutions the backend uses, by stage.
func (l *LLM) Prompts() []Prompt {
	var out []Prompt
	for _, s := range llmStages {
		out = append(out, l.prompts[s])
	}
	return out
}

// outcome is a tool call's result for the model.
type outcome struct {
	text    string
	refused bool // the call was refused; text says why
	done    bool // the stage's final call was accepted
}

func okf(format string, args ...any) outcome { return outcome{text: fmt.Sprintf(format, args...)} }

func refusef(format string, args ...any) outcome {
	return outcome{text: "error: " + fmt.Sprintf(format, args...), refused: true}
}

func okJSON(v any) outcome {
	b, err := json.Marshal(v)
	if err != nil {
		return refusef("the result does not encode: %v", err)
	}
	return outcome{text: string(b)}
}

// llmTool is one tool of a stage. run's error ends the stage: it is the
// harness's failure, not the model's.
type llmTool struct {
	model.Tool
	run func(ctx context.Context, args json.RawMessage) (outcome, error)
}

// noArgs is the schema of a tool without parameters.
var noArgs = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)

// converse runs one stage: the constitution, the job, then model turns
// until a final tool call is accepted or the budget runs out.
func (l *LLM) converse(ctx context.Context, stage, job string, tools []llmTool) (err error) {
	p := l.prompts[stage]
	rec := StageRecord{Stage: stage, Prompt: p.File, PromptVersion: p.Version, Model: l.client.Spec().Model}
	defer func() {
		if err != nil {
			rec.Err = err.Error()
			l.o.Log.Warn("llm stage failed", llmKeyStage, stage, llmKeyPrompt, p.Version, llmKeyTurns, rec.Turns, llmKeyError, err)
		} else {
			l.o.Log.Info("llm stage done", llmKeyStage, stage, llmKeyPrompt, p.Version, llmKeyTurns, rec.Turns)
		}
		if l.o.Record != nil {
			l.o.Record(rec)
		}
	}()
	specs := make([]model.Tool, len(tools))
	byName := map[string]llmTool{}
	names := make([]string, len(tools))
	for i, t := range tools {
		specs[i], byName[t.Name], names[i] = t.Tool, t, t.Name
	}
	msgs := []model.Message{{Role: model.RoleSystem, Content: p.Text}, {Role: model.RoleUser, Content: job}}
	last := ""
	budget := l.budget(stage)
	for turn := 1; turn <= budget; turn++ {
		rec.Turns = turn
		resp, err := l.client.Chat(ctx, model.Request{Messages: msgs, Tools: specs, MaxTokens: l.o.MaxTokens})
		if err != nil {
			return &StageError{Stage: stage, Turn: turn, Err: err}
		}
		rec.Usage.PromptTokens += resp.Usage.PromptTokens
		rec.Usage.CompletionTokens += resp.Usage.CompletionTokens
		calls := slices.Clone(resp.ToolCalls)
		for i := range calls {
			// The request check refuses calls without id or name; answer
			// them instead.
			if calls[i].ID == "" {
				calls[i].ID = fmt.Sprintf("call_%d_%d", turn, i)
			}
			if calls[i].Name == "" {
				calls[i].Name = "unnamed"
			}
		}
		msgs = append(msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: calls})
		if len(calls) == 0 {
			last = "the reply called no tool"
			msgs = append(msgs, model.Message{Role: model.RoleUser, Content: fmt.Sprintf(
				"Your reply called no tool. Work only through the tools (%s); the stage ends when %s accepts your result.",
				strings.Join(names, ", "), names[len(names)-1])})
			continue
		}
		for _, c := range calls {
			out, err := l.call(ctx, byName, names, c)
			if err != nil {
				return &StageError{Stage: stage, Turn: turn, Err: fmt.Errorf("tool %s: %w", c.Name, err)}
			}
			rec.Calls++
			if out.refused {
				rec.Refused++
				last = c.Name + ": " + strings.TrimPrefix(out.text, "error: ")
			}
			l.o.Log.Debug("llm tool call", llmKeyStage, stage, llmKeyTurn, turn, llmKeyTool, c.Name, llmKeyRefused, out.refused)
			msgs = append(msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: out.text})
			if out.done {
				return nil
			}
		}
	}
	if last == "" {
		return &StageError{Stage: stage, Turn: budget, Err: fmt.Errorf("%w after %d model turns: all %d tool calls were accepted, but none was %s, which ends the stage; raise the budget (--budget: a turn per call, and the plan stage proposes about one event a turn)", ErrBudget, budget, rec.Calls, names[len(names)-1])}
	}
	return &StageError{Stage: stage, Turn: budget, Err: fmt.Errorf("%w after %d model turns; the last problem: %s", ErrBudget, budget, last)}
}

// budget is the model turns stage may take.
func (l *LLM) budget(stage string) int {
	switch {
	case l.o.Budget > 0:
		return l.o.Budget
	case stage == StagePlan:
		return DefaultPlanBudget
	}
	return DefaultLLMBudget
}

// call runs one tool call; malformed arguments and unknown tools are
// refusals the model reads.
func (l *LLM) call(ctx context.Context, byName map[string]llmTool, names []string, c model.ToolCall) (outcome, error) {
	t, ok := byName[c.Name]
	if !ok {
		return refusef("there is no tool %q; the tools are %s", c.Name, strings.Join(names, ", ")), nil
	}
	if c.ArgError != "" {
		return refusef("the arguments of %s are unusable: %s; send one JSON object with the tool's parameters", c.Name, c.ArgError), nil
	}
	return t.run(ctx, c.Arguments)
}

// decodeArgs decodes a tool's arguments strictly (skill.DecodeStrict).
func decodeArgs(b []byte, v any) error { return skill.DecodeStrict(b, v) }

func mustCompact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprintf("(unencodable: %v)", err)
	}
	return string(b)
}

func mustJSON(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Sprintf("(unencodable: %v)", err)
	}
	return string(b)
}

// ---- The persona stage.

// personaSchema is submit_persona's parameters: the bible.
var personaSchema = json.RawMessage(`{
  "type": "object",
  "additionalProperties": false,
  "required": ["id", "name", "occupation", "life_domain", "profile", "demographics", "contacts", "tools", "sites", "services", "roadmap", "arcs", "accounts"],
  "properties": {
    "version": {"type": "integer", "description": "the bible format, 1"},
    "id": {"type": "string", "description": "the name in lower case with dashes"},
    "name": {"type": "string"},
    "occupation": {"type": "string"},
    "life_domain": {"type": "string"},
    "profile": {"type": "string"},
    "demographics": {"type": "object", "additionalProperties": false, "properties": {
      "age": {"type": "integer"}, "city": {"type": "string"}, "country": {"type": "string"}, "household": {"type": "string"}}},
    "contacts": {"type": "array", "minItems": 3, "items": {"type": "object", "additionalProperties": false, "required": ["name", "role"], "properties": {
      "name": {"type": "string"}, "role": {"type": "string"}, "email": {"type": "string"}, "thread": {"type": "string"}}}},
    "tools": {"type": "array", "items": {"type": "string"}},
    "sites": {"type": "array", "items": {"type": "string"}},
    "services": {"type": "array", "items": {"type": "string"}},
    "roadmap": {"type": "array", "minItems": 4, "maxItems": 8, "items": {"type": "object", "additionalProperties": false, "required": ["service", "arc", "from_day"], "properties": {
      "service": {"type": "string"}, "arc": {"type": "integer"}, "from_day": {"type": "integer"}}}},
    "arcs": {"type": "array", "minItems": 2, "maxItems": 5, "items": {"type": "object", "additionalProperties": false, "required": ["template", "anchor", "title", "summary", "from", "to"], "properties": {
      "template": {"type": "string"}, "anchor": {"type": "string"}, "title": {"type": "string"}, "summary": {"type": "string"},
      "from": {"type": "integer"}, "to": {"type": "integer"}, "image_decisive": {"type": "boolean"},
      "sites": {"type": "array", "items": {"type": "string"}}, "services": {"type": "array", "items": {"type": "string"}},
      "skills": {"type": "array", "items": {"type": "string"}}}}},
    "accounts": {"type": "array", "items": {"type": "object", "additionalProperties": false, "required": ["site", "username", "password"], "properties": {
      "site": {"type": "string"}, "username": {"type": "string"}, "password": {"type": "string"}}}},
    "interests": {"type": "object", "additionalProperties": {"type": "string"}},
    "days": {"type": "integer"},
    "signature": {"type": "string", "description": "computed by the pipeline; may be left out"}
  }
}`)

// Persona implements Backend: the model drafts the bible and submits it
// with submit_persona, which decodes it strictly, validates it with the
// paper's requirements and checks it against the grounding and the names
// to avoid.
func (l *LLM) Persona(ctx context.Context, g *persona.Grounding, r persona.Request) (*persona.Persona, error) {
	if g == nil {
		return nil, &StageError{Stage: StagePersona, Err: errors.New("no grounding: the persona stage needs the catalog's entities and the registries")}
	}
	var accepted *persona.Persona
	submit := llmTool{
		Tool: model.Tool{Name: "submit_persona", Description: "Submit the whole persona bible as one JSON object. It is checked; problems come back as the result, and the bible is then submitted again in full.", Parameters: personaSchema},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			p := &persona.Persona{}
			if err := decodeArgs(args, p); err != nil {
				return refusef("the bible does not decode: %v", err), nil
			}
			if p.Version == 0 {
				p.Version = persona.Version
			}
			if p.Days == 0 {
				p.Days = r.Days
			}
			for i := range p.Contacts {
				c := &p.Contacts[i]
				if c.Email == "" && c.Name != "" {
					c.Email = persona.Email(c.Name)
				}
				if c.Thread == "" && c.Name != "" {
					c.Thread = "dm-" + persona.Slug(c.Name)
				}
			}
			p.Signature = persona.Signature(p)
			var problems []string
			if err := p.Validate(true); err != nil {
				problems = append(problems, err.Error())
			}
			problems = append(problems, l.personaProblems(p, g, r)...)
			if len(problems) > 0 {
				return refusef("the bible was not accepted; fix every problem and submit the whole bible again:\n- %s", strings.Join(problems, "\n- ")), nil
			}
			accepted = p
			return outcome{text: fmt.Sprintf("accepted: persona %s (signature %s)", p.ID, p.Signature), done: true}, nil
		},
	}
	if err := l.converse(ctx, StagePersona, l.personaJob(g, r), []llmTool{submit}); err != nil {
		return nil, err
	}
	return accepted, nil
}

// personaProblems checks p against the grounding, the request and the
// skill library, one line per problem.
func (l *LLM) personaProblems(p *persona.Persona, g *persona.Grounding, r persona.Request) []string {
	var out []string
	add := func(format string, args ...any) { out = append(out, fmt.Sprintf(format, args...)) }
	if r.Name != "" && p.Name != r.Name {
		add("name is %q; this persona's name is given: %q", p.Name, r.Name)
	}
	services := append(slices.Clone(g.Services), g.Definitions...)
	seen := map[string]bool{}
	for i, s := range p.Sites {
		if !slices.Contains(g.Sites, s) {
			add("sites[%d] %q is no site of the grounding; the sites are %s", i, s, strings.Join(g.Sites, ", "))
		}
		if seen["site/"+s] {
			add("sites[%d] %q is listed twice", i, s)
		}
		seen["site/"+s] = true
		if _, ok := p.Account(s); !ok {
			add("sites[%d] %q has no account: add one to accounts", i, s)
		}
	}
	for i, s := range p.Services {
		if !slices.Contains(services, s) {
			add("services[%d] %q is no service of the grounding; the services are %s", i, s, strings.Join(services, ", "))
		}
		if seen["service/"+s] {
			add("services[%d] %q is listed twice", i, s)
		}
		seen["service/"+s] = true
	}
	for i, a := range p.Accounts {
		if !slices.Contains(p.Sites, a.Site) {
			add("accounts[%d]: site %q is not in sites", i, a.Site)
		}
	}
	if len(g.Cities) > 0 && !slices.Contains(g.Cities, p.Demographics.City) {
		add("demographics.city %q is no city of the grounding", p.Demographics.City)
	}
	lists := map[string][]string{"city": g.Cities, "cuisine": g.Cuisines, "team": g.Teams, "subject": g.Subjects, "language": g.Languages, "category": g.Categories}
	for _, k := range sortedKeysOf(p.Interests) {
		v := p.Interests[k]
		xs, ok := lists[k]
		switch {
		case !ok:
			add("interests: key %q is none of city, cuisine, team, subject, language, category", k)
		case v != "" && len(xs) > 0 && !slices.Contains(xs, v):
			add("interests.%s %q is not in the grounding's list", k, v)
		}
	}
	last := max(p.Days, 1) - 1
	for i, a := range p.Arcs {
		if a.From < 0 || a.To > last {
			add("arcs[%d]: days %d to %d leave the world's days 0 to %d", i, a.From, a.To, last)
		}
		for _, s := range a.Sites {
			if !slices.Contains(p.Sites, s) {
				add("arcs[%d]: site %q is not in sites", i, s)
			}
		}
		for _, s := range a.Services {
			if !slices.Contains(p.Services, s) {
				add("arcs[%d]: service %q is not in services", i, s)
			}
		}
		for _, s := range a.Skills {
			if _, err := l.pl.Skills.Lookup(s); err != nil {
				add("arcs[%d]: no skill %q (the skills are listed in the job)", i, s)
			}
		}
		if r.Avoid.Arcs[a.Template+"/"+a.Anchor] {
			add("arcs[%d]: the arc %s/%s is another persona's: choose another template or anchor", i, a.Template, a.Anchor)
		}
	}
	for i, rm := range p.Roadmap {
		if rm.FromDay < 0 || rm.FromDay > last {
			add("roadmap[%d]: from_day %d is outside the world's days 0 to %d", i, rm.FromDay, last)
		}
	}
	for _, n := range sortedKeysOf(persona.Reserved(p)) {
		if r.Avoid.Names[n] || r.Avoid.Names[persona.Slug(n)] {
			add("the name %q is reserved by another persona: choose another", n)
		}
	}
	if r.Avoid.Occupations[p.Occupation+"|"+p.LifeDomain] {
		add("occupation and life domain %q / %q are another persona's", p.Occupation, p.LifeDomain)
	}
	if r.Avoid.Patterns[persona.Pattern(p)] {
		add("the core pattern %s (first three sites, first three services, tools) is another persona's", persona.Pattern(p))
	}
	return out
}

func sortedKeysOf[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// personaJob is the persona stage's user message.
func (l *LLM) personaJob(g *persona.Grounding, r persona.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Write persona %d of this run (draft %d). Its world runs %d days, day 0 to day %d.\n", r.Index, r.Revision, r.Days, max(r.Days, 1)-1)
	if r.Name != "" {
		fmt.Fprintf(&b, "The persona's name is given: %s.\n", r.Name)
	}
	fmt.Fprintf(&b, "\n## Grounding (use only these)\n\n%s\n", mustJSON(map[string][]string{
		"cities": g.Cities, "cuisines": g.Cuisines, "teams": g.Teams, "subjects": g.Subjects,
		"languages": g.Languages, "categories": g.Categories, "sites": g.Sites, "services": g.Services,
		"definitions (services from the shared library)": g.Definitions,
	}))
	fmt.Fprintf(&b, "\n## Event skills arcs may draw on\n\n%s\n", strings.Join(l.pl.Skills.Names(), ", "))
	avoid := map[string][]string{
		"names, ids and usernames": sortedKeysOf(r.Avoid.Names),
		"occupation|life domain":   sortedKeysOf(r.Avoid.Occupations),
		"core patterns":            sortedKeysOf(r.Avoid.Patterns),
		"arcs (template/anchor)":   sortedKeysOf(r.Avoid.Arcs),
	}
	for k, v := range avoid {
		if len(v) == 0 {
			delete(avoid, k)
		}
	}
	if len(avoid) > 0 {
		fmt.Fprintf(&b, "\n## Avoid (other personas hold these)\n\n%s\n", mustJSON(avoid))
	}
	b.WriteString("\nSubmit the bible with submit_persona.\n")
	return b.String()
}

// ---- The plan stage.

// Plan implements Backend: the model reads the skills and the ledger and
// proposes the day's events one by one; each is emitted into a scratch
// builder over the ledger, so a bad one is refused with the skill's own
// error and a good one updates the ledger the next proposal sees.
func (l *LLM) Plan(ctx context.Context, job *PlanJob) (*Day, error) {
	st := job.State
	if st == nil {
		st = skill.NewState()
	}
	day := Day{Day: job.Day, Clock: skill.Clock(job.Day), Events: []skill.Event{}}
	// emit replays events over a clone of the ledger: Emit may fail half
	// way, so a refused event never touches the kept builder.
	emit := func(events []skill.Event) (*skill.Builder, error) {
		b := skill.NewBuilder(&job.Persona)
		b.State = st.Clone()
		b.Definitions = l.pl.Definitions.Library
		_, err := EmitDay(b, Day{Day: day.Day, Clock: day.Clock, Events: events}, l.pl.Skills)
		return b, err
	}
	cur, err := emit(nil)
	if err != nil {
		return nil, &StageError{Stage: StagePlan, Err: err}
	}
	tools := []llmTool{
		l.listSkills(),
		{
			Tool: model.Tool{Name: "read_ledger", Description: "The ledger after the days before and today's accepted events, as JSON.", Parameters: noArgs},
			run: func(_ context.Context, args json.RawMessage) (outcome, error) {
				if err := decodeArgs(args, &struct{}{}); err != nil {
					return refusef("read_ledger takes no arguments: %v", err), nil
				}
				return okJSON(cur.State), nil
			},
		},
	}
	if t, ok := l.queryCatalog(); ok {
		tools = append(tools, t)
	}
	defs := maps.Clone(job.Definitions) // the stage's, with what create_service adds
	if defs == nil {
		defs = map[string]skill.Definition{}
	}
	tools = append(tools, l.createService(job, defs), l.addSkill())
	tools = append(tools, llmTool{
		Tool: model.Tool{Name: "propose_event", Description: "Add one event: a skill and its parameters (the skill's own fields, as in its example). Refused events come back with the exact error and are not kept.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["skill","params"],"properties":{"skill":{"type":"string"},"params":{"type":"object"}}}`)},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			var a struct {
				Skill  string          `json:"skill"`
				Params json.RawMessage `json:"params"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("propose_event's arguments: %v", err), nil
			}
			if skill.IsText(a.Skill) {
				return l.proposeText(a.Skill, a.Params, job, &day)
			}
			sk, err := l.pl.Skills.Lookup(a.Skill)
			if err != nil {
				if texts, terr := l.textSkills(); terr == nil && texts[a.Skill].Name != "" {
					return refusef("%s is a text skill: propose it as %q", a.Skill, skill.TextPrefix+a.Skill), nil
				}
				return refusef("%v", err), nil
			}
			if slices.Contains(job.Avoid, sk.Name) {
				return refusef("skill %s may not be used in this revision: its event failed the check; choose another", sk.Name), nil
			}
			params := bytes.TrimSpace(a.Params)
			if len(params) == 0 || string(params) == "null" {
				params = []byte("{}")
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, params); err != nil {
				return refusef("params: %v", err), nil
			}
			next := append(slices.Clone(day.Events), skill.Event{Skill: sk.Name, Params: compact.Bytes()})
			b, err := emit(next)
			if err != nil {
				return refusef("the event is refused and not kept: %v", err), nil
			}
			ops := len(b.Delta().Ops) - len(cur.Delta().Ops)
			cur, day.Events = b, next
			return okf("accepted: event %d (%s), %d operations; today has %d events; read_ledger shows the ledger after it", len(next)-1, sk.Name, ops, len(next)), nil
		},
	}, llmTool{
		Tool: model.Tool{Name: "finish_day", Description: fmt.Sprintf("End the day's plan (at least %d events).", minPlanEvents), Parameters: noArgs},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			if err := decodeArgs(args, &struct{}{}); err != nil {
				return refusef("finish_day takes no arguments: %v", err), nil
			}
			if len(day.Events) < minPlanEvents {
				return refusef("the day has %d events; a day needs at least %d: propose more with propose_event", len(day.Events), minPlanEvents), nil
			}
			return outcome{text: fmt.Sprintf("accepted: day %d with %d events", day.Day, len(day.Events)), done: true}, nil
		},
	})
	if err := l.converse(ctx, StagePlan, l.planJob(job, cur.State, defs), tools); err != nil {
		return nil, err
	}
	return &day, nil
}

// definitions returns the planner's definitions, read under the lock
// create_service writes them under.
func (l *LLM) definitions() Definitions {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.pl.Definitions
}

// createService is the plan stage's application creator: the model
// writes a service definition (docs/services/definition.md), which is
// parsed, compiled and published in the shared library; defs (the
// stage's) and the planner's definitions get it, so that define_service
// may serve it.
func (l *LLM) createService(job *PlanJob, defs map[string]skill.Definition) llmTool {
	return llmTool{
		Tool: model.Tool{Name: "create_service", Description: "Write a new application as a service definition (YAML, docs/services/definition.md: tables, tools, ops). It is parsed, compiled and published in the shared library, immutable from then on; the result gives its sha256 for define_service. Problems come back.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["yaml"],"properties":{"yaml":{"type":"string","description":"the whole definition file"}}}`)},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			var a struct {
				YAML string `json:"yaml"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("create_service's arguments: %v", err), nil
			}
			lib := l.pl.Definitions.Library
			if lib == nil || lib.Dir == "" {
				return refusef("this run has no shared definitions library: create_service is unavailable; use the skills"), nil
			}
			src := []byte(a.YAML)
			def, err := engine.Parse(src)
			if err != nil {
				return refusef("the definition does not parse: %v", err), nil
			}
			if _, err := engine.Compile(def, engine.Hooks{}); err != nil {
				return refusef("the definition %s does not compile: %v", def.Name, err), nil
			}
			if _, err := site.Lookup(def.Name); err == nil {
				return refusef("%s is the name of a website: a world's databases need distinct names; rename the definition", def.Name), nil
			}
			if _, err := service.Lookup(def.Name); err == nil {
				return refusef("%s is the name of a built-in service; rename the definition", def.Name), nil
			}
			// Publish rewrites the library's index: one at a time.
			l.mu.Lock()
			defer l.mu.Unlock()
			e, err := Publish(lib.Dir, src, fmt.Sprintf("llm:%s/day %d", job.Persona.ID, job.Day))
			switch {
			case errors.Is(err, ErrConflict):
				return refusef("%v", err), nil
			case err != nil:
				return outcome{}, err
			}
			d := skill.Definition{Ref: world.ServiceRef{Name: e.Name, SHA256: e.SHA256}, Path: filepath.Join(lib.Dir, e.Name+".yaml")}
			defs[e.Name] = d
			byName := maps.Clone(l.pl.Definitions.ByName)
			if byName == nil {
				byName = map[string]skill.Definition{}
			}
			byName[e.Name] = d
			l.pl.Definitions.ByName = byName
			return okf("published: %s version %s by %s, sha256 %s; serve it with propose_event define_service {\"name\": %q, \"sha256\": %q}, then record in it with app_record",
				e.Name, e.Version, e.By, e.SHA256, e.Name, e.SHA256.String()), nil
		},
	}
}

// proposeText keeps an event of a text skill with its parameters: the
// skill must be the run's, its parameters one JSON object; nothing is
// emitted (the implementer realises it).
func (l *LLM) proposeText(name string, params json.RawMessage, job *PlanJob, day *Day) (outcome, error) {
	texts, err := l.textSkills()
	if err != nil {
		return outcome{}, err
	}
	if _, ok := texts[strings.TrimPrefix(name, skill.TextPrefix)]; !ok {
		var names []string
		for _, n := range sortedKeysOf(texts) {
			names = append(names, skill.TextPrefix+n)
		}
		return refusef("no text skill %q; the text skills are %s (add one with add_skill)", name, orNone(names)), nil
	}
	if slices.Contains(job.Avoid, name) {
		return refusef("skill %s may not be used in this revision: its event failed the check; choose another", name), nil
	}
	var compact bytes.Buffer
	if err := json.Compact(&compact, bytes.TrimSpace(params)); err != nil || compact.Len() == 0 || compact.Bytes()[0] != '{' {
		return refusef("params of %s must be one JSON object like its example", name), nil
	}
	day.Events = append(day.Events, skill.Event{Skill: name, Params: compact.Bytes()})
	return okf("accepted: event %d (%s), kept for the implementer to realise; today has %d events", len(day.Events)-1, name, len(day.Events)), nil
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// textNote marks a text skill in list_skills.
const textNote = "text skill: realise its events with propose_ops"

// skillEntry is one skill as list_skills shows it.
type skillEntry struct {
	skill.Doc
	Note string `json:"note,omitempty"`
}

// textSkillsDir is where the run's text skills live, "" without a
// definitions library.
func (l *LLM) textSkillsDir() string {
	if lib := l.pl.Definitions.Library; lib != nil && lib.Dir != "" {
		return TextSkillsDir(lib.Dir)
	}
	return ""
}

// textSkills are the run's text skills, by name; none without a library.
func (l *LLM) textSkills() (map[string]skill.Doc, error) {
	out := map[string]skill.Doc{}
	dir := l.textSkillsDir()
	if dir == "" {
		return out, nil
	}
	docs, err := LoadTextSkills(dir)
	if err != nil {
		return nil, err
	}
	for _, d := range docs {
		out[d.Name] = d
	}
	return out, nil
}

// listSkills is the skill library's tool, with the run's text skills
// (named "text:NAME").
func (l *LLM) listSkills() llmTool {
	return llmTool{
		Tool: model.Tool{Name: "list_skills", Description: "The skill library: name, summary, interfaces, changes, constraints, continued skills and an example of the parameters; text skills (\"text:NAME\", added with add_skill) are marked. names narrows it.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"names":{"type":"array","items":{"type":"string"}}}}`)},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			var a struct {
				Names []string `json:"names"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("list_skills' arguments: %v", err), nil
			}
			texts, err := l.textSkills()
			if err != nil {
				return outcome{}, err
			}
			text := func(d skill.Doc) skillEntry {
				d.Name = skill.TextPrefix + d.Name
				return skillEntry{Doc: d, Note: textNote}
			}
			var out []skillEntry
			if len(a.Names) == 0 {
				for _, d := range l.pl.Skills.Docs() {
					out = append(out, skillEntry{Doc: d})
				}
				for _, n := range sortedKeysOf(texts) {
					out = append(out, text(texts[n]))
				}
				return okJSON(out), nil
			}
			for _, n := range a.Names {
				if d, ok := texts[strings.TrimPrefix(n, skill.TextPrefix)]; ok {
					out = append(out, text(d))
					continue
				}
				sk, err := l.pl.Skills.Lookup(n)
				if err != nil {
					return refusef("%v", err), nil
				}
				out = append(out, skillEntry{Doc: sk.Doc})
			}
			return okJSON(out), nil
		},
	}
}

// addSkill is the plan stage's tool that writes a text skill.
func (l *LLM) addSkill() llmTool {
	return llmTool{
		Tool: model.Tool{Name: "add_skill", Description: "Add a skill as documented text when no skill of the library fits the event: it is saved in the run's skill library, immutable from then on, and its events (skill \"text:NAME\") are realised by the implementer with propose_ops.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["name","summary","interfaces","changes","constraints","example"],"properties":{
  "name":{"type":"string","description":"lower_snake, not a skill of the library"},
  "summary":{"type":"string"},
  "interfaces":{"type":"array","items":{"type":"string","enum":["gui","mcp","cli"]}},
  "changes":{"type":"array","items":{"type":"string"},"description":"what changes where, in words"},
  "constraints":{"type":"array","items":{"type":"string"},"description":"the consistency rules an event keeps"},
  "example":{"type":"object","description":"the parameters of one event"}}}`)},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			var d skill.Doc
			var a struct {
				Name        string          `json:"name"`
				Summary     string          `json:"summary"`
				Interfaces  []string        `json:"interfaces"`
				Changes     []string        `json:"changes"`
				Constraints []string        `json:"constraints"`
				Example     json.RawMessage `json:"example"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("add_skill's arguments: %v", err), nil
			}
			d = skill.Doc{Name: a.Name, Summary: a.Summary, Interfaces: a.Interfaces, Changes: a.Changes, Constraints: a.Constraints, Example: a.Example}
			dir := l.textSkillsDir()
			if dir == "" {
				return refusef("this run has no shared library: add_skill is unavailable; use the library's skills"), nil
			}
			if problems := CheckTextSkill(d, l.pl.Skills); len(problems) > 0 {
				return refusef("the skill is not added:\n- %s", strings.Join(problems, "\n- ")), nil
			}
			l.mu.Lock() // the check for a skill saved under the name, then the write
			err := SaveTextSkill(dir, d)
			l.mu.Unlock()
			switch {
			case errors.Is(err, ErrConflict):
				return refusef("%v", err), nil
			case err != nil:
				return outcome{}, err
			}
			return okf("added: text skill %s; propose its events with propose_event {\"skill\": %q, \"params\": {...}} (params like its example); the implementer realises them by hand", d.Name, skill.TextPrefix+d.Name), nil
		},
	}
}

// planJob is the plan stage's user message.
func (l *LLM) planJob(job *PlanJob, st *skill.State, defs map[string]skill.Definition) string {
	p := &job.Persona
	var b strings.Builder
	date := skill.Day0.AddDate(0, 0, job.Day)
	fmt.Fprintf(&b, "Plan day %d (%s, %s) of %s's world; it runs %d days. The day ends at %s; every time of the day's events is on %s.\n",
		job.Day, date.Format(time.DateOnly), date.Weekday(), p.Name, p.Days, skill.Clock(job.Day), date.Format(time.DateOnly))
	fmt.Fprintf(&b, "\n## Persona\n\n%s\n", mustJSON(p))
	var arcs []string
	for i, a := range p.Arcs {
		if a.From <= job.Day && job.Day <= a.To {
			arcs = append(arcs, fmt.Sprintf("- arc %d, %q (days %d-%d): skills %s", i, a.Title, a.From, a.To, strings.Join(a.Skills, ", ")))
		}
	}
	if len(arcs) > 0 {
		fmt.Fprintf(&b, "\n## Arcs running today\n\n%s\n", strings.Join(arcs, "\n"))
	}
	var due []string
	for _, r := range p.Roadmap {
		if r.FromDay <= job.Day && !st.DBs[r.Service] && st.Services[r.Service].Name == "" {
			due = append(due, fmt.Sprintf("- %s (from day %d, arc %d)", r.Service, r.FromDay, r.Arc))
		}
	}
	if len(due) > 0 {
		fmt.Fprintf(&b, "\n## Roadmap services due and not set up yet\n\n%s\n", strings.Join(due, "\n"))
	}
	var unset []string
	for _, s := range p.Sites {
		if !st.DBs[s] || !st.Accounts[s] {
			unset = append(unset, s)
		}
	}
	if len(unset) > 0 {
		fmt.Fprintf(&b, "\n## Sites without a database or an account yet\n\n%s\n", strings.Join(unset, ", "))
	}
	if len(defs) > 0 {
		fmt.Fprintf(&b, "\n## Service definitions define_service may serve\n\n%s\n", strings.Join(sortedKeysOf(defs), ", "))
	}
	if len(job.Feedback) > 0 || len(job.Avoid) > 0 {
		fmt.Fprintf(&b, "\n## Revision %d: the last plan of this day failed its check\n\n", job.Attempt)
		if len(job.Feedback) > 0 {
			fmt.Fprintf(&b, "Its problems:\n- %s\n", strings.Join(job.Feedback, "\n- "))
		}
		if len(job.Avoid) > 0 {
			fmt.Fprintf(&b, "Do not use these skills: %s\n", strings.Join(job.Avoid, ", "))
		}
	}
	fmt.Fprintf(&b, "\nThe ledger (read_ledger) holds %d databases, %d accounts, %d threads, %d mails, %d orders and %d files so far. Propose the events with propose_event, then call finish_day.\n",
		len(st.DBs), len(st.Accounts), len(st.Threads), len(st.Mails), len(st.Orders), len(st.Files))
	return b.String()
}

// ---- The implement stage.

// Implement implements Backend: the model reads yesterday's live world,
// emits the plan's events with emit_plan, may append operations with
// propose_ops, and submits; the delta is linted and replayed before it is
// accepted.
func (l *LLM) Implement(ctx context.Context, job *ImplJob) (*ImplResult, error) {
	var (
		base     *ImplResult // after emit_plan
		extra    []delta.Op  // the model's accepted operations
		accepted *ImplResult
	)
	var dbs []string
	if job.ParentDir != "" {
		layout, err := state.ReadLayout(job.ParentDir)
		if err != nil {
			return nil, &StageError{Stage: StageImplement, Err: fmt.Errorf("the parent world: %w", err)}
		}
		dbs = layout.DBs
	}
	// todo are the plan's events of text skills, which emit nothing.
	var todo []int
	for i, ev := range job.Plan.Events {
		if skill.IsText(ev.Skill) {
			todo = append(todo, i)
		}
	}
	day := func(ops []delta.Op) *delta.Delta {
		d := *base.Delta
		d.Ops = append(slices.Clone(base.Delta.Ops), ops...)
		return &d
	}
	lintOpts := func() *delta.Options { return &delta.Options{Generators: l.gens, Parent: job.Parent} }
	tools := worldTools(job.ParentDir, dbs, "yesterday's world", "this is day 0: there is no world yet (it starts empty), so there is nothing to query", "this is day 0: the home directory is empty")
	if t, ok := l.queryCatalog(); ok {
		tools = append(tools, t)
	}
	tools = append(tools,
		llmTool{
			Tool: model.Tool{Name: "emit_plan", Description: "Emit the plan's events through the skill library: the day's base delta, which propose_ops may extend. Call it first.", Parameters: noArgs},
			run: func(ctx context.Context, args json.RawMessage) (outcome, error) {
				if err := decodeArgs(args, &struct{}{}); err != nil {
					return refusef("emit_plan takes no arguments: %v", err), nil
				}
				if base == nil {
					res, err := Implement(l.pl.Skills, l.definitions(), job)
					if err != nil {
						return outcome{}, fmt.Errorf("the plan does not emit: %w", err)
					}
					base = res
				}
				var b strings.Builder
				fmt.Fprintf(&b, "the base delta of day %d has %d operations:\n%s", base.Delta.Day, len(base.Delta.Ops), opList(base.Delta.Ops, 0))
				if len(todo) > 0 {
					texts, err := l.textSkills()
					if err != nil {
						return outcome{}, err
					}
					fmt.Fprintf(&b, "\nto do: %d events of text skills emit nothing; realise each with propose_ops:\n", len(todo))
					for _, i := range todo {
						ev := job.Plan.Events[i]
						fmt.Fprintf(&b, "- event %d %s %s\n", i, ev.Skill, ev.Params)
						if d, ok := texts[strings.TrimPrefix(ev.Skill, skill.TextPrefix)]; ok {
							fmt.Fprintf(&b, "  the skill: %s\n", mustCompact(d))
						}
					}
				}
				if len(extra) > 0 {
					fmt.Fprintf(&b, "\nyour %d accepted operations follow it:\n%s", len(extra), opList(extra, len(base.Delta.Ops)))
				}
				err := delta.Lint(ctx, job.ParentDir, base.Delta, lintOpts())
				var le *delta.LintError
				switch {
				case errors.As(err, &le):
					fmt.Fprintf(&b, "\nwarning: the plan's own operations do not lint, so submit will fail: %v", le)
				case err != nil:
					return outcome{}, err
				}
				return outcome{text: b.String()}, nil
			},
		},
		llmTool{
			Tool: model.Tool{Name: "propose_ops", Description: "Append operations (docs/delta.md) after the day's other operations. They are linted with the day against yesterday's world; refused ones are not kept.",
				Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["ops"],"properties":{"ops":{"type":"array","items":{"type":"object"}}}}`)},
			run: func(ctx context.Context, args json.RawMessage) (outcome, error) {
				var a struct {
					Ops []json.RawMessage `json:"ops"`
				}
				if err := decodeArgs(args, &a); err != nil {
					return refusef("propose_ops' arguments: %v", err), nil
				}
				if base == nil {
					return refusef("call emit_plan first: the plan's operations come before yours"), nil
				}
				if len(a.Ops) == 0 {
					return refusef("ops is empty"), nil
				}
				ops, err := parseOps(base.Delta, a.Ops)
				if err != nil {
					return refusef("the operations do not decode (ops[i] counts your proposal from 0): %v", err), nil
				}
				first := len(base.Delta.Ops) + len(extra)
				err = delta.Lint(ctx, job.ParentDir, day(append(slices.Clone(extra), ops...)), lintOpts())
				var le *delta.LintError
				switch {
				case errors.As(err, &le):
					return refusef("the operations are refused and not kept; yours are ops[%d] to ops[%d] of the day: %v", first, first+len(ops)-1, le), nil
				case err != nil:
					return outcome{}, err
				}
				extra = append(extra, ops...)
				return okf("accepted: ops[%d] to ops[%d]; the day has %d operations", first, first+len(ops)-1, len(base.Delta.Ops)+len(extra)), nil
			},
		},
		llmTool{
			Tool: model.Tool{Name: "reset_ops", Description: "Drop every operation propose_ops accepted (the plan's stay).", Parameters: noArgs},
			run: func(_ context.Context, args json.RawMessage) (outcome, error) {
				if err := decodeArgs(args, &struct{}{}); err != nil {
					return refusef("reset_ops takes no arguments: %v", err), nil
				}
				n := len(extra)
				extra = nil
				return okf("dropped %d operations", n), nil
			},
		},
		llmTool{
			Tool: model.Tool{Name: "submit", Description: "Hand in the day's delta: it is linted and replayed twice on fresh copies of yesterday's world; problems come back.", Parameters: noArgs},
			run: func(ctx context.Context, args json.RawMessage) (outcome, error) {
				if err := decodeArgs(args, &struct{}{}); err != nil {
					return refusef("submit takes no arguments: %v", err), nil
				}
				if base == nil {
					return refusef("call emit_plan first: the day's delta must hold the plan's events"), nil
				}
				if len(todo) > 0 && len(extra) == 0 {
					return refusef("the plan has %d events of text skills (emit_plan lists them) and you proposed no operation: realise them with propose_ops", len(todo)), nil
				}
				d := day(extra)
				problems, err := l.checkDelta(ctx, job, d)
				if err != nil {
					return outcome{}, err
				}
				if len(problems) > 0 {
					return refusef("the delta is not accepted; fix it with reset_ops and propose_ops, then submit again:\n- %s", strings.Join(problems, "\n- ")), nil
				}
				accepted = &ImplResult{Delta: d, State: base.State}
				return outcome{text: fmt.Sprintf("accepted: day %d, %d operations (%d of them yours)", d.Day, len(d.Ops), len(extra)), done: true}, nil
			},
		})
	if err := l.converse(ctx, StageImplement, l.implementJob(job, dbs), tools); err != nil {
		return nil, err
	}
	return accepted, nil
}

// worldTools are the read-only views of the world in root: query_world
// over its databases dbs, list_files and read_file over its home. what
// names the world in the tools' descriptions ("yesterday's world"); when
// root is "" (day 0) the tools answer with noQuery and noHome.
func worldTools(root string, dbs []string, what, noQuery, noHome string) []llmTool {
	return []llmTool{
		{
			Tool: model.Tool{Name: "query_world", Description: fmt.Sprintf("One read-only SELECT on a database of %s (db/NAME.sqlite); at most %d rows.", what, MaxQueryRows),
				Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["db","sql"],"properties":{"db":{"type":"string","description":"the database name, e.g. mail"},"sql":{"type":"string"}}}`)},
			run: func(ctx context.Context, args json.RawMessage) (outcome, error) {
				var a struct {
					DB  string `json:"db"`
					SQL string `json:"sql"`
				}
				if err := decodeArgs(args, &a); err != nil {
					return refusef("query_world's arguments: %v", err), nil
				}
				if root == "" {
					return refusef("%s", noQuery), nil
				}
				if err := world.ValidDBName(a.DB); err != nil || !slices.Contains(dbs, a.DB) {
					return refusef("no database %q in %s; the databases are %s", a.DB, what, strings.Join(dbs, ", ")), nil
				}
				return queryReadOnly(ctx, world.DBPath(root, a.DB), a.SQL)
			},
		},
		{
			Tool: model.Tool{Name: "list_files", Description: fmt.Sprintf("The files of %s's home directory with their sizes; prefix narrows them.", what),
				Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"properties":{"prefix":{"type":"string"}}}`)},
			run: func(_ context.Context, args json.RawMessage) (outcome, error) {
				var a struct {
					Prefix string `json:"prefix"`
				}
				if err := decodeArgs(args, &a); err != nil {
					return refusef("list_files' arguments: %v", err), nil
				}
				if root == "" {
					return okf("%s", noHome), nil
				}
				return listHome(root, a.Prefix)
			},
		},
		{
			Tool: model.Tool{Name: "read_file", Description: fmt.Sprintf("A file of %s's home directory (path relative to home); at most %d KiB are shown.", what, MaxReadBytes>>10),
				Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["path"],"properties":{"path":{"type":"string"}}}`)},
			run: func(_ context.Context, args json.RawMessage) (outcome, error) {
				var a struct {
					Path string `json:"path"`
				}
				if err := decodeArgs(args, &a); err != nil {
					return refusef("read_file's arguments: %v", err), nil
				}
				if root == "" {
					return refusef("%s", noHome), nil
				}
				return readHome(root, a.Path)
			},
		},
	}
}

// parseOps decodes operations with the delta parser's strict rules.
func parseOps(d *delta.Delta, raw []json.RawMessage) ([]delta.Op, error) {
	doc, err := json.Marshal(struct {
		Version int               `json:"version"`
		Persona string            `json:"persona"`
		Day     int               `json:"day"`
		Clock   string            `json:"clock"`
		Ops     []json.RawMessage `json:"ops"`
	}{d.Version, d.Persona, d.Day, d.Clock, raw})
	if err != nil {
		return nil, err
	}
	pd, err := delta.ParseBytes(doc)
	if err != nil {
		return nil, err
	}
	return pd.Ops, nil
}

// opList is one line per operation, numbered from first.
func opList(ops []delta.Op, first int) string {
	var b strings.Builder
	for i, o := range ops {
		fmt.Fprintf(&b, "ops[%d] %s", first+i, o.Op)
		switch {
		case o.DB != "" && o.Table != "":
			key, _ := json.Marshal(o.Key)
			fmt.Fprintf(&b, " %s.%s %s", o.DB, o.Table, key)
		case o.DB != "":
			fmt.Fprintf(&b, " %s (%d statements)", o.DB, len(o.SQL))
		case o.Path != "":
			fmt.Fprintf(&b, " %s", o.Path)
		case o.From != "":
			fmt.Fprintf(&b, " %s -> %s", o.From, o.To)
		case o.Site != "":
			fmt.Fprintf(&b, " %s/%s", o.Site, o.Username)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// freshError marks a failure to copy the parent for the replay: the
// harness's, not the delta's.
type freshError struct{ err error }

func (e *freshError) Error() string { return e.err.Error() }
func (e *freshError) Unwrap() error { return e.err }

// checkDelta lints d against the parent, replays it twice on fresh
// copies and checks what it declares to produce. Problems are the
// model's to fix; the error is the harness's.
func (l *LLM) checkDelta(ctx context.Context, job *ImplJob, d *delta.Delta) ([]string, error) {
	opts := &delta.Options{Generators: l.gens, Parent: job.Parent}
	err := delta.Lint(ctx, job.ParentDir, d, opts)
	var le *delta.LintError
	switch {
	case errors.As(err, &le):
		var out []string
		for _, is := range le.Issues {
			out = append(out, "lint: "+is.String())
		}
		return out, nil
	case err != nil:
		return nil, err
	}
	scratch, err := os.MkdirTemp(l.o.ScratchDir, "wildawm-llm-replay-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	fresh := func(ctx context.Context, dst string) error {
		if job.ParentDir == "" {
			return nil
		}
		if err := state.Copy(ctx, job.ParentDir, dst); err != nil {
			return &freshError{err}
		}
		return nil
	}
	res, err := delta.Replay(ctx, fresh, d, scratch, opts)
	var fe *freshError
	switch {
	case errors.As(err, &fe), ctx.Err() != nil:
		return nil, err
	case err != nil:
		return []string{err.Error()}, nil
	case !res.Equal:
		return []string{fmt.Sprintf("replay: the two applies differ (%s): the delta is not deterministic", res.First)}, nil
	}
	// The replay leaves its applies in scratch/replay-N.
	result := filepath.Join(scratch, "replay-0")
	if _, err := os.Stat(result); err != nil {
		return nil, nil
	}
	issues, err := delta.CheckProduces(ctx, job.ParentDir, result, &d.Produces)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, is := range issues {
		out = append(out, "produces: "+is.String())
	}
	return out, nil
}

// implementJob is the implement stage's user message.
func (l *LLM) implementJob(job *ImplJob, dbs []string) string {
	var b strings.Builder
	date := skill.Day0.AddDate(0, 0, job.Plan.Day)
	fmt.Fprintf(&b, "Implement day %d (%s) of %s's world; the day ends at %s.\n", job.Plan.Day, date.Format(time.DateOnly), job.Persona.Name, job.Plan.Clock)
	if job.ParentDir == "" {
		b.WriteString("This is day 0: the world starts empty, so there is nothing to read yet.\n")
	} else {
		fmt.Fprintf(&b, "Yesterday's world (day %d) has the databases %s and a home directory (list_files).\n", job.Plan.Day-1, strings.Join(dbs, ", "))
	}
	fmt.Fprintf(&b, "\n## The day's plan\n\n%s\n", mustJSON(job.Plan.Events))
	fmt.Fprintf(&b, "\n## Persona\n\n%s\n", mustJSON(job.Persona))
	b.WriteString("\nCall emit_plan, extend the delta with propose_ops where the day calls for it, then submit.\n")
	return b.String()
}

// ---- The review stage.

// ReviewPrefix starts each problem of the llm reviewer.
const ReviewPrefix = "llm reviewer: "

// Reviewer returns the llm backend's reviewer for layer 5 of the check
// (validate.Checker.Reviewer): a stage that reads the materialised day
// and the day's plan and hands in a verdict.
func (l *LLM) Reviewer() validate.Reviewer { return llmReviewer{l} }

type llmReviewer struct{ l *LLM }

// Review implements validate.Reviewer. The verdict's problems come back
// prefixed with ReviewPrefix; a stage that ends without a verdict (the
// budget, a failed chat) is an error, not a verdict.
func (r llmReviewer) Review(ctx context.Context, in validate.Input, dir string) ([]string, error) {
	l := r.l
	layout, err := state.ReadLayout(dir)
	if err != nil {
		return nil, &StageError{Stage: StageReview, Err: fmt.Errorf("the day's world: %w", err)}
	}
	var (
		verdict *struct {
			OK       bool     `json:"ok"`
			Problems []string `json:"problems"`
		}
		ops []delta.Op
	)
	if in.Delta != nil {
		ops = in.Delta.Ops
	}
	tools := []llmTool{{
		Tool: model.Tool{Name: "read_plan", Description: "The day's plan: its events (skill and parameters, indexed from 0), the persona, and the day's operations, one line each.", Parameters: noArgs},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			if err := decodeArgs(args, &struct{}{}); err != nil {
				return refusef("read_plan takes no arguments: %v", err), nil
			}
			return okf("## Events\n\n%s\n\n## Persona\n\n%s\n\n## Operations\n\n%s", mustJSON(in.Events), mustJSON(in.Persona), opList(ops, 0)), nil
		},
	}}
	tools = append(tools, worldTools(dir, layout.DBs, "the day's world", "the day's world has no databases", "the day's home directory is empty")...)
	tools = append(tools, llmTool{
		Tool: model.Tool{Name: "verdict", Description: "Hand in the verdict, which ends the review: ok true with no problems accepts the day; ok false with one sentence per problem rejects it.",
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["ok","problems"],"properties":{"ok":{"type":"boolean"},"problems":{"type":"array","items":{"type":"string"}}}}`)},
		run: func(_ context.Context, args json.RawMessage) (outcome, error) {
			var a struct {
				OK       *bool    `json:"ok"`
				Problems []string `json:"problems"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("verdict's arguments: %v", err), nil
			}
			if a.OK == nil {
				return refusef("verdict needs ok (true or false)"), nil
			}
			var problems []string
			for i, p := range a.Problems {
				p = strings.TrimSpace(p)
				if p == "" {
					return refusef("problems[%d] is empty: write one sentence per problem", i), nil
				}
				problems = append(problems, p)
			}
			switch {
			case *a.OK && len(problems) > 0:
				return refusef("ok is true but %d problems are given: set ok false, or drop the problems", len(problems)), nil
			case !*a.OK && len(problems) == 0:
				return refusef("ok is false but no problem is given: name each problem, or set ok true"), nil
			}
			verdict = &struct {
				OK       bool     `json:"ok"`
				Problems []string `json:"problems"`
			}{*a.OK, problems}
			if *a.OK {
				return outcome{text: "accepted: the day passes review", done: true}, nil
			}
			return outcome{text: fmt.Sprintf("accepted: the day fails review with %d problems", len(problems)), done: true}, nil
		},
	})
	if err := l.converse(ctx, StageReview, l.reviewJob(in, layout.DBs), tools); err != nil {
		return nil, err
	}
	var out []string
	for _, p := range verdict.Problems {
		out = append(out, ReviewPrefix+p)
	}
	return out, nil
}

// reviewJob is the review stage's user message.
func (l *LLM) reviewJob(in validate.Input, dbs []string) string {
	var b strings.Builder
	date := skill.Day0.AddDate(0, 0, in.Day)
	name := ""
	if in.Persona != nil {
		name = in.Persona.Name
	}
	fmt.Fprintf(&b, "Review day %d (%s) of %s's world.\n", in.Day, date.Format(time.DateOnly), name)
	fmt.Fprintf(&b, "The day's materialised world has the databases %s and a home directory (list_files).\n", strings.Join(dbs, ", "))
	fmt.Fprintf(&b, "\n## The day's plan (read_plan has the persona and the operations)\n\n%s\n", mustJSON(in.Events))
	b.WriteString("\nRead the world, then hand in your verdict with verdict.\n")
	return b.String()
}

// ---- Read-only views of a world.

// queryCatalog is the catalog's tool, when the options name a catalog.
func (l *LLM) queryCatalog() (llmTool, bool) {
	if l.o.CatalogDir == "" {
		return llmTool{}, false
	}
	path := world.DBPath(l.o.CatalogDir, "catalog")
	return llmTool{
		Tool: model.Tool{Name: "query_catalog", Description: fmt.Sprintf("One read-only SELECT on the shared catalog of real entities (products, places, recipes, courses, flights...); at most %d rows. SELECT name, sql FROM sqlite_schema lists its tables.", MaxQueryRows),
			Parameters: json.RawMessage(`{"type":"object","additionalProperties":false,"required":["sql"],"properties":{"sql":{"type":"string"}}}`)},
		run: func(ctx context.Context, args json.RawMessage) (outcome, error) {
			var a struct {
				SQL string `json:"sql"`
			}
			if err := decodeArgs(args, &a); err != nil {
				return refusef("query_catalog's arguments: %v", err), nil
			}
			return queryReadOnly(ctx, path, a.SQL)
		},
	}, true
}

// selectOnly returns q as one SELECT (or WITH ... SELECT) statement
// without its trailing semicolons, or why it is refused.
func selectOnly(q string) (string, error) {
	q = strings.TrimSpace(q)
	for strings.HasSuffix(q, ";") {
		q = strings.TrimSpace(strings.TrimSuffix(q, ";"))
	}
	start, err := skipSpace(q, 0)
	if err != nil {
		return "", err
	}
	end := start
	for end < len(q) && (q[end]|0x20 >= 'a' && q[end]|0x20 <= 'z') {
		end++
	}
	switch w := strings.ToUpper(q[start:end]); w {
	case "SELECT", "WITH":
	case "":
		return "", errors.New("the query is empty: send one SELECT statement")
	default:
		return "", fmt.Errorf("only one SELECT statement may run, not %s: the world is read-only here (change it with propose_ops)", w)
	}
	for i := start; i < len(q); i++ {
		switch c := q[i]; {
		case c == '\'' || c == '"' || c == '`' || c == '[':
			closing := c
			if c == '[' {
				closing = ']'
			}
			j := strings.IndexByte(q[i+1:], closing)
			if j < 0 {
				return "", fmt.Errorf("unterminated quote %c", c)
			}
			i += j + 1
		case c == '-' && strings.HasPrefix(q[i:], "--"), c == '/' && strings.HasPrefix(q[i:], "/*"):
			j, err := skipSpace(q, i)
			if err != nil {
				return "", err
			}
			i = j - 1
		case c == ';':
			return "", errors.New("one statement only: the query holds a ';' before its end")
		}
	}
	return q, nil
}

// skipSpace returns the index of the first byte from i on that is no
// white space and in no comment.
func skipSpace(q string, i int) (int, error) {
	for i < len(q) {
		switch {
		case q[i] == ' ' || q[i] == '\t' || q[i] == '\n' || q[i] == '\r':
			i++
		case strings.HasPrefix(q[i:], "--"):
			j := strings.IndexByte(q[i:], '\n')
			if j < 0 {
				return len(q), nil
			}
			i += j + 1
		case strings.HasPrefix(q[i:], "/*"):
			j := strings.Index(q[i+2:], "*/")
			if j < 0 {
				return 0, errors.New("unterminated comment")
			}
			i += j + 4
		default:
			return i, nil
		}
	}
	return i, nil
}

// readPragmas are the table-valued pragmas a query may read.
var readPragmas = []string{"table_info", "table_xinfo", "table_list", "index_list", "index_info", "index_xinfo", "foreign_key_list"}

// readAuthorizer allows reading and nothing else.
func readAuthorizer(action sqlite.AuthorizerActionCode, arg1, arg2, _, _ string) sqlite.AuthorizerReturnCode {
	switch action {
	case sqlite.AuthSelect, sqlite.AuthRead:
		return sqlite.AuthorizerOK
	case sqlite.AuthFunction:
		switch strings.ToLower(arg2) {
		case "load_extension", "readfile", "writefile", "edit", "fts3_tokenizer":
			return sqlite.AuthorizerDeny
		}
		return sqlite.AuthorizerOK
	case sqlite.AuthPragma:
		if slices.Contains(readPragmas, strings.ToLower(arg1)) {
			return sqlite.AuthorizerOK
		}
	}
	return sqlite.AuthorizerDeny
}

// queryResult is what a read-only query returns to the model.
type queryResult struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated,omitempty"`
}

// queryReadOnly runs one SELECT on the database at path: opened
// read-only with query_only set, under an authorizer that allows only
// reading, for at most queryTimeout, returning at most MaxQueryRows rows.
// A refused or failing query is a refusal for the model.
func queryReadOnly(ctx context.Context, path, query string) (outcome, error) {
	q, err := selectOnly(query)
	if err != nil {
		return refusef("%v", err), nil
	}
	if _, err := os.Stat(path); err != nil {
		return refusef("the database %s does not exist", filepath.Base(path)), nil
	}
	ctx, cancel := context.WithTimeout(ctx, queryTimeout)
	defer cancel()
	dsn := "file:" + (&url.URL{Path: path}).EscapedPath() + "?mode=ro&_query_only=1&_pragma=busy_timeout(5000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return outcome{}, err
	}
	defer db.Close()
	conn, err := db.Conn(ctx)
	if err != nil {
		return outcome{}, err
	}
	defer conn.Close()
	err = conn.Raw(func(dc any) error {
		r, ok := dc.(sqlite.AuthorizerRegisterer)
		if !ok {
			return errors.New("the SQLite driver has no authorizer: refusing to run a model's query")
		}
		return r.RegisterAuthorizer(readAuthorizer)
	})
	if err != nil {
		return outcome{}, err
	}
	rows, err := conn.QueryContext(ctx, q)
	if err != nil {
		return refusef("the query fails: %v", err), nil
	}
	defer rows.Close()
	res := queryResult{Rows: [][]any{}}
	if res.Columns, err = rows.Columns(); err != nil {
		return refusef("the query fails: %v", err), nil
	}
	for rows.Next() {
		if len(res.Rows) == MaxQueryRows {
			res.Truncated = true
			break
		}
		vals := make([]any, len(res.Columns))
		ptrs := make([]any, len(vals))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			return refusef("the query fails: %v", err), nil
		}
		for i, v := range vals {
			vals[i] = cell(v)
		}
		res.Rows = append(res.Rows, vals)
	}
	if err := rows.Err(); err != nil {
		return refusef("the query fails: %v", err), nil
	}
	out := okJSON(res)
	if res.Truncated {
		out.text += fmt.Sprintf("\n(cut at %d rows: aggregate, filter or add LIMIT/OFFSET)", MaxQueryRows)
	}
	return out, nil
}

// cell is a value as the model reads it: text cut at maxCellBytes, BLOBs
// that are not text as base64, times in the worlds' format.
func cell(v any) any {
	cut := func(s string) string {
		if len(s) <= maxCellBytes {
			return s
		}
		return s[:maxCellBytes] + fmt.Sprintf("...(cut; %d bytes)", len(s))
	}
	switch x := v.(type) {
	case []byte:
		if utf8.Valid(x) {
			return cut(string(x))
		}
		return map[string]string{"base64": cut(base64.StdEncoding.EncodeToString(x))}
	case string:
		return cut(x)
	case time.Time:
		return x.UTC().Format(skill.TimeFormat)
	}
	return v
}

// listHome lists the files of the world's home under prefix.
func listHome(root, prefix string) (outcome, error) {
	type entry struct {
		Path    string `json:"path"`
		Size    int64  `json:"size"`
		Symlink bool   `json:"symlink,omitempty"`
	}
	var out []entry
	more := 0
	err := state.WalkHome(filepath.Join(root, world.HomeDir), func(rel string, _ fs.DirEntry, fi fs.FileInfo) error {
		if fi.IsDir() || !strings.HasPrefix(rel, prefix) {
			return nil
		}
		if len(out) == maxListFiles {
			more++
			return nil
		}
		out = append(out, entry{Path: rel, Size: fi.Size(), Symlink: fi.Mode()&fs.ModeSymlink != 0})
		return nil
	})
	if err != nil {
		return outcome{}, err
	}
	if out == nil {
		return okf("no files under %q", prefix), nil
	}
	res := okJSON(out)
	if more > 0 {
		res.text += fmt.Sprintf("\n(%d more files: narrow with prefix)", more)
	}
	return res, nil
}

// readHome shows a file of the world's home; it never follows a symlink.
func readHome(root, rel string) (outcome, error) {
	path, err := world.HomePath(root, rel)
	if err != nil {
		return refusef("%v", err), nil
	}
	fi, err := os.Lstat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return refusef("no file %q in the home directory (list_files lists them)", rel), nil
	case err != nil:
		return outcome{}, err
	case fi.Mode()&fs.ModeSymlink != 0:
		target, _ := os.Readlink(path)
		return okf("%s is a symlink to %q (not followed)", rel, target), nil
	case fi.IsDir():
		return refusef("%s is a directory: list_files with prefix %q lists it", rel, rel+"/"), nil
	case !fi.Mode().IsRegular():
		return refusef("%s is not a regular file", rel), nil
	}
	// A symlinked directory on the way is not followed either.
	clean, _ := world.CleanHomePath(rel)
	dir := filepath.Join(root, world.HomeDir)
	parts := strings.Split(clean, "/")
	for _, part := range parts[:len(parts)-1] {
		dir = filepath.Join(dir, part)
		if di, err := os.Lstat(dir); err != nil || di.Mode()&fs.ModeSymlink != 0 {
			return refusef("%s passes through a symlink or a missing directory: not followed", rel), nil
		}
	}
	f, err := os.Open(path)
	if err != nil {
		return outcome{}, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxReadBytes+1))
	if err != nil {
		return outcome{}, err
	}
	if !textual(b) {
		return okf("%s is a binary file of %d bytes, starting %q", rel, fi.Size(), b[:min(len(b), 16)]), nil
	}
	if len(b) > MaxReadBytes {
		return okf("%s (%d bytes; the first %d shown):\n%s", rel, fi.Size(), MaxReadBytes, b[:MaxReadBytes]), nil
	}
	return okf("%s (%d bytes):\n%s", rel, fi.Size(), b), nil
}

// textual reports whether b looks like text: no PDF, no NUL in its first
// 8 KiB, valid UTF-8 there (a rune cut at the end of a cut prefix
// allowed).
func textual(b []byte) bool {
	head := b[:min(len(b), 8192)]
	if bytes.HasPrefix(b, []byte("%PDF")) || bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	if len(b) > len(head) {
		for k := 0; k < 3 && len(head) > 0 && !utf8.Valid(head); k++ {
			head = head[:len(head)-1]
		}
	}
	return utf8.Valid(head)
}
