package taskgen

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/task"
)

// TestLLMPrompts: the llm backends' constitutions parse, versioned.
func TestLLMPrompts(t *testing.T) {
	for _, stage := range []string{"sketch", "author"} {
		p, err := LLMPrompt(stage)
		if err != nil || p.Version < 1 || p.Text == "" || p.SHA256.IsZero() {
			t.Fatalf("%s: %+v, %v", stage, p, err)
		}
	}
}

// calls is one scripted model turn of tool calls, name and arguments in
// pairs.
func calls(nameArgs ...string) fake.Turn {
	var tc []fake.ToolCall
	for i := 0; i+1 < len(nameArgs); i += 2 {
		tc = append(tc, fake.ToolCall{Name: nameArgs[i], Arguments: nameArgs[i+1]})
	}
	return fake.Turn{ToolCalls: tc}
}

// proposal is a propose_sketch call's arguments.
func proposalArgs(title string, core ...string) string {
	b, _ := json.Marshal(map[string]any{"title": title, "core": core, "params": map[string]string{"note": "notes/logins.md"},
		"interfaces": map[string]string{"gui": "read it on the site", "mcp": "look it up in the app", "cli": "a script decides"}})
	return string(b)
}

// toolResults are the tool messages of a request, by call id.
func toolResults(r fake.Request) map[string]string {
	out := map[string]string{}
	for _, m := range r.Messages {
		if m.Role == "tool" {
			out[m.ToolCallID] = m.Content
		}
	}
	return out
}

// wishlistDrafted is a wishlist-balance draft on one of the test states.
func wishlistDrafted(t *testing.T, s *Source) drafted {
	t.Helper()
	fam, _ := Lookup("wishlist-balance")
	ds := draftAll(t, s, fam)
	if len(ds) == 0 {
		t.Fatal("no wishlist-balance draft on the test states")
	}
	return ds[0]
}

// TestLLMSketchAgentExplores: on a live instance the agent reads a file
// through the shell (the observation is the world's), proposes two
// sketches and ends with done; the sketches pass the diversity gate, and
// the session keeps its trajectory and, with Dir, is reused.
func TestLLMSketchAgentExplores(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	d := wishlistDrafted(t, s)
	env := liveEnv(t, s, d.state)
	srv := fake.New(t,
		calls("shell", `{"command":"cat notes/logins.md"}`),
		calls(ProposeSketchTool, proposalArgs("Buy the dearest wish-list device the balance covers", "order devices dearest", "file decisions/wishlist.csv")),
		calls(ProposeSketchTool, proposalArgs("Invite a friend to the next followed match", "message friend match", "file decisions/standings.csv")),
		calls(DoneTool, `{}`),
	)
	dir := t.TempDir()
	sk := NewLLMSketcher(srv.Client(t, nil), LLMSketchOptions{Env: func(*persona.Persona) *rollout.Env { return env }, Dir: dir})
	j := Job{Persona: d.state.Persona.ID, Day: d.state.Day, Snapshot: d.state.Snapshot, Family: LLMFamily}
	ctx := context.Background()
	sess, err := sk.Session(ctx, j, d.state, d.w)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Stop != "done" || len(sess.Sketches) != 2 || sess.Refused != 0 {
		t.Fatalf("stop %q, %d sketches, %d refused", sess.Stop, len(sess.Sketches), sess.Refused)
	}
	for _, k := range sess.Sketches {
		if k.Family != LLMFamily || k.Params[InterfaceParam(task.CLI)] == "" || len(k.Core) != 2 {
			t.Fatalf("sketch %+v", k)
		}
	}
	// The shell ran in the instance: its observation is the logins file.
	tr := sess.Trajectory
	i := slices.IndexFunc(tr.Steps, func(st agent.Step) bool { return st.Tool == "shell.run" })
	if i < 0 || !strings.Contains(tr.Steps[i].Observation, "password `") || tr.Steps[i].Turn != 1 {
		t.Fatalf("no shell step reading the logins: %+v", tr.Steps)
	}
	if len(tr.Turns) != 4 || tr.Outcome != agent.OutcomeDone || srv.Remaining() != 0 {
		t.Fatalf("%d turns, outcome %q, %d turns unused", len(tr.Turns), tr.Outcome, srv.Remaining())
	}
	chats := srv.Chats()
	if len(chats) != 4 {
		t.Fatalf("%d chat requests, want 4 (none after done)", len(chats))
	}
	var names []string
	for _, tl := range chats[0].Tools {
		names = append(names, tl.Name)
	}
	for _, want := range []string{"shell", "browser_navigate", ProposeSketchTool, DoneTool, "payments__get_balance"} {
		if !slices.Contains(names, want) {
			t.Fatalf("the session's tools %v lack %s", names, want)
		}
	}
	if !strings.Contains(chats[1].Messages[len(chats[1].Messages)-1].Content, "password `") {
		t.Fatalf("the model did not see the file: %+v", chats[1].Messages)
	}
	// The sketches feed the diversity gate like the families'.
	div := &Diversity{}
	for _, k := range sess.Sketches {
		v, err := div.Reserve(ctx, LLMTaskID(k), j.Persona, k)
		if err != nil || !v.Keep {
			t.Fatalf("%q: %+v, %v", k.Title, v, err)
		}
	}
	// Kept: a rerun reuses the session without the model.
	if _, err := os.Stat(SessionFile(dir, j)); err != nil {
		t.Fatal(err)
	}
	again, err := sk.Session(ctx, j, d.state, d.w)
	if err != nil || len(again.Sketches) != 2 || len(srv.Chats()) != 4 {
		t.Fatalf("rerun: %v, %d chats", err, len(srv.Chats()))
	}
}

