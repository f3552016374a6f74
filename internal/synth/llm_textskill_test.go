package synth

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/validate"
)

func TestLLMTextSkillThroughPlanAndImplement(t *testing.T) {
	p := smallPersona()
	root := t.TempDir()
	defs, err := OpenLibrary(filepath.Join(root, "library"))
	if err != nil {
		t.Fatal(err)
	}
	pl := &Planner{Skills: skill.All(), Definitions: defs}
	good := map[string]any{
		"name": "bake_log", "summary": "The persona logs the day's bakes in a markdown file.",
		"interfaces": []string{"cli"}, "changes": []string{"a line per bake in notes/bake-log.md"},
		"constraints": []string{"the bakes are of the day"}, "example": map[string]any{"loaf": "rye", "count": 12},
	}
	bad := map[string]any{
		"name": "Bake-Log", "summary": "x", "interfaces": []string{"phone"}, "changes": []string{},
		"constraints": []string{" "}, "example": map[string]any{},
	}
	taken := with(good, "name", "dm_conversation")
	changed := with(good, "summary", "Another summary.")
	plan := newLLMTest(t, pl, LLMOptions{},
		calls(tc("add_skill", mustMarshal(t, bad)), tc("add_skill", mustMarshal(t, taken)), tc("add_skill", mustMarshal(t, good))),
		calls(tc("add_skill", mustMarshal(t, changed)), tc("list_skills", `{"names": ["text:bake_log"]}`), tc("list_skills", `{}`),
			tc("propose_event", `{"skill": "bake_log", "params": {"loaf": "rye"}}`),
			tc("propose_event", `{"skill": "text:nothing", "params": {}}`),
			tc("propose_event", `{"skill": "text:bake_log", "params": [1]}`),
			tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`),
			tc("propose_event", `{"skill": "text:bake_log", "params": {"loaf": "rye", "count": 12}}`)),
		calls(tc("finish_day", `{}`)),
	)
	day, err := plan.llm.Plan(context.Background(), &PlanJob{Persona: *p, Day: 0, Definitions: defs.ByName})
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(t, plan.srv, 2)
	wantContains(t, "the bad skill", r[0], "error:", `name "Bake-Log" is not lower_snake`, `interfaces[0] "phone"`, "changes is empty", "constraints[0] is empty")
	wantContains(t, "the taken name", r[1], "error:", "dm_conversation", "a skill of the library already")
	wantContains(t, "the good skill", r[2], "added: text skill bake_log", "text:bake_log")
	r = toolResults(t, plan.srv, 3)
	wantContains(t, "the changed skill", r[0], "error:", "bake_log", "bake_log_v2")
	wantContains(t, "list_skills by name", r[1], `"name":"text:bake_log"`, textNote, `"example":{"count":12,"loaf":"rye"}`)
	wantContains(t, "list_skills", r[2], `"name":"provision_service"`, `"name":"text:bake_log"`)
	wantContains(t, "the bare name", r[3], "error:", `propose it as "text:bake_log"`)
	wantContains(t, "the unknown text skill", r[4], "error:", `no text skill "text:nothing"`, "text:bake_log")
	wantContains(t, "the array params", r[5], "error:", "one JSON object")
	wantContains(t, "the library's event", r[6], "accepted: event 0")
	wantContains(t, "the text event", r[7], "accepted: event 1 (text:bake_log)")
	b, err := os.ReadFile(filepath.Join(root, "skills", "bake_log.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc skill.Doc
	if err := json.Unmarshal(b, &doc); err != nil || doc.Summary != good["summary"] {
		t.Errorf("skills/bake_log.json: %v %s", err, b)
	}
	if len(day.Events) != 2 || day.Events[1].Skill != "text:bake_log" || string(day.Events[1].Params) != `{"loaf":"rye","count":12}` {
		t.Fatalf("events %s", mustMarshal(t, day.Events))
	}

	job := &ImplJob{Persona: *p, Plan: *day}
	note := `{"op": "file.write", "path": "notes/bake-log.md", "content": "- 12 rye loaves\n"}`
	impl := newLLMTest(t, pl, LLMOptions{},
		calls(tc("emit_plan", `{}`), tc("submit", `{}`)),
		calls(tc("propose_ops", `{"ops": [`+note+`]}`), tc("submit", `{}`)),
	)
	res, err := impl.llm.Implement(context.Background(), job)
	if err != nil {
		t.Fatal(err)
	}
	r = toolResults(t, impl.srv, 2)
	wantContains(t, "emit_plan's to-do", r[0], "to do: 1 events of text skills", `event 1 text:bake_log {"loaf":"rye","count":12}`, "the skill:", "notes/bake-log.md")
	wantContains(t, "submit without ops", r[1], "error:", "text skills", "propose_ops")
	if last := res.Delta.Ops[len(res.Delta.Ops)-1]; last.Path != "notes/bake-log.md" {
		t.Errorf("the last op %+v", last)
	}

	// The check's skill reviews skip the text event.
	st, err := store.Init(filepath.Join(root, "store"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	chk := &validate.Checker{Generators: generator.Default(), Store: st, Skills: pl.Skills}
	rep, err := chk.Check(context.Background(), validate.Input{Persona: p, Delta: res.Delta, Events: day.Events, Dir: filepath.Join(root, "day-00"), Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Layers, func(l validate.Layer) bool { return l.Name == validate.Review })
	if !rep.OK || i < 0 || !rep.Layers[i].OK {
		t.Fatalf("report: %q", rep.Problems())
	}
}

// with returns a copy of m with k set to v.
func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{}
	for kk, vv := range m {
		out[kk] = vv
	}
	out[k] = v
	return out
}

func TestCheckTextSkill(t *testing.T) {
	ok := skill.Doc{Name: "bake_log", Summary: "s", Interfaces: []string{"gui", "mcp"}, Changes: []string{"c"}, Constraints: []string{"k"}, Example: json.RawMessage(`{}`)}
	if got := CheckTextSkill(ok, skill.All()); len(got) != 0 {
		t.Errorf("a good skill: %q", got)
	}
	for _, name := range []string{"", "_x", "x__y", "x_", "9x", "x-y", strings.Repeat("a", 49)} {
		d := ok
		d.Name = name
		if got := CheckTextSkill(d, nil); len(got) != 1 {
			t.Errorf("name %q: %q", name, got)
		}
	}
}
