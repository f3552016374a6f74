package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/model"
)

// Chatter is what the harness needs of a model: model.Client, or a test's
// double.
type Chatter interface {
	Chat(ctx context.Context, req model.Request) (*model.Response, error)
}

// Budgets' defaults.
const (
	DefaultMaxTurns      = 256
	DefaultWallTime      = 30 * time.Minute
	DefaultContextTokens = 102400
	DefaultMaxTokens     = 4096
)

// ErrBudget ends a rollout that ran out of turns or wall time: the agent's
// failure.
var ErrBudget = errors.New("budget exhausted")

// HarnessName is the harness's name in trajectories.
const HarnessName = "wildawm"

// Harness is the tool loop a model drives: every turn it sees the
// conversation and the tools of the three interfaces (and the file and
// vision tools), and either calls tools, whose observations come back as
// tool messages, or answers, which ends the rollout. When the context grows
// past its budget the older turns are summarised and a new segment starts
// from the task and the summary.
type Harness struct {
	Model Chatter
	// ModelName names the model in the trajectory.
	ModelName string
	// MaxTurns bounds the act turns (default 256); WallTime the rollout's
	// time (default 30 minutes).
	MaxTurns int
	WallTime time.Duration
	// ContextTokens is the context budget (default 102400, the paper's): when the last
	// turn's prompt and completion and the observations since exceed it
	// less MaxTokens, the harness compacts.
	ContextTokens int
	// MaxTokens bounds each completion (default 4096).
	MaxTokens int
	// Temperature, TopP and Seed are sent with every request when set.
	Temperature *float64
	TopP        *float64
	Seed        *int64
	// TokenIDs asks the server for token ids and logprobs (vLLM, SGLang),
	// which RL needs.
	TokenIDs bool
	// WeightVersion is the policy's version the rollout was asked to use:
	// each turn records it unless the server says its own.
	WeightVersion string
	// System replaces the default system prompt (SystemPrompt) when set.
	System string
	// TokenMode (token in, token out) makes the harness hold the token
	// sequence itself: it sends the engine prompt token ids (vLLM's
	// /v1/completions, SGLang's /generate), appends each completion's ids
	// and the chat template's tokens of each new observation, and parses
	// tool calls from the completion's text (Qwen/Hermes <tool_call>), so
	// that a compaction segment is one causal chain whatever the template
	// does. Model must be a TokenModel of an engine that can
	// (model.Engine.TokenMode); token ids and logprobs are always kept.
	TokenMode bool
}

// SystemPrompt is the harness's default system prompt; sites lists the
// instance's websites, "name URL" each.
func SystemPrompt(sites []string) string {
	var b strings.Builder
	b.WriteString(`You are operating a person's computer on their behalf to do the task they give you. You have three ways to act, and a task may need all of them:
- the web browser (browser_* tools) on the websites below: browser_read shows a page as text in which each link, button, input and image has a number [N]; the other browser tools take that number as ref;
- the person's applications through their MCP tools, named SERVICE__TOOL;
- a shell in the home directory (shell), and read_file / write_file for its files.
describe_image tells what an image shows. Work step by step, check what you did, and when the task is done reply with a short final answer and no tool call.`)
	if len(sites) > 0 {
		b.WriteString("\n\nWebsites:\n")
		for _, s := range sites {
			b.WriteString("- " + s + "\n")
		}
	}
	return b.String()
}

// compactObservation bounds each observation in the summary request.
const compactObservation = 600

// compactPrompt asks for the summary a new segment starts from.
const compactPrompt = `The conversation is about to be cut to save context. Write a summary for yourself to continue from: what the task is, what you have done and found so far (names, numbers, paths, ids exactly), what is left to do. Reply with the summary only, no tool call.`

func (h *Harness) defaults() Harness {
	c := *h
	c.MaxTurns = cmp.Or(c.MaxTurns, DefaultMaxTurns)
	c.WallTime = cmp.Or(c.WallTime, DefaultWallTime)
	c.ContextTokens = cmp.Or(c.ContextTokens, DefaultContextTokens)
	c.MaxTokens = cmp.Or(c.MaxTokens, DefaultMaxTokens)
	return c
}

