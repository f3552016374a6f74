package sft

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/rl"
)

// Context is what the harness showed the teacher that the trajectory does
// not hold: the task's words and the instance's websites and tools.
type Context struct {
	Instruction string
	// Hint is the task's hint, shown when the trajectory says it was.
	Hint string
	// Sites lists the websites as the system prompt does ("name URL").
	Sites []string
	// Tools are the tools the harness offered.
	Tools []Tool
	// Mapping is how a script's steps became the harness's calls, when a
	// script acted (Harnessed).
	Mapping *Mapping
}

// Built is a trajectory's segments: Records are those within the limit,
// with the trajectory's own fields set (teacher, rollout, segments,
// messages or token ids); the caller sets the task's and V's.
type Built struct {
	Records  []Record
	Segments int
	Dropped  int
}

// The harness's words around a compaction (internal/agent/loop.go:
// compactPrompt, the first message of the next segment, the cut of each
// observation in the summary request). They are the harness's private
// constants, repeated here to render a trajectory without token ids as
// the chats the model saw; TestLiveModelMessages holds them to the
// requests the harness really sent.
const (
	compactPrompt      = `The conversation is about to be cut to save context. Write a summary for yourself to continue from: what the task is, what you have done and found so far (names, numbers, paths, ids exactly), what is left to do. Reply with the summary only, no tool call.`
	resumeHead         = "The earlier part of this session was compacted to save context. Your summary of it:\n\n"
	resumeTail         = "\n\nContinue the task from here."
	compactObservation = 600
)

// Build splits a successful trajectory into segment records.
//
// A model's trajectory with token ids on every turn is cut by rl.Segments
// (a turn whose prompt extends the held tokens appends, its new prompt part
// with loss mask 0 and its response with 1; anything else, the first turn
// after a compaction included, starts a new segment) and also rendered as
// messages. The compaction turn, the request that summarises the segment,
// is the teacher's writing and trainable: the harness cuts observations
// for it, so its prompt does not extend the segment's tokens and it is a
// segment of its own (the paper's 9 steps with a compaction at step 5 are
// 3 samples), or the end of its segment when nothing was cut. Without
// token ids the turns are rendered as the chats the harness sent and cut
// by the same rule on messages. A trajectory without turns (a script's
// own, outside the harness) is refused: replay it through the harness
// (Harnessed). A segment over maxTokens (prompt and response) is dropped.
func Build(tr *agent.Trajectory, c Context, maxTokens int) (Built, error) {
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	base := Record{Version: Version, Teacher: tr.Policy, TeacherKind: kindOf(tr.Policy), Harness: tr.Harness, Model: tr.Model,
		Rollout: tr.Rollout, Hint: tr.Hint}
	if base.TeacherKind == "" {
		return Built{}, fmt.Errorf("sft: trajectory %s: field policy %q is neither model:NAME nor scripted:NAME: say who acted", tr.Rollout, tr.Policy)
	}
	if len(tr.Turns) == 0 {
		return Built{}, fmt.Errorf("sft: trajectory %s (%s) has no harness turns: a script's steps are not what the harness sends; replay them through the harness first (sft.Harnessed)", tr.Rollout, tr.Policy)
	}
	v := newConvo(tr, c)
	var recs []Record
	var err error
	if tokenIDs(tr.Turns) {
		recs, err = v.tokenRecords()
	} else {
		recs, err = v.messageRecords()
	}
	if err != nil {
		return Built{}, err
	}
	b := Built{Segments: len(recs)}
	for i, r := range recs {
		merged := base
		merged.SegmentIndex, merged.SegmentCount = i, len(recs)
		merged.FirstTurn, merged.LastTurn = r.FirstTurn, r.LastTurn
		merged.Messages, merged.Tools, merged.Mapping = r.Messages, c.Tools, c.Mapping
		merged.PromptIDs, merged.ResponseIDs, merged.LossMask, merged.Trainable = r.PromptIDs, r.ResponseIDs, r.LossMask, r.Trainable
		merged.Tokens, merged.TokensEstimated = r.Tokens, r.TokensEstimated
		if merged.TokensEstimated {
			merged.Tokens += toolsTokens(c.Tools)
		}
		if merged.Tokens > maxTokens {
			b.Dropped++
			continue
		}
		b.Records = append(b.Records, merged)
	}
	return b, nil
}

func kindOf(policy string) string {
	switch {
	case strings.HasPrefix(policy, "model:"):
		return KindModel
	case strings.HasPrefix(policy, "scripted:"):
		return KindScripted
	}
	return ""
}

// tokenIDs reports whether every turn has its prompt and completion ids.
func tokenIDs(turns []agent.Turn) bool {
	for _, t := range turns {
		if len(t.PromptTokenIDs) == 0 || len(t.CompletionTokenIDs) == 0 {
			return false
		}
	}
	return true
}

