package world

import (
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// MaxNameLen is the longest file name Linux holds, in bytes. A name is any
// byte string of 1 to MaxNameLen bytes but "." and ".." without NUL or '/':
// it need not be UTF-8 and may hold newlines, backslashes and control
// characters. Everything that stores, hashes, compares or prints names
// keeps them exactly (docs/world.md, "Names").
const MaxNameLen = 255

// QuoteName returns a file name or a slash path as people and logs should
// read it: unchanged when it is valid UTF-8 of printable characters holding
// no backslash and no double quote, else Go-quoted (strconv.Quote:
// "x\xff", "a\nb", "c\\d"). Two different names never read the same: a
// quoted form starts with a double quote, which an unquoted one never
// holds, and strconv.Quote is one-to-one.
func QuoteName(s string) string {
	if plainName(s) {
		return s
	}
	return strconv.Quote(s)
}

func plainName(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if r == '\\' || r == '"' || !strconv.IsPrint(r) {
			return false
		}
	}
	return true
}

// SplitName is how a name (or a path, a symlink target) goes into JSON,
// whose strings are UTF-8 only: text is the name itself when it is valid
// UTF-8, and raw is nil; else text is QuoteName(s), for people, and raw is
// the name's exact bytes, encoded base64 in a sibling field "<field>_base64"
// (which readers take over text). The JSON of a valid UTF-8 name is what it
// always was, so files and IDs written before this encoding keep theirs.
func SplitName(s string) (text string, raw []byte) {
	if utf8.ValidString(s) {
		return s, nil
	}
	return QuoteName(s), []byte(s)
}

// JoinName undoes SplitName, accepting only its canonical output, so a name
// has one JSON form: raw, when present, must not be valid UTF-8 and text
// must be its quoted form.
func JoinName(field, text string, raw []byte) (string, error) {
	if raw == nil {
		return text, nil
	}
	s := string(raw)
	if utf8.ValidString(s) {
		return "", fmt.Errorf("%s_base64 holds valid UTF-8 %q: the name belongs in %s alone", field, s, field)
	}
	if q := QuoteName(s); text != q {
		return "", fmt.Errorf("%s %q does not match %s_base64 (want %s)", field, text, field, q)
	}
	return s, nil
}

// PathJSON is the "path" and "path_base64" fields of an object whose path
// goes into JSON exact (SplitName's encoding): embed it in the object's
// JSON form, PathOf to write, Decode to read.
type PathJSON struct {
	Path       string `json:"path"`
	PathBase64 []byte `json:"path_base64,omitempty"`
}

// PathOf encodes path p.
func PathOf(p string) PathJSON {
	text, raw := SplitName(p)
	return PathJSON{Path: text, PathBase64: raw}
}

// Decode returns the exact path PathOf encoded, refusing any other form.
func (j PathJSON) Decode() (string, error) { return JoinName("path", j.Path, j.PathBase64) }

// skippedJSON is the JSON form of Skipped.
type skippedJSON struct {
	PathJSON
	Reason string `json:"reason"`
}

// MarshalJSON encodes the path as SplitName does: a path that is not valid
// UTF-8 is quoted in "path" and exact in "path_base64".
func (s Skipped) MarshalJSON() ([]byte, error) {
	return json.Marshal(skippedJSON{PathJSON: PathOf(s.Path), Reason: s.Reason})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (s *Skipped) UnmarshalJSON(b []byte) error {
	var j skippedJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	p, err := j.Decode()
	if err != nil {
		return err
	}
	*s = Skipped{Path: p, Reason: j.Reason}
	return nil
}
