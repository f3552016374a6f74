package engine

import (
	"regexp"
	"strings"
	"sync"
)

// The engine runs a definition's steps as written, except for two
// rewrites that change how many statements a call takes, never what it
// answers (fast_test.go holds them to SQLite's answers):
//   - a step's if: of a common simple form (":x IS NULL", "NOT :x",
//     "coalesce(:x, '') <> ''", ...) is decided in Go instead of by a
//     SELECT;
//   - consecutive check steps with no if: or db: run as one statement, the
//     first message of them all (what running them in turn gives).

// optimize returns steps with consecutive plain checks merged.
func optimize(steps []Step) []Step {
	var out []Step
	for _, st := range steps {
		if n := len(out); n > 0 && mergeable(st) && mergeable(out[n-1]) {
			prev := out[n-1]
			out[n-1].Check = "SELECT coalesce(" + subquery(prev.Check) + ", " + subquery(st.Check) + ")"
			continue
		}
		out = append(out, st)
	}
	return out
}

// mergeable reports whether st is a check that can run inside another
// statement: no condition, on the service's own database, one column, one
// statement.
func mergeable(st Step) bool {
	if st.Check == "" || st.If != "" || st.DB != "" || strings.Contains(st.Check, ";") || strings.Contains(st.Check, "--") {
		return false
	}
	if strings.HasPrefix(st.Check, "SELECT coalesce(") && strings.HasSuffix(st.Check, ")") {
		return true // merged already
	}
	list, ok := topLevelSelectList(strings.TrimSpace(st.Check))
	return ok && len(splitTop(list, ',')) == 1 && strings.HasPrefix(strings.ToUpper(strings.TrimSpace(st.Check)), "SELECT")
}

func subquery(q string) string {
	if strings.HasPrefix(q, "SELECT coalesce(") && strings.HasSuffix(q, ")") {
		return strings.TrimSuffix(strings.TrimPrefix(q, "SELECT coalesce("), ")")
	}
	return "(" + strings.TrimSpace(q) + ")"
}

// predicate decides an if: in Go; ok is false when it cannot (the value's
// type needs SQLite's conversions), and the caller asks SQLite.
type predicate func(p map[string]any) (yes, ok bool)

var predicates sync.Map // expression -> predicate (nil: none)

var (
	reIsNull    = regexp.MustCompile(`^:([a-z_][a-z0-9_]*) IS (NOT )?NULL$`)
	reTruthy    = regexp.MustCompile(`^(NOT )?(?:coalesce\(:([a-z_][a-z0-9_]*), 0\)|:([a-z_][a-z0-9_]*))$`)
	reEmptyText = regexp.MustCompile(`^(?:coalesce\(:([a-z_][a-z0-9_]*), ''\)|:([a-z_][a-z0-9_]*)) (<>|=|!=) ''$`)
)

// predicateOf returns the Go predicate of expr, or nil.
func predicateOf(expr string) predicate {
	if v, ok := predicates.Load(expr); ok {
		p, _ := v.(predicate)
		return p
	}
	p := compilePredicate(strings.TrimSpace(expr))
	predicates.Store(expr, p)
	return p
}

func compilePredicate(e string) predicate {
	if m := reIsNull.FindStringSubmatch(e); m != nil {
		name, not := m[1], m[2] != ""
		return func(p map[string]any) (bool, bool) { return (p[name] == nil) != not, true }
	}
	if m := reTruthy.FindStringSubmatch(e); m != nil {
		not, coalesce, name := m[1] != "", m[2] != "", m[2]+m[3]
		return func(p map[string]any) (bool, bool) {
			var yes bool
			switch v := p[name].(type) {
			case nil:
				if !coalesce {
					return false, true // NULL is neither true nor, under NOT, true
				}
			case int64:
				yes = v != 0
			case float64:
				yes = v != 0
			default:
				return false, false // text: SQLite's numeric conversion
			}
			return yes != not, true
		}
	}
	if m := reEmptyText.FindStringSubmatch(e); m != nil {
		coalesce, name, eq := m[1] != "", m[1]+m[2], m[3] == "="
		return func(p map[string]any) (bool, bool) {
			switch v := p[name].(type) {
			case nil:
				if !coalesce {
					return false, true // NULL compared is NULL: not true
				}
				return eq, true
			case string:
				return (v == "") == eq, true
			case int64, float64:
				return !eq, true // a number never equals text
			}
			return false, false
		}
	}
	return nil
}
