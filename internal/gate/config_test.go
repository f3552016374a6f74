package gate

import (
	"errors"
	"strings"
	"testing"
)

func TestConfigValid(t *testing.T) {
	for _, tc := range []struct {
		name        string
		cfg         Config
		allowsEasy  bool
		wantDefault bool
	}{
		{name: "zero value is the paper's", cfg: Config{}, allowsEasy: true, wantDefault: true},
		{name: "explicit paper", cfg: Config{Rollouts: 6, HintFree: 3, Levels: DefaultLevels()}, allowsEasy: true, wantDefault: true},
		{name: "levels out of order", cfg: Config{Levels: []DifficultyLevel{{"medium", 2, 2}, {"hard", 0, 1}}}, allowsEasy: true},
		{name: "larger ensemble", cfg: Config{Rollouts: 8, HintFree: 4, Levels: []DifficultyLevel{{"hard", 0, 1}, {"medium", 2, 3}}}, allowsEasy: true},
		{name: "top level reaches hint_free: nothing too easy", cfg: Config{Levels: []DifficultyLevel{{"hard", 0, 1}, {"medium", 2, 3}}}, allowsEasy: false},
		{name: "all hint-free", cfg: Config{Rollouts: 3, HintFree: 3}, allowsEasy: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.cfg.Validate(); err != nil {
				t.Fatalf("Validate: %v", err)
			}
			if got := tc.cfg.AllowsTooEasy(); got != tc.allowsEasy {
				t.Errorf("AllowsTooEasy = %t, want %t", got, tc.allowsEasy)
			}
			d := tc.cfg.WithDefaults()
			if tc.wantDefault && (d.Rollouts != 6 || d.HintFree != 3 || len(d.Levels) != 2 || d.Levels[0] != (DifficultyLevel{"hard", 0, 1}) || d.Levels[1] != (DifficultyLevel{"medium", 2, 2})) {
				t.Errorf("WithDefaults = %+v", d)
			}
		})
	}
}

func TestConfigInvalid(t *testing.T) {
	lv := func(ls ...DifficultyLevel) []DifficultyLevel { return ls }
	for _, tc := range []struct {
		name    string
		cfg     Config
		field   string // the ConfigError's Field
		problem string // a substring of its Problem
	}{
		{"overlap", Config{Levels: lv(DifficultyLevel{"hard", 0, 1}, DifficultyLevel{"medium", 1, 2})}, "levels", "medium [1,2] overlaps hard [0,1]"},
		{"gap", Config{Levels: lv(DifficultyLevel{"hard", 0, 0}, DifficultyLevel{"medium", 2, 2})}, "levels", "gap between hard [0,0] and medium [2,2]: counts 1..1"},
		{"not from 0", Config{Levels: lv(DifficultyLevel{"hard", 1, 1}, DifficultyLevel{"medium", 2, 2})}, "levels", "does not start at 0"},
		{"upper above hint_free", Config{Levels: lv(DifficultyLevel{"hard", 0, 1}, DifficultyLevel{"medium", 2, 4})}, "levels[1] (medium)", "max 4 exceeds hint_free (3)"},
		{"empty name", Config{Levels: lv(DifficultyLevel{"", 0, 1}, DifficultyLevel{"medium", 2, 2})}, "levels[0]", "empty name"},
		{"duplicate name", Config{Levels: lv(DifficultyLevel{"hard", 0, 1}, DifficultyLevel{"hard", 2, 2})}, "levels[1] (hard)", "name also used by levels[0]"},
		{"reserved name", Config{Levels: lv(DifficultyLevel{"hard", 0, 1}, DifficultyLevel{"too_easy", 2, 2})}, "levels[1] (too_easy)", "reserved"},
		{"min above max", Config{Levels: lv(DifficultyLevel{"hard", 0, 1}, DifficultyLevel{"medium", 3, 2})}, "levels[1] (medium)", "min 3 > max 2"},
		{"negative min", Config{Levels: lv(DifficultyLevel{"hard", -1, 1}, DifficultyLevel{"medium", 2, 2})}, "levels[0] (hard)", "min -1 is negative"},
		{"hint_free above rollouts", Config{Rollouts: 2, HintFree: 3}, "hint_free", "3 exceeds rollouts (2)"},
		{"default hint_free above rollouts", Config{Rollouts: 2}, "hint_free", "3 exceeds rollouts (2) (hint_free was zero, so the default applies)"},
		{"negative rollouts", Config{Rollouts: -1, HintFree: 1, Levels: lv(DifficultyLevel{"hard", 0, 1})}, "rollouts", "need at least 1"},
		{"negative hint_free", Config{HintFree: -2, Levels: lv(DifficultyLevel{"hard", 0, 0})}, "hint_free", "need at least 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if err == nil {
				t.Fatal("Validate = nil, want an error")
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !hasConfigError(err, tc.field, tc.problem) {
				t.Errorf("error %q names no field %q with problem %q", err, tc.field, tc.problem)
			}
			// Evaluate refuses the configuration before looking at the candidate.
			if _, err := Evaluate(passingCandidate(), tc.cfg); !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("Evaluate error = %v, want ErrInvalidConfig", err)
			}
		})
	}
}

// hasConfigError reports whether err (possibly joined) holds a ConfigError for
// field whose problem contains problem.
func hasConfigError(err error, field, problem string) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ce *ConfigError
		if errors.As(e, &ce) && ce.Field == field && strings.Contains(ce.Problem, problem) &&
			strings.Contains(ce.Error(), field) {
			return true
		}
	}
	return false
}
