package observe

import (
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/rl"
)

const loginPage = `URL: http://127.0.0.1:42123/login
Title: Log in · Lumen Store
[1] link "Lumen Store" href="/"
[2] link "Products" href="/products"
[3] link "Log in" href="/login"
Log in to Lumen Store
Username
[4] textbox "Username"
Password
[5] textbox "Password" password
[6] button "Log in"
`

const productPage = `URL: http://127.0.0.1:42123/products/LD-0234
Title: Lumen Tablet 3 · Lumen Store
[5] button "Log out"
Lumen Tablet 3
[6] img "Picture of Lumen Tablet 3"
Quantity
[7] spinbutton "Quantity" value="1"
[8] button "Buy now"
[9] button "Add to wish list"
`

func TestParsePage(t *testing.T) {
	p := ParsePage(loginPage)
	if p.URL != "http://127.0.0.1:42123/login" || p.Title != "Log in · Lumen Store" || len(p.Elements) != 6 {
		t.Fatalf("page %+v", p)
	}
	if e := p.Elements[1]; e.Ref != 2 || e.Role != "link" || e.Name != "Products" || e.Href != "/products" {
		t.Errorf("element 2: %+v", e)
	}
	if !p.Elements[4].Password || p.Elements[3].Password {
		t.Errorf("password marks: %+v", p.Elements[3:5])
	}
	fs := p.Forms()
	if len(fs) != 1 || len(fs[0].Fields) != 2 || fs[0].Fields[0].Ref != 4 || fs[0].Button.Ref != 6 {
		t.Fatalf("login forms: %+v", fs)
	}
	fs = ParsePage(productPage).Forms()
	if len(fs) != 1 || fs[0].Fields[0].Value != "1" || fs[0].Button.Name != "Buy now" {
		t.Fatalf("product forms: %+v", fs)
	}
	if n := len(ParsePage("no page here").Elements); n != 0 {
		t.Errorf("text that is no snapshot: %d elements", n)
	}
}

func TestValues(t *testing.T) {
	vs := TextValues("- devices: user `marta.costa`, password `garnet-willow-23`", SrcShell)
	byText := map[string]Value{}
	for _, v := range vs {
		byText[v.Text] = v
	}
	u, p := byText["marta.costa"], byText["garnet-willow-23"]
	if !slices.Contains(u.Ctx, "user") || !slices.Contains(u.Ctx, "devices") || !slices.Contains(p.Ctx, "password") || !slices.Contains(p.Ctx, "devices") {
		t.Errorf("login values: %+v", vs)
	}
	vs = JSONValues(`{"account":{"account":"chk-mc","balance_cents":388055}}`, SrcMCP)
	if len(vs) != 2 || vs[0].Text != "chk-mc" || !slices.Equal(vs[0].Ctx, []string{"account"}) || vs[1].Text != "388055" || !slices.Contains(vs[1].Ctx, "balance") {
		t.Errorf("json values: %+v", vs)
	}
	vs = TextValues(`Save it with the label "want to go" on 2026-03-08, inviting Elliot Chen.`, SrcInstruction)
	var got []string
	for _, v := range vs {
		got = append(got, v.Text)
	}
	for _, w := range []string{"want to go", "2026-03-08", "Elliot Chen"} {
		if !slices.Contains(got, w) {
			t.Errorf("instruction values %q lack %q", got, w)
		}
	}
}

func TestListed(t *testing.T) {
	got := listed(".:\nnotes\nphotos\n\n./notes:\nlogins.md\n\n./photos:\na.png\na.txt\n")
	if !slices.Equal(got, []string{"notes/logins.md", "photos/a.txt"}) {
		t.Errorf("listed %q", got)
	}
}

func TestParamsRejects(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{`{"dim": 0, "weights": {}}`, "dim 0"},
		{`{"dim": 8, "weights": {"9": 1}}`, "weights[9]"},
		{`{"dim": 8, "weights": {}, "max_actions": -1}`, "max_actions -1"},
		{`{"dim": 8, "wieghts": {}}`, "unknown field"},
		{`[1]`, "give {"},
	} {
		if _, _, err := ParseParams(json.RawMessage(c.raw)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error naming %q", c.raw, err, c.want)
		}
	}
	if _, err := NewModel(Params{Dim: 4, Weights: map[int]float64{1: math.NaN()}}); err == nil || !strings.Contains(err.Error(), "finite") {
		t.Errorf("NaN weight: %v", err)
	}
	p, m, err := ParseParams(nil)
	if err != nil || p.Dim != DefaultDim || m.W[hash("rep", DefaultDim)] != Priors["rep"] {
		t.Errorf("defaults: %v %v", p.Dim, err)
	}
	back, _, err := ParseParams(mustRaw(t, m.Params("v", 0)))
	if err != nil || len(back.Weights) != len(p.Weights) {
		t.Errorf("round trip: %v %d of %d weights", err, len(back.Weights), len(p.Weights))
	}
}

