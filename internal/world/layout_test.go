package world

import (
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

// TestDBURIOfARelativePath: a relative path gives an absolute file: URI
// with no authority (file://worlds/... would name the host "worlds"), and
// odd characters are escaped.
func TestDBURIOfARelativePath(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range []string{"worlds/catalog/db/catalog.sqlite", "a b/c?d#e.sqlite", "./x.sqlite"} {
		uri, err := DBURI(rel, "mode=ro")
		if err != nil {
			t.Fatal(err)
		}
		u, err := url.Parse(uri)
		if err != nil {
			t.Fatalf("DBURI(%q) = %q: %v", rel, uri, err)
		}
		if u.Scheme != "file" || u.Host != "" || u.RawQuery != "mode=ro" {
			t.Errorf("DBURI(%q) = %q: scheme %q, host %q, query %q", rel, uri, u.Scheme, u.Host, u.RawQuery)
		}
		if want := filepath.Join(wd, rel); u.Path != filepath.ToSlash(want) {
			t.Errorf("DBURI(%q) has path %q, want %q", rel, u.Path, want)
		}
	}
}
