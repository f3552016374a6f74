package contacts

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/wildawm/wildawm/internal/service/dbtool"
	"github.com/wildawm/wildawm/internal/service/engine"
)

// Limits of the tools' arguments (service.yaml states them to the model;
// the validators below, which the tools and the synthesis functions share,
// enforce them).
const (
	MaxNameChars  = 200
	MaxFieldChars = 200
	MaxEmailChars = 254
	MaxPhoneChars = 32
	MaxNotesChars = 10000
	MaxTagChars   = 40
)

// Fields are the fields update_contact changes (its fields argument);
// absent ones stay as they are.
type Fields struct {
	Name    *string `json:"name,omitempty"`
	Email   *string `json:"email,omitempty"`
	Phone   *string `json:"phone,omitempty"`
	Company *string `json:"company,omitempty"`
	Role    *string `json:"role,omitempty"`
	Notes   *string `json:"notes,omitempty"`
}

// field is one of Fields with the column it sets and its validator.
type field struct {
	name  string
	v     *string
	check func(string) (string, error)
}

// list returns f's fields in the order update_contact checks them.
func (f Fields) list() []field {
	return []field{
		{"name", f.Name, validators["fields.name"]}, {"email", f.Email, checkEmail}, {"phone", f.Phone, checkPhone},
		{"company", f.Company, validators["company"]}, {"role", f.Role, validators["role"]}, {"notes", f.Notes, validators["notes"]},
	}
}

func (f Fields) empty() bool {
	return f.Name == nil && f.Email == nil && f.Phone == nil && f.Company == nil && f.Role == nil && f.Notes == nil
}

// slug turns a name into a contact ext_id as create_contact does
// (engine.Slug, at most 48 bytes).
func slug(name string) string { return engine.Slug(name, 48) }

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

// tagKey is tag as stored: trimmed and lower-cased.
func tagKey(tag string) string { return strings.ToLower(strings.TrimSpace(tag)) }

// normTag returns tag as stored (tagKey), or a tool error unless it is 1
// to MaxTagChars letters, digits, '-' and '_'.
func normTag(tag string) (string, error) {
	t := tagKey(tag)
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
func clip(s string, n int) string { return engine.Clip(s, n) }

func badCall(format string, args ...any) error { return dbtool.BadCall(format, args...) }
