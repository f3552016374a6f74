package rl

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestReward(t *testing.T) {
	for _, c := range []struct {
		name   string
		format bool
		v      bool
		checks []bool
		want   float64
	}{
		{"format failure", true, true, []bool{true, true}, -1},
		{"fail none", false, false, []bool{false, false, false, false}, 0},
		{"fail half", false, false, []bool{true, false, true, false}, 0.05},
		{"fail all checks", false, false, []bool{true, true}, 0.1},
		{"pass capped", false, true, []bool{true, true, true}, 1},
		{"pass no checks", false, true, nil, 1},
		{"fail no checks", false, false, nil, 0},
		{"fail one of three", false, false, []bool{true, false, false}, 0.1 / 3},
	} {
		if got := Reward(c.format, c.v, c.checks); !near(got, c.want) {
			t.Errorf("%s: Reward = %v, want %v", c.name, got, c.want)
		}
	}
	if !Succeeded(Reward(false, true, []bool{false})) || Succeeded(Reward(false, false, []bool{true})) {
		t.Error("Succeeded must be V")
	}
}

func TestLaunch(t *testing.T) {
	var cfg Config // G = 4, C = 8, kappa_max = 3
	for _, c := range []struct {
		kappa float64
		want  int
	}{
		{0, 4}, {1, 4}, {1.32, 4}, {1.49, 4}, {1.5, 12}, {2.6, 12}, {3, 12},
	} {
		if got := cfg.Launch(c.kappa); got != c.want {
			t.Errorf("G=4 Launch(%v) = %d, want %d", c.kappa, got, c.want)
		}
	}
	big := Config{G: 8}
	for _, c := range []struct {
		kappa float64
		want  int
	}{
		{1, 8}, {1.5, 16}, {2.4, 16}, {2.5, 24}, {3, 24},
	} {
		if got := big.Launch(c.kappa); got != c.want {
			t.Errorf("G=8 Launch(%v) = %d, want %d", c.kappa, got, c.want)
		}
	}
	if got := (Config{G: 5}).Max(); got != 15 {
		t.Errorf("G=5 Max = %d, want 15", got)
	}
}

func TestUpdate(t *testing.T) {
	var cfg Config
	if got := cfg.Update(2.6, Mastered, 4); got != 1 {
		t.Errorf("mastered: %v", got)
	}
	if got := cfg.Update(1, Exhausted, 12); got != 3 {
		t.Errorf("exhausted: %v", got)
	}
	if got := cfg.Update(1, Ready, 12); !near(got, 2.6) {
		t.Errorf("ready K=12: %v", got)
	}
	if got := cfg.Update(1, Ready, 5); !near(got, 0.2+0.8*2) {
		t.Errorf("ready K=5 (ceil): %v", got)
	}
	if got := cfg.Update(2.6, Ready, 4); !near(got, 1.32) {
		t.Errorf("ready K=4: %v", got)
	}
}

func record(t *testing.T, g *Group, slot int, r float64) Action {
	t.Helper()
	act, err := g.Record(slot, Outcome{Reward: r, FormatFailure: r == FormatFailureReward})
	if err != nil {
		t.Fatalf("Record(%d): %v", slot, err)
	}
	return act
}

