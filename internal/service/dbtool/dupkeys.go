package dbtool

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// duplicateKey returns the path of the first key that appears twice in one
// object of the JSON value raw ("a", "filter.from", "items[2].id"), or ""
// when none does or raw is not JSON (which the caller reports). Keys are
// compared after decoding ("\u0061" is "a"): encoding/json keeps the last
// of two equal keys, so a repeated key would hide a value from every
// check that saw the first.
func duplicateKey(raw []byte) string {
	if bytes.Count(raw, []byte(":")) < 2 {
		return "" // at most one object member: nothing to repeat
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	path, err := walkValue(dec, "")
	if err != nil {
		return ""
	}
	return path
}

var errSyntax = errors.New("not JSON")

// walkValue reads one value from dec and returns the path of a repeated
// key within it.
func walkValue(dec *json.Decoder, at string) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return "", nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return "", err
			}
			k, ok := kt.(string)
			if !ok {
				return "", errSyntax
			}
			p := k
			if at != "" {
				p = at + "." + k
			}
			if seen[k] {
				return p, nil
			}
			seen[k] = true
			if dup, err := walkValue(dec, p); dup != "" || err != nil {
				return dup, err
			}
		}
	case '[':
		for i := 0; dec.More(); i++ {
			if dup, err := walkValue(dec, fmt.Sprintf("%s[%d]", at, i)); dup != "" || err != nil {
				return dup, err
			}
		}
	default:
		return "", errSyntax
	}
	if _, err := dec.Token(); err != nil && err != io.EOF {
		return "", err
	}
	return "", nil
}

// duplicateKeyError is the tool error of arguments with a repeated key.
func duplicateKeyError(tool, path string) error {
	top, _, nested := strings.Cut(path, ".")
	if i := strings.IndexByte(top, '['); i >= 0 {
		top, nested = top[:i], true
	}
	if !nested {
		return BadCall("argument %q of %s is given more than once: give each argument once", path, tool)
	}
	return BadCall("key %q appears more than once in argument %q of %s: give each key of an object once", path, top, tool)
}