// convo renders a model trajectory's turns as the requests the harness
// sent.
type convo struct {
	tr *agent.Trajectory
	c  Context
	// last is the last step of each tool call, by turn and call id: what
	// the call returned to the model.
	last map[[2]string]agent.Step
}

func newConvo(tr *agent.Trajectory, c Context) *convo {
	v := &convo{tr: tr, c: c, last: map[[2]string]agent.Step{}}
	for _, s := range tr.Steps {
		if s.Turn > 0 {
			v.last[[2]string{fmt.Sprint(s.Turn), s.CallID}] = s
		}
	}
	return v
}

// compacted reports whether turn k (0-based) is the first act turn of a
// segment that a compaction started.
func (v *convo) compacted(k int) bool {
	t := v.tr.Turns[k]
	return t.Kind == "act" && t.Segment > 0 && (k == 0 || v.tr.Turns[k-1].Segment != t.Segment)
}

// start is the messages every request of harness segment seg starts with.
func (v *convo) start(seg int) []Message {
	user := v.c.Instruction
	if v.tr.Hint && v.c.Hint != "" {
		user += "\n\nHint: " + v.c.Hint
	}
	msgs := []Message{{Role: "system", Content: agent.SystemPrompt(v.c.Sites)}, {Role: "user", Content: user}}
	if seg > 0 {
		summary := ""
		if seg < len(v.tr.Segments) {
			summary = v.tr.Segments[seg].Summary
		}
		msgs = append(msgs, Message{Role: "user", Content: resumeHead + summary + resumeTail})
	}
	return msgs
}

// response is turn k's answer as an assistant message.
func (v *convo) response(k int) (Message, error) {
	t := v.tr.Turns[k]
	m := Message{Role: "assistant", Content: t.Content, Reasoning: t.Reasoning}
	for _, c := range t.ToolCalls {
		args, err := argsObject(c.Arguments)
		if err != nil {
			return Message{}, fmt.Errorf("sft: trajectory %s: turn %d calls %s with %v", v.tr.Rollout, t.Index, c.Name, err)
		}
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: c.ID, Type: "function", Function: Function{Name: c.Name, Arguments: args}})
	}
	return m, nil
}

// argsObject is a call's arguments as the model wrote them, compacted: a
// JSON object (the harness reads empty arguments as {}).
func argsObject(s string) (json.RawMessage, error) {
	if strings.TrimSpace(s) == "" {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("arguments that are not a JSON object (%q): the harness ran no such call", abbrev(s, 80))
	}
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(s)); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// tools are the tool messages that answered turn k's calls.
func (v *convo) tools(k int) ([]Message, error) {
	t := v.tr.Turns[k]
	var out []Message
	for _, c := range t.ToolCalls {
		s, ok := v.last[[2]string{fmt.Sprint(t.Index), c.ID}]
		if !ok {
			return nil, fmt.Errorf("sft: trajectory %s: turn %d calls %s (%s) and no step records its observation: the trajectory is incomplete", v.tr.Rollout, t.Index, c.Name, c.ID)
		}
		out = append(out, Message{Role: "tool", ToolCallID: c.ID, Content: observation(s)})
	}
	return out, nil
}

// recorderCut is the marker the trajectory's recorder ends an observation
// over agent.DefaultMaxObservation bytes with (agent.Env.record).
var recorderCut = regexp.MustCompile(`\.\.\. \[(\d+) more bytes\]$`)

// observation is what a step returned as the harness sent it to the
// model: an error first, then what the tool said, cut at
// agent.DefaultMaxObservation bytes with the harness's own marker
// (agent's loop.clip). The trajectory keeps the observation cut by its
// recorder, with another marker and without the error: the bytes it cut
// are counted, so the harness's message is rebuilt exactly.
func observation(s agent.Step) string {
	limit := agent.DefaultMaxObservation
	body, more := s.Observation, 0
	if m := recorderCut.FindStringSubmatchIndex(body); m != nil && m[0] >= limit-3 && m[0] <= limit {
		more, _ = strconv.Atoi(body[m[2]:m[3]])
		body = body[:m[0]]
	}
	obs := body
	if s.Error != "" {
		obs = "error: " + s.Error
		if body != "" || more > 0 {
			obs += "\n" + body
		}
	}
	total := len(obs) + more
	if total <= limit {
		return obs
	}
	head := cutUTF8(obs, limit)
	return head + fmt.Sprintf("\n... [%d more bytes cut]", total-len(head))
}

