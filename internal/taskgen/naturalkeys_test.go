package taskgen

import (
	"strings"
	"testing"

	"github.com/wildawm/wildawm/internal/task"
)

// TestLintNaturalKeys: a query that matches rows by a row id is refused,
// naming the criterion; one that matches by names and users, or merely
// counts ids, passes.
func TestLintNaturalKeys(t *testing.T) {
	for _, c := range []struct {
		query string
		bad   bool
	}{
		{`SELECT label FROM saved_places WHERE username = 'ada' AND place_id = 1096`, true},
		{`SELECT count(*) FROM reservations WHERE flight_id=15372 AND cabin = 'economy'`, true},
		{`SELECT 1 FROM t WHERE t.id IN (3, 4)`, true},
		{`SELECT 1 FROM t WHERE 12 = r.repo_id`, true},
		{`SELECT label FROM saved_places s JOIN places p ON p.id = s.place_id WHERE p.name = 'Bean There'`, false},
		{`SELECT count(DISTINCT id) FROM todos WHERE project_id = (SELECT id FROM projects WHERE name = 'Home')`, false},
		{`SELECT count(*) FROM events WHERE starts_at = '2026-05-01 10:00:00' AND ext_id = 'ev-12'`, false},
	} {
		tk := &task.Task{Verifier: task.Verifier{Criteria: []task.Criterion{{ID: "saved", Kind: task.KindSQL, Query: c.query}}}}
		err := LintNaturalKeys(tk)
		if c.bad != (err != nil) {
			t.Errorf("%s: got %v, want refused %t", c.query, err, c.bad)
		}
		if err != nil && !strings.Contains(err.Error(), "verifier.criteria[0] (saved)") {
			t.Errorf("the refusal does not name the criterion: %v", err)
		}
	}
}
