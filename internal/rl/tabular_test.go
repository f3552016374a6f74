package rl

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

func TestSurrogate(t *testing.T) {
	for _, c := range []struct {
		ratio, adv, want float64
		flows            bool
	}{
		{1, 2, 2, true},
		{1.5, 1, 1.28, false}, // clipped above
		{1.5, -1, -1.5, true}, // a negative advantage keeps the larger ratio
		{0.5, 1, 0.5, true},
		{0.5, -1, -0.8, false}, // clipped below
	} {
		got, flows := Surrogate(c.ratio, c.adv)
		if !near(got, c.want) || flows != c.flows {
			t.Errorf("Surrogate(%v, %v) = %v %v, want %v %v", c.ratio, c.adv, got, flows, c.want, c.flows)
		}
	}
}

// objective recomputes TrainStep's objective at p without stepping.
func objective(t *testing.T, p *Tabular, s []TokenSample) float64 {
	o, err := p.Clone().TrainStep(s, 0)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

// TestTrainStepGradient: the step follows the objective's numerical
// gradient, off-policy ratios included.
func TestTrainStepGradient(t *testing.T) {
	p := &Tabular{Logits: [][]float64{{0.3, -0.2, 0.1}, {1, 0, -1}}}
	c0, c1 := TabularContextToken(0), TabularContextToken(1)
	a := TabularActionToken
	samples := []TokenSample{
		{PromptIDs: []int{TabularBOS, c0}, ResponseIDs: []int{a(2), TabularOK, c1, a(0)}, LossMask: []int{1, 0, 0, 1},
			Logprobs: []float64{math.Log(0.3), 0, 0, math.Log(0.6)}, Advantage: 0.7, Weight: 0.5},
		{PromptIDs: []int{TabularBOS, c1}, ResponseIDs: []int{a(1)}, LossMask: []int{1}, Logprobs: []float64{math.Log(0.25)}, Advantage: -1.1, Weight: 0.25},
	}
	q := p.Clone()
	const lr = 1e-3
	if _, err := q.TrainStep(samples, lr); err != nil {
		t.Fatal(err)
	}
	for c := range p.Logits {
		for j := range p.Logits[c] {
			const h = 1e-6
			up, down := p.Clone(), p.Clone()
			up.Logits[c][j] += h
			down.Logits[c][j] -= h
			num := (objective(t, up, samples) - objective(t, down, samples)) / (2 * h)
			got := (q.Logits[c][j] - p.Logits[c][j]) / lr
			if math.Abs(num-got) > 1e-5 {
				t.Errorf("d/d logits[%d][%d]: step %v, numerical %v", c, j, got, num)
			}
		}
	}
}

// TestTrainStepLearns: positive advantage on one action raises it.
func TestTrainStepLearns(t *testing.T) {
	p := &Tabular{Logits: [][]float64{{0, 0, 0, 0}}}
	rng := rand.New(rand.NewPCG(1, 1))
	for range 200 {
		var s []TokenSample
		for range 8 {
			act, lp := p.Sample(0, rng)
			adv := -0.3
			if act == 2 {
				adv = 1
			}
			s = append(s, TokenSample{PromptIDs: []int{TabularContextToken(0)}, ResponseIDs: []int{TabularActionToken(act)}, LossMask: []int{1}, Logprobs: []float64{lp}, Advantage: adv, Weight: 1.0 / 8})
		}
		if _, err := p.TrainStep(s, 1); err != nil {
			t.Fatal(err)
		}
	}
	if pr := p.Probs(0); pr[2] < 0.9 {
		t.Errorf("after training, P(action 2) = %v, want > 0.9", pr[2])
	}
}

func TestTabularRejects(t *testing.T) {
	for _, p := range []*Tabular{{}, {Logits: [][]float64{{1}}}, {Logits: [][]float64{{1, 2}, {1}}}, {Logits: [][]float64{{1, math.NaN()}}}} {
		if p.Validate() == nil {
			t.Errorf("%v validated", p.Logits)
		}
	}
	p := &Tabular{Logits: [][]float64{{0, 0}}}
	_, err := p.TrainStep([]TokenSample{{PromptIDs: []int{TabularBOS}, ResponseIDs: []int{99}, LossMask: []int{1}, Logprobs: []float64{0}}}, 1)
	if !errors.Is(err, ErrNotTabular) {
		t.Errorf("a token that is no decision: %v", err)
	}
}