// check refuses budgets that cannot work.
func (h *Harness) check() error {
	switch {
	case h.MaxTurns < 0 || h.WallTime < 0 || h.ContextTokens < 0 || h.MaxTokens < 0:
		return fmt.Errorf("harness: a negative budget (MaxTurns %d, WallTime %v, ContextTokens %d, MaxTokens %d): give positive ones, or 0 for the defaults", h.MaxTurns, h.WallTime, h.ContextTokens, h.MaxTokens)
	case h.ContextTokens <= 2*h.MaxTokens:
		return fmt.Errorf("harness: ContextTokens (%d, --context-tokens) must be more than twice MaxTokens (%d, --max-tokens): the context has to hold the task, some turns and the completion", h.ContextTokens, h.MaxTokens)
	}
	return nil
}

// loop is one rollout's conversation.
type loop struct {
	h       Harness
	env     *Env
	tools   []model.Tool
	task    []model.Message // system and task: every segment starts with them
	msgs    []model.Message
	segment int
	tokens  int // the context's size as of the last turn, plus what came since
	// parent is the caller's context, to tell its cancellation from the
	// wall-time budget's deadline.
	parent context.Context
	// tm and tok are token mode's model and state (Harness.TokenMode).
	tm  TokenModel
	tok tokens
}

// Run runs the tool loop on env until the model answers (the answer is
// returned), the budget runs out (ErrBudget), the model makes a call that
// cannot be parsed (ErrFormat) or the harness fails (ErrInfra; a model
// server's failure is one). Turns, segments and compactions go into
// env.Traj as they happen, so a failed rollout keeps what it did.
func (h *Harness) Run(ctx context.Context, env *Env, instruction, hint string) (string, error) {
	l := &loop{h: h.defaults(), env: env, parent: ctx}
	if err := l.h.check(); err != nil {
		return "", err
	}
	if l.h.TokenMode {
		tm, err := l.h.tokenMode()
		if err != nil {
			return "", err
		}
		l.tm = tm
	}
	tr := env.Traj
	tr.Harness, tr.Model = HarnessName, l.h.ModelName
	defs, err := env.Tools(ctx)
	if err != nil {
		return "", err
	}
	for _, d := range defs {
		l.tools = append(l.tools, model.Tool{Name: d.Name, Description: d.Description, Parameters: d.Parameters})
	}
	system := cmp.Or(l.h.System, SystemPrompt(env.siteList()))
	user := instruction
	if hint != "" {
		user += "\n\nHint: " + hint
	}
	l.task = []model.Message{{Role: model.RoleSystem, Content: system}, {Role: model.RoleUser, Content: user}}
	l.msgs = slices.Clone(l.task)
	tr.Segments = append(tr.Segments, Segment{Index: 0, FirstTurn: 1, Reason: "start"})
	ctx, cancel := context.WithTimeout(ctx, l.h.WallTime)
	defer cancel()

	for acts := 0; ; {
		if acts == l.h.MaxTurns {
			return "", fmt.Errorf("%w: %d turns without an answer (the turn budget, Harness.MaxTurns; --max-turns on the command line)", ErrBudget, acts)
		}
		if l.tokens+l.h.MaxTokens > l.h.ContextTokens {
			if err := l.compact(ctx); err != nil {
				return "", l.budget(ctx, err)
			}
		}
		acts++
		resp, turn, err := l.chat(ctx, "act", l.msgs, l.tools)
		if err != nil {
			return "", l.budget(ctx, err)
		}
		if len(resp.ToolCalls) == 0 {
			if resp.FinishReason == "length" {
				return "", fmt.Errorf("%w: turn %d was cut at %d tokens before it called a tool or answered", ErrFormat, turn, l.h.MaxTokens)
			}
			if what, ok := model.TextToolCall(resp.Content, l.toolNames()); ok && !l.h.TokenMode {
				return "", fmt.Errorf("%w: turn %d wrote a tool call as text (%s) instead of making it: the server parsed no tool call from the reply (vLLM: --enable-auto-tool-choice --tool-call-parser for the model, e.g. hermes; SGLang: --tool-call-parser, e.g. qwen25; llama.cpp: --jinja; docs/models.md)", ErrFormat, turn, what)
			}
			return strings.TrimSpace(resp.Content), nil
		}
		// A call that cannot be parsed ends the turn before any call of it
		// runs: the turn is the model's, whole.
		for _, c := range resp.ToolCalls {
			if c.ArgError != "" {
				return "", fmt.Errorf("%w: turn %d: tool call %s: %s", ErrFormat, turn, c.Name, c.ArgError)
			}
		}
		l.msgs = append(l.msgs, model.Message{Role: model.RoleAssistant, Content: resp.Content, ToolCalls: resp.ToolCalls})
		for _, c := range resp.ToolCalls {
			env.At(turn, c.ID)
			obs, err := env.Call(ctx, c.Name, callArgs(c))
			env.At(0, "")
			switch {
			case errors.Is(err, ErrFormat):
				return "", fmt.Errorf("turn %d: %w", turn, err)
			case errors.Is(err, ErrInfra), ctx.Err() != nil:
				return "", l.budget(ctx, cmp.Or(err, ctx.Err()))
			case err != nil:
				obs = "error: " + err.Error() + observationTail(obs)
			}
			obs = l.clip(obs)
			l.msgs = append(l.msgs, model.Message{Role: model.RoleTool, ToolCallID: c.ID, Content: obs})
			l.tokens += estimateTokens(obs)
		}
	}
}