func mustRaw(t *testing.T, v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decisionTokens writes a decision as the policy does: TokDecide, then
// TokCand and the features of each candidate.
func decisionTokens(cands [][]int) []int {
	out := []int{TokDecide}
	for _, fs := range cands {
		out = append(out, TokCand)
		for _, f := range fs {
			out = append(out, FeatureToken(f))
		}
	}
	return out
}

// sampleOf is one segment holding decisions (cands, choice, logprob).
func sampleOf(ds []decision, adv, weight float64) rl.TokenSample {
	s := rl.TokenSample{PromptIDs: []int{TokBOS}, Advantage: adv, Weight: weight}
	for _, d := range ds {
		toks := decisionTokens(d.cands)
		s.ResponseIDs = append(s.ResponseIDs, toks...)
		s.LossMask = append(s.LossMask, make([]int, len(toks))...)
		s.Logprobs = append(s.Logprobs, make([]float64, len(toks))...)
		s.ResponseIDs = append(s.ResponseIDs, ChoiceToken(d.choice))
		s.LossMask = append(s.LossMask, 1)
		s.Logprobs = append(s.Logprobs, d.lp)
	}
	return s
}

// TestTrainStepGradient checks TrainStep's step against the numerical
// gradient of the objective it returns, off-policy ratios (clipped or
// not) included.
func TestTrainStepGradient(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	const dim = 12
	m := &Model{W: make([]float64, dim)}
	for i := range m.W {
		m.W[i] = rng.NormFloat64() * 0.5
	}
	var samples []rl.TokenSample
	for k := range 6 {
		var ds []decision
		for range 3 {
			n := 2 + rng.IntN(4)
			cands := make([][]int, n)
			for c := range cands {
				for range 1 + rng.IntN(3) {
					cands[c] = append(cands[c], rng.IntN(dim))
				}
			}
			a := rng.IntN(n)
			lp := math.Log(m.probs(cands)[a]) + rng.NormFloat64()*0.1
			ds = append(ds, decision{cands: cands, choice: a, lp: lp})
		}
		samples = append(samples, sampleOf(ds, float64(k%3)-1+0.3, 0.1*float64(k+1)))
	}
	obj := func(w []float64) float64 {
		mm := &Model{W: slices.Clone(w)}
		o, _, err := mm.TrainStep(samples, 0)
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	after := m.Clone()
	const lr = 1e-3
	if _, _, err := after.TrainStep(samples, lr); err != nil {
		t.Fatal(err)
	}
	for i := range m.W {
		const h = 1e-6
		wp, wm := slices.Clone(m.W), slices.Clone(m.W)
		wp[i] += h
		wm[i] -= h
		num := (obj(wp) - obj(wm)) / (2 * h)
		got := (after.W[i] - m.W[i]) / lr
		if math.Abs(num-got) > 1e-5*max(1, math.Abs(num)) {
			t.Errorf("weight %d: step says gradient %.8f, numerical %.8f", i, got, num)
		}
	}
}

// TestTrainStepLearnsAChoice is GRPO on a bandit written in the policy's
// tokens: of four candidates one carries the feature the reward favours;
// groups of 4 draws get the paper's advantages, and 30 steps raise that
// candidate's probability from 1/4 past 0.9, while the control (lr 0)
// stays at 1/4. It fails if the update ignores the advantage or the
// gradient's sign.
func TestTrainStepLearnsAChoice(t *testing.T) {
	const dim, good = 64, 7
	cands := [][]int{{1, 2}, {1, good}, {1, 3}, {1, 4}}
	run := func(lr float64) float64 {
		m := &Model{W: make([]float64, dim)}
		rng := rand.New(rand.NewPCG(3, 4))
		for range 30 {
			var samples []rl.TokenSample
			for range 8 { // groups
				var outs []rl.Outcome
				var ds []decision
				for range 4 {
					a, lp := m.sample(cands, rng)
					r := 0.0
					if a == 1 {
						r = 1
					}
					outs = append(outs, rl.Outcome{Reward: r})
					ds = append(ds, decision{cands: cands, choice: a, lp: lp})
				}
				adv, _, _ := rl.Advantages(outs)
				for i, d := range ds {
					samples = append(samples, sampleOf([]decision{d}, adv[i], 1.0/32))
				}
			}
			_, st, err := m.TrainStep(samples, lr)
			if err != nil {
				t.Fatal(err)
			}
			if st.MaxLogprobGap > 1e-12 {
				t.Fatalf("on policy, the recomputed log-probabilities differ by %g", st.MaxLogprobGap)
			}
		}
		return m.probs(cands)[1]
	}
	if p := run(4); p < 0.9 {
		t.Errorf("trained: P(the rewarded candidate) %.3f after 30 steps, want > 0.9", p)
	}
	if p := run(0); math.Abs(p-0.25) > 1e-12 {
		t.Errorf("control: P %.3f, want 0.25", p)
	}
}

func TestDecisionsReject(t *testing.T) {
	m := &Model{W: make([]float64, 8)}
	for name, s := range map[string]rl.TokenSample{
		"no decision":    {PromptIDs: []int{TokBOS}, ResponseIDs: []int{ChoiceToken(0)}, LossMask: []int{1}, Logprobs: []float64{0}},
		"choice too far": sampleOf([]decision{{cands: [][]int{{1}, {2}}, choice: 5}}, 1, 1),
		"feature >= dim": sampleOf([]decision{{cands: [][]int{{1}, {9}}, choice: 0}}, 1, 1),
	} {
		if _, _, err := m.TrainStep([]rl.TokenSample{s}, 1); !errors.Is(err, ErrNotObserve) {
			t.Errorf("%s: %v, want ErrNotObserve", name, err)
		}
	}
	bad := rl.TokenSample{ResponseIDs: []int{1, 2}, LossMask: []int{1}, Logprobs: []float64{0, 0}}
	if _, _, err := m.TrainStep([]rl.TokenSample{bad}, 1); err == nil {
		t.Error("a mask shorter than the response was accepted")
	}
}

func TestShape(t *testing.T) {
	for in, want := range map[string]string{"marta.costa": "a.a", "LD-0234": "A-9", "garnet-willow-23": "a-a-9", "2026-03-08": "9-9-9"} {
		if got := shape(in); got != want {
			t.Errorf("shape(%q) = %q, want %q", in, got, want)
		}
	}
}