// TestLLMSketchRefusals: a fifth sketch, one without its interfaces, one
// sharing a core item and one whose arguments are not JSON get error
// observations and the session goes on.
func TestLLMSketchRefusals(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	d := wishlistDrafted(t, s)
	env := liveEnv(t, s, d.state)
	srv := fake.New(t,
		fake.Turn{ToolCalls: []fake.ToolCall{
			{ID: "bad-json", Name: ProposeSketchTool, Arguments: `{"title": "half`},
			{ID: "no-ifaces", Name: ProposeSketchTool, Arguments: `{"title": "x", "core": ["a"], "params": {}}`},
			{ID: "p1", Name: ProposeSketchTool, Arguments: proposalArgs("one", "core one")},
			{ID: "dup", Name: ProposeSketchTool, Arguments: proposalArgs("one again", "core one")},
			{ID: "p2", Name: ProposeSketchTool, Arguments: proposalArgs("two", "core two")},
			{ID: "p3", Name: ProposeSketchTool, Arguments: proposalArgs("three", "core three")},
			{ID: "p4", Name: ProposeSketchTool, Arguments: proposalArgs("four", "core four")},
			{ID: "p5", Name: ProposeSketchTool, Arguments: proposalArgs("five", "core five")},
		}},
		calls(DoneTool, `{}`),
	)
	sk := NewLLMSketcher(srv.Client(t, nil), LLMSketchOptions{Env: func(*persona.Persona) *rollout.Env { return env }})
	j := Job{Persona: d.state.Persona.ID, Day: d.state.Day, Snapshot: d.state.Snapshot, Family: LLMFamily}
	sess, err := sk.Session(context.Background(), j, d.state, d.w)
	if err != nil {
		t.Fatal(err)
	}
	if sess.Stop != "done" || len(sess.Sketches) != MaxSessionSketches || sess.Refused != 4 || sess.Unparsed != 1 {
		t.Fatalf("stop %q, %d sketches, %d refused, %d unparsed", sess.Stop, len(sess.Sketches), sess.Refused, sess.Unparsed)
	}
	res := toolResults(srv.Chats()[1])
	for id, want := range map[string]string{
		"bad-json":  "not a JSON object",
		"no-ifaces": "field interfaces is missing",
		"dup":       `"core one" is sketch 1's too`,
		"p5":        "proposed 4 sketches, the most it may",
		"p4":        "sketch 4 accepted",
	} {
		if !strings.Contains(res[id], want) {
			t.Errorf("%s: %q, want %q", id, res[id], want)
		}
		if id != "p4" && !strings.HasPrefix(res[id], "error: ") {
			t.Errorf("%s: %q is no error observation", id, res[id])
		}
	}
}