// TestWorkedExample is PAPER.md's worked example (G = 4), number for number.
func TestWorkedExample(t *testing.T) {
	var cfg Config
	rng := rand.New(rand.NewPCG(1, 2))

	// Step 1: kappa 1 launches 4; all 0 -> add a chunk of 8.
	g := NewGroup(cfg, 1)
	if g.Launched() != 4 {
		t.Fatalf("launched %d, want 4", g.Launched())
	}
	for s := range 3 {
		if act := record(t, g, s, 0); act.State != Running || act.Launch != 0 {
			t.Fatalf("slot %d: %+v", s, act)
		}
	}
	act := record(t, g, 3, 0)
	if act.State != Running || act.Launch != 8 || g.Launched() != 12 {
		t.Fatalf("after 4 zeros: %+v launched %d, want 8 more of 12", act, g.Launched())
	}
	// One of them 1, another 0.05 -> ready, K = 12.
	rewards := []float64{0, 0, 0, 1, 0, 0, 0.05, 0}
	for i, r := range rewards {
		act = record(t, g, 4+i, r)
	}
	if act.State != Ready || len(act.Cancel) != 0 {
		t.Fatalf("after the chunk: %+v, want ready with nothing to cancel", act)
	}
	pool := g.Outcomes()
	if len(pool) != 12 {
		t.Fatalf("K = %d, want 12", len(pool))
	}
	// Pick 2 from each half of the sorted pool.
	// (TestSelect checks the halves on this same pool over many seeds.)
	sel := g.Select(rng)
	if len(sel) != 4 {
		t.Fatalf("selected %v", sel)
	}
	high, distinct := 0, map[float64]bool{}
	for _, i := range sel {
		distinct[pool[i].Reward] = true
		if pool[i].Reward == 1 {
			high++
		}
	}
	if high != 1 || len(distinct) < 2 {
		t.Errorf("selected %v: want the 1 and two distinct rewards", sel)
	}
	if k := g.NextKappa(); !near(k, 2.6) {
		t.Fatalf("kappa = %v, want 0.2*1 + 0.8*3 = 2.6", k)
	}
	// So the next sample launches 12.
	g = NewGroup(cfg, g.NextKappa())
	if g.Launched() != 12 {
		t.Fatalf("launched %d, want 12", g.Launched())
	}
	// The 4 base rollouts already differ -> cancel the other 8.
	for s, r := range []float64{0, 1, 0.05, 0} {
		act = record(t, g, s, r)
	}
	if act.State != Ready || !slices.Equal(act.Cancel, []int{4, 5, 6, 7, 8, 9, 10, 11}) {
		t.Fatalf("after the base: %+v, want ready cancelling 4..11", act)
	}
	if k := len(g.Pool()); k != 4 {
		t.Fatalf("K = %d, want 4", k)
	}
	if k := g.NextKappa(); !near(k, 1.32) {
		t.Fatalf("kappa = %v, want 0.2*2.6 + 0.8*1 = 1.32", k)
	}
	// A cancelled rollout that finishes anyway is dropped.
	if act = record(t, g, 7, 1); !act.Dropped || len(g.Pool()) != 4 {
		t.Errorf("late record: %+v, pool %v", act, g.Pool())
	}
	// And the next sample launches 4.
	if n := cfg.Launch(g.NextKappa()); n != 4 {
		t.Fatalf("next launch %d, want 4", n)
	}
}

func TestGroupMastered(t *testing.T) {
	g := NewGroup(Config{}, 2.6) // launches 12
	for s := range 4 {
		record(t, g, s, 1)
	}
	if g.State() != Mastered || len(g.Pool()) != 4 || g.NextKappa() != 1 {
		t.Fatalf("state %v pool %v kappa %v", g.State(), g.Pool(), g.NextKappa())
	}
}

func TestGroupExhausted(t *testing.T) {
	g := NewGroup(Config{}, 1)
	var act Action
	for s := range 12 {
		act = record(t, g, s, 0.05)
	}
	if act.State != Exhausted || len(g.Pool()) != 12 || g.NextKappa() != 3 {
		t.Fatalf("%+v pool %v kappa %v", act, g.Pool(), g.NextKappa())
	}
}

func TestGroupAllFormatFailuresReady(t *testing.T) {
	g := NewGroup(Config{}, 1)
	var act Action
	for s := range 4 {
		act = record(t, g, s, FormatFailureReward)
	}
	if act.State != Ready || len(g.Pool()) != 4 {
		t.Fatalf("%+v", act)
	}
	adv, _, sigma := Advantages(g.Outcomes())
	if sigma != 0 || !near(adv[0], -0.5) {
		t.Errorf("adv %v sigma %v, want -4^(-1/2)", adv, sigma)
	}
}

