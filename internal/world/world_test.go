package world

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestID(t *testing.T) {
	id := Hash([]byte("hello"))
	p, err := ParseID(id.String())
	if err != nil || p != id {
		t.Fatalf("round trip: %v", err)
	}
	if err := id.Verify([]byte("hello")); err != nil {
		t.Error(err)
	}
	if err := id.Verify([]byte("hellp")); !errors.Is(err, ErrIDMismatch) {
		t.Errorf("Verify mismatch: %v", err)
	}
	for _, bad := range []string{"", "abc", strings.Repeat("g", 64)} {
		if _, err := ParseID(bad); err == nil {
			t.Errorf("ParseID(%q) accepted", bad)
		}
	}
	b, _ := ID{}.MarshalText()
	var z ID
	if len(b) != 0 || z.UnmarshalText(nil) != nil || !z.IsZero() {
		t.Error("zero ID text form")
	}
}

func TestManifestValidation(t *testing.T) {
	cases := map[string]string{
		`{"version":2,"persona":"p","day":0,"clock":"2026-03-01T00:00:00Z"}`:            "field version",
		`{"version":1,"persona":"","day":0,"clock":"2026-03-01T00:00:00Z"}`:             "field persona",
		`{"version":1,"persona":"p","day":-1,"clock":"2026-03-01T00:00:00Z"}`:           "field day",
		`{"version":1,"persona":"p","day":0,"clock":"March"}`:                           "field clock",
		`{"version":1,"persona":"p","day":0,"clock":"2026-03-01T00:00:00Z","colour":1}`: "unknown field",
	}
	for in, want := range cases {
		if _, err := ParseManifest([]byte(in)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err %v, want %q", in, err, want)
		}
	}
	m, err := ParseManifest([]byte(`{"version":1,"persona":"p","day":2,"clock":"2026-03-01T00:00:00Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := ParseManifest(m.Encode())
	if err != nil || string(m2.Encode()) != string(m.Encode()) {
		t.Errorf("manifest round trip: %v", err)
	}
}

func TestPasswordHashIsDeterministic(t *testing.T) {
	a := HashPassword("shop", "alex", "salt", "pw")
	if a != HashPassword("shop", "alex", "salt", "pw") {
		t.Fatal("not deterministic")
	}
	if a == HashPassword("shop", "alex", "salt2", "pw") || a == HashPassword("mail", "alex", "salt", "pw") {
		t.Error("salt does not depend on site and salt")
	}
	if !CheckPassword(a, "pw") || CheckPassword(a, "pW") || CheckPassword("garbage", "pw") {
		t.Error("CheckPassword")
	}
}

func TestCleanHomePath(t *testing.T) {
	good := map[string]string{"a/b.txt": "a/b.txt", "a/./b": "a/b", "a/../b": "b"}
	for in, want := range good {
		if got, err := CleanHomePath(in); err != nil || got != want {
			t.Errorf("CleanHomePath(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"", "/etc/passwd", "..", "../x", "a/../../x", `a\b`, "a\x00b"} {
		if _, err := CleanHomePath(bad); err == nil {
			t.Errorf("CleanHomePath(%q) accepted", bad)
		}
	}
}

func TestAccountValidation(t *testing.T) {
	good := Account{Site: "shop", Username: "alex.rivera", Display: "Alex Rivera", PasswordHash: HashPassword("shop", "alex.rivera", "s", "pw")}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid account refused: %v", err)
	}
	bad := map[string]struct {
		edit func(a *Account)
		want string
	}{
		"site leaves the directory": {func(a *Account) { a.Site = "../../etc" }, `site "../../etc"`},
		"site with NUL":             {func(a *Account) { a.Site = "shop\x00x" }, "site"},
		"site upper case":           {func(a *Account) { a.Site = "Shop" }, "site"},
		"site empty":                {func(a *Account) { a.Site = "" }, "site"},
		"username with NUL":         {func(a *Account) { a.Username = "alex\x00root" }, "control character U+0000"},
		"username path":             {func(a *Account) { a.Username = "../alex" }, "never a path"},
		"username empty":            {func(a *Account) { a.Username = "" }, "username is empty"},
		"username spaces":           {func(a *Account) { a.Username = " alex" }, "whitespace"},
		"username too long":         {func(a *Account) { a.Username = strings.Repeat("a", MaxUsernameBytes+1) }, "at most 128"},
		"username not UTF-8":        {func(a *Account) { a.Username = "al\xffex" }, "UTF-8"},
		"display newline":           {func(a *Account) { a.Display = "Alex\nRoot" }, "display"},
		"hash":                      {func(a *Account) { a.PasswordHash = "hunter2" }, "password_hash"},
	}
	for name, c := range bad {
		t.Run(name, func(t *testing.T) {
			a := good
			c.edit(&a)
			if err := a.Validate(); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Validate: %v, want %q", err, c.want)
			}
			dir := t.TempDir()
			if err := WriteAccounts(dir, []Account{good, a}); err == nil || !strings.Contains(err.Error(), "accounts[1]") {
				t.Errorf("WriteAccounts: %v, want a refusal naming accounts[1]", err)
			}
			if _, err := os.Stat(filepath.Join(dir, AccountsFile)); err == nil {
				t.Error("WriteAccounts wrote a refused account")
			}
			// A hostile accounts.json is refused on read (JSON cannot carry
			// invalid UTF-8: encoding/json turns it into U+FFFD).
			if name == "username not UTF-8" {
				return
			}
			b, _ := json.Marshal([]Account{a})
			os.WriteFile(filepath.Join(dir, AccountsFile), b, 0o644)
			if _, err := ReadAccounts(dir); err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("ReadAccounts: %v, want %q", err, c.want)
			}
		})
	}
	if err := WriteAccounts(t.TempDir(), []Account{good, good}); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate account: %v", err)
	}
	for _, s := range []string{"", "pw\x00", strings.Repeat("x", MaxSecretBytes+1)} {
		if err := ValidSecret("salt", s); err == nil || !strings.Contains(err.Error(), "salt") {
			t.Errorf("ValidSecret(%q): %v", s, err)
		}
	}
}
