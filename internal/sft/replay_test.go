package sft

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool/pooltest"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
)

// exported is one live export of the fixture's tasks by the oracle
// replay, shared by the tests that read records (a few seconds a task).
var exported struct {
	once sync.Once
	recs []Record
	err  error
}

func scriptedRecords(t *testing.T, f *pooltest.Fixture) []Record {
	t.Helper()
	exported.once.Do(func() {
		p := sftPool(t, f, pooltest.DefaultFamilies...)
		out := filepath.Join(filepath.Dir(f.Dir), "sft-scripted.jsonl")
		x := &Exporter{Pool: p, Source: SourceLive, Env: func(*task.Task) (Rollouts, error) { return f.Env, nil },
			Teacher: func(tk *task.Task, attempt int) (rollout.Policy, error) {
				return policy.NewReplay("oracle", tk, policy.ErrorModel{}, uint64(attempt)), nil
			}}
		if _, exported.err = x.Export(context.Background(), out); exported.err == nil {
			exported.recs = readRecords(t, out)
		}
	})
	if exported.err != nil {
		t.Fatal(exported.err)
	}
	return exported.recs
}

// recordChat is a model that says what a record's assistant messages
// say, in order, and holds every request the harness sends to the
// record's messages: the system prompt, the task, each observation. The
// record's origins (its system prompt's websites) are the instance that
// wrote it; origins maps them to this instance's.
type recordChat struct {
	rec     Record
	origins *strings.Replacer
	next    int // the record's next message
	err     error
}

func (c *recordChat) Chat(_ context.Context, req model.Request) (*model.Response, error) {
	msgs := c.rec.Messages
	if c.err == nil && c.next == 0 {
		c.next = 2 // system and task
	}
	if c.err == nil {
		// Everything the harness sent since the last reply is the record's.
		if len(req.Messages) != c.next {
			c.err = fmt.Errorf("the harness sent %d messages where the record has %d before its next reply", len(req.Messages), c.next)
		}
		for i := 0; c.err == nil && i < c.next; i++ {
			got, want := req.Messages[i], msgs[i]
			if string(got.Role) != want.Role || got.Content != c.origins.Replace(want.Content) || got.ToolCallID != want.ToolCallID {
				c.err = fmt.Errorf("message %d: the harness sent %s %q, the record has %s %q", i, got.Role, abbrev(got.Content, 300), want.Role, abbrev(want.Content, 300))
			}
		}
		if c.err == nil && c.next < len(msgs) && msgs[c.next].Role != "assistant" {
			c.err = fmt.Errorf("message %d is the record's %s, not a reply", c.next, msgs[c.next].Role)
		}
	}
	if c.err != nil || c.next >= len(msgs) {
		return &model.Response{FinishReason: "stop"}, nil
	}
	m := msgs[c.next]
	c.next++
	resp := &model.Response{Content: m.Content, FinishReason: "stop"}
	for _, tc := range m.ToolCalls {
		resp.ToolCalls = append(resp.ToolCalls, model.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: json.RawMessage(c.origins.Replace(string(tc.Function.Arguments)))})
		resp.FinishReason = "tool_calls"
		c.next++ // its tool message
	}
	return resp, nil
}

// recordPolicy replays a record's replies through the harness.
type recordPolicy struct {
	rec  Record
	chat *recordChat
}

func (p *recordPolicy) Name() string { return p.rec.Teacher }

var siteLine = regexp.MustCompile(`(?m)^- (\S+) (http://\S+)$`)

func (p *recordPolicy) Run(ctx context.Context, env *agent.Env, t task.Public) (string, error) {
	// The record's websites by name, longest origin first (a port may be
	// another's prefix), to this instance's.
	var pairs [][2]string
	for _, m := range siteLine.FindAllStringSubmatch(p.rec.Messages[0].Content, -1) {
		if now, ok := env.Sites[m[1]]; ok {
			pairs = append(pairs, [2]string{m[2], now})
		}
	}
	sort.Slice(pairs, func(i, j int) bool { return len(pairs[i][0]) > len(pairs[j][0]) })
	var args []string
	for _, pr := range pairs {
		args = append(args, pr[0], pr[1])
	}
	p.chat = &recordChat{rec: p.rec, origins: strings.NewReplacer(args...)}
	h := agent.Harness{Model: p.chat, ContextTokens: DefaultContextTokens, MaxTurns: DefaultMaxTurns}
	return h.Run(ctx, env, t.Instruction, t.Hint)
}

