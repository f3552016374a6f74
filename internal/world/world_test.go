package world

import (
	"errors"
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
