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
	"unicode"
	"unicode/utf8"
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

// Account field limits.
const (
	MaxUsernameBytes = 128
	MaxDisplayBytes  = 256
	MaxSecretBytes   = 1024 // password and salt
)

// ValidSite reports an error unless site is a valid site name. A site's
// database is db/SITE.sqlite, so a site name follows the rules of a database
// name (ValidDBName): lowercase letters, digits and '_', starting with a
// letter.
func ValidSite(site string) error {
	if !dbNameRE.MatchString(site) {
		return fmt.Errorf("site %q: want lowercase letters, digits and '_', starting with a letter, at most 63 bytes (e.g. \"shop\"): a site names its database", site)
	}
	return nil
}

// ValidUsername reports an error unless u can be a username: it is a key of
// the world's accounts and is typed into a login form, so it is 1 to
// MaxUsernameBytes bytes of UTF-8 text without control characters (NUL
// included), whitespace at either end, '/' or a backslash.
func ValidUsername(u string) error {
	if u == "" {
		return errors.New("username is empty")
	}
	if err := validText("username", u, MaxUsernameBytes); err != nil {
		return err
	}
	if strings.ContainsAny(u, `/\`) {
		return fmt.Errorf("username %q contains '/' or '\\': a username is one name, never a path", u)
	}
	if strings.TrimSpace(u) != u {
		return fmt.Errorf("username %q starts or ends with whitespace", u)
	}
	return nil
}

// ValidDisplay reports an error unless d can be a display name: at most
// MaxDisplayBytes bytes of UTF-8 text without control characters.
func ValidDisplay(d string) error { return validText("display", d, MaxDisplayBytes) }

// ValidSecret reports an error unless s can be a password or a salt (field
// names which): 1 to MaxSecretBytes bytes of UTF-8 without control
// characters. The hash joins site, username and salt with NUL bytes, so a NUL
// inside one of them could make two accounts hash alike.
func ValidSecret(field, s string) error {
	if s == "" {
		return fmt.Errorf("%s is empty", field)
	}
	return validText(field, s, MaxSecretBytes)
}

func validText(field, s string, max int) error {
	if len(s) > max {
		return fmt.Errorf("%s is %d bytes, at most %d", field, len(s), max)
	}
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s is not valid UTF-8", field)
	}
	for i, r := range s {
		if unicode.IsControl(r) {
			return fmt.Errorf("%s %q has the control character %U at byte %d (NUL, newline, tab and the like are not allowed)", field, s, r, i)
		}
	}
	return nil
}

// Validate reports the first field of a that cannot be stored: the site,
// username and display rules above and a hash in HashPassword's format.
func (a Account) Validate() error {
	if err := ValidSite(a.Site); err != nil {
		return err
	}
	if err := ValidUsername(a.Username); err != nil {
		return err
	}
	if err := ValidDisplay(a.Display); err != nil {
		return err
	}
	if parts := strings.Split(a.PasswordHash, "$"); len(parts) != 4 || parts[0] != "pbkdf2-sha256" {
		return fmt.Errorf("account %s/%s: password_hash is not a pbkdf2-sha256 hash made by HashPassword", a.Site, a.Username)
	}
	return nil
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
	if err := validAccounts(accts); err != nil {
		return nil, fmt.Errorf("accounts.json: %w", err)
	}
	return accts, nil
}

// CheckLogin reports whether the world at root has an account of user on
// site whose password is pass (what every website's login asks).
func CheckLogin(root, site, user, pass string) (bool, error) {
	if user == "" {
		return false, nil
	}
	accts, err := ReadAccounts(root)
	if err != nil {
		return false, err
	}
	for _, a := range accts {
		if a.Site == site && a.Username == user {
			return CheckPassword(a.PasswordHash, pass), nil
		}
	}
	return false, nil
}

// validAccounts checks every account and that no (site, username) repeats.
func validAccounts(accts []Account) error {
	seen := make(map[[2]string]bool, len(accts))
	for i, a := range accts {
		if err := a.Validate(); err != nil {
			return fmt.Errorf("accounts[%d]: %w", i, err)
		}
		k := [2]string{a.Site, a.Username}
		if seen[k] {
			return fmt.Errorf("accounts[%d]: account %s/%s appears twice", i, a.Site, a.Username)
		}
		seen[k] = true
	}
	return nil
}

// WriteAccounts writes accts sorted by (site, username), atomically. It
// refuses an account that fails Validate or repeats a (site, username), and
// then writes nothing.
func WriteAccounts(root string, accts []Account) error {
	if err := validAccounts(accts); err != nil {
		return fmt.Errorf("write accounts: %w", err)
	}
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
