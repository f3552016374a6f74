package gate

import (
	"errors"
	"fmt"
	"slices"
)

// Default ensemble shape and difficulty levels (paper §3.2): six rollouts, the
// first three without the hint; k <= 1 hint-free successes is hard, k = 2 is
// medium, k = 3 is too easy.
const (
	DefaultRollouts = 6
	DefaultHintFree = 3
)

// TooEasy is the difficulty of a task whose hint-free success count lies above
// every configured level. It is reserved: no level may be named so.
const TooEasy = "too_easy"

// DefaultLevels returns the paper's difficulty levels: hard [0,1], medium [2,2].
func DefaultLevels() []DifficultyLevel {
	return []DifficultyLevel{{Name: "hard", Min: 0, Max: 1}, {Name: "medium", Min: 2, Max: 2}}
}

// DifficultyLevel is a named, inclusive range of success counts among the
// hint-free rollouts.
type DifficultyLevel struct {
	Name string `json:"name"`
	Min  int    `json:"min"`
	Max  int    `json:"max"`
}

func (l DifficultyLevel) String() string { return fmt.Sprintf("%s [%d,%d]", l.Name, l.Min, l.Max) }

// Config is the ensemble's shape and the difficulty levels. The zero value of
// each field means its default (DefaultRollouts, DefaultHintFree,
// DefaultLevels); negative counts are errors, not defaults.
//
// If the highest level's Max equals HintFree, every success count falls in a
// level and no task is ever too easy; that is allowed (a deliberate choice,
// e.g. to keep easy tasks for evaluation) but it disables the difficulty
// gate's rejection.
type Config struct {
	Rollouts int               `json:"rollouts"`
	HintFree int               `json:"hint_free"`
	Levels   []DifficultyLevel `json:"levels"`
}

// ErrInvalidConfig is wrapped by every ConfigError.
var ErrInvalidConfig = errors.New("invalid gate configuration")

// ConfigError names the field of a Config that is wrong and why.
type ConfigError struct {
	Field   string // e.g. "hint_free", "levels[1] (medium)"
	Problem string
}

func (e *ConfigError) Error() string {
	return "gate config: " + e.Field + ": " + e.Problem
}

func (e *ConfigError) Unwrap() error { return ErrInvalidConfig }

// WithDefaults returns c with every zero field replaced by its default. The
// Levels slice is copied.
func (c Config) WithDefaults() Config {
	if c.Rollouts == 0 {
		c.Rollouts = DefaultRollouts
	}
	if c.HintFree == 0 {
		c.HintFree = DefaultHintFree
	}
	if len(c.Levels) == 0 {
		c.Levels = DefaultLevels()
	} else {
		c.Levels = slices.Clone(c.Levels)
	}
	return c
}

// Validate checks c (after WithDefaults) and returns every problem found, each
// a *ConfigError naming its field, joined with errors.Join. Call it at
// start-up: a wrong configuration must stop the run, never pass tasks
// silently.
func (c Config) Validate() error {
	defaulted := c.HintFree == 0
	c = c.WithDefaults()
	var errs []error
	bad := func(field, format string, args ...any) {
		errs = append(errs, &ConfigError{Field: field, Problem: fmt.Sprintf(format, args...)})
	}
	if c.Rollouts < 1 {
		bad("rollouts", "%d; need at least 1", c.Rollouts)
	}
	if c.HintFree < 1 {
		bad("hint_free", "%d; need at least 1 hint-free rollout to measure difficulty", c.HintFree)
	}
	if c.HintFree > c.Rollouts {
		note := ""
		if defaulted {
			note = " (hint_free was zero, so the default applies)"
		}
		bad("hint_free", "%d exceeds rollouts (%d)%s", c.HintFree, c.Rollouts, note)
	}

	names := map[string]int{}
	for i, l := range c.Levels {
		field := fmt.Sprintf("levels[%d] (%s)", i, l.Name)
		switch {
		case l.Name == "":
			bad(fmt.Sprintf("levels[%d]", i), "empty name")
		case l.Name == TooEasy:
			bad(field, "the name %q is reserved for counts above every level", TooEasy)
		default:
			if j, dup := names[l.Name]; dup {
				bad(field, "name also used by levels[%d]", j)
			}
			names[l.Name] = i
		}
		if l.Min < 0 {
			bad(field, "min %d is negative", l.Min)
		}
		if l.Min > l.Max {
			bad(field, "min %d > max %d", l.Min, l.Max)
		}
		if l.Max > c.HintFree {
			bad(field, "max %d exceeds hint_free (%d): that success count can never happen", l.Max, c.HintFree)
		}
	}

	// Contiguity and overlap, checked in ascending order of Min.
	sorted := slices.Clone(c.Levels)
	slices.SortStableFunc(sorted, func(a, b DifficultyLevel) int {
		if a.Min != b.Min {
			return a.Min - b.Min
		}
		return a.Max - b.Max
	})
	if sorted[0].Min != 0 {
		bad("levels", "lowest level %s does not start at 0: a task no hint-free rollout solves would have no level", sorted[0])
	}
	for i := 1; i < len(sorted); i++ {
		prev, cur := sorted[i-1], sorted[i]
		switch {
		case cur.Min <= prev.Max:
			bad("levels", "%s overlaps %s", cur, prev)
		case cur.Min > prev.Max+1:
			bad("levels", "gap between %s and %s: counts %d..%d have no level", prev, cur, prev.Max+1, cur.Min-1)
		}
	}
	return errors.Join(errs...)
}

// level returns the level containing k, or false when k is above every level.
// c must be valid.
func (c Config) level(k int) (DifficultyLevel, bool) {
	for _, l := range c.Levels {
		if l.Min <= k && k <= l.Max {
			return l, true
		}
	}
	return DifficultyLevel{}, false
}

// AllowsTooEasy reports whether some success count lies above every level,
// that is whether the difficulty gate can reject a task as too easy.
func (c Config) AllowsTooEasy() bool {
	c = c.WithDefaults()
	top := 0
	for _, l := range c.Levels {
		top = max(top, l.Max)
	}
	return top < c.HintFree
}
