package pool_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wildawm/wildawm/internal/agent"
	"github.com/wildawm/wildawm/internal/gate"
	"github.com/wildawm/wildawm/internal/model"
	"github.com/wildawm/wildawm/internal/model/fake"
	"github.com/wildawm/wildawm/internal/policy"
	"github.com/wildawm/wildawm/internal/pool"
	"github.com/wildawm/wildawm/internal/rollout"
	"github.com/wildawm/wildawm/internal/task"
	"github.com/wildawm/wildawm/internal/world"
)

// ratePool copies the fixture's tasks of families into a pool of the
// test's own and writes its index; it returns the pool and the index.
func ratePool(t *testing.T, f *fixture, families ...string) (*pool.Pool, string) {
	t.Helper()
	root := filepath.Join(f.dir, "rate", t.Name())
	os.RemoveAll(root)
	tasks := filepath.Join(root, "tasks")
	p := &pool.Pool{Version: pool.Version, TasksDir: tasks, Proportions: pool.DefaultProportions(), Counts: map[string]int{pool.SplitRL: len(families)}}
	for _, fam := range families {
		src := f.tasks[fam]
		dst := filepath.Join(tasks, filepath.Base(src))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.CopyFS(dst, os.DirFS(src)); err != nil {
			t.Fatal(err)
		}
		tk, err := task.Load(dst)
		if err != nil {
			t.Fatal(err)
		}
		p.Tasks = append(p.Tasks, pool.Entry{ID: tk.ID, Dir: filepath.Base(dst), Split: pool.SplitRL, Family: fam, Persona: tk.Provenance.Persona,
			Day: tk.Provenance.Day, Snapshot: tk.Provenance.Snapshot, Difficulty: "hard"})
	}
	p.Gated = len(p.Tasks)
	index := filepath.Join(root, pool.File)
	if err := p.Save(index); err != nil {
		t.Fatal(err)
	}
	p, err := pool.LoadPool(index)
	if err != nil {
		t.Fatal(err)
	}
	return p, index
}

// solver replays its task's reference (V 1) when solve says so, and
// gives up otherwise (V 0); it counts its runs.
type solver struct {
	tasks map[string]*task.Task
	solve func(t *task.Task, hint bool) bool
	runs  *atomic.Int32
}

func (s *solver) Name() string { return "scripted:rate-test" }

func (s *solver) Run(ctx context.Context, env *agent.Env, pub task.Public) (string, error) {
	s.runs.Add(1)
	t := s.tasks[pub.ID]
	if !s.solve(t, pub.Hint != "") {
		return "", rollout.ErrStopped
	}
	return policy.NewReplay("oracle", t, policy.ErrorModel{}, 1).Run(ctx, env, pub)
}

// tickClock moves a minute on each reading.
type tickClock struct{ n atomic.Int64 }

func (c *tickClock) Now() time.Time {
	return time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(c.n.Add(1)) * time.Minute)
}

