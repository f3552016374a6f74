package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wildawm/wildawm/internal/model"
)

// TokenModel is what token mode needs of a model besides Chatter:
// model.Client, whose engine is vLLM or SGLang.
type TokenModel interface {
	Generate(ctx context.Context, req model.TokenRequest) (*model.TokenResponse, error)
	Tokenize(ctx context.Context, req model.TokenizeRequest) ([]int, error)
}

// tokens is token mode's state: the sequence the model has seen and
// written in this segment, and how much of the conversation it holds.
type tokens struct {
	held []int
	// sent is how many of the conversation's messages held covers; the
	// message at sent is the model's own reply (its ids are held already)
	// when reply is set.
	sent  int
	reply bool
}

// tokenMode refuses a model that cannot serve token mode, naming the
// engine, the mode and the fix.
func (h *Harness) tokenMode() (TokenModel, error) {
	tm, ok := h.Model.(TokenModel)
	if !ok {
		return nil, fmt.Errorf("harness: token mode (Harness.TokenMode) needs a model client that generates from token ids; %T does not: give a model.Client of vLLM or SGLang (vllm+URL#MODEL, sglang+URL#MODEL), or turn token mode off", h.Model)
	}
	if s, ok := h.Model.(interface{ Spec() model.Spec }); ok {
		if err := s.Spec().Engine.TokenMode(); err != nil {
			return nil, fmt.Errorf("harness: %w", err)
		}
	}
	return tm, nil
}

// restart drops the held sequence: the next turn tokenizes its messages
// whole (the rollout's start, after a compaction).
func (t *tokens) restart() { t.held, t.sent, t.reply = nil, 0, false }

// tokenChat is one turn in token mode: the messages since the model's
// last reply are tokenized by the chat template and appended to the held
// sequence, the engine continues it, and its ids are appended too, so that
// every turn's prompt extends the last one's whatever the template does.
// The completion's tool calls are parsed from its text
// (model.ParseToolText); the reply's PromptTokenIDs is the held sequence
// the engine was given.
func (l *loop) tokenChat(ctx context.Context, msgs []model.Message, turn int) (*model.Response, error) {
	t := &l.tok
	if t.held == nil {
		ids, err := l.tm.Tokenize(ctx, model.TokenizeRequest{Messages: msgs, Tools: l.tools, Generation: true})
		if err != nil {
			return nil, err
		}
		t.held = slices.Clone(ids)
	} else {
		add := msgs[t.sent:]
		var reply *model.Message
		if t.reply && len(add) > 0 && add[0].Role == model.RoleAssistant {
			reply, add = &add[0], add[1:]
		}
		ids, err := l.newTokens(ctx, reply, add)
		if err != nil {
			return nil, err
		}
		t.held = append(t.held, ids...)
	}
	prompt := slices.Clone(t.held)
	g, err := l.tm.Generate(ctx, model.TokenRequest{PromptIDs: prompt, MaxTokens: l.h.MaxTokens,
		Temperature: l.h.Temperature, TopP: l.h.TopP, Seed: l.h.Seed})
	if err != nil {
		return nil, err
	}
	t.held = append(t.held, g.CompletionTokenIDs...)
	t.sent, t.reply = len(msgs), true
	r := model.ParseToolText(g.Text, turn)
	r.FinishReason = g.FinishReason
	if len(r.ToolCalls) > 0 && r.FinishReason == "stop" {
		r.FinishReason = "tool_calls"
	}
	r.PromptTokenIDs, r.CompletionTokenIDs, r.Logprobs = prompt, g.CompletionTokenIDs, g.Logprobs
	r.WeightVersion, r.Latency, r.Attempts = g.WeightVersion, g.Latency, g.Attempts
	r.Usage = model.Usage{PromptTokens: len(prompt), CompletionTokens: len(g.CompletionTokenIDs)}
	return &r, nil
}

// errTemplatePrefix: the chat template renders the conversation
// differently when messages follow it, so new messages cannot be
// tokenized apart.
var errTemplatePrefix = errors.New("token mode: the chat template renders the conversation differently when messages follow it")

// newTokens is the template's tokens of msgs as they follow the task and
// the model's last reply: those rendered with msgs and the generation
// prompt, less their rendering without (a template may add a default
// system prompt to a conversation without one, or refuse a tool message
// that answers no call, so msgs are never rendered alone).
func (l *loop) newTokens(ctx context.Context, reply *model.Message, msgs []model.Message) ([]int, error) {
	ctxMsgs := slices.Clone(l.task)
	if reply != nil {
		ctxMsgs = append(ctxMsgs, *reply)
	}
	base, err := l.tm.Tokenize(ctx, model.TokenizeRequest{Messages: ctxMsgs, Tools: l.tools})
	if err != nil {
		return nil, err
	}
	full, err := l.tm.Tokenize(ctx, model.TokenizeRequest{Messages: append(ctxMsgs, msgs...), Tools: l.tools, Generation: true})
	if err != nil {
		return nil, err
	}
	if len(full) < len(base) || !slices.Equal(full[:len(base)], base) {
		return nil, fmt.Errorf("%w: the engine's template is not one token mode can follow; run in messages mode", errTemplatePrefix)
	}
	return full[len(base):], nil
}