// TestGroupWaitsForCheckpoint: a rollout of a later chunk that finishes
// first does not decide; it is in the pool when its chunk is the
// checkpoint decided on.
func TestGroupWaitsForCheckpoint(t *testing.T) {
	g := NewGroup(Config{}, 2.6) // 12 launched
	if act := record(t, g, 9, 1); act.State != Running {
		t.Fatalf("decided before the base finished: %+v", act)
	}
	for s := range 3 {
		record(t, g, s, 0)
	}
	act := record(t, g, 3, 0)
	// The base is all 0: no decision at G; the chunk (up to 12) is still running.
	if act.State != Running || act.Launch != 0 {
		t.Fatalf("%+v", act)
	}
	for s := 4; s < 12; s++ {
		if s != 9 {
			act = record(t, g, s, 0)
		}
	}
	if act.State != Ready || len(g.Pool()) != 12 {
		t.Fatalf("%+v pool %v", act, g.Pool())
	}
}

// TestEarlyChunkNotCounted: a chunk rollout that finishes before the last
// base rollout is not in the pool when the base decides (the issue's
// K = 5, kappa 2.12, 12 launches; the paper's walk-through gives K = 4).
func TestEarlyChunkNotCounted(t *testing.T) {
	g := NewGroup(Config{}, 2.6) // 12 launched
	record(t, g, 0, 0)
	record(t, g, 1, 1)
	record(t, g, 2, 0.05)
	if act := record(t, g, 6, 1); act.State != Running {
		t.Fatalf("slot 6 decided: %+v", act)
	}
	act := record(t, g, 3, 0)
	if act.State != Ready || !slices.Equal(g.Pool(), []int{0, 1, 2, 3}) {
		t.Fatalf("%+v pool %v, want ready on 0..3", act, g.Pool())
	}
	if slices.Contains(act.Cancel, 6) || len(act.Cancel) != 7 {
		t.Errorf("cancel %v: want the 7 unfinished slots, not the finished 6", act.Cancel)
	}
	if k := g.NextKappa(); !near(k, 1.32) {
		t.Errorf("kappa %v, want 1.32", k)
	}
}

// TestWorkedExampleAnyOrder is the worked example under random finishing
// orders: whichever launched slots finish first, the decisions, K, the
// next kappa and the next launch are the paper's.
func TestWorkedExampleAnyOrder(t *testing.T) {
	type want struct {
		state State
		k     int
		kappa float64
		next  int
	}
	cases := []struct {
		name    string
		kappa   float64
		rewards []float64 // by slot, for every slot that may launch
		want    want
	}{
		{"first step", 1, []float64{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0.05, 0}, want{Ready, 12, 2.6, 12}},
		{"second step", 2.6, []float64{0, 1, 0.05, 0, 1, 1, 0, 0, 1, 0, 0, 1}, want{Ready, 4, 1.32, 4}},
		{"mastered", 2.6, []float64{1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0}, want{Mastered, 4, 1, 4}},
		{"exhausted", 1, []float64{0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05, 0.05}, want{Exhausted, 12, 3, 12}},
	}
	rng := rand.New(rand.NewPCG(7, 32))
	for _, c := range cases {
		for trial := range 5000 {
			g := NewGroup(Config{}, c.kappa)
			running := make([]int, g.Launched())
			for i := range running {
				running[i] = i
			}
			for g.State() == Running {
				if len(running) == 0 {
					t.Fatalf("%s trial %d: running with nothing launched", c.name, trial)
				}
				i := rng.IntN(len(running))
				slot := running[i]
				running = slices.Delete(running, i, i+1)
				act := record(t, g, slot, c.rewards[slot])
				for s := g.Launched() - act.Launch; s < g.Launched(); s++ {
					running = append(running, s)
				}
			}
			got := want{g.State(), len(g.Pool()), g.NextKappa(), Config{}.Launch(g.NextKappa())}
			if got.state != c.want.state || got.k != c.want.k || !near(got.kappa, c.want.kappa) || got.next != c.want.next {
				t.Fatalf("%s trial %d: %+v, want %+v", c.name, trial, got, c.want)
			}
		}
	}
}

