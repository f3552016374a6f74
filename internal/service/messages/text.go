package messages

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// slug turns a name into the id part of a direct thread: ASCII letters and
// digits lowercased, every other run of characters one '-', at most 48
// bytes. A name with no ASCII letter or digit gets a short hash instead.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
		r = unicode.ToLower(r)
		if r < utf8RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
			continue
		}
		dash = true
	}
	s := b.String()
	if len(s) > 48 {
		s = strings.TrimRight(s[:48], "-")
	}
	if s == "" {
		sum := sha256.Sum256([]byte(name))
		s = hex.EncodeToString(sum[:4])
	}
	return s
}

const utf8RuneSelf = 0x80

// oneLine replaces runs of whitespace with one space.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// preview returns the first n characters of body on one line, with "…" when
// cut.
func preview(body string, n int) string {
	r := []rune(oneLine(body))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimRight(string(r[:n]), " ") + "…"
}

// snippet returns the part of body around the first case-insensitive match
// of query, with up to ctx characters either side, on one line; the start of
// body when query matched only the sender.
func snippet(body, query string, ctx int) string {
	b := []rune(oneLine(body))
	q := []rune(oneLine(query))
	at := indexFold(b, q)
	if at < 0 {
		return preview(body, 2*ctx)
	}
	from, to := max(at-ctx, 0), min(at+len(q)+ctx, len(b))
	s := strings.TrimSpace(string(b[from:to]))
	if from > 0 {
		s = "…" + s
	}
	if to < len(b) {
		s += "…"
	}
	return s
}

// indexFold finds q in b comparing runes by simple case folding.
func indexFold(b, q []rune) int {
	if len(q) == 0 {
		return -1
	}
outer:
	for i := 0; i+len(q) <= len(b); i++ {
		for j, r := range q {
			if unicode.ToLower(b[i+j]) != unicode.ToLower(r) {
				continue outer
			}
		}
		return i
	}
	return -1
}

// cursor is the position after which list_threads continues: threads are
// ordered by (active_at DESC, ext_id ASC).
type cursor struct {
	activeAt, thread string
}

const cursorPrefix = "c1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	return dbtool.EncodeCursor(cursorPrefix, c.activeAt, c.thread)
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 2)
	if !ok || parts[0] == "" || parts[1] == "" {
		return cursor{}, false
	}
	return cursor{activeAt: parts[0], thread: parts[1]}, true
}
