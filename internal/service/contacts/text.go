package contacts

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/service/dbtool"
)

// slug turns a name into a contact ext_id: ASCII letters and digits
// lowercased, every other run of characters one '-', at most 48 bytes. A
// name with no ASCII letter or digit gets a short hash instead.
func slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range name {
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
		sum := sha256.Sum256([]byte(name))
		s = hex.EncodeToString(sum[:4])
	}
	return s
}

// hasControl reports whether s has a control character (newlines included).
func hasControl(s string) bool {
	return strings.ContainsFunc(s, unicode.IsControl)
}

// checkName returns the trimmed name, or a tool error.
func checkName(field, name string) (string, error) {
	name = strings.TrimSpace(name)
	switch n := utf8.RuneCountInString(name); {
	case name == "":
		return "", badCall("%s is empty; pass the person's full name, e.g. \"Maya Chen\"", field)
	case n > MaxNameChars:
		return "", badCall("%s is %d characters; use at most %d", field, n, MaxNameChars)
	case hasControl(name):
		return "", badCall("%s has a line break or control character; pass the name on one line", field)
	}
	return name, nil
}

// checkEmail returns the trimmed address ("" stays ""), or a tool error
// unless it has the shape local@domain.tld.
func checkEmail(email string) (string, error) {
	email = strings.TrimSpace(email)
	if email == "" {
		return "", nil
	}
	bad := func(why string) error {
		return badCall("email %q is not a valid address (%s); pass one like \"maya@example.com\", or omit email", clip(email, 80), why)
	}
	if len(email) > MaxEmailChars {
		return "", badCall("email is %d bytes; an address has at most %d", len(email), MaxEmailChars)
	}
	local, domain, ok := strings.Cut(email, "@")
	switch {
	case !ok:
		return "", bad("no @")
	case strings.Contains(domain, "@"):
		return "", bad("more than one @")
	case local == "" || len(local) > 64:
		return "", bad("the part before @ must be 1 to 64 characters")
	case strings.ContainsFunc(local, func(r rune) bool {
		return r <= ' ' || r >= utf8.RuneSelf || strings.ContainsRune(`"(),:;<>[\]`, r)
	}):
		return "", bad("the part before @ has a space or a character like < > ( ) , ; : \"")
	case strings.HasPrefix(local, ".") || strings.HasSuffix(local, ".") || strings.Contains(local, ".."):
		return "", bad("misplaced dot before @")
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return "", bad("the domain needs a dot, as in example.com")
	}
	for _, l := range labels {
		if l == "" || len(l) > 63 || l[0] == '-' || l[len(l)-1] == '-' || strings.ContainsFunc(l, func(r rune) bool {
			return !(r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-'))
		}) {
			return "", bad("the domain may have only letters, digits, dots and inner hyphens")
		}
	}
	if tld := labels[len(labels)-1]; len(tld) < 2 || strings.ContainsFunc(tld, unicode.IsDigit) {
		return "", bad("the domain must end in a name like .com")
	}
	return email, nil
}

// checkPhone returns the trimmed number ("" stays ""), or a tool error unless
// it has only digits, spaces, hyphens and one leading +, with 3 to 20 digits.
func checkPhone(phone string) (string, error) {
	phone = strings.TrimSpace(phone)
	if phone == "" {
		return "", nil
	}
	if utf8.RuneCountInString(phone) > MaxPhoneChars {
		return "", badCall("phone is %d characters; use at most %d", utf8.RuneCountInString(phone), MaxPhoneChars)
	}
	digits := 0
	for i, r := range phone {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r == ' ' || r == '-':
		case r == '+' && i == 0:
		default:
			return "", badCall("phone %q may contain only digits, spaces, hyphens and a leading +; write it like \"+1 415-555-0100\", or omit phone", clip(phone, 40))
		}
	}
	if digits < 3 || digits > 20 {
		return "", badCall("phone %q has %d digits; a number has 3 to 20", phone, digits)
	}
	return phone, nil
}

// checkText returns the trimmed value of a free-text field, or a tool error.
func checkText(field, v string, limit int, multiline bool) (string, error) {
	v = strings.TrimSpace(v)
	if n := utf8.RuneCountInString(v); n > limit {
		return "", badCall("%s is %d characters; use at most %d", field, n, limit)
	}
	if !multiline && hasControl(v) {
		return "", badCall("%s has a line break or control character; pass it on one line", field)
	}
	return v, nil
}

// normTag returns tag trimmed and lowercased, or a tool error unless it is 1
// to MaxTagChars letters, digits, '-' and '_'.
func normTag(tag string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(tag))
	switch n := utf8.RuneCountInString(t); {
	case t == "":
		return "", badCall("tag is empty; pass a short label such as \"work\" or \"family\"")
	case n > MaxTagChars:
		return "", badCall("tag is %d characters; use at most %d", n, MaxTagChars)
	case strings.ContainsFunc(t, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '-' && r != '_' }):
		return "", badCall("tag %q may contain only letters, digits, - and _; e.g. \"book-club\"", clip(tag, 60))
	}
	return t, nil
}

// clip shortens s to n characters for an error message.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// cursor is the position after which list_contacts continues: contacts are
// ordered by (lower(name), ext_id).
type cursor struct {
	name, contact string
}

const cursorPrefix = "c1"

// String encodes c as an opaque, URL-safe token.
func (c cursor) String() string {
	return dbtool.EncodeCursor(cursorPrefix, c.name, c.contact)
}

func parseCursor(s string) (cursor, bool) {
	parts, ok := dbtool.DecodeCursor(s, cursorPrefix, 2)
	if !ok || parts[1] == "" {
		return cursor{}, false
	}
	return cursor{name: parts[0], contact: parts[1]}, true
}
