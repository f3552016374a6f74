package mail

import (
	"fmt"
	"strings"
	"unicode"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

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

// cursor is the position after which list_mails continues: mails are
// ordered by (sent_at DESC, ext_id ASC) within one folder.
type cursor struct {
	folder, sentAt, mail string
}

const cursorPrefix = "m1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	return dbtool.EncodeCursor(cursorPrefix, c.folder, c.sentAt, c.mail)
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 3)
	if !ok || parts[0] == "" || parts[1] == "" || parts[2] == "" {
		return cursor{}, false
	}
	return cursor{folder: parts[0], sentAt: parts[1], mail: parts[2]}, true
}

// checkAddress returns what is wrong with a mail address, or "" when it is
// usable: one '@' with text on both sides, a dot in the domain, no spaces,
// commas, angle brackets or quotes, at most MaxAddressChars bytes.
func checkAddress(addr string) string {
	switch {
	case addr == "":
		return "an address is empty"
	case len(addr) > MaxAddressChars:
		return fmt.Sprintf("address of %d bytes; an address has at most %d", len(addr), MaxAddressChars)
	case strings.ContainsAny(addr, " \t\r\n,;<>\"()[]\\"):
		return fmt.Sprintf("%q is not a plain address: give just the address, like \"maya@example.com\", without name, spaces or separators", addr)
	}
	local, domain, ok := strings.Cut(addr, "@")
	if !ok || local == "" || domain == "" || strings.Contains(domain, "@") || !strings.Contains(domain, ".") ||
		strings.HasPrefix(domain, ".") || strings.HasSuffix(domain, ".") {
		return fmt.Sprintf("%q is not a mail address like \"maya@example.com\"", addr)
	}
	return ""
}

// joinAddrs stores a list of addresses as a comma list.
func joinAddrs(addrs []string) string { return strings.Join(addrs, ", ") }

// splitAddrs reads a comma list of addresses; never nil.
func splitAddrs(s string) []string {
	out := []string{}
	for a := range strings.SplitSeq(s, ",") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}
