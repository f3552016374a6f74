package tasks

import (
	"strconv"
	"time"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// parseDate parses a YYYY-MM-DD date strictly (a real calendar day, zero
// padded).
func parseDate(s string) (time.Time, bool) {
	t, err := time.Parse(DateFormat, s)
	if err != nil || t.Format(DateFormat) != s {
		return time.Time{}, false
	}
	return t, true
}

// priorityRank orders priorities high first.
func priorityRank(p string) int {
	switch p {
	case PriorityHigh:
		return 0
	case PriorityMedium:
		return 1
	}
	return 2
}

// noDue sorts to-dos without a due date after every dated one.
const noDue = "9999-12-31~"

// cursor is the position after which list_todos continues: to-dos are
// ordered by (due key, priority rank, id).
type cursor struct {
	due  string
	rank int
	id   int64
}

const cursorPrefix = "t1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	return dbtool.EncodeCursor(cursorPrefix, c.due, strconv.Itoa(c.rank), strconv.FormatInt(c.id, 10))
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 3)
	if !ok || parts[0] == "" {
		return cursor{}, false
	}
	rank, err := strconv.Atoi(parts[1])
	if err != nil || rank < 0 || rank > 2 {
		return cursor{}, false
	}
	id, err := strconv.ParseInt(parts[2], 10, 64)
	if err != nil || id < 1 {
		return cursor{}, false
	}
	return cursor{due: parts[0], rank: rank, id: id}, true
}
