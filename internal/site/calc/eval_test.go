package calc

import (
	"strings"
	"testing"
)

func TestEval(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{"(3 + 4) * 2^3", "56"},
		{"2^3^2", "512"},
		{"-2 + 10 / 4", "0.5"},
		{"17 % 5", "2"},
		{"sqrt(2)", "1.414214"},
		{"1,250 * 3", "3750"},
		{"12.5 km in mi", "7.76714 mi"},
		{"72 f in c", "22.222222 °C"},
		{"0 c to f", "32 °F"},
		{"2.5 lb to g", "1133.980925 g"},
		{"3 weeks in days", "21 days"},
		{"days between 2026-01-01 and 2026-03-15", "73 days"},
		{"2026-02-20 plus 10 days", "2026-03-02 (Monday)"},
		{"2026-03-02 minus 2 weeks", "2026-02-16 (Monday)"},
		{"weekday of 2026-07-04", "Saturday"},
	} {
		r, err := Eval(tc.q)
		if err != nil || r.Answer != tc.want {
			t.Errorf("Eval(%q) = %q, %v; want %q", tc.q, r.Answer, err, tc.want)
		}
	}
	for _, tc := range []struct{ q, want string }{
		{"1 / 0", "no finite result"},
		{"3 km in kg", "cannot convert"},
		{"(1 + 2", "not closed"},
		{"2 +", "ends too early"},
		{"drop table", "cannot read"},
		{"days between 2026-02-30 and 2026-03-01", "not a date"},
		{strings.Repeat("(", 80) + "1" + strings.Repeat(")", 80), "nested too deeply"},
	} {
		if _, err := Eval(tc.q); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Eval(%q) error %v; want one saying %q", tc.q, err, tc.want)
		}
	}
}
