package dbtool

import (
	"encoding/base64"
	"strings"
)

// CheckLimit applies a list tool's page-size argument: 0 means def (the
// argument was left out: its schema's minimum of 1, from the field's
// minimum tag, makes AddTool refuse an explicit 0); anything outside
// 1..max is a tool error that names the range.
func CheckLimit(limit, def, max int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 1 || limit > max:
		return 0, BadCall("limit must be between 1 and %d (got %d); omit it for %d", max, limit, def)
	}
	return limit, nil
}

// EncodeCursor is an opaque page cursor holding fields (a keyset position)
// under prefix, which names the list it belongs to. Fields must not hold
// NUL bytes.
func EncodeCursor(prefix string, fields ...string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(prefix + "\x00" + strings.Join(fields, "\x00")))
}

// DecodeCursor returns the n fields of a cursor EncodeCursor made with
// prefix; false if s is not one (another list's, edited, truncated).
func DecodeCursor(s, prefix string, n int) ([]string, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, false
	}
	parts := strings.Split(string(raw), "\x00")
	if len(parts) != n+1 || parts[0] != prefix {
		return nil, false
	}
	return parts[1:], true
}