// request is the chat turn k (0-based) was sent: its segment's start, the
// act turns before it with their tool messages, and for a compaction the
// summary request (observations cut, the harness's instruction).
func (v *convo) request(k int) ([]Message, error) {
	t := v.tr.Turns[k]
	msgs := v.start(t.Segment)
	for j := range k {
		u := v.tr.Turns[j]
		if u.Segment != t.Segment || u.Kind != "act" || len(u.ToolCalls) == 0 {
			continue
		}
		obs, err := v.tools(j)
		if err != nil {
			return nil, err
		}
		resp, err := v.response(j)
		if err != nil {
			return nil, err
		}
		msgs = append(append(msgs, resp), obs...)
	}
	if t.Kind == "compaction" {
		for i, m := range msgs {
			if m.Role == "tool" && len(m.Content) > compactObservation {
				head := cutUTF8(m.Content, compactObservation)
				msgs[i].Content = head + fmt.Sprintf("\n... [%d more bytes cut for the summary]", len(m.Content)-len(head))
			}
		}
		msgs = append(msgs, Message{Role: "user", Content: compactPrompt})
	}
	return msgs, nil
}

// sample is the messages of the segment of turns a..b (0-based): turn b's
// request and response, the responses of turns a..b trainable.
func (v *convo) sample(a, b int) ([]Message, error) {
	first, err := v.request(a)
	if err != nil {
		return nil, err
	}
	msgs, err := v.request(b)
	if err != nil {
		return nil, err
	}
	resp, err := v.response(b)
	if err != nil {
		return nil, err
	}
	msgs = append(msgs, resp)
	for i := len(first); i < len(msgs); i++ {
		if msgs[i].Role == "assistant" {
			msgs[i].Train = true
		}
	}
	return msgs, nil
}

// tokenRecords cuts the turns with rl.Segments.
func (v *convo) tokenRecords() ([]Record, error) {
	turns := make([]rl.Turn, len(v.tr.Turns))
	for k, t := range v.tr.Turns {
		turns[k] = rl.Turn{PromptIDs: t.PromptTokenIDs, ResponseIDs: t.CompletionTokenIDs, Compacted: v.compacted(k)}
	}
	var out []Record
	for _, s := range rl.Segments(turns, false) {
		a, b := s.FirstTurn, s.FirstTurn+s.Turns-1
		msgs, err := v.sample(a, b)
		if err != nil {
			return nil, err
		}
		out = append(out, Record{FirstTurn: v.tr.Turns[a].Index, LastTurn: v.tr.Turns[b].Index, Messages: msgs,
			PromptIDs: s.PromptIDs, ResponseIDs: s.ResponseIDs, LossMask: s.LossMask, Trainable: s.Trainable(),
			Tokens: len(s.PromptIDs) + len(s.ResponseIDs)})
	}
	return out, nil
}

// messageRecords cuts the turns by the rule of rl.Segments on messages: a
// turn whose request extends the messages held so far appends; anything
// else, a compacted turn included, starts a segment.
func (v *convo) messageRecords() ([]Record, error) {
	var out []Record
	var held []Message
	a := -1
	flush := func(b int) error {
		msgs, err := v.sample(a, b)
		if err != nil {
			return err
		}
		out = append(out, Record{FirstTurn: v.tr.Turns[a].Index, LastTurn: v.tr.Turns[b].Index, Messages: msgs,
			Tokens: estimateMessages(msgs), TokensEstimated: true})
		return nil
	}
	for k := range v.tr.Turns {
		req, err := v.request(k)
		if err != nil {
			return nil, err
		}
		extends := a >= 0 && !v.compacted(k) && len(req) >= len(held) && slices.EqualFunc(req[:len(held)], held, sameMessage)
		if !extends {
			if a >= 0 {
				if err := flush(k - 1); err != nil {
					return nil, err
				}
			}
			a = k
		}
		resp, err := v.response(k)
		if err != nil {
			return nil, err
		}
		held = append(req, resp)
	}
	if a >= 0 {
		if err := flush(len(v.tr.Turns) - 1); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sameMessage(a, b Message) bool {
	return a.Role == b.Role && a.Content == b.Content && a.Reasoning == b.Reasoning && a.ToolCallID == b.ToolCallID &&
		slices.EqualFunc(a.ToolCalls, b.ToolCalls, func(x, y ToolCall) bool {
			return x.ID == y.ID && x.Function.Name == y.Function.Name && bytes.Equal(x.Function.Arguments, y.Function.Arguments)
		})
}

// estimate is the harness's estimate of a text's tokens: 4 bytes a token.
func estimate(s string) int { return (len(s) + 3) / 4 }

// estimateMessages sizes a chat as the harness does: each message's text
// and 4 tokens of framing, each call's name and arguments.
func estimateMessages(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += estimate(m.Content) + estimate(m.Reasoning) + 4
		for _, c := range m.ToolCalls {
			n += estimate(c.Function.Name + string(c.Function.Arguments))
		}
	}
	return n
}

func toolsTokens(tools []Tool) int {
	if len(tools) == 0 {
		return 0
	}
	b, _ := json.Marshal(tools)
	return estimate(string(b))
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
