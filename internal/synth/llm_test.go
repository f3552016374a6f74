package synth

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

	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/service"
	"github.com/wildawm/wildawm/internal/site"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/state"
	"github.com/wildawm/wildawm/internal/world"
)

// llmTest is an llm backend on a fake server, with the records of its
// stages.
type llmTest struct {
	srv     *fake.Server
	llm     *LLM
	records []StageRecord
}

func newLLMTest(t *testing.T, pl *Planner, o LLMOptions, script ...fake.Turn) *llmTest {
	t.Helper()
	lt := &llmTest{srv: fake.New(t, script...)}
	o.Record = func(r StageRecord) { lt.records = append(lt.records, r) }
	if o.ScratchDir == "" {
		o.ScratchDir = t.TempDir()
	}
	lt.llm = NewLLM(lt.srv.Client(t, &model.Options{MaxRetries: -1}), pl, o)
	return lt
}

func calls(cs ...fake.ToolCall) fake.Turn { return fake.Turn{ToolCalls: cs} }

func tc(name, args string) fake.ToolCall { return fake.ToolCall{Name: name, Arguments: args} }

// toolResults are the tool messages of chat request n (from 1) that
// answer the previous reply's calls, in order.
func toolResults(t *testing.T, srv *fake.Server, n int) []string {
	t.Helper()
	chats := srv.Chats()
	if len(chats) < n {
		t.Fatalf("%d chat requests, want at least %d", len(chats), n)
	}
	msgs := chats[n-1].Messages
	var out []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role == "tool"; i-- {
		out = append([]string{msgs[i].Content}, out...)
	}
	return out
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(got, s) {
			t.Errorf("%s: %q lacks %q", what, got, s)
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestLLMPrompts(t *testing.T) {
	ps, err := LLMPrompts()
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 {
		t.Fatalf("%d prompts, want persona, plan, implement and review", len(ps))
	}
	for _, p := range ps {
		if p.Version < 1 || p.Text == "" || strings.HasPrefix(p.Text, "version") || p.SHA256.IsZero() {
			t.Errorf("%s: %+v", p.File, p)
		}
	}
	for _, bad := range []string{"", "hello\ntext", "version: 0\ntext", "version: x\ntext", "version: 2\n\n"} {
		if _, err := parsePrompt("plan", "prompts/plan.md", []byte(bad)); err == nil {
			t.Errorf("parsePrompt(%q) accepted it", bad)
		}
	}
	l := NewLLM(fake.New(t).Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{})
	if !strings.HasPrefix(l.Name(), "llm:"+fake.DefaultModel+"@persona.v1") {
		t.Errorf("Name() = %q", l.Name())
	}
}

// llmGrounding is a grounding of the real registries.
func llmGrounding() *persona.Grounding {
	g := &persona.Grounding{
		Cities:      []string{"Lima", "Lisbon", "Nairobi", "Osaka", "Oslo", "Toronto"},
		Cuisines:    []string{"Italian", "Japanese", "Peruvian"},
		Teams:       []string{"Harbor City FC", "Lakeside Rovers"},
		Subjects:    []string{"biology", "history", "statistics"},
		Languages:   []string{"Go", "Python", "Rust"},
		Categories:  []string{"audio", "cameras", "kitchen"},
		Definitions: []string{"budget", "habits", "recipe_box"},
	}
	for _, s := range site.All() {
		g.Sites = append(g.Sites, s.Name)
	}
	for _, s := range service.All() {
		g.Services = append(g.Services, s.Name)
	}
	slices.Sort(g.Sites)
	slices.Sort(g.Services)
	return g
}

// bible is a valid persona for r, as the model would submit it: without
// the signature the backend computes.
func bible(t *testing.T, g *persona.Grounding, r persona.Request) *persona.Persona {
	t.Helper()
	p, err := persona.Generate(g, r)
	if err != nil {
		t.Fatal(err)
	}
	p.Signature = ""
	return p
}

func TestLLMPersonaRetriesUntilValid(t *testing.T) {
	g := llmGrounding()
	r := persona.Request{Seed: 3, Index: 1, Days: 10}
	good := bible(t, g, r)
	two := *good
	two.Contacts = good.Contacts[:2]
	good.Version, good.Days = 0, 0 // filled from the request
	lt := newLLMTest(t, &Planner{Skills: skill.All()}, LLMOptions{},
		calls(tc("submit_persona", mustMarshal(t, &two))),
		calls(tc("submit_persona", `{"name": "Broken`)),
		calls(tc("fly", `{}`), tc("submit_persona", mustMarshal(t, good))),
	)
	p, err := lt.llm.Persona(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	if got := toolResults(t, lt.srv, 2); len(got) != 1 {
		t.Fatalf("request 2's tool results: %q", got)
	} else {
		wantContains(t, "the invalid bible's result", got[0], "error:", "contacts: 2, need at least 3 named contacts")
	}
	if got := toolResults(t, lt.srv, 3); len(got) != 1 {
		t.Fatalf("request 3's tool results: %q", got)
	} else {
		wantContains(t, "the malformed call's result", got[0], "error:", "submit_persona", "not valid JSON")
	}
	if p.ID != good.ID || len(p.Contacts) != len(good.Contacts) {
		t.Errorf("persona %s with %d contacts, want the last submission's", p.ID, len(p.Contacts))
	}
	if p.Version != persona.Version || p.Days != r.Days || p.Signature != persona.Signature(p) || p.Signature == "" {
		t.Errorf("version %d, days %d, signature %q: want them filled in", p.Version, p.Days, p.Signature)
	}
	if err := p.Validate(true); err != nil {
		t.Error(err)
	}
	if len(lt.records) != 1 {
		t.Fatalf("records: %+v", lt.records)
	}
	rec := lt.records[0]
	if rec.Stage != StagePersona || rec.PromptVersion < 1 || rec.Prompt != "prompts/persona.md" || rec.Turns != 3 || rec.Calls != 4 || rec.Refused != 3 || rec.Err != "" {
		t.Errorf("record %+v", rec)
	}
	// The unknown tool's result names the tools.
	chats := lt.srv.Chats()
	if len(chats) != 3 {
		t.Fatalf("%d chats", len(chats))
	}
	sys := chats[0].Messages[0]
	if sys.Role != "system" || !strings.Contains(sys.Content, "persona bible") || strings.HasPrefix(sys.Content, "version") {
		t.Errorf("system message %q", sys.Content[:min(80, len(sys.Content))])
	}
	wantContains(t, "the job", chats[0].Messages[1].Content, "Lisbon", "submit_persona", "dm_conversation")
}

func TestLLMPersonaGroundingAndAvoid(t *testing.T) {
	g := llmGrounding()
	r := persona.Request{Seed: 3, Index: 2, Days: 8}
	good := bible(t, g, r)
	taken := good.Contacts[0].Name
	r.Avoid.Names = map[string]bool{taken: true}
	bad := *good
	bad.Contacts = slices.Clone(good.Contacts)
	bad.Sites = append(slices.Clone(good.Sites), "moon-base")
	fixed := *good
	fixed.Contacts = slices.Clone(good.Contacts)
	fixed.Contacts[0].Name, fixed.Contacts[0].Email, fixed.Contacts[0].Thread = "Quentin Zephyr", "", ""
	lt := newLLMTest(t, &Planner{Skills: skill.All()}, LLMOptions{},
		calls(tc("submit_persona", mustMarshal(t, &bad))),
		calls(tc("submit_persona", mustMarshal(t, &fixed))),
	)
	p, err := lt.llm.Persona(context.Background(), g, r)
	if err != nil {
		t.Fatal(err)
	}
	wantContains(t, "the refusal", toolResults(t, lt.srv, 2)[0], `"moon-base" is no site of the grounding`, `"moon-base" has no account`, taken, "reserved by another persona")
	wantContains(t, "the job", lt.srv.Chats()[0].Messages[1].Content, taken)
	if c := p.Contacts[0]; c.Name != "Quentin Zephyr" || c.Email != persona.Email(c.Name) || c.Thread != "dm-quentin-zephyr" {
		t.Errorf("contact %+v: want email and thread derived", c)
	}
}

// smallPersona uses one site and three services.
func smallPersona() *persona.Persona {
	return &persona.Persona{Version: persona.Version, ID: "lena-test", Name: "Lena Test", Occupation: "baker", LifeDomain: "work",
		Profile: "Bakes.", Days: 3, Signature: "baker|work",
		Contacts: []persona.Contact{
			{Name: "Ada Quill", Role: "supplier", Email: persona.Email("Ada Quill"), Thread: "dm-ada-quill"},
			{Name: "Ben Ortiz", Role: "friend", Email: persona.Email("Ben Ortiz"), Thread: "dm-ben-ortiz"},
			{Name: "Cleo Park", Role: "sister", Email: persona.Email("Cleo Park"), Thread: "dm-cleo-park"},
		},
		Tools: []string{"markdown"}, Sites: []string{"shop"}, Services: []string{"mail", "messages", "notes"},
		Accounts: []persona.Account{{Site: "shop", Username: "lena.test", Password: "pw-shop-2026"}},
	}
}

func TestLLMPlanRefusesBadEvents(t *testing.T) {
	p := smallPersona()
	pl := &Planner{Skills: skill.All()}
	lt := newLLMTest(t, pl, LLMOptions{},
		calls(tc("list_skills", `{"names": ["provision_service"]}`), tc("propose_event", `{"skill": "teleport", "params": {}}`)),
		calls(tc("propose_event", `{"skill": "provision_service", "params": {"dbx": "mail"}}`),
			tc("propose_event", `{"skill": "provision_service", "params": {}}`),
			tc("finish_day", `{}`)),
		calls(tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`),
			tc("propose_event", `{"skill": "provision_service", "params": {"db": "shop"}}`),
			tc("propose_event", `{"skill": "create_web_account", "params": {"site": "shop"}}`),
			tc("read_ledger", `{}`)),
		calls(tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`)),
		fake.Turn{Content: "I think the day is done."},
		calls(tc("finish_day", `{}`)),
	)
	job := &PlanJob{Persona: *p, Day: 0, Feedback: []string{"review: the thread dm-x is missing"}, Avoid: []string{"shop_purchase"}, Attempt: 1}
	day, err := lt.llm.Plan(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(t, lt.srv, 2)
	wantContains(t, "list_skills", r[0], `"name":"provision_service"`, `"example":{"db":"mail"}`)
	wantContains(t, "the unknown skill", r[1], "error:", `no skill "teleport"`, "provision_service")
	r = toolResults(t, lt.srv, 3)
	wantContains(t, "the unknown field", r[0], "error:", "skill provision_service: params: unknown field", "dbx")
	wantContains(t, "the missing field", r[1], "error:", "field db is required")
	wantContains(t, "the early finish", r[2], "error:", "0 events", "at least 2")
	r = toolResults(t, lt.srv, 4)
	for i := range 3 {
		wantContains(t, "an accepted event", r[i], "accepted: event")
	}
	var ledger skill.State
	if err := json.Unmarshal([]byte(r[3]), &ledger); err != nil {
		t.Fatalf("read_ledger: %v: %s", err, r[3])
	}
	if !ledger.DBs["mail"] || !ledger.DBs["shop"] || !ledger.Accounts["shop"] || ledger.Used["provision_service"] != 2 {
		t.Errorf("the scratch ledger %+v lacks today's events", ledger)
	}
	wantContains(t, "the repeated event", toolResults(t, lt.srv, 5)[0], "error:", "mail is provisioned already")
	last := lt.srv.Chats()[5].Messages
	if m := last[len(last)-1]; m.Role != "user" || !strings.Contains(m.Content, "called no tool") {
		t.Errorf("the nudge: %+v", m)
	}
	job0 := lt.srv.Chats()[0].Messages[1].Content
	wantContains(t, "the job", job0, "review: the thread dm-x is missing", "Do not use these skills: shop_purchase", "2026-03-02")

	if day.Day != 0 || day.Clock != skill.Clock(0) || len(day.Events) != 3 {
		t.Fatalf("day %+v", day)
	}
	want := []skill.Event{
		{Skill: "provision_service", Params: json.RawMessage(`{"db":"mail"}`)},
		{Skill: "provision_service", Params: json.RawMessage(`{"db":"shop"}`)},
		{Skill: "create_web_account", Params: json.RawMessage(`{"site":"shop"}`)},
	}
	if mustMarshal(t, day.Events) != mustMarshal(t, want) {
		t.Errorf("events %s, want %s", mustMarshal(t, day.Events), mustMarshal(t, want))
	}
	if rec := lt.records[0]; rec.Stage != StagePlan || rec.Turns != 6 || rec.Err != "" {
		t.Errorf("record %+v", rec)
	}
}

func TestLLMPlanAvoidedSkill(t *testing.T) {
	lt := newLLMTest(t, &Planner{Skills: skill.All()}, LLMOptions{Budget: 1},
		calls(tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`)))
	_, err := lt.llm.Plan(context.Background(), &PlanJob{Persona: *smallPersona(), Avoid: []string{"provision_service"}})
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want the budget's", err)
	}
	wantContains(t, "the error", err.Error(), "llm plan stage, turn 1", "may not be used in this revision")
}

// day0World applies p's bootstrap as day 0 and returns the world's
// directory, with the ledger after it.
func day0World(t *testing.T, pl *Planner, p *persona.Persona) (string, *skill.State) {
	t.Helper()
	res, err := Implement(pl.Skills, pl.Definitions, &ImplJob{Persona: *p, Plan: Day{Day: 0, Clock: skill.Clock(0), Events: skill.Bootstrap(p)}})
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "day-00")
	if err := delta.ApplyCopy(context.Background(), "", dir, res.Delta, &delta.Options{Generators: generator.Default()}); err != nil {
		t.Fatal(err)
	}
	return dir, res.State
}

func day1Plan(p *persona.Persona) Day {
	return Day{Day: 1, Clock: skill.Clock(1), Events: []skill.Event{
		skill.E("dm_conversation", skill.Conversation{Thread: "dm-ada-quill", Title: "Ada Quill", With: []string{"Ada Quill"}, Messages: []skill.Msg{
			{From: "Ada Quill", Body: "The rye flour is in; shall I deliver Thursday?", At: skill.At(1, "09:00"), Read: true},
			{From: p.Name, Body: "Thursday works, thanks Ada.", At: skill.At(1, "09:20")},
		}}),
	}}
}

func TestLLMImplementReadsTheWorldAndExtendsThePlan(t *testing.T) {
	p := smallPersona()
	pl := &Planner{Skills: skill.All()}
	parent, st := day0World(t, pl, p)
	job := &ImplJob{Persona: *p, Plan: day1Plan(p), State: st, ParentDir: parent}
	note := `{"op": "file.write", "path": "notes/rye.md", "content": "Rye flour: Thursday delivery (Ada).\n"}`
	lt := newLLMTest(t, pl, LLMOptions{},
		calls(tc("query_world", `{"db": "messages", "sql": "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"}`),
			tc("query_world", `{"db": "messages", "sql": "UPDATE threads SET title = 'x'"}`),
			tc("query_world", `{"db": "messages", "sql": "SELECT 1; DELETE FROM threads"}`),
			tc("query_world", `{"db": "nowhere", "sql": "SELECT 1"}`),
			tc("query_world", `{"db": "shop", "sql": "WITH a AS (SELECT 1) DELETE FROM orders"}`),
			tc("query_world", `{"db": "shop", "sql": "SELECT load_extension('x')"}`)),
		calls(tc("list_files", `{}`), tc("read_file", `{"path": "notes/logins.md"}`), tc("read_file", `{"path": "../manifest.json"}`),
			tc("propose_ops", `{"ops": [`+note+`]}`)),
		calls(tc("emit_plan", `{}`)),
		calls(tc("propose_ops", `{"ops": [{"op": "db.insert", "db": "messages", "table": "no_such_table", "key": {"x": 1}, "values": {}}]}`)),
		calls(tc("propose_ops", `{"ops": [{"op": "db.update", "db": "messages", "table": "threads", "key": {"ext_id": "dm-nobody"}, "set": {"title": "Nobody"}}]}`),
			tc("submit", `{}`)),
		calls(tc("reset_ops", `{}`), tc("propose_ops", `{"ops": [`+note+`]}`), tc("submit", `{}`)),
	)
	res, err := lt.llm.Implement(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(t, lt.srv, 2)
	var q struct {
		Columns []string `json:"columns"`
		Rows    [][]any  `json:"rows"`
	}
	if err := json.Unmarshal([]byte(r[0]), &q); err != nil {
		t.Fatalf("query_world: %v: %s", err, r[0])
	}
	if !slices.Equal(q.Columns, []string{"name"}) || !slices.ContainsFunc(q.Rows, func(row []any) bool { return row[0] == "threads" }) {
		t.Errorf("query_world: %s", r[0])
	}
	wantContains(t, "the UPDATE", r[1], "error:", "not UPDATE")
	wantContains(t, "two statements", r[2], "error:", "one statement only")
	wantContains(t, "no database", r[3], "error:", `no database "nowhere"`, "messages")
	wantContains(t, "WITH ... DELETE", r[4], "error:", "the query fails", "not authorized")
	wantContains(t, "load_extension", r[5], "error:", "the query fails", "not authorized")
	r = toolResults(t, lt.srv, 3)
	wantContains(t, "list_files", r[0], `"path":"notes/logins.md"`)
	wantContains(t, "read_file", r[1], "shop: user `lena.test`")
	wantContains(t, "read_file outside home", r[2], "error:", "leaves the home directory")
	wantContains(t, "propose_ops first", r[3], "error:", "call emit_plan first")
	wantContains(t, "emit_plan", toolResults(t, lt.srv, 4)[0], "db.insert messages.threads", `{"ext_id":"dm-ada-quill"}`)
	wantContains(t, "the bad op", toolResults(t, lt.srv, 5)[0], "error:", "refused and not kept", "no_such_table")
	r = toolResults(t, lt.srv, 6)
	wantContains(t, "the op lint cannot judge", r[0], "accepted:")
	wantContains(t, "its submit", r[1], "error:", "replay", "dm-nobody")

	want, err := Implement(pl.Skills, pl.Definitions, job)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Delta.Ops) != len(want.Delta.Ops)+1 {
		t.Fatalf("%d ops, want the plan's %d and the model's one", len(res.Delta.Ops), len(want.Delta.Ops))
	}
	if got := res.Delta.Ops[len(res.Delta.Ops)-1]; got.Op != delta.OpFileWrite || got.Path != "notes/rye.md" {
		t.Errorf("the model's op %+v", got)
	}
	if mustMarshal(t, res.State) != mustMarshal(t, want.State) {
		t.Errorf("the ledger differs from the plan's emission")
	}
	dst := filepath.Join(t.TempDir(), "day-01")
	if err := delta.ApplyCopy(context.Background(), parent, dst, res.Delta, &delta.Options{Generators: generator.Default()}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(dst, world.HomeDir, "notes", "rye.md")); err != nil || !strings.Contains(string(b), "Thursday") {
		t.Errorf("notes/rye.md: %q %v", b, err)
	}
	if rec := lt.records[0]; rec.Stage != StageImplement || rec.Turns != 6 || rec.Err != "" {
		t.Errorf("record %+v", rec)
	}
}

func TestLLMImplementDay0(t *testing.T) {
	p := smallPersona()
	pl := &Planner{Skills: skill.All()}
	cat := world.Hash([]byte("catalog"))
	job := &ImplJob{Persona: *p, Plan: Day{Day: 0, Clock: skill.Clock(0), Events: skill.Bootstrap(p)}, Catalog: cat}
	lt := newLLMTest(t, pl, LLMOptions{},
		calls(tc("query_world", `{"db": "mail", "sql": "SELECT 1"}`), tc("submit", `{}`)),
		calls(tc("emit_plan", `{}`), tc("submit", `{}`)),
	)
	res, err := lt.llm.Implement(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(t, lt.srv, 2)
	wantContains(t, "day 0's query", r[0], "error:", "day 0")
	wantContains(t, "submit first", r[1], "error:", "emit_plan first")
	if res.Delta.Catalog != cat || res.Delta.Day != 0 || len(res.Delta.Ops) == 0 || !res.State.Accounts["shop"] {
		t.Errorf("day 0: catalog %v, day %d, %d ops, accounts %v", res.Delta.Catalog, res.Delta.Day, len(res.Delta.Ops), res.State.Accounts)
	}
}

func TestLLMBudgetRunsOut(t *testing.T) {
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn { return fake.Turn{Content: "Let me think about the day."} })
	l := NewLLM(srv.Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{Budget: 3})
	_, err := l.Plan(context.Background(), &PlanJob{Persona: *smallPersona(), Day: 0})
	var se *StageError
	if !errors.Is(err, ErrBudget) || !errors.As(err, &se) || se.Stage != StagePlan || se.Turn != 3 {
		t.Fatalf("err %v, want the plan stage's budget error at turn 3", err)
	}
	wantContains(t, "the error", err.Error(), "budget", "3 model turns", "called no tool")
	if n := len(srv.Chats()); n != 3 {
		t.Errorf("%d chat requests, want the budget's 3", n)
	}
}

// TestLLMBudgetOfAcceptedCalls: a budget spent on accepted calls says so
// and what ends the stage (it once said "no tool was called" after 12
// accepted calls); the plan stage's default budget fits a day 0 of some
// thirty events proposed one a turn; completions are bounded by default.
func TestLLMBudgetOfAcceptedCalls(t *testing.T) {
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		return fake.Turn{ToolCalls: []fake.ToolCall{{Name: "read_ledger", Arguments: `{}`}}}
	})
	l := NewLLM(srv.Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{Budget: 3})
	_, err := l.Plan(context.Background(), &PlanJob{Persona: *smallPersona(), Day: 0})
	if !errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want the budget", err)
	}
	wantContains(t, "the error", err.Error(), "all 3 tool calls were accepted", "which ends the stage", "--budget")
	if strings.Contains(err.Error(), "no tool") {
		t.Errorf("the error blames a missing call: %v", err)
	}
	if c := srv.Chats()[0]; c.MaxTokens == nil || *c.MaxTokens != DefaultLLMMaxTokens {
		t.Errorf("max_tokens %v, want %d by default", c.MaxTokens, DefaultLLMMaxTokens)
	}
	d := NewLLM(srv.Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{})
	if d.budget(StagePlan) != DefaultPlanBudget || d.budget(StagePersona) != DefaultLLMBudget || DefaultPlanBudget < 30+4 {
		t.Errorf("default budgets: plan %d, persona %d", d.budget(StagePlan), d.budget(StagePersona))
	}
}

func TestLLMChatErrorNamesStageAndTurn(t *testing.T) {
	lt := newLLMTest(t, &Planner{Skills: skill.All()}, LLMOptions{},
		calls(tc("submit_persona", `{}`)))
	_, err := lt.llm.Persona(context.Background(), llmGrounding(), persona.Request{Days: 4})
	var se *StageError
	if !errors.As(err, &se) || se.Stage != StagePersona || se.Turn != 2 || errors.Is(err, ErrBudget) {
		t.Fatalf("err %v, want the persona stage's chat error at turn 2", err)
	}
	wantContains(t, "the error", err.Error(), "llm persona stage, turn 2", "script exhausted")
	if len(lt.records) != 1 || lt.records[0].Err == "" {
		t.Errorf("records %+v", lt.records)
	}
}

func TestSelectOnly(t *testing.T) {
	for q, ok := range map[string]bool{
		"SELECT 1":             true,
		"  -- c\n select 1;  ": true,
		"/* x */ WITH a AS (SELECT 1) SELECT * FROM a": true,
		"SELECT ';' AS semi":                           true,
		"SELECT 1; SELECT 2":                           false,
		"DELETE FROM t":                                false,
		"PRAGMA query_only = 0":                        false,
		"":                                             false,
		"SELECT 'unterminated":                         false,
		"/* open":                                      false,
	} {
		if _, err := selectOnly(q); (err == nil) != ok {
			t.Errorf("selectOnly(%q): %v, want ok=%v", q, err, ok)
		}
	}
}

func TestLLMQueryCatalogCapsRows(t *testing.T) {
	dir := t.TempDir()
	path := world.DBPath(dir, "catalog")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	db, err := state.OpenDB(path, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE products (sku TEXT PRIMARY KEY, title TEXT)`); err != nil {
		t.Fatal(err)
	}
	for i := range MaxQueryRows + 50 {
		if _, err := db.Exec(`INSERT INTO products VALUES (?, ?)`, fmt.Sprintf("SKU-%03d", i), "Kettle"); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	l := NewLLM(fake.New(t).Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{CatalogDir: dir})
	qc, ok := l.queryCatalog()
	if !ok {
		t.Fatal("no query_catalog with a CatalogDir")
	}
	out, err := qc.run(context.Background(), json.RawMessage(`{"sql": "SELECT sku, title FROM products ORDER BY sku"}`))
	if err != nil || out.refused {
		t.Fatalf("%v %q", err, out.text)
	}
	body, note, _ := strings.Cut(out.text, "\n")
	var q queryResult
	if err := json.Unmarshal([]byte(body), &q); err != nil {
		t.Fatal(err)
	}
	if len(q.Rows) != MaxQueryRows || !q.Truncated || !strings.Contains(note, "cut at 200 rows") || q.Rows[0][0] != "SKU-000" {
		t.Errorf("%d rows, truncated %v, note %q", len(q.Rows), q.Truncated, note)
	}
	out, _ = qc.run(context.Background(), json.RawMessage(`{"sql": "INSERT INTO products VALUES ('x', 'y')"}`))
	wantContains(t, "the INSERT", out.text, "error:", "not INSERT")
	if _, ok := NewLLM(fake.New(t).Client(t, nil), &Planner{Skills: skill.All()}, LLMOptions{}).queryCatalog(); ok {
		t.Error("query_catalog without a catalog")
	}
}
