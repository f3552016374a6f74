package world

import (
	"bytes"
	"crypto/pbkdf2"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Account is a web account of the persona. Its password hash uses a fixed,
// derived salt so that creating the same account twice gives the same bytes.
type Account struct {
	Site         string `json:"site"`
	Username     string `json:"username"`
	PasswordHash string `json:"password_hash"`
	// Display is the persona's display name on that site, if any.
	Display string `json:"display,omitempty"`
}

// PasswordIterations is the PBKDF2-SHA256 iteration count of account hashes.
const PasswordIterations = 10000

// HashPassword returns "pbkdf2-sha256$ITER$SALT$HASH" with the salt derived
// from (site, username, salt): deterministic, never random.
func HashPassword(site, username, salt, password string) string {
	s := sha256.Sum256([]byte("wildawm-account\x00" + site + "\x00" + username + "\x00" + salt))
	key, err := pbkdf2.Key(sha256.New, password, s[:16], PasswordIterations, 32)
	if err != nil {
		panic(fmt.Sprintf("pbkdf2: %v", err)) // fixed valid parameters: cannot fail
	}
	enc := base64.RawStdEncoding
	return fmt.Sprintf("pbkdf2-sha256$%d$%s$%s", PasswordIterations, enc.EncodeToString(s[:16]), enc.EncodeToString(key))
}

// CheckPassword reports whether password matches a hash made by HashPassword.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 4 || parts[0] != "pbkdf2-sha256" || parts[1] != fmt.Sprint(PasswordIterations) {
		return false
	}
	enc := base64.RawStdEncoding
	salt, err1 := enc.DecodeString(parts[2])
	want, err2 := enc.DecodeString(parts[3])
	if err1 != nil || err2 != nil {
		return false
	}
	got, err := pbkdf2.Key(sha256.New, password, salt, PasswordIterations, len(want))
	return err == nil && bytes.Equal(got, want)
}

// ReadAccounts reads accounts.json of the world at root; a missing file is no
// accounts.
func ReadAccounts(root string) ([]Account, error) {
	b, err := os.ReadFile(filepath.Join(root, AccountsFile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read accounts: %w", err)
	}
	var accts []Account
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&accts); err != nil {
		return nil, fmt.Errorf("accounts.json: %w", err)
	}
	return accts, nil
}

// WriteAccounts writes accts sorted by (site, username), atomically.
func WriteAccounts(root string, accts []Account) error {
	sorted := slices.Clone(accts)
	slices.SortFunc(sorted, func(a, b Account) int {
		if c := strings.Compare(a.Site, b.Site); c != 0 {
			return c
		}
		return strings.Compare(a.Username, b.Username)
	})
	if sorted == nil {
		sorted = []Account{}
	}
	b, err := json.MarshalIndent(sorted, "", "  ")
	if err != nil {
		return fmt.Errorf("encode accounts: %w", err)
	}
	return WriteFileAtomic(filepath.Join(root, AccountsFile), append(b, '\n'), 0o644)
}
