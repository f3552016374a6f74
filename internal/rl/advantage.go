package rl

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
)

// Select chooses the g rollouts of a ready pool to train on, as indices
// into pool in ascending order. With K = len(pool) <= g it is every index.
// Otherwise the pool is sorted by reward (ties by index) and cut into a
// lower half (the first floor(K/2)) and an upper half (the rest); floor(g/2)
// come from the lower half and the rest from the upper half.
//
// PAPER.md asks only for "rewards from both the lower and the upper half";
// picked at random, a subset could still hold one reward only (in the
// worked example ten of the twelve rewards are 0, and the upper half holds
// four of them). Select therefore always takes the pool's lowest reward
// (from the lower half) and its highest (from the upper half) and draws the
// rest of each half's share uniformly with rng, so the subset has two
// distinct rewards whenever the pool does. A nil rng takes the first
// indices of each half in sorted order.
func Select(pool []Outcome, g int, rng *rand.Rand) []int {
	k := len(pool)
	if k <= g {
		idx := make([]int, k)
		for i := range idx {
			idx[i] = i
		}
		return idx
	}
	if g <= 0 {
		return nil
	}
	sorted := make([]int, k)
	for i := range sorted {
		sorted[i] = i
	}
	slices.SortStableFunc(sorted, func(a, b int) int { return cmp.Compare(pool[a].Reward, pool[b].Reward) })
	lower, upper := sorted[:k/2], sorted[k/2:]
	nLow := g / 2
	nUp := g - nLow
	var out []int
	if nLow > 0 {
		out = append(out, lower[0])
		out = append(out, draw(lower[1:], nLow-1, rng)...)
	}
	out = append(out, upper[len(upper)-1])
	out = append(out, draw(upper[:len(upper)-1], nUp-1, rng)...)
	slices.Sort(out)
	return out
}

// draw takes n of from, uniformly with rng, or the first n without one.
func draw(from []int, n int, rng *rand.Rand) []int {
	if n <= 0 {
		return nil
	}
	if rng == nil {
		return slices.Clone(from[:n])
	}
	out := make([]int, 0, n)
	for _, p := range rng.Perm(len(from))[:n] {
		out = append(out, from[p])
	}
	return out
}

// Advantages is the three-case advantage of each rollout of a finished
// pool of K: (r_j - mu)/sigma with mu the mean and sigma the population
// standard deviation when sigma > 0; -K^(-1/2) for every rollout when
// sigma = 0 and all are format failures; otherwise 0. It returns mu and
// sigma too. sigma is 0 exactly when all rewards are equal (not from a
// rounding residue of the mean). The advantages of a selected G-subset are
// those of its members over the whole pool.
func Advantages(pool []Outcome) (adv []float64, mu, sigma float64) {
	k := len(pool)
	if k == 0 {
		return nil, 0, 0
	}
	equal, allFormat := true, true
	for _, o := range pool {
		mu += o.Reward
		if o.Reward != pool[0].Reward {
			equal = false
		}
		if !o.FormatFailure {
			allFormat = false
		}
	}
	mu /= float64(k)
	if !equal {
		for _, o := range pool {
			d := o.Reward - mu
			sigma += d * d
		}
		sigma = math.Sqrt(sigma / float64(k))
	}
	adv = make([]float64, k)
	switch {
	case sigma > 0:
		for i, o := range pool {
			adv[i] = (o.Reward - mu) / sigma
		}
	case allFormat:
		for i := range adv {
			adv[i] = -1 / math.Sqrt(float64(k))
		}
	}
	return adv, mu, sigma
}