// TestLLMSketchBudget: a model that explores and never calls done is
// stopped by the turn budget; what it proposed stands.
func TestLLMSketchBudget(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	d := wishlistDrafted(t, s)
	env := liveEnv(t, s, d.state)
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if r.N == 1 {
			return calls(ProposeSketchTool, proposalArgs("one", "core one"))
		}
		return calls("shell", `{"command":"ls"}`)
	})
	sk := NewLLMSketcher(srv.Client(t, nil), LLMSketchOptions{Env: func(*persona.Persona) *rollout.Env { return env }, MaxTurns: 3})
	j := Job{Persona: d.state.Persona.ID, Day: d.state.Day, Snapshot: d.state.Snapshot, Family: LLMFamily}
	sess, err := sk.Session(context.Background(), j, d.state, d.w)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(sess.Stop, "budget: ") || len(sess.Sketches) != 1 || len(srv.Chats()) != 3 || sess.Trajectory.Outcome != agent.OutcomeBudget {
		t.Fatalf("stop %q, %d sketches, %d chats", sess.Stop, len(sess.Sketches), len(srv.Chats()))
	}
}

// submission is a draft as the model's submit_task arguments.
func submission(t *testing.T, d *Draft, edit func(m map[string]any)) string {
	t.Helper()
	b, err := json.Marshal(SubmissionOf(d))
	if err != nil {
		t.Fatal(err)
	}
	if edit == nil {
		return string(b)
	}
	var m map[string]any
	json.Unmarshal(b, &m)
	edit(m)
	b, _ = json.Marshal(m)
	return string(b)
}

// TestLLMAuthorPassesCheck: the model looks a value up and hands in a
// known-good task; the draft is the model's, with the pipeline's ID and
// provenance, and it passes the self-check on a live instance.
func TestLLMAuthorPassesCheck(t *testing.T) {
	s := openSource(t)
	d := wishlistDrafted(t, s)
	sk := Sketch{Family: LLMFamily, Title: "Buy the dearest device", Core: []string{"order devices"}, Params: map[string]string{}}
	srv := fake.New(t,
		calls(QueryWorldTool, `{"db":"payments","sql":"SELECT ext_id, balance_cents FROM accounts ORDER BY ext_id"}`),
		calls(SubmitTaskTool, submission(t, d.draft, nil)),
	)
	a := NewLLMAuthor(srv.Client(t, nil), LLMAuthorOptions{})
	got, err := a.Author(context.Background(), d.w, sk, "")
	if err != nil {
		t.Fatal(err)
	}
	if got.Task.ID != LLMTaskID(sk) || got.Task.Provenance != d.draft.Task.Provenance || got.Task.Instruction != d.draft.Task.Instruction ||
		len(got.Task.Reference) != len(d.draft.Task.Reference) || got.Scripts["fits_table.py"] != d.draft.Scripts["fits_table.py"] {
		t.Fatalf("draft %+v", got.Task)
	}
	if q := toolResults(srv.Chats()[1]); !strings.Contains(fmt.Sprint(q), `[["`) {
		t.Fatalf("query_world's rows: %v", q)
	}
	if !strings.Contains(srv.Chats()[0].Messages[1].Content, "payments__get_balance") {
		t.Fatal("the contract lists no MCP tool")
	}
	runtime.SkipUnlessInstancesRun(t)
	checkLive(t, liveEnv(t, s, d.state), drafted{s, d.state, d.w, got})
}

