package synth

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/world"
)

// tallyYAML is a tiny service definition: one table, one read tool, one
// synthesis op.
const tallyYAML = `wildawm_service: 1
name: tally
title: Tally
version: "1"
instructions: >-
  The tally counters of {{self}}. Use list_counters to see them.
health_tool: list_counters
tables:
  - name: counters
    columns:
      - id INTEGER PRIMARY KEY
      - ext_id TEXT NOT NULL UNIQUE
      - name TEXT NOT NULL
      - count INTEGER NOT NULL DEFAULT 0
    key: [ext_id]
tools:
  - name: list_counters
    title: List counters
    description: Lists the counters sorted by name with their counts.
    annotations: {readOnlyHint: true, idempotentHint: true, openWorldHint: false}
    input:
      type: object
      properties: {}
    output:
      type: object
      properties:
        counters:
          type: array
          items:
            type: object
            properties:
              counter: {type: string}
              name: {type: string}
              count: {type: integer}
            required: [counter, name, count]
      required: [counters]
    steps:
      - result: >-
          SELECT json_object('counters', json(coalesce((SELECT json_group_array(json_object('counter', ext_id, 'name', name, 'count', count))
            FROM (SELECT * FROM counters ORDER BY name, ext_id)), '[]')))
ops:
  - name: add_counter
    example: {"ext_id": "cups", "name": "Cups of tea", "count": 2}
    description: One counter.
    params:
      type: object
      properties:
        ext_id: {type: string}
        name: {type: string}
        count: {type: integer, minimum: 0}
      required: [ext_id, name, count]
    emit:
      - insert: counters
        key: {ext_id: ":ext_id"}
        values: {name: ":name", count: ":count"}
`

func TestLLMPlanCreatesAService(t *testing.T) {
	p := smallPersona()
	dir := filepath.Join(t.TempDir(), "library")
	defs, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	shipped := len(defs.ByName)
	pl := &Planner{Skills: skill.All(), Definitions: defs}
	sum := world.Hash([]byte(tallyYAML)).String()
	badName := strings.Replace(tallyYAML, "name: tally\n", "name: shop\n", 1)
	lt := newLLMTest(t, pl, LLMOptions{},
		calls(tc("create_service", mustMarshal(t, map[string]string{"yaml": "wildawm_service: 1\nname: [oops"})),
			tc("create_service", mustMarshal(t, map[string]string{"yaml": badName}))),
		calls(tc("create_service", mustMarshal(t, map[string]string{"yaml": tallyYAML}))),
		calls(tc("create_service", mustMarshal(t, map[string]string{"yaml": tallyYAML + "# another version\n"})),
			tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`),
			tc("propose_event", mustMarshal(t, map[string]any{"skill": "define_service", "params": map[string]string{"name": "tally", "sha256": sum}})),
			tc("propose_event", `{"skill": "app_record", "params": {"service": "tally", "op": "add_counter", "params": {"ext_id": "loaves", "name": "Loaves baked", "count": 12}}}`)),
		calls(tc("finish_day", `{}`)),
	)
	day, err := lt.llm.Plan(context.Background(), &PlanJob{Persona: *p, Day: 0, Definitions: defs.ByName})
	if err != nil {
		t.Fatal(err)
	}
	r := toolResults(t, lt.srv, 2)
	wantContains(t, "the invalid YAML", r[0], "error:", "does not parse")
	wantContains(t, "the site's name", r[1], "error:", "shop is the name of a website")
	wantContains(t, "the valid definition", toolResults(t, lt.srv, 3)[0], "published: tally version 1", sum, "define_service")
	r = toolResults(t, lt.srv, 4)
	wantContains(t, "the changed definition", r[0], "error:", "tally is published already", "tally_v2")
	for i := 1; i < 4; i++ {
		wantContains(t, "an accepted event", r[i], "accepted: event")
	}
	if b, err := os.ReadFile(filepath.Join(dir, "tally.yaml")); err != nil || string(b) != tallyYAML {
		t.Errorf("the library's tally.yaml: %v", err)
	}
	lib, err := LoadLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if d, ok := lib.ByName["tally"]; !ok || d.Ref.SHA256.String() != sum {
		t.Errorf("the library's index: %+v", lib.ByName)
	}
	entries, err := readIndex(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Name == "tally" && e.By != "llm:lena-test/day 0" {
			t.Errorf("tally by %q", e.By)
		}
	}
	if d, ok := pl.Definitions.ByName["tally"]; !ok || d.Ref.SHA256.String() != sum {
		t.Errorf("the planner's definitions lack tally")
	}
	if len(defs.ByName) != shipped {
		t.Errorf("the job's map changed: %d definitions, want the shipped %d", len(defs.ByName), shipped)
	}
	if len(day.Events) != 3 || day.Events[1].Skill != "define_service" || !strings.Contains(string(day.Events[1].Params), sum) || day.Events[2].Skill != "app_record" {
		t.Fatalf("events %s", mustMarshal(t, day.Events))
	}
	res, err := Implement(pl.Skills, pl.Definitions, &ImplJob{Persona: *p, Plan: *day})
	if err != nil {
		t.Fatal(err)
	}
	if ref, ok := res.State.Services["tally"]; !ok || ref.SHA256.String() != sum {
		t.Errorf("the ledger's services %+v", res.State.Services)
	}
}

func TestLLMPlanCreatesServicesConcurrently(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "library")
	defs, err := OpenLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	pl := &Planner{Skills: skill.All(), Definitions: defs}
	yamlOf := func(name string) string { return strings.Replace(tallyYAML, "name: tally\n", "name: "+name+"\n", 1) }
	srv := fake.NewResponder(t, func(r fake.Request) fake.Turn {
		name := "tally_b"
		if strings.Contains(r.Messages[1].Content, "Lena Test") {
			name = "tally_a"
		}
		turn := 0
		for _, m := range r.Messages {
			if m.Role == "assistant" {
				turn++
			}
		}
		switch turn {
		case 0:
			return calls(tc("create_service", mustMarshal(t, map[string]string{"yaml": yamlOf(name)})))
		case 1:
			return calls(tc("propose_event", `{"skill": "provision_service", "params": {"db": "mail"}}`),
				tc("propose_event", mustMarshal(t, map[string]any{"skill": "define_service", "params": map[string]string{"name": name, "sha256": world.Hash([]byte(yamlOf(name))).String()}})))
		}
		return calls(tc("finish_day", `{}`))
	})
	l := NewLLM(srv.Client(t, &model.Options{MaxRetries: -1}), pl, LLMOptions{ScratchDir: t.TempDir()})
	a, b := smallPersona(), smallPersona()
	b.ID, b.Name = "max-test", "Max Test"
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, p := range []*persona.Persona{a, b} {
		wg.Go(func() {
			_, errs[i] = l.Plan(context.Background(), &PlanJob{Persona: *p, Day: 0, Definitions: defs.ByName})
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got := l.definitions().ByName
	if _, ok := got["tally_a"]; !ok {
		t.Error("tally_a missing from the planner's definitions")
	}
	if _, ok := got["tally_b"]; !ok {
		t.Error("tally_b missing from the planner's definitions")
	}
	lib, err := LoadLibrary(dir)
	if err != nil || lib.ByName["tally_a"].Path == "" || lib.ByName["tally_b"].Path == "" {
		t.Errorf("the library's index: %v %+v", err, lib.ByName)
	}
}