func TestGroupRecordErrors(t *testing.T) {
	g := NewGroup(Config{}, 1)
	if _, err := g.Record(4, Outcome{}); !errors.Is(err, ErrSlot) {
		t.Errorf("unlaunched slot: %v", err)
	}
	record(t, g, 0, 0)
	if _, err := g.Record(0, Outcome{}); !errors.Is(err, ErrSlot) {
		t.Errorf("twice: %v", err)
	}
}

func TestSelect(t *testing.T) {
	pool := make([]Outcome, 12)
	pool[3].Reward, pool[6].Reward = 1, 0.05
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		sel := Select(pool, 4, rng)
		if len(sel) != 4 || !slices.IsSorted(sel) || len(slices.Compact(slices.Clone(sel))) != 4 {
			t.Fatalf("seed %d: %v", seed, sel)
		}
		// Sorted pool: slots 0,1,2,4,5,7 are the lower half (ties by index).
		lower := 0
		for _, i := range sel {
			if slices.Contains([]int{0, 1, 2, 4, 5, 7}, i) {
				lower++
			}
		}
		if lower != 2 || !slices.Contains(sel, 3) || !slices.Contains(sel, 0) {
			t.Fatalf("seed %d: %v, want 2 from each half with the min and max", seed, sel)
		}
	}
	if got := Select(pool[:3], 4, nil); !slices.Equal(got, []int{0, 1, 2}) {
		t.Errorf("K <= G: %v", got)
	}
	if got := Select(pool, 4, nil); !slices.Equal(got, []int{0, 1, 3, 8}) {
		t.Errorf("nil rng: %v", got)
	}
	// A seed picks the same subset every time.
	a := Select(pool, 4, rand.New(rand.NewPCG(3, 3)))
	b := Select(pool, 4, rand.New(rand.NewPCG(3, 3)))
	if !slices.Equal(a, b) {
		t.Errorf("not deterministic: %v %v", a, b)
	}
}

func TestAdvantages(t *testing.T) {
	// sigma > 0: the worked example's pool of 12.
	pool := make([]Outcome, 12)
	pool[3].Reward, pool[6].Reward = 1, 0.05
	adv, mu, sigma := Advantages(pool)
	wantMu := 1.05 / 12
	wantVar := (10*wantMu*wantMu + (0.05-wantMu)*(0.05-wantMu) + (1-wantMu)*(1-wantMu)) / 12
	if !near(mu, wantMu) || !near(sigma, math.Sqrt(wantVar)) {
		t.Fatalf("mu %v sigma %v, want %v %v", mu, sigma, wantMu, math.Sqrt(wantVar))
	}
	for i, o := range pool {
		if !near(adv[i], (o.Reward-wantMu)/math.Sqrt(wantVar)) {
			t.Errorf("adv[%d] = %v", i, adv[i])
		}
	}
	sum := 0.0
	for _, a := range adv {
		sum += a
	}
	if !near(sum, 0) {
		t.Errorf("advantages sum to %v", sum)
	}
	// sigma = 0, all format failures: -K^(-1/2).
	ff := []Outcome{{-1, true}, {-1, true}, {-1, true}, {-1, true}, {-1, true}, {-1, true}, {-1, true}, {-1, true}, {-1, true}}
	adv, _, _ = Advantages(ff)
	for _, a := range adv {
		if !near(a, -1.0/3) {
			t.Errorf("all format failures: %v", adv)
		}
	}
	// sigma = 0 otherwise: 0 (0.1 three times would leave a rounding residue).
	adv, _, sigma = Advantages([]Outcome{{Reward: 0.1}, {Reward: 0.1}, {Reward: 0.1}})
	if sigma != 0 || slices.ContainsFunc(adv, func(a float64) bool { return a != 0 }) {
		t.Errorf("equal rewards: %v sigma %v", adv, sigma)
	}
}