// TestLLMAuthorRetries: unparsable arguments and a task missing the CLI
// get error observations naming the problem; the corrected call
// succeeds. With too few tries the error names the field.
func TestLLMAuthorRetries(t *testing.T) {
	s := openSource(t)
	d := wishlistDrafted(t, s)
	sk := Sketch{Family: "wishlist-balance", Title: "t", Core: []string{"c"}}
	noCLI := submission(t, d.draft, func(m map[string]any) { m["interfaces"] = []string{"gui", "mcp"} })
	srv := fake.New(t,
		calls(SubmitTaskTool, `{"instruction": "buy`),
		calls(SubmitTaskTool, noCLI),
		calls(SubmitTaskTool, submission(t, d.draft, nil)),
	)
	got, err := NewLLMAuthor(srv.Client(t, nil), LLMAuthorOptions{}).Author(context.Background(), d.w, sk, "")
	if err != nil || got.Task.Validate() != nil {
		t.Fatalf("%v", err)
	}
	chats := srv.Chats()
	if r := fmt.Sprint(toolResults(chats[1])); !strings.Contains(r, "error: the arguments of submit_task are unusable") {
		t.Fatalf("after the broken JSON: %s", r)
	}
	if r := fmt.Sprint(toolResults(chats[2])); !strings.Contains(r, `field interfaces: [gui mcp] lacks "cli"`) {
		t.Fatalf("after the task without the CLI: %s", r)
	}

	noHint := submission(t, d.draft, func(m map[string]any) { m["hint"] = "" })
	badStep := submission(t, d.draft, func(m map[string]any) {
		m["reference"].([]any)[0].(map[string]any)["tool"] = "mcp.nosuch__tool"
	})
	srv = fake.New(t, calls(SubmitTaskTool, badStep), calls(SubmitTaskTool, noHint))
	_, err = NewLLMAuthor(srv.Client(t, nil), LLMAuthorOptions{Tries: 2}).Author(context.Background(), d.w, sk, "")
	var ae *AuthorError
	if !errors.As(err, &ae) || ae.Tries != 2 || !strings.Contains(err.Error(), "field hint") {
		t.Fatalf("%v", err)
	}
	if r := fmt.Sprint(toolResults(srv.Chats()[1])); !strings.Contains(r, "field reference[0]") {
		t.Fatalf("after the unknown tool: %s", r)
	}
}

// TestLLMAuthorFeedback: the feedback of failed gates is in the author's
// prompt.
func TestLLMAuthorFeedback(t *testing.T) {
	s := openSource(t)
	d := wishlistDrafted(t, s)
	const feedback = "Task x failed 1 of 5 quality gates: solvability.\n- no rollout used the shell"
	srv := fake.New(t, calls(SubmitTaskTool, submission(t, d.draft, nil)))
	if _, err := NewLLMAuthor(srv.Client(t, nil), LLMAuthorOptions{}).Author(context.Background(), d.w, Sketch{Family: LLMFamily, Title: "t", Core: []string{"c"}}, feedback); err != nil {
		t.Fatal(err)
	}
	if mt := srv.Chats()[0].MaxTokens; mt == nil || *mt != DefaultAuthorMaxTokens {
		t.Errorf("max_tokens %v: the author's completion is bounded by default (%d)", mt, DefaultAuthorMaxTokens)
	}
	msgs := srv.Chats()[0].Messages
	if msgs[0].Role != "system" || !strings.Contains(msgs[1].Content, feedback) || !strings.Contains(msgs[1].Content, "Feedback on an earlier draft") {
		t.Fatalf("the prompt: %+v", msgs)
	}
}

// TestLLMSynthBackends: Synth with both llm backends: the agent's
// sketches pass the gate, the author writes one (self-checked live) and
// fails the other, which is rejected with the problem.
func TestLLMSynthBackends(t *testing.T) {
	runtime.SkipUnlessInstancesRun(t)
	s := openSource(t)
	d := wishlistDrafted(t, s)
	env := liveEnv(t, s, d.state)
	sketchSrv := fake.New(t,
		calls(ProposeSketchTool, proposalArgs("Buy the dearest device", "order devices dearest"),
			ProposeSketchTool, proposalArgs("Plan the course week", "note study plan")),
		calls(DoneTool, `{}`),
	)
	good := submission(t, d.draft, nil)
	authorSrv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		if strings.Contains(r.Messages[1].Content, "Buy the dearest device") {
			return calls(SubmitTaskTool, good)
		}
		return calls(SubmitTaskTool, `{"instruction": ""}`)
	})
	live := func(*persona.Persona) *rollout.Env { return env }
	out, sessions := t.TempDir(), t.TempDir()
	newSynth := func() *Synth {
		return &Synth{Source: s, Out: out, Diversity: &Diversity{}, Check: live,
			SketchBackend: NewLLMSketcher(sketchSrv.Client(t, nil), LLMSketchOptions{Env: live, Dir: sessions}),
			AuthorBackend: NewLLMAuthor(authorSrv.Client(t, nil), LLMAuthorOptions{})}
	}
	sy := newSynth()
	jobs := sy.Jobs(All(), func(st State) bool { return st.Persona.ID == d.state.Persona.ID && st.Day == d.state.Day }, 1)
	if len(jobs) != 1 || jobs[0].Family != LLMFamily {
		t.Fatalf("jobs %+v: want one job of the sketch agent", jobs)
	}
	r, err := sy.Do(context.Background(), jobs[0])
	if err != nil {
		t.Fatal(err)
	}
	if r.Sketches != 2 || len(r.Tasks) != 1 || len(r.Rejected) != 1 {
		t.Fatalf("%+v", r)
	}
	p := r.Tasks[0]
	if p.Check == nil || !p.Check.OK || p.Author != "llm:"+fake.DefaultModel+"@author.v1" {
		t.Fatalf("task %+v", p)
	}
	if b, err := os.ReadFile(filepath.Join(p.Dir, SketchFile)); err != nil || !strings.Contains(string(b), `"author": "llm:`) {
		t.Fatalf("sketch.json: %s %v", b, err)
	}
	if q := r.Rejected[0]; !strings.Contains(q.Problem, "field") || q.Check != nil {
		t.Fatalf("rejected %+v", q)
	}
	// A rerun resumes: the session is reused and the written task is not
	// authored again.
	wrote := func() int {
		n := 0
		for _, c := range authorSrv.Chats() {
			if strings.Contains(c.Messages[1].Content, "Buy the dearest device") {
				n++
			}
		}
		return n
	}
	before := wrote()
	again := newSynth()
	if n, err := again.Resume(context.Background()); err != nil || n != 1 {
		t.Fatalf("resume: %d, %v", n, err)
	}
	r2, err := again.Do(context.Background(), jobs[0])
	if err != nil || len(r2.Tasks) != 1 || r2.Tasks[0].ID != p.ID || wrote() != before || len(sketchSrv.Chats()) != 2 {
		t.Fatalf("rerun: %+v, %v; %d author chats (was %d)", r2, err, wrote(), before)
	}
}

