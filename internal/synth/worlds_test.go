package synth_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/wildawm/wildawm/internal/catalog"
	"github.com/wildawm/wildawm/internal/delta"
	"github.com/wildawm/wildawm/internal/generator"
	"github.com/wildawm/wildawm/internal/persona"
	"github.com/wildawm/wildawm/internal/runtime"
	"github.com/wildawm/wildawm/internal/skill"
	"github.com/wildawm/wildawm/internal/synth"
	"github.com/wildawm/wildawm/internal/validate"
	"github.com/wildawm/wildawm/internal/world"
)

// catalogDir is one built catalog the tests' runs share (building it
// takes seconds): each run's directory links to it.
var catalogDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "wildawm-synth-catalog-")
	if err != nil {
		panic(err)
	}
	catalogDir = filepath.Join(dir, "catalog")
	if _, err := catalog.Build(context.Background(), catalogDir, generator.Default(), catalog.BuildOptions{Seed: catalog.DefaultSeed}); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func openRun(t *testing.T, dir string, health bool) *synth.Run {
	t.Helper()
	ctx := context.Background()
	if _, err := os.Stat(filepath.Join(dir, "catalog")); err != nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(catalogDir, filepath.Join(dir, "catalog")); err != nil {
			t.Fatal(err)
		}
	}
	o := synth.OpenOptions{Dir: dir, Seed: 5}
	if health {
		runtime.SkipUnlessInstancesRun(t)
		rd, err := os.MkdirTemp("", "wildawm-synth-test-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(rd) })
		o.RunDir = rd
	}
	r, closeRun, err := synth.Open(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(closeRun)
	return r
}

func doneHashes(t *testing.T, r *synth.Run, ps []*persona.Persona) map[string]world.ID {
	t.Helper()
	out := map[string]world.ID{}
	for _, p := range ps {
		for day := 0; day < p.Days; day++ {
			b, err := os.ReadFile(filepath.Join(r.DayDir(p.ID, day), "done.json"))
			if err != nil {
				t.Fatalf("%s day %d: %v", p.ID, day, err)
			}
			var d synth.Done
			if err := json.Unmarshal(b, &d); err != nil {
				t.Fatal(err)
			}
			out[p.ID+"/"+string(rune('a'+day))] = d.Hash
		}
	}
	return out
}

// TestWorldsResumeAndDeterminism interrupts a run after three accepted
// days, resumes it, and checks that the resumed run skips what was done
// and ends with the same states as a run that was never interrupted.
func TestWorldsResumeAndDeterminism(t *testing.T) {
	ctx := context.Background()
	days := func(i int) int { return 3 + i }
	root := t.TempDir()

	whole := openRun(t, filepath.Join(root, "whole"), false)
	ps, _, err := whole.Personas(ctx, 2, days, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := whole.Worlds(ctx, ps, 2); err != nil {
		t.Fatal(err)
	}
	want := doneHashes(t, whole, ps)

	r := openRun(t, filepath.Join(root, "cut"), false)
	ps2, _, err := r.Personas(ctx, 2, days, "")
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	var n atomic.Int64
	r.Progress = func(p synth.Progress) {
		if p.OK && n.Add(1) == 3 {
			cancel()
		}
	}
	if err := r.Worlds(cctx, ps2, 1); !errors.Is(err, context.Canceled) {
		t.Fatalf("interrupted run: got %v, want context.Canceled", err)
	}
	r2 := openRun(t, filepath.Join(root, "cut"), false)
	var resumed, fresh atomic.Int64
	r2.Progress = func(p synth.Progress) {
		if p.Resumed {
			resumed.Add(1)
		} else if p.OK {
			fresh.Add(1)
		}
	}
	if err := r2.Worlds(ctx, ps2, 2); err != nil {
		t.Fatal(err)
	}
	if resumed.Load() < 3 || resumed.Load()+fresh.Load() != 7 {
		t.Errorf("resumed %d days and made %d, want at least 3 resumed of 7", resumed.Load(), fresh.Load())
	}
	got := doneHashes(t, r2, ps2)
	for k, h := range want {
		if got[k] != h {
			t.Errorf("%s: resumed run's state %s, uninterrupted run's %s", k, got[k].Short(), h.Short())
		}
	}
	tb, err := r2.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if tb.States != 7 || tb.Personas != 2 || tb.Records == 0 || tb.StoreRatio <= 0 {
		t.Errorf("stats: %+v", tb)
	}
	if !strings.Contains(tb.Markdown(), "| world states | 7 | 640 |") {
		t.Errorf("markdown:\n%s", tb.Markdown())
	}
	// Re-checking an accepted day that now fails (its plan gains an event
	// the delta lacks) reports it and keeps the accepted state.
	last := ps2[0].Days - 1
	planPath := filepath.Join(r2.DayDir(ps2[0].ID, last), "plan.json")
	orig, _ := os.ReadFile(planPath)
	var plan synth.Day
	json.Unmarshal(orig, &plan)
	plan.Events = append(plan.Events, skill.E("write_note", skill.Note{Path: "notes/never.md", Title: "Never", Body: "x"}))
	b, _ := json.Marshal(plan)
	os.WriteFile(planPath, b, 0o644)
	rep, err := r2.ValidateDay(ctx, ps2[0], last)
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK {
		t.Error("the re-check of a changed plan passed")
	}
	os.WriteFile(planPath, orig, 0o644)
	var done synth.Done
	b, _ = os.ReadFile(filepath.Join(r2.DayDir(ps2[0].ID, last), "done.json"))
	json.Unmarshal(b, &done)
	if _, err := r2.Store.Load(done.Snapshot); err != nil {
		t.Errorf("the failed re-check dropped the accepted state: %v", err)
	}
	if rep, err := r2.ValidateDay(ctx, ps2[0], last); err != nil || !rep.OK {
		t.Errorf("the re-check of the accepted day: %v %v", err, rep.Problems())
	}
	// The check stage as a job: its JSON, decoded, runs alone.
	var day0 synth.Done
	b, _ = os.ReadFile(filepath.Join(r2.DayDir(ps2[0].ID, 0), "done.json"))
	json.Unmarshal(b, &day0)
	var p1 synth.Day
	b, _ = os.ReadFile(filepath.Join(r2.DayDir(ps2[0].ID, 1), "plan.json"))
	json.Unmarshal(b, &p1)
	df, _ := os.Open(filepath.Join(r2.DayDir(ps2[0].ID, 1), "delta.json"))
	d1, err := delta.Parse(df)
	df.Close()
	if err != nil {
		t.Fatal(err)
	}
	job, err := json.Marshal(&synth.CheckJob{Persona: *ps2[0], Day: 1, Delta: d1, Events: p1.Events, Parent: day0.Snapshot, Recheck: true})
	if err != nil {
		t.Fatal(err)
	}
	var decoded synth.CheckJob
	if err := json.Unmarshal(job, &decoded); err != nil {
		t.Fatal(err)
	}
	if rep, err := r2.Check(ctx, &decoded); err != nil || !rep.OK || rep.Hash != want[ps2[0].ID+"/b"] {
		t.Errorf("the decoded check job: %v %v, hash %s", err, rep.Problems(), rep.Hash.Short())
	}
	rb, err := r2.Prebake(ctx, ps2[1], ps2[1].Days-1, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range rb {
		if !x.Equal {
			t.Errorf("rebaked day %d: %s, stored %s", x.Day, x.Rebuilt.Short(), x.Stored.Short())
		}
	}
}

// noisy is a generator registry whose csv output differs on every call: a
// nondeterministic delta, which the replay layer must catch.
type noisy struct {
	delta.Generators
	n atomic.Int64
}

func (g *noisy) Generate(name string, params json.RawMessage) ([]byte, error) {
	b, err := g.Generators.Generate(name, params)
	if name == "csv" {
		b = append(b, []byte(strings.Repeat("x", int(g.n.Add(1))))...)
	}
	return b, err
}

// TestEachLayerRejects builds a good day 1 and breaks it once per layer
// (a name another persona reserves, a nondeterministic generator, a
// produced row the delta never writes, an event the delta does not hold),
// and checks the right layer rejects it, through the real checker.
func TestEachLayerRejects(t *testing.T) {
	ctx := context.Background()
	r := openRun(t, t.TempDir(), false)
	ps, _, err := r.Personas(ctx, 2, func(int) int { return 2 }, "")
	if err != nil {
		t.Fatal(err)
	}
	r.SetIdentities(ps)
	p, other := ps[0], ps[1]
	if err := r.World(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	var day0 synth.Done
	b, _ := os.ReadFile(filepath.Join(r.DayDir(p.ID, 0), "done.json"))
	json.Unmarshal(b, &day0)
	parent := filepath.Join(t.TempDir(), "parent")
	if err := r.Store.Checkout(ctx, day0.Snapshot, parent); err != nil {
		t.Fatal(err)
	}
	var st skill.State
	b, _ = os.ReadFile(filepath.Join(r.DayDir(p.ID, 0), "state.json"))
	json.Unmarshal(b, &st)

	good := func() (*synth.Day, *delta.Delta) {
		plan := &synth.Day{Day: 1, Clock: skill.Clock(1), Events: []skill.Event{
			skill.E("write_note", skill.Note{Path: "notes/plan.md", Title: "Plan", Body: "Call " + p.Contacts[0].Name + "."}),
			skill.E("update_inventory", skill.Inventory{Path: "inventory/list.csv", Rows: [][]any{{"A-1", "thing", 1, "shelf"}}}),
		}}
		res, err := synth.Implement(skill.All(), r.Defs, &synth.ImplJob{Persona: *p, Plan: *plan, State: &st})
		if err != nil {
			t.Fatal(err)
		}
		return plan, res.Delta
	}
	check := func(c *validate.Checker, plan *synth.Day, d *delta.Delta) *validate.Report {
		t.Helper()
		rep, err := c.Check(ctx, validate.Input{Persona: p, Delta: d, Events: plan.Events, ParentDir: parent, ParentSnap: day0.Snapshot, Day: 1,
			Dir: filepath.Join(t.TempDir(), "world")})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	failedAt := func(rep *validate.Report) string {
		for _, l := range rep.Layers {
			if !l.OK && l.Skipped == "" {
				return l.Name
			}
		}
		return ""
	}
	plan, d := good()
	if rep := check(r.Checker, plan, d); !rep.OK || failedAt(rep) != "" {
		t.Fatalf("the good day fails: %v", rep.Problems())
	}

	plan, d = good()
	d.Ops[0].Generator.Params = json.RawMessage(strings.Replace(string(d.Ops[0].Generator.Params), p.Contacts[0].Name, other.Contacts[0].Name, 1))
	if rep := check(r.Checker, plan, d); failedAt(rep) != validate.Lint || !strings.Contains(strings.Join(rep.Problems(), " "), other.ID) {
		t.Errorf("a name of %s: failed at %q: %v", other.ID, failedAt(rep), rep.Problems())
	}

	plan, d = good()
	c := *r.Checker
	c.Generators = &noisy{Generators: generator.Default()}
	if rep := check(&c, plan, d); failedAt(rep) != validate.Replay {
		t.Errorf("a nondeterministic generator: failed at %q: %v", failedAt(rep), rep.Problems())
	}

	plan, d = good()
	d.Produces.Files = append(d.Produces.Files, "notes/never-written.md")
	if rep := check(r.Checker, plan, d); failedAt(rep) != validate.Produces {
		t.Errorf("a produced file never written: failed at %q: %v", failedAt(rep), rep.Problems())
	}

	plan, d = good()
	plan.Events = append(plan.Events, skill.E("write_note", skill.Note{Path: "notes/missing.md", Title: "Missing", Body: "never emitted"}))
	rep := check(r.Checker, plan, d)
	if failedAt(rep) != validate.Review || len(rep.Events) != 1 || rep.Events[0] != 2 {
		t.Errorf("an event the delta lacks: failed at %q, events %v: %v", failedAt(rep), rep.Events, rep.Problems())
	}
	if rep.Snapshot != (world.ID{}) || !rep.Forgot {
		t.Errorf("a rejected candidate kept its snapshot %s (forgot %v)", rep.Snapshot.Short(), rep.Forgot)
	}
}

// brokenNote writes a note whose review always finds it wrong: the day
// that draws it fails its check, and the revision must leave it out.
type brokenParams struct {
	Path string `json:"path"`
}

func brokenSkill() skill.Skill {
	return skill.Make(skill.Def[brokenParams]{
		Doc: skill.Doc{Name: "broken_note", Summary: "A note whose review always fails.", Interfaces: []string{skill.CLI},
			Changes: []string{"a note"}, Constraints: []string{"none kept"}},
		Emit: func(b *skill.Builder, p *brokenParams) error {
			b.Op(delta.Op{Op: delta.OpFileWrite, Path: p.Path, Content: ptr("written\n")})
			b.FileWritten(p.Path, "text")
			return nil
		},
		Propose: func(d *skill.Draw) (*brokenParams, error) {
			return &brokenParams{Path: "notes/broken-" + d.Date() + ".txt"}, nil
		},
		Review: func(c *skill.Check, p *brokenParams) []string { return c.FileHas(p.Path, "what was never written") },
	})
}

func ptr(s string) *string { return &s }

// TestFailedDayIsRevised grows a world with a skill library in which one
// skill always fails the reviewer: days that draw it fail their check and
// are revised without it, and every day is accepted.
func TestFailedDayIsRevised(t *testing.T) {
	ctx := context.Background()
	r := openRun(t, t.TempDir(), false)
	base := skill.All()
	var list []skill.Skill
	for _, n := range base.Names() {
		sk, _ := base.Lookup(n)
		list = append(list, *sk)
	}
	// Three copies weigh the broken skill so that some day's first draft
	// holds one.
	for i := range 3 {
		b := brokenSkill()
		b.Name = b.Name + "_" + string(rune('a'+i))
		list = append(list, b)
	}
	lib, err := skill.NewLibrary(list...)
	if err != nil {
		t.Fatal(err)
	}
	pl := &synth.Planner{Skills: lib, Catalog: r.Planner().Catalog, Definitions: r.Defs}
	r.Backend = &synth.Procedural{Planner: pl}
	r.Checker.Skills = lib
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 4 }, "")
	if err != nil {
		t.Fatal(err)
	}
	revised := 0
	r.Progress = func(p synth.Progress) {
		if !p.OK {
			t.Errorf("%s day %d failed after %d attempts", p.Persona, p.Day, p.Attempts)
		}
		if p.Attempts > 1 {
			revised++
		}
	}
	if err := r.Worlds(ctx, ps, 1); err != nil {
		t.Fatal(err)
	}
	if revised == 0 {
		t.Fatal("no day was revised: the broken skill was never drawn, or its failure never reached the check")
	}
	var reports []validate.Report
	b, _ := os.ReadFile(filepath.Join(r.DayDir(ps[0].ID, 1), "report.json"))
	json.Unmarshal(b, &reports)
	if len(reports) > 1 && (reports[0].OK || !strings.Contains(strings.Join(reports[0].Problems(), " "), "broken_note")) {
		t.Errorf("day 1's first report: %+v", reports[0])
	}
	if r.Forgotten() == 0 {
		t.Error("the rejected candidates' snapshots were kept")
	}
}

// TestHealthLayerRejects checks layer 4 through live instances: a day
// that deletes the note holding the web logins fails live health.
func TestHealthLayerRejects(t *testing.T) {
	ctx := context.Background()
	r := openRun(t, t.TempDir(), true)
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 2 }, "")
	if err != nil {
		t.Fatal(err)
	}
	p := ps[0]
	r.SetIdentities(ps)
	if err := r.World(ctx, p, 0); err != nil {
		t.Fatal(err)
	}
	var day0 synth.Done
	b, _ := os.ReadFile(filepath.Join(r.DayDir(p.ID, 0), "done.json"))
	json.Unmarshal(b, &day0)
	parent := filepath.Join(t.TempDir(), "parent")
	if err := r.Store.Checkout(ctx, day0.Snapshot, parent); err != nil {
		t.Fatal(err)
	}
	d := &delta.Delta{Version: delta.Version, Persona: p.ID, Day: 1, Clock: skill.Clock(1), Ops: []delta.Op{{Op: delta.OpFileDelete, Path: skill.LoginsFile}}}
	rep, err := r.Checker.Check(ctx, validate.Input{Persona: p, Delta: d, ParentDir: parent, ParentSnap: day0.Snapshot, Dir: filepath.Join(t.TempDir(), "w"), Day: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.OK || rep.Layers[3].OK || !strings.Contains(strings.Join(rep.Layers[3].Problems, " "), "credential") {
		t.Fatalf("deleting %s passed live health: %+v", skill.LoginsFile, rep.Layers)
	}
}

// draftFails is a backend whose persona draft fails at index fail (a
// model call that failed for good); it counts the drafts it is asked for.
type draftFails struct {
	synth.Backend
	fail  int
	asked []int
}

func (b *draftFails) Persona(ctx context.Context, g *persona.Grounding, req persona.Request) (*persona.Persona, error) {
	b.asked = append(b.asked, req.Index)
	if req.Index == b.fail {
		return nil, errors.New("HTTP 502 from the model server")
	}
	return b.Backend.Persona(ctx, g, req)
}

// TestPersonasKeptWhenADraftFails: a persona draft that fails ends the
// stage with an error that says what is kept, but the personas accepted
// before it are written; the next run resumes at the failed draft and ends
// with the personas of a run that never failed.
func TestPersonasKeptWhenADraftFails(t *testing.T) {
	ctx := context.Background()
	days := func(int) int { return 2 }
	root := t.TempDir()
	whole := openRun(t, filepath.Join(root, "whole"), false)
	want, verdicts, err := whole.Personas(ctx, 3, days, "")
	if err != nil {
		t.Fatal(err)
	}
	second := -1
	for _, v := range verdicts {
		if v.OK && v.ID == want[1].ID {
			second = v.Index
		}
	}
	dir := filepath.Join(root, "cut")
	r := openRun(t, dir, false)
	r.Backend = &draftFails{Backend: r.Backend, fail: second}
	if _, _, err := r.Personas(ctx, 3, days, ""); err == nil || !strings.Contains(err.Error(), "HTTP 502") || !strings.Contains(err.Error(), "the 1 personas accepted before it are kept") || !strings.Contains(err.Error(), "run the same command again") {
		t.Fatalf("a failed draft: %v; want the failure, what is kept and how to resume", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "personas", want[0].ID, "bible.json")); err != nil {
		t.Fatalf("the persona accepted before the failure is lost: %v", err)
	}
	r2 := openRun(t, dir, false)
	b := &draftFails{Backend: r2.Backend, fail: -1}
	r2.Backend = b
	got, _, err := r2.Personas(ctx, 3, days, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(b.asked) == 0 || b.asked[0] != second {
		t.Errorf("the resumed run drafted %v; want it to start at the failed draft %d", b.asked, second)
	}
	if len(got) != 3 {
		t.Fatalf("%d personas", len(got))
	}
	for i := range got {
		if got[i].ID != want[i].ID {
			t.Errorf("persona %d: %s after the resume, %s in a run that never failed", i, got[i].ID, want[i].ID)
		}
	}
}

// brokenDays is a backend whose deltas from day from on delete a file
// that is not there: every attempt fails its check.
type brokenDays struct {
	synth.Backend
	from int
}

func (b brokenDays) Implement(ctx context.Context, job *synth.ImplJob) (*synth.ImplResult, error) {
	res, err := b.Backend.Implement(ctx, job)
	if err == nil && job.Plan.Day >= b.from {
		res.Delta.Ops = append(res.Delta.Ops, delta.Op{Op: delta.OpFileDelete, Path: "no/such/file.txt"})
	}
	return res, err
}

// TestWorldSaysADayFailed: growing one world to a day it cannot reach is
// an error naming the day, the attempts and the report (syn world once
// exited 0); in a run of many worlds it is that world's end, not the
// run's, and the days before it stay done.
func TestWorldSaysADayFailed(t *testing.T) {
	ctx := context.Background()
	r := openRun(t, t.TempDir(), false)
	ps, _, err := r.Personas(ctx, 1, func(int) int { return 3 }, "")
	if err != nil {
		t.Fatal(err)
	}
	r.Backend = brokenDays{Backend: r.Backend, from: 1}
	r.SetIdentities(ps)
	err = r.World(ctx, ps[0], 2)
	var df *synth.DayFailedError
	if !errors.As(err, &df) || df.Day != 1 || df.Attempts != synth.MaxRevisions+1 || !strings.Contains(err.Error(), "report.json") || !strings.Contains(err.Error(), "the world ends at day 0") {
		t.Fatalf("World to a day that cannot pass: %v; want a DayFailedError for day 1", err)
	}
	if _, err := os.Stat(filepath.Join(r.DayDir(ps[0].ID, 0), "done.json")); err != nil {
		t.Errorf("day 0 is not done: %v", err)
	}
	if err := r.Worlds(ctx, ps, 1); err != nil {
		t.Errorf("Worlds with one world ending early: %v; want no error of the run", err)
	}
}
