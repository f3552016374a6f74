package engine_test

import (
	"database/sql/driver"
	"testing"

	"github.com/wildawm/wildawm/internal/service/engine"
)

// TestFormatNumbers checks that format prints SQL numbers as a model reads
// them under every verb a definition writes: %s and %v as SQLite's text
// of the number, %q that text quoted (not Go's rune literal of an int), %d
// and %f as numbers, a whole REAL under %d as an integer.
func TestFormatNumbers(t *testing.T) {
	format := engine.Builtins["format"].Fn
	for _, c := range []struct {
		args []driver.Value
		want string
	}{
		{[]driver.Value{"servings is %s; give 1 to 100", int64(0)}, "servings is 0; give 1 to 100"},
		{[]driver.Value{"%s %s %v", float64(2.5), int64(-2), int64(7)}, "2.5 -2 7"},
		{[]driver.Value{"%q and %q", int64(65), float64(0.5)}, `"65" and "0.5"`},
		{[]driver.Value{"%d/%03d/%.2f/%x", int64(12), int64(7), float64(1.5), int64(255)}, "12/007/1.50/ff"},
		{[]driver.Value{"%d pages", float64(3)}, "3 pages"},
		{[]driver.Value{"%q is %s", "a \"b\"", nil}, `"a \"b\"" is `},
		{[]driver.Value{"%5s|%-4s|", int64(42), int64(1)}, "   42|1   |"},
	} {
		got, err := format(c.args)
		if err != nil {
			t.Fatal(err)
		}
		if got != c.want {
			t.Errorf("format%v = %q, want %q", c.args, got, c.want)
		}
	}
}