// toolNames are the names of the tools the model is offered.
func (l *loop) toolNames() []string {
	out := make([]string, len(l.tools))
	for i, t := range l.tools {
		out[i] = t.Name
	}
	return out
}

// budget turns the wall-time deadline into ErrBudget and leaves any other
// error (the caller's cancellation among them) as it is.
func (l *loop) budget(ctx context.Context, err error) error {
	if l.parent.Err() == nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("%w: the wall time of %v is over (Harness.WallTime; --wall on the command line)", ErrBudget, l.h.WallTime)
	}
	return err
}

func callArgs(c model.ToolCall) string {
	if c.RawArguments != "" {
		return c.RawArguments
	}
	return string(c.Arguments)
}

func observationTail(obs string) string {
	if obs == "" {
		return ""
	}
	return "\n" + obs
}

// clip bounds an observation sent back to the model.
func (l *loop) clip(obs string) string {
	limit := cmp.Or(l.env.MaxObservation, DefaultMaxObservation)
	if len(obs) > limit {
		head := cutUTF8(obs, limit)
		return head + fmt.Sprintf("\n... [%d more bytes cut]", len(obs)-len(head))
	}
	return obs
}

// estimateTokens is the harness's estimate of a text's tokens (4 bytes a
// token) for what the server has not counted yet.
func estimateTokens(s string) int { return (len(s) + 3) / 4 }

// chat sends one request and records it as a turn.
func (l *loop) chat(ctx context.Context, kind string, msgs []model.Message, tools []model.Tool) (*model.Response, int, error) {
	req := model.Request{Messages: msgs, Tools: tools, MaxTokens: l.h.MaxTokens, Temperature: l.h.Temperature, TopP: l.h.TopP, Seed: l.h.Seed,
		ReturnTokenIDs: l.h.TokenIDs, Logprobs: l.h.TokenIDs}
	if kind == "compaction" {
		req.Tools, req.ToolChoice = nil, ""
	}
	var resp *model.Response
	var err error
	if l.h.TokenMode {
		resp, err = l.tokenChat(ctx, msgs, len(l.env.Traj.Turns)+1)
	} else {
		resp, err = l.h.Model.Chat(ctx, req)
	}
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, err
		}
		if errors.Is(err, ErrServerConfig) || errors.Is(err, model.ErrNoTokenMode) || errors.Is(err, errTemplatePrefix) {
			return nil, 0, err // the stage's end, not this rollout's infrastructure
		}
		return nil, 0, fmt.Errorf("%w: %w", ErrInfra, err)
	}
	tr := l.env.Traj
	t := Turn{Index: len(tr.Turns) + 1, Segment: l.segment, Kind: kind, Messages: len(msgs), Content: resp.Content, Reasoning: resp.Reasoning,
		FinishReason: resp.FinishReason, PromptTokens: resp.Usage.PromptTokens, CompletionTokens: resp.Usage.CompletionTokens,
		PromptTokenIDs: resp.PromptTokenIDs, CompletionTokenIDs: resp.CompletionTokenIDs, Logprobs: resp.Logprobs,
		WeightVersion: cmp.Or(resp.WeightVersion, l.h.WeightVersion), Model: resp.Model, Attempts: resp.Attempts,
		LatencyMS: float64(resp.Latency.Microseconds()) / 1000}
	for _, c := range resp.ToolCalls {
		t.ToolCalls = append(t.ToolCalls, TurnCall{ID: c.ID, Name: c.Name, Arguments: callArgs(c), Error: c.ArgError})
	}
	tr.Turns = append(tr.Turns, t)
	tr.Segments[len(tr.Segments)-1].LastTurn = t.Index
	used := resp.Usage.PromptTokens + resp.Usage.CompletionTokens
	if used == 0 {
		used = l.estimate(msgs) + estimateTokens(resp.Content)
	}
	l.tokens = used
	return resp, t.Index, nil
}