// invalidAuthor writes its sketch's task as draft, with the first
// declared fact's mistake made the right value: a draft no shortcut can
// take (task.Validate refuses it).
type invalidAuthor struct{ draft *Draft }

func (invalidAuthor) Name() string { return "test:invalid" }

func (a invalidAuthor) Author(_ context.Context, _ *World, s Sketch, _ string) (*Draft, error) {
	d := *a.draft
	tk := *d.Task
	tk.Reference = slices.Clone(tk.Reference)
	for i, st := range tk.Reference {
		if len(st.Facts) > 0 {
			st.Facts = slices.Clone(st.Facts)
			st.Facts[0].Kind, st.Facts[0].Wrong = task.FactChoice, st.Facts[0].Value
			tk.Reference[i] = st
			break
		}
	}
	d.Task = &tk
	return &d, nil
}

// TestInvalidDraftIsItsSketchsRejection: an author's draft that is not a
// valid task (a fact whose mistake is its value) is its sketch's
// rejection, naming the problem; the job ends without error and writes no
// task for it.
func TestInvalidDraftIsItsSketchsRejection(t *testing.T) {
	s := openSource(t)
	d := wishlistDrafted(t, s)
	if !slices.ContainsFunc(d.draft.Task.Reference, func(st task.Step) bool { return len(st.Facts) > 0 }) {
		t.Fatal("the wishlist draft declares no fact")
	}
	out := t.TempDir()
	sy := &Synth{Source: s, Out: out, Diversity: &Diversity{}, AuthorBackend: invalidAuthor{d.draft}}
	fam, _ := Lookup("wishlist-balance")
	jobs := sy.Jobs([]Family{fam}, func(st State) bool { return st.Persona.ID == d.state.Persona.ID && st.Day == d.state.Day }, 1)
	if len(jobs) != 1 {
		t.Fatalf("jobs %+v", jobs)
	}
	r, err := sy.Do(context.Background(), jobs[0])
	if err != nil {
		t.Fatalf("an invalid draft ended the job: %v", err)
	}
	if len(r.Tasks) != 0 || len(r.Rejected) == 0 {
		t.Fatalf("%+v: want every sketch rejected", r)
	}
	for _, p := range r.Rejected {
		if !strings.Contains(p.Problem, "the author's draft is not a valid task") || !strings.Contains(p.Problem, "wrong") {
			t.Errorf("rejected %s: problem %q, want the draft's invalid fact named", p.ID, p.Problem)
		}
		if _, err := os.Stat(filepath.Join(out, p.ID, "task.json")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("rejected %s: task.json written (%v)", p.ID, err)
		}
	}
}
