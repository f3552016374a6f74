package synth

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/store"
	"github.com/wildawm/wildawm/internal/validate"
)

// checkDay0WithReviewer checks smallPersona's day 0 with the llm
// reviewer on script and returns the report and the review layer.
func checkDay0WithReviewer(t *testing.T, script ...fake.Turn) (*validate.Report, validate.Layer, *llmTest) {
	t.Helper()
	p := smallPersona()
	pl := &Planner{Skills: skill.All()}
	plan := Day{Day: 0, Clock: skill.Clock(0), Events: skill.Bootstrap(p)}
	res, err := Implement(pl.Skills, pl.Definitions, &ImplJob{Persona: *p, Plan: plan})
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Init(filepath.Join(t.TempDir(), "store"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	lt := newLLMTest(t, pl, LLMOptions{}, script...)
	chk := &validate.Checker{Generators: generator.Default(), Store: st, Skills: pl.Skills, Reviewer: lt.llm.Reviewer()}
	rep, err := chk.Check(context.Background(), validate.Input{Persona: p, Delta: res.Delta, Events: plan.Events, Dir: filepath.Join(t.TempDir(), "day-00"), Day: 0})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(rep.Layers, func(l validate.Layer) bool { return l.Name == validate.Review })
	if i < 0 {
		t.Fatalf("no review layer: %+v", rep.Layers)
	}
	return rep, rep.Layers[i], lt
}

func TestLLMReviewerProblemsFailTheDay(t *testing.T) {
	rep, review, lt := checkDay0WithReviewer(t,
		calls(tc("query_world", `{"db": "messages", "sql": "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name"}`), tc("read_plan", `{}`)),
		calls(tc("verdict", `{"ok": false, "problems": ["event 1: the thread with Ada Quill is empty"]}`)),
	)
	if rep.OK || review.OK || review.Skipped != "" {
		t.Fatalf("report ok %v, review %+v: want the review to fail", rep.OK, review)
	}
	if !slices.Contains(review.Problems, ReviewPrefix+"event 1: the thread with Ada Quill is empty") {
		t.Errorf("review problems %q", review.Problems)
	}
	if !slices.Contains(rep.Events, 1) {
		t.Errorf("implicated events %v, want event 1", rep.Events)
	}
	r := toolResults(t, lt.srv, 2)
	wantContains(t, "query_world on the day's world", r[0], `"columns":["name"]`, `"threads"`)
	wantContains(t, "read_plan", r[1], "## Events", "provision_service", "## Operations", "db.insert")
	chats := lt.srv.Chats()
	wantContains(t, "the system prompt", chats[0].Messages[0].Content, "reviewer")
	wantContains(t, "the job", chats[0].Messages[1].Content, "Review day 0", "Lena Test", "messages")
	if rec := lt.records[0]; rec.Stage != StageReview || rec.Prompt != "prompts/review.md" || rec.Err != "" {
		t.Errorf("record %+v", rec)
	}
}

func TestLLMReviewerOKPasses(t *testing.T) {
	rep, review, _ := checkDay0WithReviewer(t, calls(tc("verdict", `{"ok": true, "problems": []}`)))
	if !rep.OK || !review.OK || len(review.Problems) != 0 {
		t.Fatalf("report ok %v, review %+v: want it to pass", rep.OK, review)
	}
}

func TestLLMReviewerRetriesMalformedVerdicts(t *testing.T) {
	rep, review, lt := checkDay0WithReviewer(t,
		calls(tc("verdict", `{"ok": "yes"}`)),
		calls(tc("verdict", `{"ok": true, "problems": ["event 0: odd"]}`)),
		calls(tc("verdict", `{"ok": false, "problems": []}`)),
		calls(tc("verdict", `{"ok": false, "problems": ["  "]}`)),
		calls(tc("verdict", `{"problems": []}`)),
		calls(tc("verdict", `{"ok": true, "problems": []}`)),
	)
	if !rep.OK || !review.OK {
		t.Fatalf("report ok %v, review %+v: want the last verdict's pass", rep.OK, review)
	}
	for n, want := range map[int]string{2: "verdict's arguments", 3: "ok is true but 1 problems", 4: "ok is false but no problem", 5: "problems[0] is empty", 6: "verdict needs ok"} {
		r := toolResults(t, lt.srv, n)
		if len(r) != 1 || !strings.HasPrefix(r[0], "error:") || !strings.Contains(r[0], want) {
			t.Errorf("request %d's tool results %q, want an error with %q", n, r, want)
		}
	}
	if rec := lt.records[0]; rec.Turns != 6 || rec.Refused != 5 {
		t.Errorf("record %+v", rec)
	}
}

func TestLLMReviewerWithoutVerdictIsAnError(t *testing.T) {
	p := smallPersona()
	pl := &Planner{Skills: skill.All()}
	dir, _ := day0World(t, pl, p)
	lt := newLLMTest(t, pl, LLMOptions{Budget: 1}, calls(tc("read_plan", `{}`)))
	_, err := lt.llm.Reviewer().Review(context.Background(), validate.Input{Persona: p, Day: 0}, dir)
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "llm review stage") {
		t.Fatalf("err %v, want the review stage's budget error", err)
	}
}