// estimate sizes messages the server has not counted.
func (l *loop) estimate(msgs []model.Message) int {
	n := 0
	for _, m := range msgs {
		n += estimateTokens(m.Content) + 4
		for _, c := range m.ToolCalls {
			n += estimateTokens(c.Name + callArgs(c))
		}
	}
	return n
}

// compact asks the model to summarise the conversation, closes the segment
// and starts the next from the task and the summary.
func (l *loop) compact(ctx context.Context) error {
	tr := l.env.Traj
	after := len(tr.Turns)
	tokens := l.tokens
	// The summary request holds the whole segment: its observations are
	// cut shorter, so that it fits where the next act turn would not.
	msgs := slices.Clone(l.msgs)
	for i, m := range msgs {
		if m.Role == model.RoleTool && len(m.Content) > compactObservation {
			head := cutUTF8(m.Content, compactObservation)
			msgs[i].Content = head + fmt.Sprintf("\n... [%d more bytes cut for the summary]", len(m.Content)-len(head))
		}
	}
	msgs = append(msgs, model.Message{Role: model.RoleUser, Content: compactPrompt})
	resp, turn, err := l.chat(ctx, "compaction", msgs, nil)
	if err != nil {
		return err
	}
	summary := strings.TrimSpace(resp.Content)
	if summary == "" || len(resp.ToolCalls) > 0 {
		summary = l.stepsSummary()
	}
	tr.Compactions = append(tr.Compactions, Compaction{AfterTurn: after, Turn: turn, Tokens: tokens, Budget: l.h.ContextTokens, Summary: summary})
	l.segment++
	tr.Segments = append(tr.Segments, Segment{Index: l.segment, FirstTurn: turn + 1, LastTurn: turn, Reason: "compaction", Summary: summary})
	l.msgs = append(slices.Clone(l.task), model.Message{Role: model.RoleUser,
		Content: "The earlier part of this session was compacted to save context. Your summary of it:\n\n" + summary + "\n\nContinue the task from here."})
	l.tok.restart()
	l.tokens = l.estimate(l.msgs)
	return nil
}

// stepsSummary is the summary when the model gives none: the steps so far,
// one line each.
func (l *loop) stepsSummary() string {
	var b strings.Builder
	b.WriteString("Steps taken so far (the model gave no summary):\n")
	for _, s := range l.env.Traj.Steps {
		keys := slices.Sorted(maps.Keys(s.Args))
		var parts []string
		for _, k := range keys {
			parts = append(parts, fmt.Sprintf("%s=%v", k, abbrev(fmt.Sprint(s.Args[k]), 60)))
		}
		res := "ok"
		if s.Error != "" {
			res = "error: " + abbrev(s.Error, 80)
		}
		fmt.Fprintf(&b, "- %s %s: %s\n", s.Tool, strings.Join(parts, " "), res)
	}
	return b.String()
}

func abbrev(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return cutUTF8(s, n) + "..."
}

// cutUTF8 is s's first n bytes or fewer, never half a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