// TestRateLevelsAndResume: a rating runs K hint-free and K hinted rollouts
// per task, scores them with the verifier and derives the level from the
// levels over K; interrupted, a rerun runs only the rollouts not stored;
// once complete, a rerun runs none and keeps the ratings and their dates;
// the index and the task's own files both hold the rating, beside the
// gate's difficulty.
func TestRateLevelsAndResume(t *testing.T) {
	f := setup(t)
	p, index := ratePool(t, f, "wishlist-balance", "model-pick")
	tasks := map[string]*task.Task{}
	family := map[string]string{}
	for _, e := range p.Tasks {
		family[e.ID] = e.Family
		tk, err := task.Load(p.TaskDir(e))
		if err != nil {
			t.Fatal(err)
		}
		tasks[e.ID] = tk
	}
	// The wishlist task is solved every time (too easy); the other only
	// with the hint (hard, 0 of 3; with the hint 3 of 3).
	solve := func(tk *task.Task, hint bool) bool { return family[tk.ID] == "wishlist-balance" || hint }
	var runs atomic.Int32
	levels, err := gate.Config{}.ScaleTo(3)
	if err != nil {
		t.Fatal(err)
	}
	clock := &tickClock{}
	rater := func(progress func(pool.RateProgress)) *pool.Rater {
		return &pool.Rater{Env: func(*task.Task) (pool.Worlds, error) { return f.env, nil }, K: 3, Levels: levels, Clock: clock, Progress: progress,
			Agent: pool.RateAgent{Name: "scripted rate-test agent", Slug: "rate-test", Policy: func() rollout.Policy {
				return &solver{tasks: tasks, solve: solve, runs: &runs}
			}}}
	}
	// Interrupted after three rollouts.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = rater(func(ev pool.RateProgress) {
		if ev.Done == 3 {
			cancel()
		}
	}).Rate(ctx, p, index)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("an interrupted rating: %v, want context.Canceled", err)
	}
	first := runs.Load()
	stored := 0
	for _, e := range p.Tasks {
		ms, _ := filepath.Glob(filepath.Join(p.TaskDir(e), pool.RateDir, "rate-test", "[rh][0-9].json"))
		stored += len(ms)
	}
	if stored != 3 || first < 3 {
		t.Fatalf("interrupted after 3 rollouts: %d stored, %d run", stored, first)
	}
	// The rerun runs the other 9 of 12.
	var last pool.RateProgress
	ratings, err := rater(func(ev pool.RateProgress) { last = ev }).Rate(context.Background(), p, index)
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Load() - first; n != 12-3 {
		t.Errorf("the resumed rating ran %d rollouts, want 9 (3 were stored)", n)
	}
	if last.Done != 12 || last.Total != 12 || last.Kept != 3 {
		t.Errorf("last progress %+v, want 12 of 12, 3 kept", last)
	}
	if len(ratings) != 2 {
		t.Fatalf("%d ratings, want 2: %+v", len(ratings), ratings)
	}
	q, err := pool.LoadPool(index)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][3]any{}
	for _, e := range q.Tasks {
		if e.Difficulty != "hard" {
			t.Errorf("%s: the gate's difficulty became %q", e.ID, e.Difficulty)
		}
		if len(e.Ratings) != 1 {
			t.Fatalf("%s: ratings %+v, want one", e.ID, e.Ratings)
		}
		rt := e.Ratings[0]
		if e.Family == "wishlist-balance" {
			want[e.ID] = [3]any{gate.TooEasy, 3, 3}
		} else {
			want[e.ID] = [3]any{"hard", 0, 3}
		}
		if got := [3]any{rt.Level, rt.HintFree, rt.WithHint}; got != want[e.ID] {
			t.Errorf("%s: level, hint-free and with-hint successes %v, want %v", e.ID, got, want[e.ID])
		}
		if rt.Agent != "scripted rate-test agent" || rt.K != 3 || rt.RatedAt.IsZero() || len(rt.Levels) != 2 {
			t.Errorf("%s: rating %+v", e.ID, rt)
		}
		own, err := pool.Ratings(q.TaskDir(e))
		if err != nil || len(own) != 1 || !reflect.DeepEqual(own[0], rt) {
			t.Errorf("%s: the task's own rating.json %+v (%v), the index %+v", e.ID, own, err, rt)
		}
	}
	// Complete: a rerun runs nothing and keeps the dates.
	before := runs.Load()
	again, err := rater(nil).Rate(context.Background(), q, index)
	if err != nil {
		t.Fatal(err)
	}
	if n := runs.Load() - before; n != 0 {
		t.Errorf("a rerun of a complete rating ran %d rollouts", n)
	}
	for i := range again {
		if !again[i].RatedAt.Equal(ratings[i].RatedAt) {
			t.Errorf("a rerun moved %s's rating from %v to %v", again[i].Slug, ratings[i].RatedAt, again[i].RatedAt)
		}
	}
	// The figures name the agent.
	st := pool.Compute(nil, nil)
	st.AddRatings(q)
	var b strings.Builder
	st.Table(&b)
	for _, w := range []string{"re-rated by scripted rate-test agent (pool rate, k = 3): tasks; levels | 2; hard 1, too_easy 1",
		"success without hint (scripted rate-test agent) | 50.0%", "success with hint (scripted rate-test agent) | 100.0%"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("Table 4 lacks %q:\n%s", w, b.String())
		}
	}
}

