package tasks

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"
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
	return base64.RawURLEncoding.EncodeToString([]byte(cursorPrefix + "\x00" + c.due + "\x00" + strconv.Itoa(c.rank) + "\x00" + strconv.FormatInt(c.id, 10)))
}

func parseCursor(s string) (cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != 4 || parts[0] != cursorPrefix || parts[1] == "" {
		return cursor{}, false
	}
	rank, err := strconv.Atoi(parts[2])
	if err != nil || rank < 0 || rank > 2 {
		return cursor{}, false
	}
	id, err := strconv.ParseInt(parts[3], 10, 64)
	if err != nil || id < 1 {
		return cursor{}, false
	}
	return cursor{due: parts[1], rank: rank, id: id}, true
}
