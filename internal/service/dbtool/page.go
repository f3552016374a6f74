package dbtool

import (
	"encoding/base64"
	"strings"
)

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
