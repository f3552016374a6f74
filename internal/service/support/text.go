package support

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// cursor is the position after which list_tickets continues: tickets are
// ordered by row id, newest first.
type cursor struct {
	id int64
}

const cursorPrefix = "s1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	return dbtool.EncodeCursor(cursorPrefix, strconv.FormatInt(c.id, 10))
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 1)
	if !ok {
		return cursor{}, false
	}
	id, err := strconv.ParseInt(parts[0], 10, 64)
	if err != nil || id < 1 {
		return cursor{}, false
	}
	return cursor{id: id}, true
}

// clip shortens a value quoted back in an error message.
func clip(s string) string {
	r := []rune(s)
	if len(r) <= 60 {
		return s
	}
	return string(r[:60]) + "…"
}

// checkText checks a text argument's length and characters.
func checkText(field, v string, max int, required bool) error {
	n := utf8.RuneCountInString(v)
	switch {
	case required && strings.TrimSpace(v) == "":
		return badCall("%s is empty; pass the %s", field, field)
	case n > max:
		return badCall("%s is %d characters; use at most %d", field, n, max)
	case !utf8.ValidString(v) || strings.ContainsRune(v, 0):
		return badCall("%s contains invalid characters (NUL or invalid UTF-8)", field)
	}
	return nil
}

func validKind(k string) bool {
	return k == KindReturn || k == KindWarranty || k == KindQuestion
}

func validStatus(s string) bool {
	return s == StatusOpen || s == StatusWaiting || s == StatusResolved || s == StatusClosed
}
