package gate

import (
	"fmt"
	"strings"
)

// ScaleTo returns c's difficulty levels (ranges of success counts among
// c.HintFree hint-free rollouts, after WithDefaults) over n hint-free
// rollouts, for a rating with another number of them (pool rate -k N).
//
// A count s of H hint-free successes stands for the success rates from s/H
// up to (s+1)/H; a level [Min, Max] of H is the rates from Min/H up to, not
// including, (Max+1)/H. Over n rollouts the level holds the counts s with
// Min*n <= s*H < (Max+1)*n: the paper's hard [0,1] and medium [2,2] of 3
// are, over 8, hard [0,5] (under two thirds solved), medium [6,7], and 8 of
// 8 too easy; over 3 they are themselves. A level no count of n falls in
// (medium over 1 or 2 rollouts) is left out, so that the result validates;
// Dropped names it.
func (c Config) ScaleTo(n int) (Config, error) {
	if n < 1 {
		return Config{}, &ConfigError{Field: "hint_free", Problem: fmt.Sprintf("%d; need at least 1 hint-free rollout to measure difficulty", n)}
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	c = c.WithDefaults()
	out := Config{Rollouts: 2 * n, HintFree: n}
	if n == c.HintFree {
		out.Levels = c.Levels
		return out, nil
	}
	h := c.HintFree
	ceilDiv := func(a, b int) int { return (a + b - 1) / b }
	for _, l := range c.Levels {
		lo := ceilDiv(l.Min*n, h)
		hi := min(ceilDiv((l.Max+1)*n, h)-1, n)
		if lo > hi {
			continue
		}
		out.Levels = append(out.Levels, DifficultyLevel{Name: l.Name, Min: lo, Max: hi})
	}
	if err := out.Validate(); err != nil {
		return Config{}, fmt.Errorf("gate: the levels %s scaled to %d hint-free rollouts: %w", levelList(c.Levels), n, err)
	}
	return out, nil
}

// Dropped names c's levels that scaled has not (ScaleTo left them out: no
// success count falls in them).
func (c Config) Dropped(scaled Config) []string {
	var out []string
	for _, l := range c.WithDefaults().Levels {
		found := false
		for _, s := range scaled.Levels {
			found = found || s.Name == l.Name
		}
		if !found {
			out = append(out, l.Name)
		}
	}
	return out
}

// Level names the level of k hint-free successes: a level's name, or
// TooEasy above every level. c must be valid.
func (c Config) Level(k int) string {
	if l, ok := c.WithDefaults().level(k); ok {
		return l.Name
	}
	return TooEasy
}

// LevelList is the levels as "hard [0,1], medium [2,2]".
func (c Config) LevelList() string { return levelList(c.WithDefaults().Levels) }

func levelList(ls []DifficultyLevel) string {
	var parts []string
	for _, l := range ls {
		parts = append(parts, l.String())
	}
	return strings.Join(parts, ", ")
}
