package gcpolicy

import (
	"os"
	"path/filepath"
	"testing"
)

func TestReadLimit(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		text string
		want int64
		ok   bool
	}{
		{"1073741824\n", 1 << 30, true},
		{"max\n", 0, false},
		{"", 0, false},
	} {
		p := filepath.Join(dir, "memory.max")
		os.WriteFile(p, []byte(c.text), 0o644)
		if n, ok := readLimit(p); n != c.want || ok != c.ok {
			t.Errorf("%q: %d %v, want %d %v", c.text, n, ok, c.want, c.ok)
		}
	}
	if _, ok := readLimit(filepath.Join(dir, "missing")); ok {
		t.Error("a missing file gave a limit")
	}
}

func TestAvailable(t *testing.T) {
	if n := Available(); n < 64<<20 {
		t.Fatalf("Available() = %d bytes, want at least 64 MiB on any machine that runs the tests", n)
	}
}
