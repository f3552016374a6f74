package taskgen

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/wildawm/wildawm/internal/task"
)

// rowIDRE finds a row id compared with a number in SQL: `place_id = 1096`,
// `r.id IN (3, 4)`, `12 = flight_id`.
var rowIDRE = regexp.MustCompile(`(?i)(\b(?:\w+\.)?(?:id|\w+_id)\s*(?:=|==|<>|!=|\bin\s*\(\s*)\s*-?\d+)|(\b\d+\s*(?:=|==)\s*(?:\w+\.)?(?:id|\w+_id)\b)`)

// LintNaturalKeys refuses a verifier whose SQL criteria match rows by
// their row ids (a catalog's or a site's numbering, which a world rebuilt
// from its deltas or another catalog build need not keep) instead of by
// what the rows say: a name, an address, a date, a user.
func LintNaturalKeys(t *task.Task) error {
	for i, c := range t.Verifier.Criteria {
		if c.Kind != task.KindSQL {
			continue
		}
		if m := rowIDRE.FindString(c.Query); m != "" {
			return fmt.Errorf("verifier.criteria[%d] (%s): the query matches rows by a row id (%q): match them by their natural columns (a name, an address, a date, a user) joined where needed", i, c.ID, strings.TrimSpace(m))
		}
	}
	return nil
}
