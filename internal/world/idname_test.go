package world

import (
	"errors"
	"strings"
	"testing"
)

func TestCheckName(t *testing.T) {
	for _, ok := range []string{"alex-rivera", "a", "t1", "reconcile-open-orders", "r0.json", "family_x", strings.Repeat("a", 128)} {
		if err := CheckName("f.json", "id", ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "..", "../../etc", "a/b", "/etc", ".hidden", "a..b", "Alex", "a b", "a\x00", "-x", "_x", strings.Repeat("a", 129), "é"} {
		err := CheckName("personas/x/bible.json", "id", bad)
		var ne *NameError
		if !errors.As(err, &ne) {
			t.Errorf("%q: %v, want a *NameError", bad, err)
			continue
		}
		for _, want := range []string{"personas/x/bible.json", "field id", "lower-case"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("%q: %q does not say %q", bad, err, want)
			}
		}
	}
}
