package taskgen

import (
	"fmt"
	"os"
	"time"

	"github.com/wildawm/wildawm/internal/world"
)

// Helpers of the travel families: reading a world's clock and trip notes,
// quoting values into criteria and scripts, running a script.

// travelToday is the world's date (YYYY-MM-DD, UTC) from its clock.
func travelToday(w *World) (time.Time, error) {
	t, err := worldNow(w)
	if err != nil {
		return time.Time{}, err
	}
	return time.Date(t.Year(), t.Month(), t.Day(), 0, 0, 0, 0, time.UTC), nil
}

// hasDBs says whether the world has every one of the databases, so that
// the services a task needs are the persona's.
func hasDBs(w *World, names ...string) bool {
	for _, n := range names {
		if _, err := os.Stat(world.DBPath(w.Dir, n)); err != nil {
			return false
		}
	}
	return true
}

// pyq quotes s as a Python string literal (JSON strings are Python ones
// for the text these tasks carry).
func pyq(s string) string { return fmt.Sprintf("%q", s) }

// pyScript runs a Python program in the shell's home, after making dir.
func (s *Steps) pyScript(dir, program, note string) {
	mk := ""
	if dir != "" {
		mk = "mkdir -p " + dir + " && "
	}
	s.Shell(mk+"python3 - <<'PY'\n"+program+"PY", note)
}

func num64(v any) float64 {
	switch x := v.(type) {
	case int64:
		return float64(x)
	case float64:
		return x
	}
	return 0
}
