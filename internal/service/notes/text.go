package notes

import (
	"crypto/sha256"
	"encoding/hex"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// slug turns a title into a note ext_id: ASCII letters and digits
// lowercased, every other run of characters one '-', at most 48 bytes. A
// title with no ASCII letter or digit gets a short hash instead.
func slug(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range title {
		r = unicode.ToLower(r)
		if r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
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
		sum := sha256.Sum256([]byte(title))
		s = hex.EncodeToString(sum[:4])
	}
	return s
}

func hasControl(s string) bool { return strings.ContainsFunc(s, unicode.IsControl) }

// hasControlExceptNewline reports a control character other than \n and \t.
func hasControlExceptNewline(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool { return unicode.IsControl(r) && r != '\n' && r != '\t' && r != '\r' })
}

// checkLine returns v trimmed, or a tool error unless it is 1 to limit
// characters on one line.
func checkLine(field, v string, limit int, example string) (string, error) {
	v = strings.TrimSpace(v)
	switch n := utf8.RuneCountInString(v); {
	case v == "":
		return "", badCall("%s is empty; pass one, e.g. %q", field, example)
	case n > limit:
		return "", badCall("%s is %d characters; use at most %d", field, n, limit)
	case hasControl(v):
		return "", badCall("%s has a line break or control character; pass it on one line", field)
	}
	return v, nil
}

// checkBody returns a tool error unless body is at most MaxBodyChars
// characters without control characters other than newlines and tabs.
func checkBody(field, body string) error {
	if n := utf8.RuneCountInString(body); n > MaxBodyChars {
		return badCall("%s is %d characters; a note holds at most %d. Shorten it or split it into several notes", field, n, MaxBodyChars)
	}
	if hasControlExceptNewline(body) {
		return badCall("%s has a control character; pass markdown text", field)
	}
	return nil
}

// checkTarget returns the trimmed link target, or a tool error unless it is
// an http(s) URL with a host or a clean home-relative slash path.
func checkTarget(t string) (string, error) {
	t = strings.TrimSpace(t)
	switch {
	case t == "":
		return "", badCall("target is empty; pass a file path relative to home (e.g. \"docs/plan.md\") or a URL (e.g. \"https://example.com/page\")")
	case len(t) > MaxTargetBytes:
		return "", badCall("target is %d bytes; use at most %d", len(t), MaxTargetBytes)
	case strings.ContainsFunc(t, func(r rune) bool { return unicode.IsControl(r) || r == '\\' }):
		return "", badCall("target %q has a control character or a backslash; paths use / between folders", clip(t, 80))
	}
	if scheme, _, ok := strings.Cut(t, "://"); ok && !strings.Contains(scheme, "/") {
		u, err := url.Parse(t)
		switch {
		case err != nil || (u.Scheme != "http" && u.Scheme != "https"):
			return "", badCall("target %q is not an http or https URL; link a web page (https://...) or a file path relative to home", clip(t, 80))
		case u.Host == "" || strings.ContainsAny(t, " \"<>"):
			return "", badCall("URL %q has no host or has spaces or quotes; pass it as the browser shows it, e.g. \"https://example.com/page\"", clip(t, 80))
		}
		return t, nil
	}
	switch {
	case strings.HasPrefix(t, "/") || strings.HasPrefix(t, "~"):
		return "", badCall("path %q is absolute; pass it relative to home, e.g. \"docs/plan.md\" for ~/docs/plan.md", clip(t, 80))
	case t == "." || t == ".." || strings.HasPrefix(t, "../") || path.Clean(t) != t:
		return "", badCall("path %q is not a clean path inside home; use folder/file form without ., .. or doubled or trailing slashes, e.g. %q", clip(t, 80), cleanSuggestion(t))
	}
	return t, nil
}

func cleanSuggestion(t string) string {
	c := strings.TrimPrefix(path.Clean("/"+t), "/")
	if c == "" {
		return "docs/plan.md"
	}
	return c
}

// clip shortens s to n characters for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// preview returns the first n characters of body on one line, with "…" when
// cut.
func preview(body string, n int) string {
	r := []rune(oneLine(body))
	if len(r) <= n {
		return string(r)
	}
	return strings.TrimRight(string(r[:n]), " ") + "…"
}

// snippet returns the part of text around the first case-insensitive match
// of query, with up to ctx characters either side, on one line; the start of
// text when there is no match.
func snippet(text, query string, ctx int) string {
	b := []rune(oneLine(text))
	q := []rune(oneLine(query))
	at := indexFold(b, q)
	if at < 0 {
		return preview(text, 2*ctx)
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

// cursor is the position after which list_notes continues: notes are
// ordered by (pinned DESC, updated_at DESC, ext_id ASC).
type cursor struct {
	pinned          bool
	updatedAt, note string
}

const cursorPrefix = "n1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	p := "0"
	if c.pinned {
		p = "1"
	}
	return dbtool.EncodeCursor(cursorPrefix, p, c.updatedAt, c.note)
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 3)
	if !ok || (parts[0] != "0" && parts[0] != "1") || parts[1] == "" || parts[2] == "" {
		return cursor{}, false
	}
	return cursor{pinned: parts[0] == "1", updatedAt: parts[1], note: parts[2]}, true
}
