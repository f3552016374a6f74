package world

import (
	"fmt"
	"regexp"
	"strings"
)

// NameRule is the syntax of every id or name that a file or a request
// gives and that becomes a path element: persona ids, task ids, rollout
// ids, family names, pool entries' directories. It can never name a parent
// directory, a hidden file or a path of several elements.
const NameRule = "1-128 characters of lower-case letters, digits, '.', '_' and '-', starting with a letter or a digit, without \"..\" (no '/', no '..')"

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,127}$`)

// NameError is a name that breaks NameRule: where it was read (File, may
// be "" for a request), which field, and the value.
type NameError struct {
	File, Field, Value string
}

func (e *NameError) Error() string {
	where := e.Field
	if e.File != "" {
		where = e.File + ": field " + e.Field
	} else {
		where = "field " + e.Field
	}
	v := e.Value
	if len(v) > 80 {
		v = v[:80] + "..."
	}
	return fmt.Sprintf("%s: %q is not a valid name: want %s", where, v, NameRule)
}

// ValidName reports whether s follows NameRule.
func ValidName(s string) bool {
	return nameRE.MatchString(s) && !strings.Contains(s, "..")
}

// CheckName returns a *NameError naming file (where s was read; "" for a
// request) and field unless s follows NameRule. Call it on every id read
// from a file or a request before joining it into a path.
func CheckName(file, field, s string) error {
	if ValidName(s) {
		return nil
	}
	return &NameError{File: file, Field: field, Value: s}
}
