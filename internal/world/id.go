package world

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// ID is a SHA-256 content identifier.
type ID [32]byte

// ErrIDMismatch is returned when content read back does not hash to the ID it
// was stored under.
var ErrIDMismatch = errors.New("content does not match its ID")

// Hash returns the ID of b.
func Hash(b []byte) ID { return ID(sha256.Sum256(b)) }

// ParseID parses a 64-character lowercase or uppercase hex ID.
func ParseID(s string) (ID, error) {
	var id ID
	if len(s) != 64 {
		return id, fmt.Errorf("parse ID %q: want 64 hex characters, got %d", s, len(s))
	}
	if _, err := hex.Decode(id[:], []byte(s)); err != nil {
		return id, fmt.Errorf("parse ID %q: %w", s, err)
	}
	return id, nil
}

// String returns the ID in lowercase hex.
func (id ID) String() string { return hex.EncodeToString(id[:]) }

// Short returns the first 12 hex characters, for people.
func (id ID) Short() string { return id.String()[:12] }

// IsZero reports whether id is the zero ID (no ID).
func (id ID) IsZero() bool { return id == ID{} }

// Verify returns ErrIDMismatch (wrapped, naming both IDs) unless b hashes to id.
func (id ID) Verify(b []byte) error {
	if got := Hash(b); got != id {
		return fmt.Errorf("%w: want %s, got %s", ErrIDMismatch, id.Short(), got.Short())
	}
	return nil
}

// MarshalText encodes the ID as hex; the zero ID encodes as the empty string.
func (id ID) MarshalText() ([]byte, error) {
	if id.IsZero() {
		return []byte{}, nil
	}
	return []byte(id.String()), nil
}

// UnmarshalText decodes hex; the empty string decodes to the zero ID.
func (id *ID) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		*id = ID{}
		return nil
	}
	p, err := ParseID(string(b))
	if err != nil {
		return err
	}
	*id = p
	return nil
}