// TestRateServerOutage: a model server that fails (HTTP 503) through every
// attempt ends the rating with an error naming the rollout, the server and
// the fix; the failure is recorded in infra.json, not as a rollout; the
// rollouts finished before it are kept, and the rerun after the server is
// back runs only the rest.
func TestRateServerOutage(t *testing.T) {
	f := setup(t)
	p, index := ratePool(t, f, "model-pick")
	var down atomic.Bool
	srv := fake.NewResponder(t, func(fake.Request) fake.Turn {
		if down.Load() {
			return fake.Turn{Status: 503, Error: "the engine is overloaded"}
		}
		return fake.Turn{Content: "I could not finish this task."}
	})
	client := srv.Client(t, &model.Options{MaxRetries: 1, Backoff: time.Millisecond})
	levels, _ := gate.Config{}.ScaleTo(1)
	r := &pool.Rater{Env: func(*task.Task) (pool.Worlds, error) { return f.env, nil }, K: 1, Levels: levels, Clock: world.FixedClock(time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)),
		Agent: pool.RateAgent{Name: "model " + fake.DefaultModel + " (wildawm harness)", Slug: "fake-model.wildawm", Endpoint: srv.URL(), Policy: func() rollout.Policy {
			return policy.Model{Harness: &agent.Harness{Model: client, ModelName: fake.DefaultModel}}
		}},
		// The server goes down after the first rollout.
		Progress: func(ev pool.RateProgress) { down.Store(ev.Done >= 1) }}
	_, err := r.Rate(context.Background(), p, index)
	var ie *pool.InfraError
	if !errors.As(err, &ie) || ie.Rollout != "h1" || ie.Attempts != rollout.MaxAttempts {
		t.Fatalf("a server down through every attempt: %v, want an InfraError for h1 after %d attempts", err, rollout.MaxAttempts)
	}
	for _, w := range []string{"rollout h1 of task " + p.Tasks[0].ID, srv.URL(), "HTTP 503", "overloaded", "run the same command again"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the error lacks %q: %v", w, err)
		}
	}
	adir := filepath.Join(p.TaskDir(p.Tasks[0]), pool.RateDir, "fake-model.wildawm")
	if _, err := os.Stat(filepath.Join(adir, "r1.json")); err != nil {
		t.Errorf("the rollout finished before the outage is lost: %v", err)
	}
	if _, err := os.Stat(filepath.Join(adir, "h1.json")); !os.IsNotExist(err) {
		t.Errorf("the failed rollout was stored as a result: %v", err)
	}
	if _, err := os.Stat(filepath.Join(adir, pool.RatingFile)); !os.IsNotExist(err) {
		t.Errorf("a rating was written with a rollout missing: %v", err)
	}
	b, err := os.ReadFile(filepath.Join(adir, pool.RateInfraFile))
	if err != nil || !strings.Contains(string(b), `"rollout": "h1"`) || !strings.Contains(string(b), "503") {
		t.Errorf("infra.json: %v\n%s", err, b)
	}
	if q, _ := pool.LoadPool(index); len(q.Tasks[0].Ratings) != 0 {
		t.Errorf("the index records a rating: %+v", q.Tasks[0].Ratings)
	}
	// Back up: only h1 runs (one chat: the model answers at once).
	r.Progress = nil
	down.Store(false)
	chats := len(srv.Chats())
	ratings, err := r.Rate(context.Background(), p, index)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Chats()) - chats; n != 1 {
		t.Errorf("the rerun sent %d chats, want 1 (r1 was kept)", n)
	}
	if len(ratings) != 1 || ratings[0].Level != "hard" || ratings[0].HintFree != 0 || ratings[0].WithHint != 0 {
		t.Errorf("ratings %+v, want hard with no success", ratings)
	}
}
