package gate

import (
	"errors"
	"slices"
	"testing"
)

func TestScaleTo(t *testing.T) {
	for _, c := range []struct {
		n       int
		want    []DifficultyLevel
		dropped []string
	}{
		{3, DefaultLevels(), nil},
		{8, []DifficultyLevel{{"hard", 0, 5}, {"medium", 6, 7}}, nil},
		{5, []DifficultyLevel{{"hard", 0, 3}, {"medium", 4, 4}}, nil},
		{6, []DifficultyLevel{{"hard", 0, 3}, {"medium", 4, 5}}, nil},
		{2, []DifficultyLevel{{"hard", 0, 1}}, []string{"medium"}},
		{1, []DifficultyLevel{{"hard", 0, 0}}, []string{"medium"}},
	} {
		got, err := Config{}.ScaleTo(c.n)
		if err != nil {
			t.Fatalf("n=%d: %v", c.n, err)
		}
		if got.HintFree != c.n || got.Rollouts != 2*c.n || !slices.Equal(got.Levels, c.want) {
			t.Errorf("n=%d: %+v, want levels %v", c.n, got, c.want)
		}
		if d := (Config{}).Dropped(got); !slices.Equal(d, c.dropped) {
			t.Errorf("n=%d: dropped %v, want %v", c.n, d, c.dropped)
		}
		// All n of n is too easy whatever n: no default level reaches 3 of 3.
		if l := got.Level(c.n); l != TooEasy {
			t.Errorf("n=%d: %d of %d is %s, want %s", c.n, c.n, c.n, l, TooEasy)
		}
		if l := got.Level(0); l != "hard" {
			t.Errorf("n=%d: 0 of %d is %s, want hard", c.n, c.n, l)
		}
	}
	// A top level that reaches every count keeps all n of n.
	all := Config{Levels: []DifficultyLevel{{"hard", 0, 1}, {"easy", 2, 3}}}
	got, err := all.ScaleTo(8)
	if err != nil || !slices.Equal(got.Levels, []DifficultyLevel{{"hard", 0, 5}, {"easy", 6, 8}}) || got.Level(8) != "easy" {
		t.Errorf("levels reaching hint_free over 8: %+v, %v", got, err)
	}
	if _, err := (Config{}).ScaleTo(0); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("ScaleTo(0): %v, want a config error", err)
	}
	if _, err := (Config{Levels: []DifficultyLevel{{"hard", 1, 2}}}).ScaleTo(4); !errors.Is(err, ErrInvalidConfig) {
		t.Errorf("an invalid config scaled: %v", err)
	}
}