// TestRecordReplays: a record's replies, replayed through the harness in
// a fresh instance of the task's world, meet the same requests, each
// observation (page text with its element numbers, tool results, shell
// output) byte for byte but for the instance's ports, and V gives the
// record's verdict. A record whose calls were changed is caught: its
// observations part ways with the harness's.
func TestRecordReplays(t *testing.T) {
	f := fixture(t)
	recs := scriptedRecords(t, f)
	if len(recs) != len(pooltest.DefaultFamilies) {
		t.Fatalf("%d records for %d tasks", len(recs), len(pooltest.DefaultFamilies))
	}
	byID := map[string]*task.Task{}
	for _, tk := range f.Tasks {
		byID[tk.ID] = tk
	}
	for _, r := range recs {
		if r.SegmentCount != 1 {
			t.Fatalf("%s: %d segments: a segment after a compaction does not start from W0", r.TaskID, r.SegmentCount)
		}
		tk := byID[r.TaskID]
		p := &recordPolicy{rec: r}
		res, err := f.Env.Run(context.Background(), tk, rollout.Spec{ID: "replay-" + r.Rollout, Policy: p, Hint: r.Hint})
		if err != nil {
			t.Fatal(err)
		}
		if p.chat.err != nil {
			t.Fatalf("%s: %v", r.TaskID, p.chat.err)
		}
		if p.chat.next != len(r.Messages) {
			t.Fatalf("%s: the replay stopped at message %d of %d (%s: %s)", r.TaskID, p.chat.next, len(r.Messages), res.Trajectory.Outcome, res.Trajectory.Error)
		}
		vr, err := f.Env.Judge(context.Background(), tk, filepath.Join(f.TaskDirs[familyOf(f, tk)], "verifier"), res)
		if err != nil {
			t.Fatal(err)
		}
		if vr.V != r.V || vr.Passed != r.Passed || vr.Total != r.Total {
			t.Fatalf("%s: V %d (%d of %d) on the replay, the record says %d (%d of %d)", r.TaskID, vr.V, vr.Passed, vr.Total, r.V, r.Passed, r.Total)
		}
	}

	// A changed call: the first browser_type types something else; the
	// observations after it no longer match (or V does not), so the
	// check has teeth.
	r := recs[0]
	r.Messages = append([]Message(nil), r.Messages...)
	changed := false
	for i, m := range r.Messages {
		if len(m.ToolCalls) == 1 && m.ToolCalls[0].Function.Name == "browser_type" && !changed {
			c := m.ToolCalls[0]
			c.Function.Arguments = json.RawMessage(strings.Replace(string(c.Function.Arguments), `"text":"`, `"text":"x`, 1))
			r.Messages[i].ToolCalls = []ToolCall{c}
			changed = true
		}
	}
	if !changed {
		t.Fatal("no browser_type to change")
	}
	tk := byID[r.TaskID]
	p := &recordPolicy{rec: r}
	res, err := f.Env.Run(context.Background(), tk, rollout.Spec{ID: "replay-changed", Policy: p})
	if err != nil {
		t.Fatal(err)
	}
	if p.chat.err == nil {
		vr, err := f.Env.Judge(context.Background(), tk, filepath.Join(f.TaskDirs[familyOf(f, tk)], "verifier"), res)
		if err != nil || vr.V == r.V {
			t.Fatalf("a changed login replayed to the same observations and V %d: %v", vr.V, err)
		}
	}
}

func familyOf(f *pooltest.Fixture, tk *task.Task) string {
	for fam, x := range f.Tasks {
		if x.ID == tk.ID {
			return fam
		}
	}
	return ""
}