func TestSegments(t *testing.T) {
	turns := []Turn{
		{PromptIDs: []int{1, 2}, ResponseIDs: []int{3}, Logprobs: []float64{-0.3}},
		// Extends [1 2 3] with a tool result 4 5.
		{PromptIDs: []int{1, 2, 3, 4, 5}, ResponseIDs: []int{6, 7}, Logprobs: []float64{-0.6, -0.7}},
		// Does not extend (the context was rewritten).
		{PromptIDs: []int{1, 9}, ResponseIDs: []int{10}},
		// Extends, but compacted: closes the segment anyway.
		{PromptIDs: []int{1, 9, 10, 11}, ResponseIDs: []int{12}, Compacted: true},
	}
	segs := Segments(turns, false)
	if len(segs) != 3 {
		t.Fatalf("%d segments, want 3: %+v", len(segs), segs)
	}
	s := segs[0]
	if s.FirstTurn != 0 || s.Turns != 2 || !slices.Equal(s.PromptIDs, []int{1, 2}) ||
		!slices.Equal(s.ResponseIDs, []int{3, 4, 5, 6, 7}) ||
		!slices.Equal(s.LossMask, []int{1, 0, 0, 1, 1}) ||
		!slices.Equal(s.Logprobs, []float64{-0.3, 0, 0, -0.6, -0.7}) {
		t.Errorf("segment 0: %+v", s)
	}
	if s := segs[1]; s.FirstTurn != 2 || s.Turns != 1 || !slices.Equal(s.LossMask, []int{1}) {
		t.Errorf("segment 1: %+v", s)
	}
	if s := segs[2]; s.FirstTurn != 3 || !slices.Equal(s.PromptIDs, []int{1, 9, 10, 11}) {
		t.Errorf("segment 2: %+v", s)
	}
	if got := Trainable(segs); got != 5 {
		t.Errorf("L_j = %d, want 5", got)
	}
	// A format-failed rollout trains only its failing (last) turn.
	segs = Segments(turns[:2], true)
	if len(segs) != 1 || !slices.Equal(segs[0].LossMask, []int{0, 0, 0, 1, 1}) || Trainable(segs) != 2 {
		t.Errorf("format failure: %+v", segs)
	}
}

// TestSegmentsPaperExample: 9 steps with compaction at step 5 -> 3 segment
// samples, as PAPER.md's example. PAPER.md does not say where the three
// come from; the reading here is steps 1-4, the compaction turn (step 5,
// whose prompt is rewritten), and steps 6-9 (after the summary).
func TestSegmentsPaperExample(t *testing.T) {
	var turns []Turn
	held := []int{0}
	for step := 1; step <= 9; step++ {
		tn := Turn{PromptIDs: slices.Clone(held), ResponseIDs: []int{step * 10}}
		if step == 5 {
			tn.PromptIDs = []int{0, 500} // the compaction request: a rewritten context
		}
		if step == 6 {
			tn.PromptIDs = []int{0, 501} // the summary replaces the history
			tn.Compacted = true
		}
		turns = append(turns, tn)
		held = append(slices.Clone(tn.PromptIDs), tn.ResponseIDs...)
		held = append(held, 1000+step) // the tool result
	}
	if got := len(Segments(turns, false)); got != 3 {
		t.Errorf("%d segments, want 3", got)
	}
}

func TestTokenWeight(t *testing.T) {
	if got := TokenWeight(50, 4, 8); !near(got, 1.0/1600) {
		t.Errorf("TokenWeight = %v", got)
	}
	if TokenWeight(0, 4, 8) != 0 {
		t.Error("no trainable tokens must weigh 0")
	}
	// The weights of a rollout's tokens over all its segments sum to 1/(G*groups).
	segs := Segments([]Turn{{PromptIDs: []int{1}, ResponseIDs: []int{2, 3}}, {PromptIDs: []int{9}, ResponseIDs: []int{4}}}, false)
	l := Trainable(segs)
	sum := 0.0
	for _, s := range segs {
		sum += float64(s.Trainable()) * TokenWeight(l, 4, 2)
	}
	if !near(sum, 1.0/8) {
		t.Errorf("sum %v", sum)
	}
}
